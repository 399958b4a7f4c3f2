"""A from-scratch core of JAX in plain Python and NumPy, the code of Part II of the book.

Transformations are interpreters stacked on top of each other:

- ``core``: primitives, ``bind``, the interpreter stack, ``Trace``/``Tracer``, abstract values and
  the evaluation interpreter at the bottom of the stack;
- ``jvp``: forward-mode differentiation;
- ``pytree``: flattening containers so that transformations only ever see lists of arrays;
- ``batching``: the machinery of ``vmap`` (the batch tracer and trace, moving batch axes);
- ``vmap``: the batching rules, ``vmap`` itself and ``jacfwd``.

The book chapters import these modules and show their source, so the code lives only here.
"""
