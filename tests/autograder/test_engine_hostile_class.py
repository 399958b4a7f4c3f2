"""The whole hostile/faulty class graded by ONE run of the real command; exact points each.

A second run, of the honest students alone, is started at the same moment on the same machine:
two grading runs at once must not disturb each other (uids, cgroups, fork servers), and the
honest students must be graded byte-identically whether hostile classmates are in their run or
not. The attacks are plain Python (no cell policy on this branch): the walls hold without it.
"""

from __future__ import annotations

import html
import os
import re
import signal
import subprocess
from pathlib import Path

import hostile
import pytest
from engine_helpers import REPO, grade_args, grade_env, read_grades, read_result

from autograder.grade.record import _gradebook_api
from autograder.worker.runner import student_env

SECRET_ENV = "GRADER_ONLY_TOKEN"
SECRET_VALUE = "tok-7f3a9c-grader-env"
HTML_PROBE = "<script>alert('feedback')</script>"
HOST_FILES = ("/run/lock/walls-probe", "/dev/shm/walls-probe", "/var/tmp/walls-probe")
# The two runs grade 60 notebooks (each cell limited to 10 s, twice over when stopped): 2 to 6
# minutes on a 2-core machine. Past this limit the fixture stops both runs and fails, saying so.
GRADE_LIMIT_S = 1200
pytestmark = pytest.mark.timeout(GRADE_LIMIT_S + 300)


def _all_cases(snoop_paths):
    cases = hostile.cases(snoop_paths)
    cases["html_in_output"] = (hostile.submission(
        hostile.FULL, extra={"start": [f"print({HTML_PROBE!r})"]}), 5)
    cases.update(hostile.wall_cases())
    return cases


def _sysv_segments(uids: range) -> set[str]:
    """Ids of the host's SysV shared memory segments created or owned by a uid of ``uids``."""
    lines = Path("/proc/sysvipc/shm").read_text().splitlines()
    header = lines[0].split()
    shmid, uid, cuid = (header.index(k) for k in ("shmid", "uid", "cuid"))
    return {f[shmid] for f in map(str.split, lines[1:]) if int(f[uid]) in uids
            or int(f[cuid]) in uids}


def _processes(uids: range) -> dict[int, bytes]:
    """pid -> command line of every process running as a uid of ``uids``."""
    found = {}
    for entry in os.scandir("/proc"):
        try:
            if entry.name.isdigit() and os.stat(entry.path).st_uid in uids:
                found[int(entry.name)] = Path(entry.path, "cmdline").read_bytes()
        except OSError:
            continue
    return found


