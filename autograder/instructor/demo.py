"""``demo()``: for each assignment, build a demo class from the sources and grade it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from autograder.course import assignment_names
from autograder.grade.grading import grade


def demo(*, root: Path, out: Path, assignments: list[str] | None = None,
         package: str = "autograder.assignments", workers: int | None = None,
         make_class: Callable[..., Path] | None = None, lang: str = "en") -> list:
    """``make_class(assignment, dest, *, root) -> SUBMITTED dir``; default
    autograder.instructor.classroom.demo_class; ``lang``: the language of the pages
    (autograder.grade.grading). ``assignment_names`` (autograder.course) is re-exported here."""
    if make_class is None:
        from autograder.instructor.classroom import demo_class as make_class
    runs = []
    for name in assignments or assignment_names(package):
        submitted = make_class(name, Path(out) / name / "submitted", root=Path(root))
        print(f"== {name}")
        runs.append(grade(assignment=name, submitted=submitted, out=Path(out) / name / "graded",
                          root=Path(root), package=package, workers=workers,
                          db_url=f"sqlite:///{(Path(out) / name / 'gradebook.db').resolve()}",
                          lang=lang))
    return runs

