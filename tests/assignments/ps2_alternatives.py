"""ps2's correct alternatives now live with its mutants (autograder/assignments/ps2_autodidax/
alternatives.py, reached as ``mutants.ALTERNATIVES``); this name stays for the scripts that import
it (benchmarks/seed_sweep.py)."""

from autograder.assignments.ps2_autodidax.mutants import ALTERNATIVES

__all__ = ["ALTERNATIVES"]
