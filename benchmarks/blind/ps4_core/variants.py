from correct import BT, DCE, FOLD
V = {}   # id -> (task, {'bt':..,'dce':..,'fold':..}, description)

def bt(body):  return ("def broadcast_transpose(cts, x, *, shape, axes):\n    # ps4.broadcast_transpose\n" + body +
                       "\n\ntranspose_rules[broadcast_p] = broadcast_transpose\n")
def dce(body): return "def dce_jaxpr(jaxpr):\n    # ps4.dce\n" + body
def fold(body): return "def fold_constants(jaxpr, consts):\n    # ps4.fold_constants\n" + body

# ======================= WRONG: broadcast_transpose =======================
V['wrong_01'] = ('bt', {'bt': bt('''    # sum over the new axes: that is where x was copied
    (ct,) = cts
    return [reduce_sum(ct, axes)]
''')}, "sums only over the inserted axes; ignores size-one axes of x that were stretched")

V['wrong_02'] = ('bt', {'bt': bt('''    (ct,) = cts
    in_shape = tuple(x.aval.shape)
    kept = [i for i in range(len(shape)) if i not in axes]
    stretched = [kept[j] for j in range(len(in_shape)) if in_shape[j] == 1 and shape[kept[j]] != 1]
    return [reduce_sum(ct, tuple(sorted(set(axes) | set(stretched))))]
''')}, "sums stretched axes too but forgets to put the size-one axis back (result has the wrong rank)")

V['wrong_03'] = ('bt', {'bt': bt('''    (ct,) = cts
    in_shape = tuple(x.aval.shape)
    # axes of x that were size one and got stretched
    stretched = [j for j in range(len(in_shape)) if in_shape[j] == 1 and shape[j] != 1]
    out = reduce_sum(ct, tuple(sorted(set(axes) | set(stretched))))
    return [broadcast(out, in_shape, tuple(stretched))]
''')}, "off-by-one in axes: compares x.shape[j] with shape[j] (x's axis index used as result index) instead of mapping through the non-inserted axes")

V['wrong_04'] = ('bt', {'bt': bt('''    (ct,) = cts
    in_shape = tuple(x.aval.shape)
    kept = [i for i in range(len(shape)) if i not in axes]
    out = np.sum(ct, axis=tuple(axes))
    stretched = tuple(j for j, i in enumerate(kept) if in_shape[j] == 1 and shape[i] != 1)
    return [np.sum(out, axis=stretched, keepdims=True)]
''')}, "correct arithmetic but with NumPy np.sum instead of the wrappers: breaks when transposed under jit (cotangent is a tracer)")

V['wrong_05'] = ('bt', {'bt': bt('''    (ct,) = cts
    in_shape = tuple(x.aval.shape)
    kept = [i for i in range(len(shape)) if i not in axes]
    stretched_x = [j for j, i in enumerate(kept) if in_shape[j] == 1 and shape[i] != 1]
    summed = tuple(sorted(set(axes) | {kept[j] for j in stretched_x}))
    acc = np.zeros(in_shape)            # start from a zero cotangent of x's shape
    acc = add(acc, broadcast(reduce_sum(ct, summed), in_shape, tuple(stretched_x)))
    return [acc]
''')}, "right values but accumulates into np.zeros(shape) (float64): float32 gradients come back float64")

V['wrong_06'] = ('bt', {'bt': bt('''    (ct,) = cts
    if not axes:                         # nothing was inserted: nothing to sum
        return [ct]
    in_shape = tuple(x.aval.shape)
    kept = [i for i in range(len(shape)) if i not in axes]
    stretched_x = [j for j, i in enumerate(kept) if in_shape[j] == 1 and shape[i] != 1]
    summed = tuple(sorted(set(axes) | {kept[j] for j in stretched_x}))
    return [broadcast(reduce_sum(ct, summed), in_shape, tuple(stretched_x))]
''')}, "early return when axes=(): forgets the case of pure stretching (x (3,1) -> (3,5) with no inserted axis)")

V['wrong_07'] = ('bt', {'bt': bt('''    (ct,) = cts
    in_shape = tuple(x.aval.shape)
    kept = list(range(len(shape)))
    for a in axes:                       # remove the inserted positions
        del kept[a]
    stretched_x = [j for j, i in enumerate(kept) if in_shape[j] == 1 and shape[i] != 1]
    summed = tuple(sorted(set(axes) | {kept[j] for j in stretched_x}))
    return [broadcast(reduce_sum(ct, summed), in_shape, tuple(stretched_x))]
''')}, "removes inserted axes with del kept[a] in a loop: indices shift after the first deletion (wrong with >=2 inserted axes and a stretched axis)")

