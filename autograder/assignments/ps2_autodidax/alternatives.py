"""Correct solutions of ps2_autodidax written differently from the reference: other formulas,
other batch axes for the outputs, other ways of walking pytrees. Each must earn every point and
pass every visible test. ``ALTERNATIVES[name] = (description, {grade_id: cell source})``; the
cells not named are the reference's. Reached as ``mutants.ALTERNATIVES``, like the other
assignments' (autograder/README.md). Grader side: never imported in the student's process."""

from __future__ import annotations

JVP_A = '''
def exp_jvp(primals, tangents):
    x, = primals
    dx, = tangents
    return [exp(x)], [mul(dx, exp(x))]


def log_jvp(primals, tangents):
    x, = primals
    dx, = tangents
    return [log(x)], [dx * div(1.0, x)]


def div_jvp(primals, tangents):
    x, y = primals
    dx, dy = tangents
    inv = div(1.0, y)
    return [div(x, y)], [dx * inv + neg(x * dy * inv * inv)]


def max_jvp(primals, tangents):
    x, y = primals
    dx, dy = tangents
    gt = greater(x, y) * 1.0
    lt = less(x, y) * 1.0
    eq = 1.0 + neg(gt + lt)
    return [maximum(x, y)], [gt * dx + lt * dy + eq * 0.5 * (dx + dy)]


jvp_rules[exp_p] = exp_jvp
jvp_rules[log_p] = log_jvp
jvp_rules[div_p] = div_jvp
jvp_rules[max_p] = max_jvp
'''

JVP_B = '''
def unary_rule(f, slope):
    def rule(primals, tangents):
        (x,), (dx,) = primals, tangents
        return [f(x)], [slope(x) * dx]

    return rule


exp_jvp = unary_rule(exp, exp)
log_jvp = unary_rule(log, lambda x: div(1.0, x))


def div_jvp(primals, tangents):
    (x, y), (dx, dy) = primals, tangents
    return [div(x, y)], [div(mul(dx, y) + neg(mul(x, dy)), mul(y, y))]


def max_jvp(primals, tangents):
    (x, y), (dx, dy) = primals, tangents
    weight = div(1.0 + greater(x, y) * 1.0 + neg(less(x, y) * 1.0), 2.0)
    return [maximum(x, y)], [weight * dx + (1.0 + neg(weight)) * dy]


for prim, rule in [(exp_p, exp_jvp), (log_p, log_jvp), (div_p, div_jvp), (max_p, max_jvp)]:
    jvp_rules[prim] = rule
'''

MATMUL_A = '''
def matmul_jvp(primals, tangents):
    x, y = primals
    dx, dy = tangents
    return [matmul(x, y)], [add(matmul(dx, y), matmul(x, dy))]


def matmul_batch(axis_size, vals_in, dims_in):
    # The batch axis goes just before the two matrix axes, the last stack axis.
    x, y = vals_in
    bx, by = dims_in
    member_rank = max(np.ndim(x) - (bx is not not_mapped), np.ndim(y) - (by is not not_mapped))
    dst = member_rank - 2
    x = move_batch_axis(axis_size, bx, dst, x)
    y = move_batch_axis(axis_size, by, dst, y)
    return [matmul(x, y)], [dst]


jvp_rules[matmul_p] = matmul_jvp
vmap_rules[matmul_p] = matmul_batch
'''

MATMUL_B = '''
def matmul_jvp(primals, tangents):
    (x, y), (dx, dy) = primals, tangents
    first = matmul(dx, y)
    second = matmul(x, dy)
    return [matmul(x, y)], [first + second]


def to_front(axis_size, bdim, v):
    if bdim is not_mapped:
        return broadcast(v, (axis_size, *np.shape(v)), (0,))
    order = [bdim] + [i for i in range(np.ndim(v)) if i != bdim]
    return transpose(v, order)


def matmul_batch(axis_size, vals_in, dims_in):
    x, y = (to_front(axis_size, d, v) for v, d in zip(vals_in, dims_in))
    return [matmul(x, y)], [0]


jvp_rules[matmul_p] = matmul_jvp
vmap_rules[matmul_p] = matmul_batch
'''

