# task: dce
def dce_jaxpr(jaxpr):
    # ps4.dce
    # An equation is dead when nothing reads its results.
    read = {x for eqn in jaxpr.eqns for x in eqn.inputs if isinstance(x, Var)}
    read |= {x for x in jaxpr.outs if isinstance(x, Var)}
    eqns = [eqn for eqn in jaxpr.eqns if any(v in read for v in eqn.out_binders)]
    return Jaxpr(jaxpr.constvars, jaxpr.in_binders, eqns, jaxpr.outs)
