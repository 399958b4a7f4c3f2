# task: fold_constants
def fold_constants(jaxpr, consts):
    # ps4.fold_constants
    values = {}                                  # Var -> value
    binder = {}                                  # folded Var -> its new constvar
    for v, c in zip(jaxpr.constvars, consts):
        values[v] = c
    kept = []
    for eqn in jaxpr.eqns:
        args = []
        for x in eqn.inputs:
            if isinstance(x, Lit):
                args.append(x.val)
            elif x in values:
                args.append(values[x])
            else:
                break
        else:
            for v, val in zip(eqn.out_binders, bind(eqn.primitive, *args, **eqn.params)):
                values[v] = val
                binder[v] = Var(ShapedArray(np.shape(val), np.result_type(val)))
            continue
        kept.append(eqn)

    def sub(x):
        return binder.get(x, x) if isinstance(x, Var) else x

    eqns = [e._replace(inputs=[sub(x) for x in e.inputs]) for e in kept]
    outs = [sub(o) for o in jaxpr.outs]
    read = {x for e in eqns for x in e.inputs} | set(outs)
    originals = [v for v in jaxpr.constvars if v in read]
    results = [v for v in binder if binder[v] in read]   # dicts keep insertion (equation) order
    return (Jaxpr(originals + [binder[v] for v in results], jaxpr.in_binders, eqns, outs),
            [values[v] for v in originals + results])
