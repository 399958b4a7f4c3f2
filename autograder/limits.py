"""What an instructor sets for a grading run, importable without JAX: the command line builds
these (autograder.cli) before anything heavy is imported."""

from __future__ import annotations

from dataclasses import dataclass


class UsageError(Exception):
    """Bad arguments: unknown assignment, missing directory (exit status 2)."""


@dataclass(frozen=True)
class Limits:
    """The limits of one submission's processes (autograder.worker.runner enforces them)."""

    cell_timeout_s: float = 60.0
    notebook_timeout_s: float = 600.0  # all children of one submission together
    memory_mb: int = 3072
    nproc: int = 512  # processes and threads of one submission (XLA threads count)
    disk_mb: int = 256
    output_chars: int = 200_000
    cell_output_chars: int = 20_000
    max_restarts: int = 3
    namespaces: bool = True
    cell_policy: bool = True  # autograder.worker.policy; off only to test the walls behind it
