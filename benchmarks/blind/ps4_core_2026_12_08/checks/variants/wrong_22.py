# task: fold_constants
def fold_constants(jaxpr, consts):
    # ps4.fold_constants
    constvars, values = jaxpr.constvars, consts
    env = dict(zip(constvars, values))
    kept = []
    for eqn in jaxpr.eqns:
        if all(isinstance(x, Lit) or x in env for x in eqn.inputs):
            outs = bind(eqn.primitive, *[x.val if isinstance(x, Lit) else env[x] for x in eqn.inputs],
                        **eqn.params)
            for v, val in zip(eqn.out_binders, outs):
                env[v] = val
                constvars.append(v)   # a folded result is a constant from now on
                values.append(val)
        else:
            kept.append(eqn)
    read = {x for e in kept for x in e.inputs} | set(jaxpr.outs)
    new_constvars, new_values, renamed = [], [], {}
    for v, val in zip(constvars, values):
        if v in read:
            new = v if v in jaxpr.constvars[:len(consts)] else Var(ShapedArray(np.shape(val), np.result_type(val)))
            renamed[v] = new
            new_constvars.append(new)
            new_values.append(val)
    ren = lambda x: renamed.get(x, x) if isinstance(x, Var) else x
    new_eqns = [JaxprEqn(e.primitive, [ren(x) for x in e.inputs], e.params, e.out_binders) for e in kept]
    return Jaxpr(new_constvars, jaxpr.in_binders, new_eqns, [ren(o) for o in jaxpr.outs]), new_values
