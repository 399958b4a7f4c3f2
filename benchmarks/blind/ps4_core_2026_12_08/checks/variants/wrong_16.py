# task: dce
def dce_jaxpr(jaxpr):
    # ps4.dce
    live = {x for x in jaxpr.outs if isinstance(x, Var)}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if any(v in live for v in eqn.out_binders):
            kept.insert(0, eqn)
            # the first input always is a variable; literals come second (x * 2.0)
            live.add(eqn.inputs[0])
            if len(eqn.inputs) > 1 and isinstance(eqn.inputs[1], Var):
                live.add(eqn.inputs[1])
    return Jaxpr(jaxpr.constvars, jaxpr.in_binders, kept, jaxpr.outs)