SHAPE_A = '''
def transpose_batch(axis_size, vals_in, dims_in, *, perm):
    (x,), (bdim,) = vals_in, dims_in
    if bdim is not_mapped:
        return [transpose(x, perm)], [not_mapped]
    # The batch axis stays where it is; the member axes around it are permuted.
    batched = [p if p < bdim else p + 1 for p in perm]
    batched.insert(bdim, bdim)
    return [transpose(x, batched)], [bdim]


def broadcast_batch(axis_size, vals_in, dims_in, *, shape, axes):
    (x,), (bdim,) = vals_in, dims_in
    if bdim is not_mapped:
        return [broadcast(x, shape, axes)], [not_mapped]
    x = move_batch_axis(axis_size, bdim, np.ndim(x) - 1, x)  # the batch axis last
    return [broadcast(x, tuple(shape) + (axis_size,), tuple(axes))], [len(shape)]


vmap_rules[transpose_p] = transpose_batch
vmap_rules[broadcast_p] = broadcast_batch
'''

SHAPE_B = '''
def transpose_batch(axis_size, vals_in, dims_in, *, perm):
    x, = vals_in
    bdim, = dims_in
    x = move_batch_axis(axis_size, bdim, 0, x)
    return [transpose(x, (0,) + tuple(p + 1 for p in perm))], [0]


def broadcast_batch(axis_size, vals_in, dims_in, *, shape, axes):
    x, = vals_in
    bdim, = dims_in
    x = move_batch_axis(axis_size, bdim, 0, x)
    return [broadcast(x, (axis_size,) + tuple(shape), tuple(a + 1 for a in axes))], [0]


vmap_rules[transpose_p] = transpose_batch
vmap_rules[broadcast_p] = broadcast_batch
'''

OUT_A = '''
def full_axes(prefix, tree):
    """The axes as a tree of tree's own structure, a prefix's int or None copied to each leaf."""
    if prefix is None or isinstance(prefix, int):
        leaves, treedef = tree_flatten(tree)
        return tree_unflatten(treedef, [prefix] * len(leaves))
    if type(prefix) is not type(tree):
        raise ValueError("the axes do not match the tree")
    if isinstance(tree, dict):
        if sorted(prefix) != sorted(tree):
            raise ValueError("the axes do not match the tree's keys")
        return {k: full_axes(prefix[k], tree[k]) for k in tree}
    if len(prefix) != len(tree):
        raise ValueError("the axes do not match the tree's length")
    return type(tree)(full_axes(p, t) for p, t in zip(prefix, tree))


def vmap_axes(f, in_axes=0, out_axes=0):
    def batched(*args):
        flat_args, in_tree = tree_flatten(args)
        flat_axes = tree_flatten(full_axes(in_axes, args))[0]
        norm = []
        for x, ax in zip(flat_args, flat_axes):
            if ax is None:
                norm.append(not_mapped)
                continue
            nd = np.ndim(x)
            if ax >= nd or ax < -nd:
                raise ValueError("in_axes out of range")
            norm.append(ax + nd if ax < 0 else ax)
        sizes = set(np.shape(x)[ax] for x, ax in zip(flat_args, norm) if ax is not not_mapped)
        if len(sizes) != 1:
            raise ValueError("mapped axes of different sizes")
        size = sizes.pop()
        f_flat, out_store = flatten_fun(f, in_tree)
        with new_main(BatchTrace, size) as main:
            trace = BatchTrace(main)
            ins = [x if ax is not_mapped else BatchTracer(trace, x, ax)
                   for x, ax in zip(flat_args, norm)]
            outs = [full_raise(trace, o) for o in f_flat(*ins)]
        out_tree = out_store()
        targets = tree_flatten(full_axes(out_axes, tree_unflatten(out_tree, [o.val for o in outs])))[0]
        results = []
        for o, t in zip(outs, targets):
            if t is None:
                if o.batch_dim is not not_mapped:
                    raise ValueError("out_axes None for a mapped output")
                results.append(o.val)
            else:
                nd = np.ndim(o.val) + (1 if o.batch_dim is not_mapped else 0)
                if not -nd <= t < nd:
                    raise ValueError("out_axes out of range")
                results.append(move_batch_axis(size, o.batch_dim, t % nd, o.val))
        return tree_unflatten(out_tree, results)

    return batched
'''

