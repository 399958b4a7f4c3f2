"""Code that runs inside the student's sandboxed process.

Imported by each worker's fork server before any notebook is seen and guarded there
(autograder.student.guard fingerprints these modules). The grader's side imports ``channel`` (the
other end of the socket), ``sandbox`` (to start the fork server) and constants only. Where every
folder's code runs: autograder/README.md, "Where code runs". Imports nothing.
"""
