"""The rest of JAX's core, built on the interpreter of Part II (``jaxcourse.autodidax``).

Part IV of the book shows this code:

- ``jaxprs``: the jaxpr data structure, its printer and type checker, evaluating a jaxpr, and
  staging a Python function into a jaxpr by tracing (``make_jaxpr``);
- ``jit``: a call primitive carrying a jaxpr, its lowering to StableHLO, compilation through the
  installed backend and a cache keyed by signature, with its JVP and batching rules;
- ``partial_eval``: splitting a program into known and unknown parts, ``linearize``;
- ``transpose``: transposing linear jaxprs, ``vjp`` and ``grad``;
- ``control_flow``: ``cond`` as a primitive whose branches are jaxprs;
- ``stackless``: a small model of the single-current-trace design of JAX today.
"""