OUT_B = '''
def leaf_axes(spec, tree, out):
    if spec is None or isinstance(spec, int):
        out.extend([spec] * len(tree_flatten(tree)[0]))
    elif isinstance(spec, dict) and isinstance(tree, dict) and set(spec) == set(tree):
        for key in sorted(tree):
            leaf_axes(spec[key], tree[key], out)
    elif type(spec) in (list, tuple) and type(spec) is type(tree) and len(spec) == len(tree):
        for s, t in zip(spec, tree):
            leaf_axes(s, t, out)
    else:
        raise ValueError(f"axes {spec!r} do not fit")
    return out


def place(size, bdim, dst, val):
    if bdim is not_mapped:
        shape = list(np.shape(val))
        shape.insert(dst, size)
        return broadcast(val, shape, [dst])
    order = list(range(np.ndim(val)))
    order.remove(bdim)
    order.insert(dst, bdim)
    return transpose(val, order)


def checked(axis, rank):
    if axis < -rank or axis >= rank:
        raise ValueError(f"axis {axis} for rank {rank}")
    return axis if axis >= 0 else axis + rank


def vmap_axes(f, in_axes=0, out_axes=0):
    def batched(*args):
        leaves, in_tree = tree_flatten(args)
        dims = [not_mapped if a is None else checked(a, np.ndim(x))
                for a, x in zip(leaf_axes(in_axes, args, []), leaves)]
        size = None
        for x, d in zip(leaves, dims):
            if d is not not_mapped:
                if size is not None and np.shape(x)[d] != size:
                    raise ValueError("batch sizes differ")
                size = np.shape(x)[d]
        if size is None:
            raise ValueError("nothing to map over")
        flat_f, store = flatten_fun(f, in_tree)
        with new_main(BatchTrace, size) as main:
            trace = BatchTrace(main)
            outs = flat_f(*[x if d is not_mapped else BatchTracer(trace, x, d)
                            for x, d in zip(leaves, dims)])
            pairs = [(o.val, o.batch_dim) for o in (full_raise(trace, o) for o in outs)]
        tree = store()
        wanted = leaf_axes(out_axes, tree_unflatten(tree, [v for v, _ in pairs]), [])
        done = []
        for (val, bdim), dst in zip(pairs, wanted):
            if dst is None and bdim is not not_mapped:
                raise ValueError("a mapped output cannot have out_axes None")
            if dst is None:
                done.append(val)
            else:
                done.append(place(size, bdim, checked(dst, np.ndim(val) + (bdim is not_mapped)), val))
        return tree_unflatten(tree, done)

    return batched
'''

ALTERNATIVES = {
    "alt_jvp_inverse": ("JVP rules through 1/x and masks for greater, less and ties",
                        {"jvp_rules": JVP_A}),
    "alt_jvp_quotient": ("JVP rules from a rule factory, the quotient rule, and a weight",
                         {"jvp_rules": JVP_B}),
    "alt_matmul_stack_axis": ("matmul batched along the last stack axis, not the first",
                              {"matmul": MATMUL_A}),
    "alt_matmul_transpose": ("matmul batched with transpose and broadcast written out",
                             {"matmul": MATMUL_B}),
    "alt_shape_in_place": ("transpose keeps the batch axis in place; broadcast puts it last",
                           {"shape_rules": SHAPE_A}),
    "alt_shape_front_always": ("both rules move every operand's batch axis (even unmapped) first",
                               {"shape_rules": SHAPE_B}),
    "alt_out_full_trees": ("vmap_axes expands prefixes into full trees of axes",
                           {"out_axes": OUT_A}),
    "alt_out_walk": ("vmap_axes walks dicts, lists and tuples itself and moves axes by hand",
                     {"out_axes": OUT_B}),
    "alt_all_a": ("every task written the first other way",
                  {"jvp_rules": JVP_A, "matmul": MATMUL_A, "shape_rules": SHAPE_A,
                   "out_axes": OUT_A}),
    "alt_all_b": ("every task written the second other way",
                  {"jvp_rules": JVP_B, "matmul": MATMUL_B, "shape_rules": SHAPE_B,
                   "out_axes": OUT_B}),
}
