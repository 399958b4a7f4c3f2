# task: dce
def dce_jaxpr(jaxpr):
    # ps4.dce
    producer = {}
    for index, eqn in enumerate(jaxpr.eqns):
        for v in eqn.out_binders:
            producer[v] = index
    needed = set()
    stack = [o for o in jaxpr.outs if isinstance(o, Var)]
    while stack:
        v = stack.pop()
        index = producer.get(v)  # None for inputs and constants
        if index is None or index in needed:
            continue
        needed.add(index)
        stack.extend(x for x in jaxpr.eqns[index].inputs if isinstance(x, Var))
    eqns = [eqn for index, eqn in enumerate(jaxpr.eqns) if index in needed]
    return Jaxpr(jaxpr.constvars, jaxpr.in_binders, eqns, jaxpr.outs)
