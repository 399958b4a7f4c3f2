# CORRECT reference solutions (the three task cell bodies)
BT = '''def broadcast_transpose(cts, x, *, shape, axes):
    # ps4.broadcast_transpose
    (ct,) = cts
    in_shape = tuple(x.aval.shape)
    shape = tuple(shape)
    kept = [i for i in range(len(shape)) if i not in axes]   # result axes that are x's axes
    stretched_x = [j for j, i in enumerate(kept) if in_shape[j] == 1 and shape[i] != 1]
    summed = tuple(sorted(set(axes) | {kept[j] for j in stretched_x}))
    out = reduce_sum(ct, summed)
    out = broadcast(out, in_shape, tuple(stretched_x))
    return [out]


transpose_rules[broadcast_p] = broadcast_transpose
'''

DCE = '''def dce_jaxpr(jaxpr):
    # ps4.dce
    live = {v for v in jaxpr.outs if isinstance(v, Var)}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if any(v in live for v in eqn.out_binders):
            kept.append(eqn)
            live.update(x for x in eqn.inputs if isinstance(x, Var))
    kept.reverse()
    return Jaxpr(jaxpr.constvars, jaxpr.in_binders, kept, jaxpr.outs)
'''

FOLD = '''def fold_constants(jaxpr, consts):
    # ps4.fold_constants
    known = dict(zip(jaxpr.constvars, consts))   # Var -> value, for every constant
    new_var = {}                                 # folded Var -> its fresh constvar
    kept = []

    def is_const(a):
        return isinstance(a, Lit) or a in known

    def value(a):
        return a.val if isinstance(a, Lit) else known[a]

    for eqn in jaxpr.eqns:
        if all(is_const(a) for a in eqn.inputs):
            outs = bind(eqn.primitive, *[value(a) for a in eqn.inputs], **eqn.params)
            for v, val in zip(eqn.out_binders, outs):
                known[v] = val
                new_var[v] = Var(ShapedArray(np.shape(val), np.result_type(val)))
        else:
            kept.append(eqn)
    used = []
    seen = set()
    for a in [x for e in kept for x in e.inputs] + list(jaxpr.outs):
        if isinstance(a, Var) and a in known and a not in seen:
            seen.add(a)
    orig = [v for v in jaxpr.constvars if v in seen]
    fresh = [v for e in jaxpr.eqns for v in e.out_binders if v in seen and v in new_var]
    sub = lambda a: new_var.get(a, a) if isinstance(a, Var) else a
    eqns = [JaxprEqn(e.primitive, [sub(a) for a in e.inputs], e.params, e.out_binders) for e in kept]
    constvars = orig + [new_var[v] for v in fresh]
    values = [known[v] for v in orig + fresh]
    return Jaxpr(constvars, jaxpr.in_binders, eqns, [sub(a) for a in jaxpr.outs]), values
'''
