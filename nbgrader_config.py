"""nbgrader's configuration for this course: the repository root is the course directory.

`python -m autograder release` writes the student notebooks to assignments/ (nbgrader's release
directory) from the MyST sources in solutions/, through nbgrader's own generate_assignment. Plain
nbgrader commands run from this directory (`nbgrader validate`, `nbgrader autograde`,
`nbgrader export`) use the same gradebook and directories.
"""

from pathlib import Path

c = get_config()  # noqa: F821 - injected by traitlets when it loads this file

COURSE_ROOT = Path(__file__).resolve().parent

c.CourseDirectory.root = str(COURSE_ROOT)
# The notebooks nbgrader reads as its source are generated from solutions/<name>/<name>.md.
c.CourseDirectory.source_directory = "_build/nbgrader/source"
c.CourseDirectory.release_directory = "assignments"
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "_build/nbgrader/autograded"
c.CourseDirectory.feedback_directory = "_build/nbgrader/feedback"
c.CourseDirectory.db_url = f"sqlite:///{COURSE_ROOT / 'gradebook.db'}"
# Each stub keeps its own `raise NotImplementedError("<task id>: ...")` line after the solution
# region, so the region itself becomes only this comment.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE"}
