"""The main process of a class grading: ``grade()`` and the stages around the workers.

Finds the submissions, hands them to the workers (autograder.worker) or a Dask cluster, and is
the only writer of every output: results JSON, feedback pages, ``grades.csv``, the gradebook and
the class summary. Where every folder's code runs: autograder/README.md, "Where code runs".
Imports nothing.
"""