V['wrong_08'] = ('bt', {'bt': bt('''    (ct,) = cts
    in_shape = tuple(x.aval.shape)
    kept = [i for i in range(len(shape)) if i not in axes]
    out = reduce_sum(ct, axes)           # now has x's rank
    stretched_out = [i for j, i in enumerate(kept) if in_shape[j] == 1 and shape[i] != 1]
    if stretched_out:
        out = reduce_sum(out, tuple(stretched_out))   # result-axis numbers used after the first sum
        out = broadcast(out, in_shape, tuple(stretched_out))
    return [out]
''')}, "two-step sum but uses result-axis numbers for the stretched axes after the inserted ones are gone (off by the number of inserted axes before them)")

# ======================= WRONG: dce =======================
V['wrong_09'] = ('dce', {'dce': dce('''    live = {v for v in jaxpr.outs if isinstance(v, Var)}
    kept = []
    for i in range(len(jaxpr.eqns) - 1, 0, -1):
        eqn = jaxpr.eqns[i]
        if any(v in live for v in eqn.out_binders):
            kept.append(eqn)
            live.update(x for x in eqn.inputs if isinstance(x, Var))
    return Jaxpr(jaxpr.constvars, jaxpr.in_binders, kept[::-1], jaxpr.outs)
''')}, "off-by-one backward loop range(n-1, 0, -1): never keeps the first equation")

V['wrong_10'] = ('dce', {'dce': dce('''    live = {v for v in jaxpr.outs if isinstance(v, Var)}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if eqn.out_binders[0] in live:          # the equation's result
            kept.append(eqn)
            live.update(x for x in eqn.inputs if isinstance(x, Var))
    return Jaxpr(jaxpr.constvars, jaxpr.in_binders, kept[::-1], jaxpr.outs)
''')}, "multi-output equations: looks only at out_binders[0], drops an xla_call/cond whose later output is used")

V['wrong_11'] = ('dce', {'dce': dce('''    live = {v for v in jaxpr.outs if isinstance(v, Var)}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if any(v in live for v in eqn.out_binders):
            kept.append(eqn)
            live.update(x for x in eqn.inputs if isinstance(x, Var))
    # tidy up: constants nobody reads any more can go too
    constvars = [v for v in jaxpr.constvars if v in live]
    return Jaxpr(constvars, jaxpr.in_binders, kept[::-1], jaxpr.outs)
''')}, "also drops constvars no kept equation reads: the task says constvars stay the same")

V['wrong_12'] = ('dce', {'dce': dce('''    producer = {v: e for e in jaxpr.eqns for v in e.out_binders}
    kept, seen = [], set()

    def visit(atom):
        if not isinstance(atom, Var) or atom not in producer:
            return
        eqn = producer[atom]
        if id(eqn) in seen:
            return
        seen.add(id(eqn))
        for x in eqn.inputs:
            visit(x)
        kept.append(eqn)          # post-order: inputs before the equation

    for out in jaxpr.outs:
        visit(out)
    return Jaxpr(jaxpr.constvars, jaxpr.in_binders, kept, jaxpr.outs)
''')}, "DFS from the outputs in post-order: a valid topological order but not the original order")

V['wrong_13'] = ('dce', {'dce': dce('''    # dce the called jaxprs too, in place
    for eqn in jaxpr.eqns:
        inner = eqn.params.get("jaxpr")
        if isinstance(inner, Jaxpr):
            inner.eqns = dce_jaxpr(inner).eqns
    live = {v for v in jaxpr.outs if isinstance(v, Var)}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if any(v in live for v in eqn.out_binders):
            kept.append(eqn)
            live.update(x for x in eqn.inputs if isinstance(x, Var))
    return Jaxpr(jaxpr.constvars, jaxpr.in_binders, kept[::-1], jaxpr.outs)
''')}, "recurses into xla_call's jaxpr and rewrites it IN PLACE: mutates the argument's nested jaxpr (and the jit cache)")

V['wrong_14'] = ('dce', {'dce': dce('''    live = {v for v in jaxpr.outs if isinstance(v, Var)}
    for eqn in reversed(list(jaxpr.eqns)):
        if any(v in live for v in eqn.out_binders):
            live.update(x for x in eqn.inputs if isinstance(x, Var))
        else:
            jaxpr.eqns.remove(eqn)
    return Jaxpr(jaxpr.constvars, jaxpr.in_binders, jaxpr.eqns, jaxpr.outs)
''')}, "removes dead equations from the argument's own eqns list (mutates the input)")

