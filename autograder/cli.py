"""``python -m autograder``: each command parses its options and calls one package function."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autograder.grading import UsageError
from autograder.runner import Limits


def _grade(args: argparse.Namespace) -> int:
    from autograder.grading import grade

    limits = Limits(cell_timeout_s=args.cell_timeout, notebook_timeout_s=args.notebook_timeout,
                    memory_mb=args.memory_mb, namespaces=not args.no_namespaces,
                    cell_policy=not args.no_cell_policy)
    grade(assignment=args.assignment, submitted=args.submitted, out=args.out,
          workers=args.workers, db_url=args.db, root=args.root, package=args.package,
          seed=args.seed, limits=limits, progress=not args.no_progress)
    return 0


def _release(args: argparse.Namespace) -> int:
    try:
        from autograder.release import release_all
    except ImportError as err:
        raise UsageError(f"release is not available in this checkout ({err})") from None
    release_all(root=args.root)
    return 0


def _demo(args: argparse.Namespace) -> int:
    from autograder.demo import demo

    demo(root=args.root, out=args.out, assignments=args.assignment or None,
         package=args.package, workers=args.workers)
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m autograder",
                                description="Release, grade and demo the course's assignments.")
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("grade", help="grade a class of submissions (nbgrader layout)")
    g.add_argument("assignment")
    g.add_argument("submitted", type=Path, help="SUBMITTED/<student>/<assignment>/*.ipynb")
    g.add_argument("--out", type=Path, required=True)
    g.add_argument("--workers", type=int, default=None, help="default: number of cores")
    g.add_argument("--db", default=None, help="gradebook URL (default sqlite in the root)")
    g.add_argument("--root", type=Path, default=Path("."), help="course root")
    g.add_argument("--package", default="autograder.assignments", help=argparse.SUPPRESS)
    g.add_argument("--seed", default=None, help="input seed instead of the course secret file")
    g.add_argument("--cell-timeout", type=float, default=Limits.cell_timeout_s)
    g.add_argument("--notebook-timeout", type=float, default=Limits.notebook_timeout_s)
    g.add_argument("--memory-mb", type=int, default=Limits.memory_mb)
    g.add_argument("--no-namespaces", action="store_true",
                   help="skip Linux namespaces (limits and the channel still apply)")
    g.add_argument("--no-cell-policy", action="store_true",
                   help="run student cells unchecked (only to test the OS walls behind the policy)")
    g.add_argument("--no-progress", action="store_true")
    g.set_defaults(func=_grade)
    r = sub.add_parser("release", help="regenerate assignments/ from solutions/")
    r.add_argument("--root", type=Path, default=Path("."))
    r.set_defaults(func=_release)
    d = sub.add_parser("demo", help="build a demo class per assignment and grade it")
    d.add_argument("assignment", nargs="*")
    d.add_argument("--root", type=Path, default=Path("."))
    d.add_argument("--out", type=Path, default=Path("_build/demo"))
    d.add_argument("--package", default="autograder.assignments", help=argparse.SUPPRESS)
    d.add_argument("--workers", type=int, default=None)
    d.set_defaults(func=_demo)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except UsageError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
