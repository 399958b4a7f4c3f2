"""Every string the feedback pages and the class summary show, in English and in Chinese.

``text(lang, key, **fields)`` is the one way :mod:`autograder.grade.feedback` and
:mod:`autograder.grade.summary` put words on a page; ``--lang zh`` picks the Chinese catalogue. The
English catalogue is the pages as they always were (they stay byte-identical). Only what the
page says changes with the language: task ids, check names, points, statuses in the results JSON
and ``grades.csv`` are the same in both, so one class graded twice, once per language, gets the
same grades.

A check's message is made by the grader (``autograder.worker.runner``, ``autograder.worker.policy``,
``autograder.worker.normalise``) and stored in the results JSON in English. The Chinese pages translate
the grader's fixed explanations inside it (a time limit, a check with no GPU, a refused cell)
with :data:`PHRASES`, at render time; what a check says about the student's values (shapes,
dtypes, the rule at fault) stays as the check wrote it. Task titles come from the assignment's
translation file, ``solutions/<name>/zh.yml`` (:func:`task_title`).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

from autograder.course import translations
from autograder.results import Status

LANGS = ("en", "zh")
HTML_LANG = {"en": "en", "zh": "zh-CN"}

EN: dict[str, str] = {
    # feedback page
    "feedback.title": "{assignment}: feedback for {student}",
    "feedback.for": "Feedback for {student}",
    "feedback.score": "Score: {score} / {max_score}",
    "feedback.late": "Submitted {note}; score before the late penalty: {raw}",
    "feedback.results": "Results by task",
    "feedback.task": "Task",
    "feedback.points": "Points",
    "feedback.result": "Result",
    "feedback.checks": "Checks, task by task",
    "feedback.checks_intro": (
        "Every check ran your rules on hidden inputs of the course, the same for every student; "
        "no message shows their values. Under a failed check, "
        "<em>Try it yourself</em> gives a few lines to paste into a new cell after your own: "
        "they show the failure on small inputs of their own (not the grading inputs)."),
    "feedback.all_passed": "all {n} checks passed: show them",
    "feedback.not_attempted": ("all {n} checks fail with a stub's NotImplementedError (a task "
                               "not attempted yet): show them"),
    "feedback.gpu_left_out": ("{points} points of checks that need a GPU were not run (the "
                              "grading machine had none) and are left out of the maximum: "
                              "the score is out of {max_score}"),
    "feedback.try_it": "Try it yourself",
    "feedback.notebook": "Your notebook, as graded",
    "feedback.more_cells": ("{n} more cells not shown (the page shows at most {limit} "
                            "characters of the notebook)"),
    "feedback.fold": "{label} ({lines} lines): show",
    "feedback.output": "output",
    "feedback.error": "error",
    "role.solution": "your solution",
    "role.student": "a cell you added",
    "role.provided": "provided (read-only)",
    "role.test": "test cell",
    # the status words (one per autograder.results.Status), as shown (the results JSON keeps
    # the English ones)
    "status.passed": "passed",
    "status.failed": "failed",
    "status.error": "error",
    "status.not-run": "not-run",
    # class summary
    "summary.title": "{assignment}: class summary",
    "summary.counts": ("{n} submissions, {graded} graded, {errored} could not be graded."),
    "summary.mean": "Mean {mean}, median {median} of {top} points",
    "summary.per_task": "Points per task",
    "summary.task_heading": "{task}: {title} (of {max_points})",
    "summary.chart_label": "students by points in {task}",
    "summary.bar_title": "{label} points: {n}",
    "summary.chart_note": ("Under each bar the points earned, above it the number of students "
                           "who earned them."),
    "summary.most_failed": "Checks that failed most often",
    "summary.most_failed_note": ("Wrong answers only: unattempted tasks, time-outs and cells the "
                                 "cell policy refused are listed apart below."),
    "summary.check": "Check",
    "summary.failed": "Failed",
    "summary.common_message": "Most common message",
    "summary.n_of": "{n} of {total}",
    "summary.times": "({times}x)",
    "summary.no_failure": "No check failed.",
    "summary.unattempted": "Tasks not attempted (the stub still raises NotImplementedError)",
    "summary.timed_out": "Checks that ran out of time (to be regraded)",
    "summary.refused": "Checks whose cell the cell policy refused",
    "summary.task": "Task",
    "summary.students": "Students",
    "summary.who": "Who",
    "summary.not_graded": "Submissions that could not be graded",
    "summary.student": "Student",
    "summary.why": "Why",
    "summary.none": "None.",
    "summary.missing": "Students who handed nothing in (score 0)",
    "summary.off_roster": "Submissions from ids not among nbgrader's students (check for a typo)",
    "summary.stamps": "Timestamps that could not be read (graded as on time: check them)",
    "summary.retried": "Graded again after their worker died",
    "summary.retried_note": ("A worker process that dies (out of memory, killed) takes only the "
                             "student it was grading; that student is graded once more, alone "
                             "in a fresh worker, and is an error only if that fails too."),
}

ZH: dict[str, str] = {
    "feedback.title": "{assignment}：{student} 的评分反馈",
    "feedback.for": "{student} 的评分反馈",
    "feedback.score": "得分：{score} / {max_score}",
    "feedback.late": "提交情况：{note}；扣除迟交罚分前的得分：{raw}",
    "feedback.results": "各任务结果",
    "feedback.task": "任务",
    "feedback.points": "得分",
    "feedback.result": "结果",
    "feedback.checks": "逐项检查（按任务）",
    "feedback.checks_intro": (
        "每项检查都在本课程的隐藏输入上运行你写的规则，这些输入对每位学生都相同；"
        "任何提示都不会显示它们的数值。未通过的检查下方有"
        "<em>自己试试</em>：把其中几行粘贴到你自己代码之后的新单元格里运行，"
        "它们会在自带的小输入（不是评分用的输入）上重现这个错误。"),
    "feedback.all_passed": "全部 {n} 项检查都已通过：展开查看",
    "feedback.not_attempted": ("全部 {n} 项检查都因占位代码抛出 NotImplementedError 而未通过"
                               "（有任务尚未作答）：展开查看"),
    "feedback.gpu_left_out": ("{points} 分的检查需要 GPU，评分机器没有 GPU，未运行，不计入满分："
                              "满分为 {max_score}"),
    "feedback.try_it": "自己试试",
    "feedback.notebook": "你的笔记本（评分时的内容）",
    "feedback.more_cells": "另有 {n} 个单元格未显示（本页最多显示笔记本中的 {limit} 个字符）",
    "feedback.fold": "{label}（共 {lines} 行）：展开",
    "feedback.output": "输出",
    "feedback.error": "错误",
    "role.solution": "你的解答",
    "role.student": "你添加的单元格",
    "role.provided": "给定代码（只读）",
    "role.test": "测试单元格",
    "status.passed": "通过",
    "status.failed": "未通过",
    "status.error": "出错",
    "status.not-run": "未运行",
    "summary.title": "{assignment}：全班概况",
    "summary.counts": "共 {n} 份提交，已评分 {graded} 份，{errored} 份无法评分。",
    "summary.mean": "平均分 {mean}，中位数 {median}（满分 {top}）",
    "summary.per_task": "各任务得分分布",
    "summary.task_heading": "{task}：{title}（满分 {max_points}）",
    "summary.chart_label": "{task} 各得分的学生人数",
    "summary.bar_title": "{label} 分：{n} 人",
    "summary.chart_note": "每根柱子下方是得分，上方是得到该分数的学生人数。",
    "summary.most_failed": "最常未通过的检查",
    "summary.most_failed_note": ("这里只统计答错的情况：未作答的任务、超时的检查和被单元格策略拒绝的"
                                 "单元格在下面分别列出。"),
    "summary.check": "检查",
    "summary.failed": "未通过",
    "summary.common_message": "最常见的提示",
    "summary.n_of": "{n} / {total} 人",
    "summary.times": "（{times} 次）",
    "summary.no_failure": "没有未通过的检查。",
    "summary.unattempted": "未作答的任务（占位代码仍抛出 NotImplementedError）",
    "summary.timed_out": "超时的检查（需要重新评分）",
    "summary.refused": "单元格被单元格策略拒绝的检查",
    "summary.task": "任务",
    "summary.students": "学生人数",
    "summary.who": "学生",
    "summary.not_graded": "无法评分的提交",
    "summary.student": "学生",
    "summary.why": "原因",
    "summary.none": "无。",
    "summary.missing": "未提交的学生（记 0 分）",
    "summary.off_roster": "不在 nbgrader 学生名单中的提交者（请检查学号是否有误）",
    "summary.stamps": "无法读取的提交时间（按按时提交评分，请核对）",
    "summary.retried": "工作进程意外退出后重新评分的提交",
    "summary.retried_note": ("工作进程意外退出（内存耗尽、被终止）时，只影响它当时正在评分的那位学生；"
                             "这位学生会在一个新的工作进程里单独再评分一次，只有再次失败才记为出错。"),
}

CATALOGUES = {"en": EN, "zh": ZH}

# The grader's fixed explanations inside a check's message, a note or a cell's label, and their
# Chinese. Applied in this order, longest first where one contains another; each English phrase
# is the exact text the grader writes (tests/autograder/test_lang_zh.py holds them to it).
PHRASES: tuple[tuple[str, str], ...] = (
    ("status error: to be regraded, not a wrong answer",  # autograder.worker.runner.TIME_ERROR
     "状态为“出错”：需要重新评分，并非答案错误"),
    (" (the second time, with the longer limit)", "（第二次运行，已放宽时限）"),
    ("the time limit of ", "超过了 "),
    (" s was exceeded while running this check", " 秒的时限（运行这项检查时）"),
    ("a cell was stopped by its time limit: ", "有单元格因超时被停止："),
    (("not run: this check needs a GPU and the grading machine has none; it is left out of "
      "the maximum score"), "未运行：这项检查需要 GPU，而评分机器没有 GPU；它不计入满分"),
    ("not run: the notebook's time budget of ", "未运行：笔记本的总时限 "),
    (" s was used up", " 秒已用完"),
    ("the notebook's time budget of ", "笔记本的总时限 "),
    (" s ran out during this check", " 秒在这项检查运行期间用完"),
    ("not run: too many restarts of the notebook's process", "未运行：笔记本进程重启次数过多"),
    (" Your cell for this task was not run: ", " 你为这个任务写的单元格没有运行："),
    (" What the check then saw: ", " 检查随后看到的是："),  # autograder.worker.runner.REFUSED_THEN
    ("not run: refused by the cell policy: ", "未运行，被单元格策略拒绝："),
    ("test cell: graded by the autograder's own checks", "测试单元格：由评分程序自己的检查评分"),
    (" edited provided or test cell(s) were restored from the release",
     " 个被修改的给定代码或测试单元格已按发布版本恢复"),
    (" deleted provided or test cell(s) were put back", " 个被删除的给定代码或测试单元格已放回"),
    ("; this check earns nothing", "；这项检查不得分"),
    ("not graded: ", "未评分："),
    ("the file is JSON but not a Jupyter notebook (no list of cells)",
     "文件是 JSON，但不是 Jupyter 笔记本（没有单元格列表）"),
    ("the file is not valid JSON", "文件不是有效的 JSON"),
    ("the file is empty: nothing was saved into it", "文件是空的：其中什么也没有保存"),
    ("the file could not be read as a notebook", "文件无法作为笔记本读取"),
    ("a cell that was not a JSON object was ignored", "一个不是 JSON 对象的单元格已被忽略"),
    ("a cell of unknown type was ignored", "一个类型未知的单元格已被忽略"),
    ("no notebook submitted in ", "没有提交笔记本，文件夹："),
    ("several notebooks and none named ", "有多个笔记本，但没有一个名为 "),
)


# The late notes of autograder.grade.late (the whole note, so "on time" inside a message is left alone).
LATE_NOTES: tuple[tuple[re.Pattern, str], ...] = (
    (re.compile(r"on time"), "按时提交"),
    (re.compile(r"no timestamp\.txt: graded as on time"), "没有 timestamp.txt：按按时提交评分"),
    (re.compile(r"timestamp\.txt unreadable \((.*)\): graded as on time", re.DOTALL),
     r"timestamp.txt 无法读取（\1）：按按时提交评分"),
    (re.compile(r"(\d+) days late, past the (\d+) allowed: score 0"),
     r"迟交 \1 天，超过了允许的 \2 天：得 0 分"),
    (re.compile(r"(\d+) days? late: (\d+%) off"), r"迟交 \1 天：扣除 \2"),
)


def text(lang: str, key: str, **fields: Any) -> str:
    """The catalogue entry ``key`` in ``lang``, with ``fields`` filled in."""
    return CATALOGUES[lang][key].format(**fields)


def status(lang: str, value: Status | str) -> str:
    """A check's or a task's status word as shown (``passed``, ``failed``, ...: a
    autograder.results.Status, or its string read back from a results JSON)."""
    return text(lang, f"status.{value}") if f"status.{value}" in EN else value


def explain(lang: str, message: str) -> str:
    """A grader-made message with its fixed explanations in ``lang`` (unchanged in English)."""
    if lang == "en":
        return message
    for english, translated in PHRASES:
        message = message.replace(english, translated)
    return message


def late_note(lang: str, note: str) -> str:
    """autograder.grade.late's note on when the submission came, in ``lang``."""
    if lang != "en":
        for pattern, translated in LATE_NOTES:
            if pattern.fullmatch(note):
                return pattern.sub(translated, note)
    return note