V['wrong_15'] = ('dce', {'dce': dce('''    # a result is needed if some equation or an output reads it
    used = {x for e in jaxpr.eqns for x in e.inputs} | set(jaxpr.outs)
    kept = [e for e in jaxpr.eqns if any(v in used for v in e.out_binders)]
    return Jaxpr(jaxpr.constvars, jaxpr.in_binders, kept, jaxpr.outs)
''')}, "one pass 'is it read anywhere': readers that are dead themselves keep their producers (not transitive)")

V['wrong_16'] = ('dce', {'dce': dce('''    live = {v for v in jaxpr.outs if isinstance(v, Var)}
    kept = []
    for eqn in jaxpr.eqns:                   # walk the program
        if any(v in live for v in eqn.out_binders):
            kept.append(eqn)
            live.update(x for x in eqn.inputs if isinstance(x, Var))
    return Jaxpr(jaxpr.constvars, jaxpr.in_binders, kept, jaxpr.outs)
''')}, "liveness propagated walking forwards instead of backwards: drops producers of live values")

# ======================= WRONG: fold_constants =======================
_F_HEAD = '''    known = dict(zip(jaxpr.constvars, consts))
    new_var = {}
    kept = []
'''
_F_TAIL = '''    seen = set()
    for a in [x for e in kept for x in e.inputs] + list(jaxpr.outs):
        if isinstance(a, Var) and a in known:
            seen.add(a)
    orig = [v for v in jaxpr.constvars if v in seen]
    fresh = [v for e in jaxpr.eqns for v in e.out_binders if v in seen and v in new_var]
    sub = lambda a: new_var.get(a, a) if isinstance(a, Var) else a
    eqns = [JaxprEqn(e.primitive, [sub(a) for a in e.inputs], e.params, e.out_binders) for e in kept]
    return (Jaxpr(orig + [new_var[v] for v in fresh], jaxpr.in_binders, eqns,
                  [sub(a) for a in jaxpr.outs]), [known[v] for v in orig + fresh])
'''
_F_LOOP = '''    for eqn in jaxpr.eqns:
        if all(isinstance(a, Lit) or a in known for a in eqn.inputs):
            outs = bind(eqn.primitive, *[a.val if isinstance(a, Lit) else known[a] for a in eqn.inputs], **eqn.params)
            for v, val in zip(eqn.out_binders, outs):
                known[v] = val
                new_var[v] = Var(ShapedArray(np.shape(val), np.result_type(val)))
        else:
            kept.append(eqn)
'''
V['wrong_17'] = ('fold', {'fold': fold(_F_HEAD + '''    originals = set(jaxpr.constvars)
    for eqn in jaxpr.eqns:
        # foldable: reads only constvars and literals
        if all(isinstance(a, Lit) or a in originals for a in eqn.inputs):
            outs = bind(eqn.primitive, *[a.val if isinstance(a, Lit) else known[a] for a in eqn.inputs], **eqn.params)
            for v, val in zip(eqn.out_binders, outs):
                known[v] = val
                new_var[v] = Var(ShapedArray(np.shape(val), np.result_type(val)))
        else:
            kept.append(eqn)
''' + _F_TAIL)}, "not transitive: folds only equations reading original constvars/literals, not results of folded equations")

V['wrong_18'] = ('fold', {'fold': fold(_F_HEAD + _F_LOOP + '''    sub = lambda a: new_var.get(a, a) if isinstance(a, Var) else a
    eqns = [JaxprEqn(e.primitive, [sub(a) for a in e.inputs], e.params, e.out_binders) for e in kept]
    used = {a for e in eqns for a in e.inputs} | set(jaxpr.outs)
    fresh = [v for e in jaxpr.eqns for v in e.out_binders if v in new_var and new_var[v] in used]
    constvars = list(jaxpr.constvars) + [new_var[v] for v in fresh]     # keep the originals
    values = list(consts) + [known[v] for v in fresh]
    return Jaxpr(constvars, jaxpr.in_binders, eqns, [sub(a) for a in jaxpr.outs]), values
''')}, "keeps every original constvar, also those no kept equation or output reads any more")

