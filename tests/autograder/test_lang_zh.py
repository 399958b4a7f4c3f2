"""Chinese for students: the zh notebooks (assignments/<name>/zh/) are the English ones with
translated markdown, every string of the feedback pages and the summary has a Chinese entry, and
`grade --lang zh` grades exactly as English does, on pages in Chinese."""

from __future__ import annotations

import ast
import importlib
import json
import os
import re
import shutil
import string
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbgrader.utils import compute_checksum

from autograder.grade import feedback, messages, summary
from autograder.instructor import release
from autograder.instructor.code_translation import TASK_ID, code_tokens, text_of
from autograder.spec import Assignment, Check, Task, Verdict

ROOT = Path(__file__).resolve().parents[2]
NAME = "ps1_primitives"
CJK = re.compile(r"[\u4e00-\u9fff]")
# The grader's modules whose fixed explanations the Chinese pages translate (messages.PHRASES).
GRADER_MODULES = ("worker/runner", "worker/policy", "worker/normalise", "grade/grading")


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_every_english_message_has_a_chinese_one_with_the_same_fields():
    assert set(messages.ZH) == set(messages.EN)
    for key, english in messages.EN.items():
        chinese = messages.ZH[key]
        assert _fields(chinese) == _fields(english), key
        assert chinese != english and CJK.search(chinese), key


