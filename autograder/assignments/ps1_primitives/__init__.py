"""Problem set 1, `multiply_add` as a primitive: hidden checks (checks.py, grader side), probes
(probes.py, student side) and realistic wrong solutions (mutants.py, for tests and the demo)."""
