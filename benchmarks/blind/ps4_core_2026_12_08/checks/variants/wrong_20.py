# task: fold_constants
def fold_constants(jaxpr, consts):
    # ps4.fold_constants
    env = {v: c for v, c in zip(jaxpr.constvars, consts)}
    folded_vars = set()
    kept = []
    for eqn in jaxpr.eqns:
        if all(isinstance(x, Lit) or x in env for x in eqn.inputs):
            vals = [x.val if isinstance(x, Lit) else env[x] for x in eqn.inputs]
            outs = bind(eqn.primitive, *vals, **eqn.params)
            env.update(zip(eqn.out_binders, outs))
            folded_vars.update(eqn.out_binders)
        else:
            kept.append(eqn)
    new_constvars, values = [], []
    used_orig = set()

    def as_atom(x):
        # every read of a constant gets its binder
        if isinstance(x, Var) and x in folded_vars:
            v = Var(ShapedArray(np.shape(env[x]), np.result_type(env[x])))
            new_constvars.append(v)
            values.append(env[x])
            return v
        if isinstance(x, Var) and x in env:
            used_orig.add(x)
        return x

    new_eqns = [JaxprEqn(e.primitive, [as_atom(x) for x in e.inputs], e.params, e.out_binders)
                for e in kept]
    new_outs = [as_atom(x) for x in jaxpr.outs]
    originals = [v for v in jaxpr.constvars if v in used_orig]
    return (Jaxpr(originals + new_constvars, jaxpr.in_binders, new_eqns, new_outs),
            [env[v] for v in originals] + values)
