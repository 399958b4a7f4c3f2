"""The grader's side of one submission, in a pool worker (or a Dask worker).

Reads and normalises the notebook, applies the cell policy, starts the sandboxed child
(autograder.student), computes expectations with real JAX and judges the child's answers. Returns
plain data to the main process (autograder.grade). Where every folder's code runs:
autograder/README.md, "Where code runs". Imports nothing.
"""
