# task: dce
def dce_jaxpr(jaxpr):
    # ps4.dce
    live = {x for x in jaxpr.outs if isinstance(x, Var)}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if any(v in live for v in eqn.out_binders):
            kept.insert(0, eqn)
            live.update(x for x in eqn.inputs if isinstance(x, Var))
    # Inputs and constants nobody reads are dead too.
    constvars = [v for v in jaxpr.constvars if v in live]
    in_binders = [v for v in jaxpr.in_binders if v in live]
    return Jaxpr(constvars, in_binders, kept, jaxpr.outs)
