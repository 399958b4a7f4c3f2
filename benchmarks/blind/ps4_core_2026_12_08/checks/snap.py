"""Deep snapshots of a jaxpr (and constants) to detect in-place changes."""
import numpy as np


def snap_jaxpr(j, ns):
    Jaxpr = ns["Jaxpr"]

    def param(v):
        if isinstance(v, Jaxpr):
            return ("jaxpr", id(v), snap_jaxpr(v, ns))
        if isinstance(v, tuple) and any(isinstance(b, Jaxpr) for b in v):
            return ("tuple", tuple(param(b) for b in v))
        return ("val", repr(v))

    return (id(j), id(j.constvars), tuple(map(id, j.constvars)), id(j.in_binders),
            tuple(map(id, j.in_binders)), id(j.eqns),
            tuple((id(e), e.primitive, id(e.inputs), tuple(map(id, e.inputs)), id(e.params),
                   tuple((k, param(v)) for k, v in e.params.items()), id(e.out_binders),
                   tuple(map(id, e.out_binders)), tuple((v.aval.shape, str(v.aval.dtype)) for v in e.out_binders))
                  for e in j.eqns),
            id(j.outs), tuple(map(id, j.outs)),
            tuple((v.aval.shape, str(v.aval.dtype)) for v in j.constvars + j.in_binders))


def snap_consts(consts):
    return (id(consts), len(consts), [id(c) for c in consts], [np.array(c, copy=True) for c in consts])


def same_consts(a, b):
    return (a[0] == b[0] and a[1] == b[1] and a[2] == b[2]
            and all(x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y, equal_nan=True)
                    for x, y in zip(a[3], b[3])))