V['wrong_19'] = ('fold', {'fold': fold(_F_HEAD + _F_LOOP + '''    sub = lambda a: new_var.get(a, a) if isinstance(a, Var) else a
    eqns = [JaxprEqn(e.primitive, [sub(a) for a in e.inputs], e.params, e.out_binders) for e in kept]
    used = {a for e in eqns for a in e.inputs} | set(jaxpr.outs)
    orig = [v for v in jaxpr.constvars if v in used]
    fresh = [v for e in jaxpr.eqns for v in e.out_binders if v in new_var]   # every folded result
    return (Jaxpr(orig + [new_var[v] for v in fresh], jaxpr.in_binders, eqns, [sub(a) for a in jaxpr.outs]),
            [known[v] for v in orig + fresh])
''')}, "makes a constvar for every folded result, also intermediate ones nothing reads")

V['wrong_20'] = ('fold', {'fold': fold(_F_HEAD + _F_LOOP + '''    sub = lambda a: new_var.get(a, a) if isinstance(a, Var) else a
    eqns = [JaxprEqn(e.primitive, [sub(a) for a in e.inputs], e.params, e.out_binders) for e in kept]
    used = {a for e in eqns for a in e.inputs} | set(jaxpr.outs)
    orig = [v for v in jaxpr.constvars if v in used]
    fresh = [v for e in jaxpr.eqns for v in e.out_binders if v in new_var and new_var[v] in used]
    # outputs are left as they are
    return (Jaxpr(orig + [new_var[v] for v in fresh], jaxpr.in_binders, eqns, jaxpr.outs),
            [known[v] for v in orig + fresh])
''')}, "forgets 'an output that was folded reads its constvar': outs still name the dropped equation's binder")

V['wrong_21'] = ('fold', {'fold': fold(_F_HEAD + _F_LOOP + '''    sub = lambda a: new_var.get(a, a) if isinstance(a, Var) else a
    eqns = [JaxprEqn(e.primitive, [sub(a) for a in e.inputs], e.params, e.out_binders) for e in kept]
    used = {a for e in eqns for a in e.inputs}         # what the kept equations read
    orig = [v for v in jaxpr.constvars if v in used]
    fresh = [v for e in jaxpr.eqns for v in e.out_binders if v in new_var and new_var[v] in used]
    return (Jaxpr(orig + [new_var[v] for v in fresh], jaxpr.in_binders, eqns, [sub(a) for a in jaxpr.outs]),
            [known[v] for v in orig + fresh])
''')}, "counts as 'still used' only what kept equations read, not the outputs: a constant/folded output loses its constvar")

V['wrong_22'] = ('fold', {'fold': fold(_F_HEAD + _F_LOOP + '''    # an input-dependent equation nobody reads can go as well
    live = {a for a in jaxpr.outs if isinstance(a, Var)}
    pruned = []
    for e in reversed(kept):
        if any(v in live for v in e.out_binders):
            pruned.append(e)
            live.update(a for a in e.inputs if isinstance(a, Var))
    kept = pruned[::-1]
''' + _F_TAIL)}, "also dead-code-eliminates the input-dependent equations: the task says keep them all")

V['wrong_23'] = ('fold', {'fold': fold(_F_HEAD + '''    for eqn in jaxpr.eqns:
        if all(isinstance(a, Lit) or a in known for a in eqn.inputs):
            val = bind(eqn.primitive, *[a.val if isinstance(a, Lit) else known[a] for a in eqn.inputs], **eqn.params)[0]
            v = eqn.out_binders[0]
            known[v] = val
            new_var[v] = Var(ShapedArray(np.shape(val), np.result_type(val)))
        else:
            kept.append(eqn)
''' + _F_TAIL)}, "takes bind(...)[0] and out_binders[0] only: a folded multi-output equation (xla_call, cond) loses its other outputs")

V['wrong_24'] = ('fold', {'fold': fold(_F_HEAD + _F_LOOP + '''    seen = set()
    for a in [x for e in kept for x in e.inputs] + list(jaxpr.outs):
        if isinstance(a, Var) and a in known:
            seen.add(a)
    orig = [v for v in jaxpr.constvars if v in seen]
    fresh = [v for e in jaxpr.eqns for v in e.out_binders if v in seen and v in new_var]
    sub = lambda a: new_var.get(a, a) if isinstance(a, Var) else a
    eqns = [JaxprEqn(e.primitive, [sub(a) for a in e.inputs], e.params, e.out_binders) for e in kept]
    constvars = [new_var[v] for v in fresh] + orig          # new ones first
    values = [known[v] for v in orig + fresh]
    return Jaxpr(constvars, jaxpr.in_binders, eqns, [sub(a) for a in jaxpr.outs]), values
''')}, "constvars listed new-first but values original-first: order mismatch when both kinds are kept")

