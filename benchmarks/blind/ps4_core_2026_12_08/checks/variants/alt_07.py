# task: fold_constants
def fold_constants(jaxpr, consts):
    # ps4.fold_constants
    # Which variables are constant, forwards.
    constant = set(jaxpr.constvars)
    foldable, kept = [], []
    for eqn in jaxpr.eqns:
        if all(isinstance(x, Lit) or x in constant for x in eqn.inputs):
            foldable.append(eqn)
            constant.update(eqn.out_binders)
        else:
            kept.append(eqn)
    reads = [x for e in kept for x in e.inputs] + list(jaxpr.outs)
    still_read = set(x for x in reads if isinstance(x, Var) and x in constant)
    originals = [v for v in jaxpr.constvars if v in still_read]
    results = [v for e in foldable for v in e.out_binders if v in still_read]
    # Run the foldable equations now: a jaxpr of them alone, evaluated with bind.
    values = eval_jaxpr(Jaxpr(jaxpr.constvars, [], foldable, originals + results), consts, [])
    new_vars = {v: Var(ShapedArray(np.shape(val), np.result_type(val)))
                for v, val in zip(results, values[len(originals):])}
    sub = lambda a: new_vars.get(a, a) if isinstance(a, Var) else a
    eqns = [JaxprEqn(e.primitive, [sub(x) for x in e.inputs], e.params, e.out_binders) for e in kept]
    new = Jaxpr(originals + [new_vars[v] for v in results], jaxpr.in_binders, eqns,
                [sub(o) for o in jaxpr.outs])
    return new, list(values)
