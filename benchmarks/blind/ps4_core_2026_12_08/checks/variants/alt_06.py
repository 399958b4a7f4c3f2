# task: dce
def dce_jaxpr(jaxpr):
    # ps4.dce
    used = [False] * len(jaxpr.eqns)
    live = set(o for o in jaxpr.outs if not isinstance(o, Lit))
    for k in range(len(jaxpr.eqns) - 1, -1, -1):
        eqn = jaxpr.eqns[k]
        if live.isdisjoint(eqn.out_binders):
            continue
        used[k] = True
        live.update(x for x in eqn.inputs if not isinstance(x, Lit))
    return Jaxpr(jaxpr.constvars[:], jaxpr.in_binders[:],
                 [eqn for eqn, u in zip(jaxpr.eqns, used) if u], jaxpr.outs[:])