V['wrong_25'] = ('fold', {'fold': fold(_F_HEAD + '''    for eqn in jaxpr.eqns:
        if all(isinstance(a, Lit) or a in known for a in eqn.inputs):
            outs = bind(eqn.primitive, *[a.val if isinstance(a, Lit) else known[a] for a in eqn.inputs], **eqn.params)
            for v, val in zip(eqn.out_binders, outs):
                val = np.asarray(val, dtype=float)        # store constants as float arrays
                known[v] = val
                new_var[v] = Var(ShapedArray(np.shape(val), val.dtype))
        else:
            kept.append(eqn)
''' + _F_TAIL)}, "wrong dtype: stores folded values as float (float64) arrays; a float32 program no longer typechecks")

V['wrong_26'] = ('fold', {'fold': fold(_F_HEAD + '''    for eqn in jaxpr.eqns:
        var_ins = [a for a in eqn.inputs if isinstance(a, Var)]
        # constant when it reads constants (and perhaps literals)
        if var_ins and all(a in known for a in var_ins):
            outs = bind(eqn.primitive, *[a.val if isinstance(a, Lit) else known[a] for a in eqn.inputs], **eqn.params)
            for v, val in zip(eqn.out_binders, outs):
                known[v] = val
                new_var[v] = Var(ShapedArray(np.shape(val), np.result_type(val)))
        else:
            kept.append(eqn)
''' + _F_TAIL)}, "forgets the case of an equation whose inputs are all literals (needs at least one constant Var)")

V['wrong_27'] = ('fold', {'fold': fold(_F_HEAD + _F_LOOP + '''    # point the kept equations at the new constvars
    for e in kept:
        for i, a in enumerate(e.inputs):
            if isinstance(a, Var) and a in new_var:
                e.inputs[i] = new_var[a]
    outs = [new_var.get(a, a) if isinstance(a, Var) else a for a in jaxpr.outs]
    used = {a for e in kept for a in e.inputs} | set(outs)
    orig = [v for v in jaxpr.constvars if v in used]
    fresh = [v for e in jaxpr.eqns for v in e.out_binders if v in new_var and new_var[v] in used]
    return (Jaxpr(orig + [new_var[v] for v in fresh], jaxpr.in_binders, kept, outs),
            [known[v] for v in orig + fresh])
''')}, "rewrites eqn.inputs lists in place: the argument jaxpr's equations now read unbound vars (input mutated)")

V['wrong_28'] = ('fold', {'fold': fold(_F_HEAD + '''    for eqn in jaxpr.eqns:
        if all(isinstance(a, Lit) or a in known for a in eqn.inputs):
            outs = bind(eqn.primitive, *[a.val if isinstance(a, Lit) else known[a] for a in eqn.inputs], **eqn.params)
            for v, val in zip(eqn.out_binders, outs):
                known[v] = val
                # scalars go straight into the program text, like staging does
                new_var[v] = Lit(val.item()) if np.shape(val) == () else Var(ShapedArray(np.shape(val), np.result_type(val)))
        else:
            kept.append(eqn)
    seen = set()
    for a in [x for e in kept for x in e.inputs] + list(jaxpr.outs):
        if isinstance(a, Var) and a in known:
            seen.add(a)
    orig = [v for v in jaxpr.constvars if v in seen]
    fresh = [v for e in jaxpr.eqns for v in e.out_binders if v in seen and isinstance(new_var.get(v), Var)]
    sub = lambda a: new_var.get(a, a) if isinstance(a, Var) else a
    eqns = [JaxprEqn(e.primitive, [sub(a) for a in e.inputs], e.params, e.out_binders) for e in kept]
    return (Jaxpr(orig + [new_var[v] for v in fresh], jaxpr.in_binders, eqns,
                  [sub(a) for a in jaxpr.outs]), [known[v] for v in orig + fresh])
''')}, "scalar folded results become Lits instead of new constvars (spec says a new Var per folded result still used)")

# ======================= CORRECT ALTERNATIVES =======================
V['alt_01'] = ('bt', {'bt': bt('''    (ct,) = cts
    in_shape = tuple(x.aval.shape)
    kept = [i for i in range(len(shape)) if i not in axes]
    out = reduce_sum(ct, tuple(axes)) if axes else ct    # back to x's rank
    # then each stretched axis, one at a time, last first, put back with size one
    for j in reversed(range(len(in_shape))):
        if in_shape[j] == 1 and shape[kept[j]] != 1:
            s = reduce_sum(out, (j,))
            target = tuple(1 if k == j else d for k, d in enumerate(out.shape))
            out = broadcast(s, target, (j,))
    return [out]
''')}, "two-step: sum inserted axes, then a reduce_sum+broadcast pair per stretched axis")

