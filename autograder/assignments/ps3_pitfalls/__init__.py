"""Assignment ps3_pitfalls: fix the FAQ pitfalls of Part III, graded under the transformations
that expose each bug (see checks.py for the grader side, probes.py for the student side)."""