# A notebook's own language: the Chinese release's metadata (autograder.instructor.release,
# LANG_KEY). A submission bigger than this is not read for it (the page is then English).
NOTEBOOK_LANG_BYTES = 64 * 1024 * 1024


def notebook_lang(path: Path | None) -> str:
    """The language a submitted notebook says it is in (``metadata.jaxcourse.lang``): "zh" for
    the Chinese notebook (kept when the student saves it), else "en". A file that is not a
    readable notebook is English: the student's file decides nothing but the page's words."""
    import json

    try:
        if path is None or Path(path).stat().st_size > NOTEBOOK_LANG_BYTES:
            return "en"
        meta = json.loads(Path(path).read_bytes()).get("metadata", {})
        lang = meta.get("jaxcourse", {}).get("lang")
    except (OSError, ValueError, AttributeError, RecursionError):
        return "en"
    return lang if isinstance(lang, str) and lang in LANGS else "en"


def check_lang(lang: str) -> str:
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r} (the languages are: {', '.join(LANGS)})")
    return lang


@functools.cache
def _translations(assignment: str) -> dict:
    try:
        return translations(assignment, root=Path(__file__).resolve().parents[2])
    except FileNotFoundError:
        return {}


def task_title(lang: str, assignment: str, task_id: str, title: str) -> str:
    """The task's title in ``lang``: from ``solutions/<assignment>/zh.yml`` when it holds this
    task with this English title (a title changed since it was translated stays English)."""
    if lang == "en":
        return title
    entry = _translations(assignment).get("tasks", {}).get(task_id, {})
    return entry["zh"] if entry.get("en") == title and entry.get("zh") else title