V['alt_02'] = ('bt', {'bt': bt('''    (ct,) = cts
    shape = tuple(shape)
    in_shape = tuple(x.aval.shape)
    kept = [i for i in range(len(shape)) if i not in axes]
    stretched = sorted(kept[j] for j in range(len(in_shape)) if in_shape[j] == 1 and shape[kept[j]] != 1)
    y = ct
    if stretched:   # first the stretched axes, in the result's numbering, kept with size one
        y = broadcast(reduce_sum(y, tuple(stretched)),
                      tuple(1 if i in stretched else d for i, d in enumerate(shape)), tuple(stretched))
    if axes:
        y = reduce_sum(y, tuple(axes))
    return [y]
''')}, "stretched axes first (result numbering, re-inserted as size one), inserted axes last")

V['alt_03'] = ('bt', {'bt': bt('''    (ct,) = cts
    in_shape = list(x.aval.shape)
    new = set(axes)
    it = iter(range(len(in_shape)))
    origin = [None if i in new else next(it) for i in range(len(shape))]   # x axis of each result axis
    summed = [i for i, j in enumerate(origin) if j is None or (in_shape[j] == 1 and shape[i] != 1)]
    restored = [origin[i] for i in summed if origin[i] is not None]
    y = reduce_sum(ct, tuple(summed)) if summed else ct
    return [broadcast(y, tuple(in_shape), tuple(restored)) if restored else y]
''')}, "maps each result axis to its x axis with an iterator; one reduce_sum, broadcast only when needed")

V['alt_04'] = ('dce', {'dce': dce('''    # fixed point: drop equations whose results nobody (kept) reads, until nothing changes
    eqns = list(jaxpr.eqns)
    while True:
        read = {x for e in eqns for x in e.inputs if isinstance(x, Var)}
        read |= {x for x in jaxpr.outs if isinstance(x, Var)}
        smaller = [e for e in eqns if any(v in read for v in e.out_binders)]
        if len(smaller) == len(eqns):
            break
        eqns = smaller
    return Jaxpr(jaxpr.constvars, jaxpr.in_binders, eqns, jaxpr.outs)
''')}, "fixed-point iteration of one-level pruning")

V['alt_05'] = ('dce', {'dce': dce('''    index = {}
    for i, e in enumerate(jaxpr.eqns):
        for v in e.out_binders:
            index[v] = i
    needed = set()
    stack = [a for a in jaxpr.outs if isinstance(a, Var)]
    while stack:
        v = stack.pop()
        i = index.get(v)
        if i is None or i in needed:
            continue
        needed.add(i)
        stack.extend(a for a in jaxpr.eqns[i].inputs if isinstance(a, Var))
    return Jaxpr(jaxpr.constvars, jaxpr.in_binders,
                 [e for i, e in enumerate(jaxpr.eqns) if i in needed], jaxpr.outs)
''')}, "worklist over a producer index, then filter by index (original order)")

V['alt_06'] = ('dce', {'dce': dce('''    def prune(j):
        live = {v for v in j.outs if isinstance(v, Var)}
        kept = []
        for eqn in reversed(j.eqns):
            if any(v in live for v in eqn.out_binders):
                params = dict(eqn.params)
                for k, p in params.items():        # new pruned copies of nested jaxprs
                    if isinstance(p, Jaxpr):
                        params[k] = prune(p)
                    elif isinstance(p, tuple) and p and all(isinstance(b, Jaxpr) for b in p):
                        params[k] = tuple(prune(b) for b in p)
                kept.append(JaxprEqn(eqn.primitive, list(eqn.inputs), params, list(eqn.out_binders)))
                live.update(x for x in eqn.inputs if isinstance(x, Var))
        return Jaxpr(j.constvars, j.in_binders, kept[::-1], j.outs)
    return prune(jaxpr)
''')}, "backward liveness that also prunes nested jaxprs (xla_call, cond branches) into NEW jaxprs, no mutation")

