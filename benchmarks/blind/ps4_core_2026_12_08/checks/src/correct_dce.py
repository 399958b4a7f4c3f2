def dce_jaxpr(jaxpr):
    # ps4.dce
    live = {atom for atom in jaxpr.outs if isinstance(atom, Var)}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if any(v in live for v in eqn.out_binders):
            kept.append(eqn)
            live.update(x for x in eqn.inputs if isinstance(x, Var))
    kept.reverse()
    return Jaxpr(list(jaxpr.constvars), list(jaxpr.in_binders), kept, list(jaxpr.outs))
