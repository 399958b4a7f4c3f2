# task: dce
def dce_jaxpr(jaxpr):
    # ps4.dce
    # Drop equations nobody reads until nothing changes.
    eqns = list(jaxpr.eqns)
    while True:
        read = {x for e in eqns for x in e.inputs if isinstance(x, Var)}
        read.update(o for o in jaxpr.outs if isinstance(o, Var))
        alive = [e for e in eqns if any(v in read for v in e.out_binders)]
        if len(alive) == len(eqns):
            return Jaxpr(jaxpr.constvars, jaxpr.in_binders, alive, jaxpr.outs)
        eqns = alive