@pytest.fixture(scope="module")
def graded(tmp_path_factory, own_uids):
    base = tmp_path_factory.mktemp("hostile")
    submitted, out = base / "submitted", base / "out"
    snoop_paths = [str(submitted), str(out), str(REPO / "tests"), str(REPO / "autograder"),
                   str(REPO / "tests" / "fixtures" / "toygrader"), str(base)]
    cases = _all_cases(snoop_paths)
    hostile.write_class(submitted, cases)
    honest = {k: cases[k] for k in hostile.HONEST}
    honest_submitted = hostile.write_class(base / "honest_submitted", honest)
    # A decoy result another run left in OUT: student code must not be able to overwrite it.
    (out / "results").mkdir(parents=True)
    # Both runs' sandboxed processes take their uids from this session's range (conftest.py);
    # run by another user than root, they all run as that user.
    uids = own_uids if os.geteuid() == 0 else range(os.getuid(), os.getuid() + 1)
    segments = _sysv_segments(uids)
    env = grade_env({SECRET_ENV: SECRET_VALUE, "AUTOGRADER_BASE_UID": str(own_uids.start)})
    # The hostile run takes two workers: its time limits and tampered processes are waited on two
    # at a time (a third of its time), and its honest students are graded beside hostile
    # classmates in the same run as well as in a run of their own. The honest run takes one.
    runs = [subprocess.Popen(grade_args(sub, dest, "--workers", workers), env=env, cwd=REPO,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
            for sub, dest, workers in ((submitted, out, "2"),
                                       (honest_submitted, base / "honest_out", "1"))]
    try:
        (stdout, stderr), (honest_stdout, honest_stderr) = (
            r.communicate(timeout=GRADE_LIMIT_S) for r in runs)
    except subprocess.TimeoutExpired:
        for r in runs:
            try:
                os.killpg(r.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            r.communicate()
        pytest.fail(f"the hostile class and its honest twin were not graded within "
                    f"GRADE_LIMIT_S = {GRADE_LIMIT_S} s ({__name__})", pytrace=False)
    proc = subprocess.CompletedProcess(runs[0].args, runs[0].returncode, stdout, stderr)
    honest_proc = subprocess.CompletedProcess(runs[1].args, runs[1].returncode, honest_stdout,
                                              honest_stderr)
    return {"proc": proc, "out": out, "cases": cases, "submitted": submitted, "base": base,
            "honest_proc": honest_proc, "honest_out": base / "honest_out", "uids": uids,
            "new_segments": _sysv_segments(uids) - segments}


def test_run_completes(graded):
    assert graded["proc"].returncode == 0, graded["proc"].stderr[-3000:]
    assert set(read_grades(graded["out"])) == set(graded["cases"])
    assert "Warning" not in graded["proc"].stderr  # JAX deprecations included
    assert "submissions in" in graded["proc"].stdout  # the summary table


@pytest.mark.parametrize("student", sorted(_all_cases([])))
def test_exact_points(graded, student):
    grades = read_grades(graded["out"])
    row = grades[student]
    expected = graded["cases"][student][1]
    if expected is None:  # an attack that must earn exactly what its honest twin earns
        expected = float(grades["honest_impl_jvp"]["score"])
        assert read_result(graded["out"], student)["tests"] == read_result(
            graded["out"], "honest_impl_jvp")["tests"]
    assert float(row["score"]) == expected, row
    assert float(row["max_score"]) == 5.0  # the GPU check is not-run here and left out
    assert row["status"] == ("error" if student in hostile.ERRORS else "graded"), row


def test_results_json_matches_csv(graded, toy_assignment):
    for student, row in read_grades(graded["out"]).items():
        result = read_result(graded["out"], student)
        assert set(result) == {"student_id", "assignment", "score", "max_score", "tests"}
        assert result["score"] == float(row["score"]) == sum(t["points"] for t in result["tests"])
        assert [t["name"].split(":")[0] for t in result["tests"]] == [
            c.id for c in toy_assignment.checks]
        for test in result["tests"]:
            assert set(test) == {"name", "points", "max_points", "status", "message"}
            assert test["status"] in {"passed", "failed", "error", "not-run"}


def test_failures_name_the_rule(graded):
    result = read_result(graded["out"], "honest_wrong_jvp")
    failed = [t for t in result["tests"] if t["status"] == "failed"]
    assert {t["name"].split(":")[0] for t in failed} == {"toy.jvp.grad", "toy.jvp.x64"}
    for test in failed:
        assert test["message"].startswith("[toy.jvp]") and "square_jvp" in test["message"]
    loop = read_result(graded["out"], "infinite_loop_rule")
    assert any("time limit" in t["message"] for t in loop["tests"] if t["status"] == "error")


def test_crash_reasons_are_reported(graded):
    out = graded["out"]
    os_exit = (out / "feedback" / "os_exit.html").read_text()
    assert "os._exit" in os_exit and "status 3" in os_exit
    loop = (out / "feedback" / "infinite_loop_cell.html").read_text()
    assert "time limit of 10 s per cell" in loop
    flood = (out / "feedback" / "output_flood.html").read_text()
    assert "output limit" in flood and len(flood) < 200_000
    assert "edited provided or test cell" in (out / "feedback" / "edited_tests.html").read_text()
    assert "put back" in (out / "feedback" / "deleted_tests.html").read_text()
    assert "not valid JSON" in read_grades(out)["bad_json"]["message"]
    memory = (out / "feedback" / "memory_flood.html").read_text()
    assert "MemoryError: the memory limit of 3072 MiB was reached" in memory


def test_tampering_fails_the_checks_it_reached(graded):
    out = graded["out"]
    text = (out / "feedback" / "patch_numpy.html").read_text()
    assert "TAMPERING" in text and "numpy.allclose" in text
    text = (out / "feedback" / "patch_jax.html").read_text()
    assert "jax.grad" in text and "sys.modules" in text
    for student, what in (("wall_replace_guard", "autograder.student.guard.Guard.restore"),
                          ("wall_background_thread", "thread"),
                          ("wall_thread_bomb", "thread"),
                          ("wall_thread_settrace", "threading._trace_hook"),
                          ("wall_signal_handler", "signal"),
                          ("wall_settrace", "set a trace or profile hook"),
                          ("wall_gc_hunt", "walked the interpreter's heap"),
                          ("wall_frame_hunt", "frames"),
                          ("wall_code_swap", "frames"),
                          ("wall_ctypes", "ctypes")):
        result = read_result(out, student)
        graded_tests = [t for t in result["tests"] if t["status"] != "not-run"]
        assert all(t["status"] == "failed" and "TAMPERING" in t["message"]
                   for t in graded_tests), (student, result)
        assert what in " ".join(t["message"] for t in graded_tests), student
    # Only the checks that called the tampering rule fail; the honest rules earn.
    probe_time = {t["name"].split(":")[0]: t for t in read_result(out, "wall_probe_time")["tests"]}
    assert probe_time["toy.impl.eager"]["status"] == "passed"
    assert "TAMPERING" in probe_time["toy.jvp.grad"]["message"]
    # JAX options set by the cells are the grader's again before every check.
    text = (out / "feedback" / "wall_disable_jit.html").read_text()
    assert "jax_disable_jit" in text and "set back" in text


def test_nothing_leaks_from_the_grader(graded, toy_assignment):
    feedback = "".join(p.read_text() for p in (graded["out"] / "feedback").iterdir())
    results = "".join(p.read_text() for p in (graded["out"] / "results").iterdir())
    # The snooping cell prints these markers only when a read, write or connection worked; the
    # heap, frame and memory hunts print theirs only if the tripwire let them run.
    for marker in ("READ-OK /", "WROTE-OK /", "NETWORK-REACHED 1", "NETWORK-REACHED 8",
                   SECRET_VALUE, SECRET_ENV, "engine-tests", "FOUND-IN-HEAP", "FRAME-LOCALS",
                   "MEMORY b", "gradebook.db", "--seed", "sys_path"):
        assert marker not in feedback and marker not in results, marker
    leaks = (graded["out"] / "feedback" / "wall_leaks.html").read_text()
    assert "ARGV [&#x27;python&#x27;] [&#x27;python&#x27;]" in leaks
    assert "MP-CONFIG {}" in leaks
    # The student's process gets XLA's fast-compiling flags (autograder.worker.runner.student_env).
    for flag in student_env(has_gpu=False).get("XLA_FLAGS", "").split():
        assert flag in leaks
    # Hidden directories are absent or empty from inside the sandbox.
    listings = re.findall(r"LISTED (/\S+) (\[[^\]]*\])", feedback)
    assert all(content == "[]" for _, content in listings)
    assert feedback.count("hidden: /") + len(listings) >= 6
    checks_source = (REPO / "tests/fixtures/toygrader/toy/checks.py").read_text()
    for line in checks_source.splitlines():
        if "blame=" in line or "lambda" in line:
            assert line.strip() not in feedback
    assert HTML_PROBE not in feedback and "&lt;script&gt;" in feedback


def test_the_mount_table_names_no_hidden_path(graded):
    """The student's process runs in a root of its own (autograder.student.sandbox._new_root):
    its mount table, read here without the cell policy (which refuses every file read), names
    none of the class's submissions, the output, the course's or the repository's folders."""
    page = html.unescape((graded["out"] / "feedback" / "wall_leaks.html").read_text())
    assert "MOUNTS-READ" in page, page[-3000:]
    table = "\n".join(line for line in page.splitlines() if "MOUNT " in line)
    assert " / / " in table and " /proc " in table  # the table was read, and is a table
    for path in (graded["submitted"], graded["out"], graded["base"], REPO / "autograder",
                 REPO / "tests"):
        assert str(path) not in table, (path, table)


def test_outputs_not_overwritten_by_students(graded):
    out = graded["out"]
    assert read_grades(out)["snoop_files_env"]["score"] == "5.0"
    assert "student,100" not in (out / "grades.csv").read_text()
    assert not (graded["submitted"] / "grades.csv").exists()


def test_gradebook_holds_per_cell_scores(graded):
    Gradebook, _ = _gradebook_api()
    db = graded["out"].parent / "out-gradebook.db"
    cells = ("test_impl", "test_abstract", "test_jvp", "test_gpu")
    with Gradebook(f"sqlite:///{db}") as gb:
        scores = {(student, cell): gb.find_grade(cell, "toy", "toy", student).score
                  for student in graded["cases"] for cell in cells}
        assert gb.find_grade_cell("test_abstract", "toy", "toy").max_score == 2.0
    assert scores[("honest_full", "test_abstract")] == 2.0
    assert scores[("honest_wrong_jvp", "test_jvp")] == 0.0
    assert scores[("honest_impl_only", "test_impl")] == 1.0
    for student, row in read_grades(graded["out"]).items():
        assert sum(scores[(student, c)] for c in cells) == float(row["score"])


def test_no_control_characters_reach_the_instructor(graded):
    out = graded["out"]
    texts = [graded["proc"].stdout, (out / "grades.csv").read_text()]
    texts += [p.read_text() for p in (out / "feedback").iterdir()]
    texts += [p.read_text() for p in (out / "results").iterdir()]
    for text in texts:
        assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
    ansi = (out / "feedback" / "wall_ansi.html").read_text()
    assert "RED" in ansi and "red error" in ansi  # the text stays, the controls go


def test_nothing_outlives_the_run_or_reaches_the_host(graded):
    # Only this session's uids: other grading runs on the machine may be mid-class.
    leftover = _processes(graded["uids"])
    # The setsid grandchild died with its namespace.
    assert [pid for pid, cmdline in leftover.items() if b"4242.5" in cmdline] == []
    for path in HOST_FILES:
        assert not os.path.exists(path), path
    assert graded["new_segments"] == set()  # SysV shm: its own IPC namespace
    if os.geteuid() == 0:  # else the range is this user's uid, this test's own included
        assert leftover == {}


def test_a_second_run_at_the_same_time_is_undisturbed(graded):
    proc = graded["honest_proc"]
    assert proc.returncode == 0, proc.stderr[-3000:]
    for student in hostile.HONEST:
        assert read_result(graded["honest_out"], student) == read_result(graded["out"], student)
        assert read_result(graded["honest_out"], student)["score"] == graded["cases"][student][1]
