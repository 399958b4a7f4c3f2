"""Problem set 2, the Autodidax interpreters: hidden checks (checks.py, grader side), probes
(probes.py, student side), the random programs both sides build (programs.py), and realistic
wrong solutions (mutants.py, for the tests and the demo class)."""
