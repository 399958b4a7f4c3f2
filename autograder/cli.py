"""``python -m autograder``: each command parses its options and calls one package function."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autograder.grade.messages import LANGS

# Light imports only: `export`, `release`, `gradescope` and `--help` never start JAX (the
# grading engine is imported by the command that needs it).
from autograder.limits import Limits, UsageError
from autograder.results import GRADER_FAILED_EXIT
from autograder.text import clean_text

FEEDBACK_DIRECTORY = Path("_build/nbgrader/feedback")  # nbgrader_config.py's feedback_directory


def _grade(args: argparse.Namespace) -> int:
    from autograder.grade.grading import grade
    from autograder.grade.stopping import become_subreaper

    # A worker's fork server or resource tracker whose worker died first comes to this process,
    # not pid 1, so that an interrupted run can kill it (autograder.grade.stopping).
    become_subreaper()
    limits = Limits(cell_timeout_s=args.cell_timeout, notebook_timeout_s=args.notebook_timeout,
                    memory_mb=args.memory_mb, namespaces=not args.no_namespaces,
                    cell_policy=not args.no_cell_policy)
    run = grade(assignment=args.assignment, submitted=args.submitted, out=args.out,
                workers=args.workers, db_url=args.db, root=args.root, package=args.package,
                seed=args.seed, limits=limits, progress=not args.no_progress, dask=args.dask,
                students=args.student, lang=args.lang, regrade_all=args.regrade_all)
    if run.interrupted is not None:
        return 128 + run.interrupted
    if run.grader_failed_all:
        first = clean_text(next(iter(run.grader_failures.values())), 300)
        print(f"error: every submission ({len(run.details)}) failed for a grader-side reason, "
              f"not its own (the first: {first}); the grader needs fixing, not the class",
              file=sys.stderr)
        return GRADER_FAILED_EXIT
    return 0


def _release(args: argparse.Namespace) -> int:
    from autograder.instructor.release import ReleaseError, release_all

    try:
        release_all(root=args.root, report=lambda line: print(line, flush=True),
                    only=args.assignment)
    except ReleaseError as err:
        raise UsageError(str(err)) from None
    return 0


def _demo(args: argparse.Namespace) -> int:
    from autograder.instructor.demo import demo

    demo(root=args.root, out=args.out, assignments=args.assignment or None,
         package=args.package, workers=args.workers, lang=args.lang)
    return 0


def _export(args: argparse.Namespace) -> int:
    from autograder.instructor import exports

    if not (args.graded / "grades.csv").is_file():
        raise UsageError(f"{args.graded} holds no grades.csv (run `grade` first)")
    if args.format == "gradescope":
        if not args.student:
            raise UsageError("export gradescope needs the student id")
        if exports.results_path(args.graded, args.student) is None:
            raise UsageError(f"no results for student {args.student!r} in {args.graded}")
        exports.write_gradescope(args.graded, args.student, args.dest or Path("results.json"),
                                 visibility=args.visibility, test_visibility=args.visibility)
        return 0
    if args.format == "gradescope-scores":
        emails = exports.gradebook_emails(args.db) if args.db else {}
        text = exports.gradescope_scores_csv(args.graded, emails=emails)
    else:
        text = exports.canvas_csv(args.graded, column=args.column, roster=args.roster)
    if args.dest:
        args.dest.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


def _feedback(args: argparse.Namespace) -> int:
    from autograder.instructor.handback import lay_out

    release = args.root / "assignments" / args.assignment / f"{args.assignment}.ipynb"
    if not release.is_file():
        raise UsageError(f"release notebook {release} not found (run `release` first)")
    # The course's nbgrader_config.py sets this feedback_directory.
    dest = args.dest or args.root / FEEDBACK_DIRECTORY
    done = lay_out(assignment=args.assignment, notebook=release.name, submitted=args.submitted,
                   graded=args.graded, dest=dest)
    print(f"feedback of {len(done)} students laid out in {dest}/<student>/{args.assignment}/; "
          f"hand it back with `nbgrader release_feedback {args.assignment}`")
    return 0


def _bundle(args: argparse.Namespace) -> int:
    from autograder.instructor.gradescope import build_bundle

    print(build_bundle(assignment=args.assignment, root=args.root, dest=args.out))
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m autograder",
                                description="Release, grade and demo the course's assignments.")
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser(
        "grade", help="grade a class of submissions (nbgrader layout)",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        epilog=f"Exit status: 0 when the class was graded (whatever the submissions scored, "
               f"some of them errors); 2 on a usage error; {GRADER_FAILED_EXIT} when every "
               f"submission failed for a grader-side reason (its worker failed, or every check "
               f"was an error of the grader's, such as inputs that are not plain data): the "
               f"grader needs fixing. The outputs are written in every case. Each student's "
               f"results are written as they are graded: Ctrl-C or SIGTERM stops the run "
               f"(exit 130 or 143) and keeps them, and the same command again grades only "
               f"the rest.")
    g.add_argument("assignment")
    g.add_argument("submitted", type=Path, help="SUBMITTED/<student>/<assignment>/*.ipynb")
    g.add_argument("--out", type=Path, required=True)
    g.add_argument("--workers", type=int, default=None, help="default: number of cores")
    g.add_argument("--db", default=None, help="gradebook URL (default sqlite in the root)")
    g.add_argument("--root", type=Path, default=Path("."), help="course root")
    g.add_argument("--package", default="autograder.assignments", help=argparse.SUPPRESS)
    g.add_argument("--seed", default=None, help="input seed instead of the course secret file")
    g.add_argument("--cell-timeout", type=float, default=Limits.cell_timeout_s,
                   help="seconds per cell (a cell stopped once runs again with twice this)")
    g.add_argument("--notebook-timeout", type=float, default=Limits.notebook_timeout_s,
                   help="seconds for all of one submission's processes together")
    g.add_argument("--memory-mb", type=int, default=Limits.memory_mb,
                   help="MiB of memory for all of one submission's processes together")
    g.add_argument("--no-namespaces", action="store_true",
                   help="skip Linux namespaces (limits and the channel still apply)")
    g.add_argument("--no-cell-policy", action="store_true",
                   help="run student cells unchecked (only to test the OS walls behind the policy)")
    g.add_argument("--no-progress", action="store_true")
    g.add_argument("--dask", metavar="ADDRESS", default=None,
                   help="grade on the Dask cluster whose scheduler is at ADDRESS "
                        "(e.g. tcp://10.0.0.5:8786) instead of the local pool")
    g.add_argument("--student", action="append", default=None, metavar="ID",
                   help="grade only this student (repeatable) and merge into the class in OUT")
    g.add_argument("--lang", choices=LANGS, default=None,
                   help="language of the feedback pages and the summary (grades are the same); "
                        "default: each page in its notebook's language (the Chinese notebook "
                        "says it is Chinese), the summary in the class's one language, else "
                        "English")
    g.add_argument("--regrade-all", action="store_true",
                   help="grade every submission again, even those whose results in OUT are for "
                        "the same notebook, timestamp and settings (kept otherwise)")
    g.set_defaults(func=_grade)
    r = sub.add_parser("release", help="regenerate assignments/ from solutions/",
                       description="Release the named assignments (solutions/NAME/NAME.md -> "
                                   "assignments/NAME/NAME.ipynb, nbgrader generate_assignment, "
                                   "seconds each); every assignment when none is named.")
    r.add_argument("assignment", nargs="*", metavar="NAME",
                   help="an assignment to release (repeatable; default: all)")
    r.add_argument("--root", type=Path, default=Path("."))
    r.set_defaults(func=_release)
    d = sub.add_parser("demo", help="build a demo class per assignment and grade it")
    d.add_argument("assignment", nargs="*")
    d.add_argument("--root", type=Path, default=Path("."))
    d.add_argument("--out", type=Path, default=Path("_build/demo"))
    d.add_argument("--package", default="autograder.assignments", help=argparse.SUPPRESS)
    d.add_argument("--workers", type=int, default=None)
    d.add_argument("--lang", choices=LANGS, default="en",
                   help="language of the feedback pages and the summaries")
    d.set_defaults(func=_demo)
    e = sub.add_parser("export", help="grades for Gradescope or Canvas, from a graded OUT",
                       description="gradescope: one student's results.json (a Gradescope "
                                   "autograder's output); gradescope-scores: the whole class as "
                                   "a CSV for Gradescope's score upload (SID, Email, one column "
                                   "per task, Total Score, Status); canvas: Canvas's gradebook "
                                   "import CSV. No grade (error, missing) is an empty cell.")
    e.add_argument("format", choices=["gradescope", "gradescope-scores", "canvas"])
    e.add_argument("graded", type=Path, help="the OUT folder of a `grade` run")
    e.add_argument("student", nargs="?", help="gradescope: the student whose results.json")
    e.add_argument("--dest", type=Path, default=None,
                   help="gradescope: results.json path; gradescope-scores, canvas: CSV path "
                        "(default stdout)")
    e.add_argument("--visibility", default="after_published",
                   choices=["visible", "hidden", "after_due_date", "after_published"],
                   help="gradescope: when students see the result and each check")
    e.add_argument("--column", default=None,
                   help="canvas: gradebook column, e.g. 'ps1_primitives (1234)'")
    e.add_argument("--roster", type=Path, default=None,
                   help="canvas: a gradebook CSV exported from Canvas, to match students")
    e.add_argument("--db", default=None,
                   help="gradescope-scores: the nbgrader gradebook whose students' emails fill "
                        "the Email column (default: none, SID alone)")
    e.set_defaults(func=_export)
    f = sub.add_parser("feedback", help="lay the feedback pages out for nbgrader release_feedback",
                       description="Copy OUT/feedback/<student>.html to <nbgrader's "
                                   "feedback folder>/<student>/ASSIGNMENT/ASSIGNMENT.html with the "
                                   "submission's timestamp.txt and submission_secret.txt, the "
                                   "layout `nbgrader release_feedback` sends from.")
    f.add_argument("assignment")
    f.add_argument("submitted", type=Path, help="SUBMITTED/<student>/<assignment>/ (as graded)")
    f.add_argument("graded", type=Path, help="the OUT folder of a `grade` run")
    f.add_argument("--root", type=Path, default=Path("."), help="course root")
    f.add_argument("--dest", type=Path, default=None,
                   help="nbgrader's feedback folder (default: the course's, "
                        "ROOT/_build/nbgrader/feedback)")
    f.set_defaults(func=_feedback)
    b = sub.add_parser("gradescope", help="build a Gradescope autograder bundle (.zip)")
    b.add_argument("assignment")
    b.add_argument("--out", type=Path, required=True, help="the .zip to write")
    b.add_argument("--root", type=Path, default=Path("."))
    b.set_defaults(func=_bundle)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except UsageError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
