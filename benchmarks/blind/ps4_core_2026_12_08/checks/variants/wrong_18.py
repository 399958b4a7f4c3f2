# task: fold_constants
def fold_constants(jaxpr, consts):
    # ps4.fold_constants
    known = dict(zip(jaxpr.constvars, consts))  # Var -> value, for constvars and folded results
    folded = set()                              # the Vars that folded equations bound

    def is_const(atom):
        return isinstance(atom, Lit) or atom in known

    def value(atom):
        return atom.val if isinstance(atom, Lit) else known[atom]

    kept = []
    for eqn in jaxpr.eqns:
        variables = [x for x in eqn.inputs if isinstance(x, Var)]
        if variables and all(x in known for x in variables):
            outs = bind(eqn.primitive, *[value(x) for x in eqn.inputs], **eqn.params)
            for v, val in zip(eqn.out_binders, outs):
                known[v] = val
                folded.add(v)
        else:
            kept.append(eqn)

    # Which constants are still read, in order: original constvars, then folded results.
    read = []
    for atom in [x for eqn in kept for x in eqn.inputs] + list(jaxpr.outs):
        if isinstance(atom, Var) and atom in known and atom not in read:
            read.append(atom)
    originals = [v for v in jaxpr.constvars if v in read]
    results = [v for eqn in jaxpr.eqns for v in eqn.out_binders if v in folded and v in read]

    renamed = {}
    for v in results:
        val = known[v]
        renamed[v] = Var(ShapedArray(np.shape(val), np.result_type(val)))

    def rename(atom):
        return renamed.get(atom, atom) if isinstance(atom, Var) else atom

    new_eqns = [JaxprEqn(e.primitive, [rename(x) for x in e.inputs], e.params, list(e.out_binders))
                for e in kept]
    new_constvars = originals + [renamed[v] for v in results]
    values = [known[v] for v in originals] + [known[v] for v in results]
    new_jaxpr = Jaxpr(new_constvars, list(jaxpr.in_binders), new_eqns,
                      [rename(o) for o in jaxpr.outs])
    return new_jaxpr, values