def _grader_strings() -> list[str]:
    """Every string constant of the grader's modules (f-strings' literal parts included)."""
    found = []
    for module in GRADER_MODULES:
        tree = ast.parse((ROOT / "autograder" / f"{module}.py").read_text())
        found += [node.value for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    return found


def test_each_translated_phrase_is_what_the_grader_writes():
    # A grader message reworded without its translation would silently show in English.
    strings = _grader_strings()
    for english, chinese in messages.PHRASES:
        assert any(english in s for s in strings), english
        assert CJK.search(chinese), english
    from autograder.worker.runner import TIME_ERROR

    assert messages.explain("zh", f"[ps1.jvp] the time limit of 20 s was exceeded while running "
                                  f"this check; {TIME_ERROR}") == \
        "[ps1.jvp] 超过了 20 秒的时限（运行这项检查时）; 状态为“出错”：需要重新评分，并非答案错误"
    assert messages.explain("en", TIME_ERROR) == TIME_ERROR


def test_every_late_note_is_translated(tmp_path):
    from autograder.grade import late

    policy = late.Policy(late.parse_time("2026-11-28 12:00"), late_days=3, penalty_per_day=0.1)
    stamps = {"none": None, "garbled": "yesterday", "on_time": "2026-11-28 11:00:00 UTC",
              "one_day": "2026-11-29 11:00:00 UTC", "two_days": "2026-11-30 11:00:00 UTC",
              "too_late": "2026-12-05 11:00:00 UTC"}
    for name, stamp in stamps.items():
        (tmp_path / name).mkdir()
        if stamp is not None:
            (tmp_path / name / "timestamp.txt").write_text(stamp)
        note = late.lateness(policy, tmp_path / name)["late_note"]
        chinese = messages.late_note("zh", note)
        assert CJK.search(chinese) and not re.search(r"late|time\b|off|score", chinese), note
        assert messages.late_note("en", note) == note


def test_summary_headings_are_the_catalogue_entries():
    for kind, (title, _) in summary._KINDS.items():
        assert messages.EN[summary._KIND_KEYS[kind]] == title


def _translated() -> list[str]:
    return [name for name in release.names(root=ROOT)
            if release.translations_path(name, root=ROOT).is_file()]


def test_ps1_is_translated():
    assert NAME in _translated()


@pytest.mark.parametrize("name", _translated())
def test_zh_notebook_is_translated_up_to_date_and_has_the_english_code(name):
    assert release.stale_zh(name, root=ROOT) == []
    english = json.loads(release.release_path(name, root=ROOT).read_text(encoding="utf-8"))
    chinese = json.loads(release.zh_release_path(name, root=ROOT).read_text(encoding="utf-8"))
    nbformat.validate(nbformat.reads(json.dumps(chinese), as_version=4))
    assert [c["id"] for c in chinese["cells"]] == [c["id"] for c in english["cells"]]
    for en_cell, zh_cell in zip(english["cells"], chinese["cells"]):
        if en_cell["cell_type"] == "markdown":
            assert CJK.search("".join(zh_cell["source"])), en_cell["id"]
            continue
        # The same code: only comments and strings differ, and nbgrader's checksum of the source.
        en_source, zh_source = "".join(en_cell["source"]), "".join(zh_cell["source"])
        assert code_tokens(zh_source) == code_tokens(en_source), en_cell["id"]
        en_meta, zh_meta = (dict(c["metadata"], nbgrader={k: v for k, v in
                                                          c["metadata"].get("nbgrader", {}).items()
                                                          if k != "checksum"})
                            for c in (en_cell, zh_cell))
        assert zh_meta == en_meta, en_cell["id"]
        assert TASK_ID.findall(zh_source) == TASK_ID.findall(en_source), en_cell["id"]
        if "checksum" in zh_cell["metadata"].get("nbgrader", {}):  # what nbgrader validate checks
            assert zh_cell["metadata"]["nbgrader"]["checksum"] == compute_checksum(
                nbformat.from_dict(dict(zh_cell, source=zh_source))), en_cell["id"]


# An English sentence: three English words in a row, once what is not prose is taken out: task
# ids, nbgrader's marker, `code`, {f-string fields}, names with an underscore, a dot or ::,
# calls.
_NOT_PROSE = re.compile(r"\bps\d+\.[a-z_]+\b|YOUR CODE HERE|`[^`]*`|\{[^{}]*\}"
                        r"|\b\w*_\w*\b|\b\w+(?:(?:\.|::)\w+)+\b|\b\w+\([^()]*\)")
_SENTENCE = re.compile(r"(?:\b[A-Za-z]{2,}\b[ ,;:'-]+){2}\b[A-Za-z]{2,}\b")
# ASCII punctuation touching a Chinese character, where Chinese text takes the full-width one.
_ASCII_BY_CJK = re.compile(r"[\u4e00-\u9fff][,;:?!()]|[,;:?!()][\u4e00-\u9fff]")


# A string that holds C++ source (ps5's kernels): its prose is in its // comments and its own
# string literals, not in the code around them.
_CPP_PROSE = re.compile(r"//[^\n]*|\"(?:[^\"\\\n]|\\.)*\"")


def prose_of(text: str) -> list[str]:
    return _CPP_PROSE.findall(text) if "#include" in text else [text]


def english_sentences(texts: list[str]) -> list[str]:
    return [piece for text in texts for piece in prose_of(text)
            if _SENTENCE.search(_NOT_PROSE.sub(" ", piece))]


def test_english_sentences_are_found():
    assert english_sentences(['f"axis={axis} must raise the TypeError"', "# YOUR CODE HERE",
                              "# ps1.jvp：返回（weighted_sum(x, w)，它的切线）",
                              'f"axis={axis} 必须抛出 TypeError"',
                              'r"""\n#include <cmath>\nconstexpr int kThreads = 256;  // 线程数\n"""',
                              ]) == ['f"axis={axis} must raise the TypeError"']
    assert english_sentences(['r"""\n#include <cmath>\nint n;  // the threads of each block\n"""',
                              "# a batch of four weight vectors"]) == [
        "// the threads of each block", "# a batch of four weight vectors"]


@pytest.mark.parametrize("name", _translated())
def test_zh_code_cells_speak_chinese(name):
    """Comments, stub messages and test messages of the Chinese notebook are Chinese, with
    full-width punctuation beside Chinese; the English notebook had English ones there."""
    nb = json.loads(release.zh_release_path(name, root=ROOT).read_text(encoding="utf-8"))
    english_nb = json.loads(release.release_path(name, root=ROOT).read_text(encoding="utf-8"))
    texts = [t for c in nb["cells"] if c["cell_type"] == "code"
             for t in text_of("".join(c["source"]))]
    english = [t for c in english_nb["cells"] if c["cell_type"] == "code"
               for t in text_of("".join(c["source"]))]
    assert english_sentences(english), name  # what the check looks for is there in English
    assert english_sentences(texts) == []
    ascii_by_cjk = [p for t in texts for p in prose_of(t)
                    if _ASCII_BY_CJK.search(_NOT_PROSE.sub(" ", p))]
    assert ascii_by_cjk == []
    stubs = [t for t in texts if re.fullmatch(r"[\"']ps\d+\.[a-z_]+: .*[\"']", t)]
    assert stubs and all(CJK.search(t) for t in stubs), stubs


# What is not Chinese prose in a markdown cell: code blocks, inline code, math, link targets.
_MARKDOWN_CODE = re.compile(r"(?ms)^(`{3,}|~{3,}).*?^\1[^\n]*$|``.+?``|`[^`\n]*`"
                            r"|\$\$.+?\$\$|\$[^$\n]+\$|\]\([^)]*\)")


@pytest.mark.parametrize("name", _translated())
def test_zh_markdown_uses_full_width_punctuation(name):
    nb = json.loads(release.zh_release_path(name, root=ROOT).read_text(encoding="utf-8"))
    found = [m.group(0) for c in nb["cells"] if c["cell_type"] == "markdown"
             for m in _ASCII_BY_CJK.finditer(_MARKDOWN_CODE.sub(" ", "".join(c["source"])))]
    assert found == [], found[:20]


@pytest.mark.parametrize("name", _translated())
def test_every_task_title_is_translated(name):
    spec = importlib.import_module(f"autograder.assignments.{name}.checks").ASSIGNMENT
    tasks = release.translations(name, root=ROOT)["tasks"]
    for task in spec.tasks:
        assert tasks.get(task.id, {}).get("en") == task.title, task.id
        assert CJK.search(messages.task_title("zh", name, task.id, task.title)), task.id


def _copy_course(tmp_path: Path) -> Path:
    for sub in (f"solutions/{NAME}", f"assignments/{NAME}"):
        shutil.copytree(ROOT / sub, tmp_path / sub)
    return tmp_path


def test_stale_zh_catches_a_changed_english_cell_and_an_edited_code_cell(tmp_path):
    root = _copy_course(tmp_path)
    english = release.release_path(NAME, root=root)
    nb = json.loads(english.read_text(encoding="utf-8"))
    markdown = next(c for c in nb["cells"] if c["cell_type"] == "markdown")
    markdown["source"] = ["# Problem set 1, reworded"]
    english.write_text(json.dumps(nb), encoding="utf-8")
    problems = release.stale_zh(NAME, root=root)
    assert any(f"markdown cell {markdown['id']}" in p and "out of date" in p for p in problems)
    # The release keeps that cell in English until the translation is updated.
    release.release_zh(NAME, root=root)
    assert "# Problem set 1, reworded" in release.zh_release_path(NAME, root=root).read_text()

    root = _copy_course(tmp_path / "second")
    target = release.zh_release_path(NAME, root=root)
    nb = json.loads(target.read_text(encoding="utf-8"))
    code = next(c for c in nb["cells"] if c["cell_type"] == "code")
    code["source"] = code["source"] + ["\nx = 1"]
    target.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    problems = release.stale_zh(NAME, root=root)
    assert any(f"cell {code['id']}" in p and "more than its markdown" in p for p in problems)


TASK = Task("t.rule", "the rule")
CHECKS = tuple(
    Check(id=f"t.rule.{n}", task="t.rule", description=f"check {n}", points=1, grade_cell="g",
          probe="probe", make_inputs=dict, expect=lambda i: None,
          judge=lambda e, o: Verdict(True))
    for n in ("a", "b"))
SPEC = Assignment("toyish", "toyish.ipynb", (TASK,), CHECKS)


def _pages(lang: str) -> tuple[str, str]:
    from autograder.worker.runner import TIME_ERROR

    tests = {"t.rule.a": {"name": "t.rule.a: check a", "points": 1.0, "max_points": 1.0,
                          "status": "passed", "message": ""},
             "t.rule.b": {"name": "t.rule.b: check b", "points": 0.0, "max_points": 1.0,
                          "status": "error", "message": f"[t.rule] the time limit of 4 s was "
                                                        f"exceeded while running this check; "
                                                        f"{TIME_ERROR}"}}
    detail = {"tests_by_check": tests, "notes": [], "message": "", "reproducers": {},
              "cells": [{"cell_type": "code", "source": "x = 1", "role": "solution",
                         "output": "\n".join(map(str, range(40)))}]}
    result = {"student_id": "s1", "score": 1.0, "max_score": 2.0}
    row = {"student_id": "s1", "status": "graded", "message": ""}
    return (feedback.render(result, SPEC, detail, lang=lang),
            summary.render(SPEC, [dict(result, tests_by_check=tests)], [row], lang=lang))


def test_pages_in_chinese_say_the_same_things():
    page, class_page = _pages("zh")
    english, english_summary = _pages("en")
    assert "<html lang='zh-CN'>" in page and "<html lang='en'>" in english
    for key in ("feedback.results", "feedback.checks", "feedback.notebook", "role.solution"):
        assert messages.ZH[key] in page and messages.EN[key] not in page
    assert "得分：1 / 2" in page and "需要重新评分" in page and "输出（共 40 行）" in page
    assert "t.rule.b: check b" in page  # check names stay as they are
    assert not CJK.search(english) and not CJK.search(english_summary)
    assert "<html lang='zh-CN'>" in class_page and messages.ZH["summary.not_graded"] in class_page
    assert messages.ZH["summary.timed_out"] in class_page
    with pytest.raises(ValueError):
        feedback.render({"student_id": "s", "score": 0, "max_score": 0}, SPEC,
                        {"tests_by_check": {}}, lang="fr")


# --- the real command, on the English and the Chinese ps1 notebook -------------------------------

def _submissions(notebook: Path) -> dict[str, nbformat.NotebookNode]:
    """The reference solution, and a partial one with a wrong JVP rule, in ``notebook``."""
    from autograder.instructor.classroom import mutants_module, solution_sources

    solutions = solution_sources(NAME, root=ROOT)
    mutants = mutants_module(NAME)
    partial = {**{k: solutions[k] for k in mutants.PARTIAL},
               **mutants.MUTANTS["jvp_drops_w_term"][1]}
    # Every rule wrong in its own way, and a cell the cell policy refuses (a note on top).
    wrong = dict(solutions)
    for mutant in WRONG:
        wrong.update(mutants.MUTANTS[mutant][1])
    out = {}
    for student, fills in (("full", solutions), ("partial_wrong", partial), ("untouched", {}),
                           ("wrong", wrong)):
        nb = nbformat.read(notebook, as_version=4)
        for cell in nb.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if cell.metadata.get("nbgrader", {}).get("solution") and grade_id in fills:
                cell.source = fills[grade_id]
        if student == "wrong":
            nb.cells.append(nbformat.v4.new_code_cell("import os\nos.getcwd()"))
        out[student] = nb
    return out


WRONG = ("impl_keepdims", "abstract_eval_asserts", "lowering_host_callback", "jvp_numpy",
         "transpose_numpy", "batch_never_applies_primitive")


def _grade(tmp_path: Path, lang: str) -> Path:
    notebook = (release.zh_release_path if lang == "zh" else release.release_path)(NAME, root=ROOT)
    submitted, out = tmp_path / f"submitted-{lang}", tmp_path / f"out-{lang}"
    for student, nb in _submissions(notebook).items():
        path = submitted / student / NAME / f"{NAME}.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(nb, path)
    env = dict(os.environ, PYTHONPATH=str(ROOT),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    run = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", NAME, str(submitted), "--out", str(out),
         "--seed", "lang-zh", "--workers", "1", "--no-progress",
         # The Chinese notebook says its language: its pages are Chinese without --lang.
         *(["--lang", lang] if lang == "en" else []),
         "--db", f"sqlite:///{tmp_path / f'gradebook-{lang}.db'}"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lang_zh")
    return {lang: _grade(tmp, lang) for lang in ("en", "zh")}


# What a stub of the Chinese notebook says where the English one says "write": a check of an
# unattempted task quotes the stub's message, the one difference the two results may hold.
_STUB = re.compile(r"(NotImplementedError: ps\d+\.[a-z_]+: )(?:write|请写出) ")


def test_chinese_notebooks_grade_exactly_as_english_ones(graded):
    en, zh = graded["en"], graded["zh"]
    assert (en / "grades.csv").read_bytes() == (zh / "grades.csv").read_bytes()
    for student in ("full", "partial_wrong", "untouched", "wrong"):
        english, chinese = (json.loads((d / "results" / f"{student}.json").read_text())
                            for d in (en, zh))
        for result in (english, chinese):
            for test in result["tests"]:
                test["message"] = _STUB.sub(r"\1", test["message"])
        assert chinese == english, student
    untouched = json.loads((zh / "results" / "untouched.json").read_text())
    assert untouched["score"] == 0 and any("请写出" in t["message"] for t in untouched["tests"])
    # The Chinese notebook's provided and test cells are the release's: none was "edited".
    for page in (zh / "feedback").glob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert "restored from the release" not in text and "已按发布版本恢复" not in text, page.name
    full = json.loads((zh / "results" / "full.json").read_text())
    partial = json.loads((zh / "results" / "partial_wrong.json").read_text())
    assert full["score"] == full["max_score"] > partial["score"] > 0
    statuses = {t["status"] for t in partial["tests"]}
    assert {"passed", "failed"} <= statuses


def test_chinese_feedback_and_summary_pages(graded):
    page = (graded["zh"] / "feedback" / "partial_wrong.html").read_text(encoding="utf-8")
    english = (graded["en"] / "feedback" / "partial_wrong.html").read_text(encoding="utf-8")
    assert "<html lang='zh-CN'>" in page and "<html lang='en'>" in english
    for key in ("feedback.results", "feedback.checks", "feedback.notebook", "feedback.try_it",
                "status.passed", "status.failed"):
        assert messages.ZH[key] in page, key
    assert "ps1.jvp</a>: weighted_sum_value_and_jvp，JVP 规则" in page
    # The same checks, by id, their descriptions in Chinese; the student's own (Chinese)
    # markdown is shown as graded.
    names = re.findall(r"<span class='name'>(.*?)</span>", english)
    chinese_names = re.findall(r"<span class='name'>(.*?)</span>", page)
    assert names and [n.split(":")[0] for n in names] == [n.split(":")[0] for n in chinese_names]
    assert all(CJK.search(n) for n in chinese_names)
    assert "任务 <code>ps1.jvp</code>：JVP 规则" in page
    assert not CJK.search(english)
    class_page = (graded["zh"] / "summary.html").read_text(encoding="utf-8")
    assert "<html lang='zh-CN'>" in class_page
    for key in ("summary.per_task", "summary.most_failed", "summary.not_graded"):
        assert messages.ZH[key] in class_page, key


# --- no English sentence on a Chinese feedback page ----------------------------------------------

# What a Chinese page may show in Latin letters outside <code> and <pre>: the names the
# translation keeps in English (terms.yml keeps impl, JAX, JVP, jaxpr ...; the products and
# formats: GPU, CPU, StableHLO, NumPy, XLA, IPython, JSON, nbgrader; the platforms as JAX names
# them, cpu and cuda), identifiers (a task or check
# id, an exception's name, a file name: a word with "_", "." or a digit, or CamelCase) and the
# student id (an input value). Anything else, two such words in a row or one alone, is English.
KEPT = {"impl", "JAX", "JVP", "VJP", "jaxpr", "bind", "pytree", "GPU", "CPU", "StableHLO",
        "NumPy", "XLA", "IPython", "JSON", "Jupyter", "nbgrader", "cpu", "cuda", "x64"}
IDENTIFIER = re.compile(r"[A-Za-z0-9_.\-]*[_.\d][A-Za-z0-9_.\-]*|[A-Z][a-z]+(?:[A-Z][a-z]*)+")


def english_outside_code(page: str, student: str) -> list[str]:
    """The Latin words of a feedback page's own text (up to the notebook as graded, which is
    the student's) that are not in <code>, <pre>, a tag or the page's style."""
    own = page.split("<h2 id='notebook'>")[0]
    own = re.sub(r"<(style|code|pre)\b.*?</\1>", " ", own, flags=re.DOTALL)
    own = re.sub(rf"\b{re.escape(student)}\b", " ", re.sub(r"<[^>]+>", " ", own))
    words = re.findall(r"[A-Za-z][A-Za-z0-9_.\-']*", own)
    return [w for w in words if w.rstrip(".") not in KEPT and not IDENTIFIER.fullmatch(w)]


def test_the_english_detector_finds_english():
    page = ("<h1>ps1_primitives</h1><p>得分 <code>wrong values</code> JAX 的 impl 规则</p>"
            "<p>抛出了 TypeError：the rule failed</p><h2 id='notebook'>English here</h2>")
    assert english_outside_code(page, "ps1") == ["the", "rule", "failed"]


@pytest.mark.parametrize("student", ["full", "partial_wrong", "untouched", "wrong"])
def test_a_chinese_feedback_page_has_no_english_sentence(graded, student):
    page = (graded["zh"] / "feedback" / f"{student}.html").read_text(encoding="utf-8")
    assert "<html lang='zh-CN'>" in page  # Chinese without --lang: the notebook said so
    assert english_outside_code(page, student) == []


def test_a_notebook_says_its_language(tmp_path):
    assert messages.notebook_lang(release.zh_release_path(NAME, root=ROOT)) == "zh"
    assert messages.notebook_lang(release.release_path(NAME, root=ROOT)) == "en"
    # A student's file decides nothing but the page's words, and nothing odd breaks it.
    for name, text in (("garbled", "{not json"), ("list", '{"metadata": {"jaxcourse": []}}'),
                       ("other", '{"metadata": {"jaxcourse": {"lang": "fr"}}}'),
                       ("unhashable", '{"metadata": {"jaxcourse": {"lang": ["zh"]}}}'),
                       ("array", "[1, 2]")):
        (tmp_path / name).write_text(text)
        assert messages.notebook_lang(tmp_path / name) == "en", name
    assert messages.notebook_lang(tmp_path / "missing") == messages.notebook_lang(None) == "en"
