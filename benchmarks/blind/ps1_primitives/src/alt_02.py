# task: ps1.abstract_eval
# what: abstract eval via operator.index-style normalisation and aval.update
# %% abstract_eval
def weighted_sum_abstract_eval(x, w, *, axis):
    # ps1.abstract_eval: a ShapedArray for the result; TypeError for operands that do not fit.
    if axis < 0:
        axis += x.ndim
    if axis < 0 or axis >= x.ndim:
        raise TypeError("axis out of range")
    if w.shape != (x.shape[axis],):
        raise TypeError(f"w must have shape {(x.shape[axis],)}, got {w.shape}")
    if w.dtype != x.dtype:
        raise TypeError("x and w must have the same dtype")
    shape = tuple(d for i, d in enumerate(x.shape) if i != axis)
    return x.update(shape=shape, weak_type=x.weak_type and w.weak_type)


weighted_sum_p.def_abstract_eval(weighted_sum_abstract_eval)