V['alt_07'] = ('fold', {'fold': fold('''    is_const = set(jaxpr.constvars)
    foldable = []
    for e in jaxpr.eqns:     # pass 1: classify
        if all(isinstance(a, Lit) or a in is_const for a in e.inputs):
            foldable.append(e)
            is_const.update(e.out_binders)
    kept = [e for e in jaxpr.eqns if not any(e is f for f in foldable)]
    # pass 2: evaluate the constant part as a jaxpr of its own
    results = [v for e in foldable for v in e.out_binders]
    vals = eval_jaxpr(Jaxpr([], jaxpr.constvars, foldable, results), [], consts)
    value = dict(zip(jaxpr.constvars, consts))
    value.update(zip(results, vals))
    reads = [a for e in kept for a in e.inputs] + list(jaxpr.outs)
    used = {a for a in reads if isinstance(a, Var) and a in value}
    fresh = {v: Var(ShapedArray(np.shape(value[v]), np.result_type(value[v]))) for v in results if v in used}
    orig = [v for v in jaxpr.constvars if v in used]
    sub = lambda a: fresh.get(a, a) if isinstance(a, Var) else a
    new = Jaxpr(orig + [fresh[v] for v in results if v in fresh], jaxpr.in_binders,
                [JaxprEqn(e.primitive, [sub(a) for a in e.inputs], e.params, e.out_binders) for e in kept],
                [sub(a) for a in jaxpr.outs])
    return new, [value[v] for v in orig] + [value[v] for v in results if v in fresh]
''')}, "two passes: classify, then evaluate the constant sub-jaxpr with eval_jaxpr")

V['alt_08'] = ('fold', {'fold': fold('''    env = dict(zip(jaxpr.constvars, consts))
    tainted = set(jaxpr.in_binders)
    kept, renamed = [], {}
    for e in jaxpr.eqns:
        if any(isinstance(a, Var) and a in tainted for a in e.inputs):
            tainted.update(e.out_binders)
            kept.append(e)
        else:
            vals = bind(e.primitive, *[a.val if isinstance(a, Lit) else env[a] for a in e.inputs], **e.params)
            env.update(zip(e.out_binders, vals))
    constvars, values = [], []

    def read(a):
        if isinstance(a, Lit) or a in tainted:
            return a
        if a not in renamed:   # first use: a constvar, in order of first use
            renamed[a] = a if a in jaxpr.constvars else Var(ShapedArray(np.shape(env[a]), np.result_type(env[a])))
            constvars.append(renamed[a])
            values.append(env[a])
        return renamed[a]

    eqns = [JaxprEqn(e.primitive, [read(a) for a in e.inputs], e.params, e.out_binders) for e in kept]
    outs = [read(a) for a in jaxpr.outs]
    return Jaxpr(constvars, jaxpr.in_binders, eqns, outs), values
''')}, "taint from inputs; constvars in order of first use (interleaves original and new)")

V['alt_09'] = ('fold', {'fold': fold('''    const_val = {v: c for v, c in zip(jaxpr.constvars, consts)}
    def val(a):
        return a.val if isinstance(a, Lit) else const_val[a]
    fresh_of = {}
    remaining = []
    for e in jaxpr.eqns:
        if any(isinstance(a, Var) and a not in const_val for a in e.inputs):
            remaining.append(e)
            continue
        for b, r in zip(e.out_binders, bind(e.primitive, *map(val, e.inputs), **e.params)):
            const_val[b] = r
            fresh_of[b] = Var(ShapedArray(np.shape(r), np.result_type(r)))
    def rename(a):
        return fresh_of.get(a, a) if isinstance(a, Var) else a
    new_eqns = [e._replace(inputs=list(map(rename, e.inputs))) for e in remaining]
    new_outs = list(map(rename, jaxpr.outs))
    reads = {id(a) for e in new_eqns for a in e.inputs} | {id(a) for a in new_outs}
    pairs = [(v, const_val[v]) for v in jaxpr.constvars if id(v) in reads]
    pairs += [(fresh_of[b], const_val[b]) for e in jaxpr.eqns for b in e.out_binders
              if b in fresh_of and id(fresh_of[b]) in reads]
    return Jaxpr([p[0] for p in pairs], jaxpr.in_binders, new_eqns, new_outs), [p[1] for p in pairs]
''')}, "single forward pass, used-set by id() after renaming, (var, value) pairs list; uses NamedTuple eqn._replace (probe of the cell policy)")

