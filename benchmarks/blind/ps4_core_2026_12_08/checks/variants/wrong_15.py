# task: dce
def dce_jaxpr(jaxpr):
    # ps4.dce
    producer = {v: eqn for eqn in jaxpr.eqns for v in eqn.out_binders}
    needed = set()  # ids of the equations an output needs

    def visit(atom):
        if isinstance(atom, Lit) or atom in jaxpr.in_binders:
            return
        eqn = producer[atom]
        if id(eqn) not in needed:
            needed.add(id(eqn))
            for x in eqn.inputs:
                visit(x)

    for out in jaxpr.outs:
        visit(out)
    eqns = [eqn for eqn in jaxpr.eqns if id(eqn) in needed]
    return Jaxpr(jaxpr.constvars, jaxpr.in_binders, eqns, jaxpr.outs)
