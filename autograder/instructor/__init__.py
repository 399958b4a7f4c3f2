"""Instructor commands around grading: release, demo classes, exports, the Gradescope bundle.

Each runs in the main process of its own command; ``release``, ``export`` and ``gradescope``
never import JAX. Where every folder's code runs: autograder/README.md, "Where code runs".
Imports nothing.
"""
