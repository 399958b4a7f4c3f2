# task: dce
def _dce_eqns(jaxpr):
    live = {x for x in jaxpr.outs if isinstance(x, Var)}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if any(v in live for v in eqn.out_binders):
            # jit and cond equations hold jaxprs with dead code of their own: clean them too.
            for value in eqn.params.values():
                for inner in (value if isinstance(value, tuple) else (value,)):
                    if isinstance(inner, Jaxpr):
                        inner.eqns = _dce_eqns(inner)
            kept.insert(0, eqn)
            live.update(x for x in eqn.inputs if isinstance(x, Var))
    return kept


def dce_jaxpr(jaxpr):
    # ps4.dce
    return Jaxpr(jaxpr.constvars, jaxpr.in_binders, _dce_eqns(jaxpr), jaxpr.outs)
