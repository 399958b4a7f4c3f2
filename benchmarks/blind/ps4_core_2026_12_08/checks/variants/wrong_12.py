# task: dce
def dce_jaxpr(jaxpr):
    # ps4.dce
    live = {x for x in jaxpr.outs if isinstance(x, Var)}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if all(v in live for v in eqn.out_binders):
            kept.insert(0, eqn)
            live.update(x for x in eqn.inputs if isinstance(x, Var))
    return Jaxpr(jaxpr.constvars, jaxpr.in_binders, kept, jaxpr.outs)