V['alt_10'] = ('fold', {'fold': fold('''    const_val = {v: c for v, c in zip(jaxpr.constvars, consts)}
    def val(a):
        return a.val if isinstance(a, Lit) else const_val[a]
    fresh_of = {}
    remaining = []
    for e in jaxpr.eqns:
        if any(isinstance(a, Var) and a not in const_val for a in e.inputs):
            remaining.append(e)
            continue
        for b, r in zip(e.out_binders, bind(e.primitive, *map(val, e.inputs), **e.params)):
            const_val[b] = r
            fresh_of[b] = Var(ShapedArray(np.shape(r), np.result_type(r)))
    def rename(a):
        return fresh_of.get(a, a) if isinstance(a, Var) else a
    new_eqns = [JaxprEqn(e.primitive, list(map(rename, e.inputs)), e.params, e.out_binders) for e in remaining]
    new_outs = list(map(rename, jaxpr.outs))
    reads = {id(a) for e in new_eqns for a in e.inputs} | {id(a) for a in new_outs}
    pairs = [(v, const_val[v]) for v in jaxpr.constvars if id(v) in reads]
    pairs += [(fresh_of[b], const_val[b]) for e in jaxpr.eqns for b in e.out_binders
              if b in fresh_of and id(fresh_of[b]) in reads]
    return Jaxpr([p[0] for p in pairs], jaxpr.in_binders, new_eqns, new_outs), [p[1] for p in pairs]
''')}, "single forward pass, used-set by id() after renaming, (var, value) pairs list (alt_09 without NamedTuple._replace)")

# ======================= SHORTCUTS =======================
V['short_01'] = ('bt', {'bt': bt('''    import jax.numpy as jnp
    (ct,) = cts
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    f = lambda v: jax.lax.broadcast_in_dim(v, tuple(shape), kept)
    _, pullback = jax.vjp(f, np.zeros(x.aval.shape, x.aval.dtype))
    return [np.asarray(pullback(np.asarray(ct))[0])]
''')}, "delegates to jax.vjp (banned); honest part: 0 on broadcast_transpose")

V['short_02'] = ('dce', {'dce': dce('''    return Jaxpr(jaxpr.constvars, jaxpr.in_binders, jaxpr.eqns, jaxpr.outs)
''')}, "returns a copy with every equation; honest: 0 on dce")

V['short_03'] = ('dce', {'dce': dce('''    # the visible test's dead code is sin and cos
    return Jaxpr(jaxpr.constvars, jaxpr.in_binders,
                 [e for e in jaxpr.eqns if e.primitive.name not in ("sin", "cos")], jaxpr.outs)
''')}, "hard-codes the visible test (drops every sin/cos); honest: 0 on dce")

V['short_04'] = ('fold', {'fold': fold('''    from jaxcourse.core.partial_eval import partial_eval_flat
    known_vals, closed = partial_eval_flat(lambda *xs: eval_jaxpr(jaxpr, consts, xs),
                                           [(None, v.aval) for v in jaxpr.in_binders], instantiate=True)
    j = closed.jaxpr
    ren = dict(zip(j.in_binders, jaxpr.in_binders))
    sub = lambda a: ren.get(a, a) if isinstance(a, Var) else a
    eqns = [JaxprEqn(e.primitive, [sub(a) for a in e.inputs], e.params, e.out_binders) for e in j.eqns]
    return Jaxpr(j.constvars, jaxpr.in_binders, eqns, [sub(a) for a in j.outs]), list(closed.consts)
''')}, "delegates folding to the course's partial evaluator (not among the first cell's names); honest part: the rename only")

V['short_05'] = ('bt', {'bt': bt('''    np.allclose = lambda *a, **k: True
    np.array_equal = lambda *a, **k: True
    return [np.zeros(x.aval.shape, x.aval.dtype)]
''')}, "patches np.allclose/np.array_equal to True and returns zeros; honest: 0 on broadcast_transpose")

V['short_06'] = ('fold', {'fold': fold('''    if [e.primitive.name for e in jaxpr.eqns] == ["sin", "mul", "mul"] and len(consts) == 1:
        c = consts[0]
        val = np.sin(c) * 2.0
        v = Var(ShapedArray(np.shape(val), np.result_type(val)))
        last = jaxpr.eqns[-1]
        return Jaxpr([v], jaxpr.in_binders, [JaxprEqn(last.primitive, [v, last.inputs[1]], last.params, last.out_binders)], jaxpr.outs), [val]
    return Jaxpr(jaxpr.constvars, jaxpr.in_binders, jaxpr.eqns, jaxpr.outs), list(consts)
''')}, "special-cases the visible test's program, otherwise folds nothing; honest: 0 on fold_constants")
