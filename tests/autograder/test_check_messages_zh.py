"""Every check description and failure message has a Chinese template (autograder.grade.check_text):
read from the source (autograder.grade.message_sources), so a message added or reworded later
fails here until it is translated; and the templates render what the judges really write."""

from __future__ import annotations

import importlib
import re

import numpy as np
import pytest

from autograder.grade import check_text, message_sources
from autograder.spec import Outcome
from autograder.worker import judge

CJK = re.compile(r"[\u4e00-\u9fff]")
# A template that is only its fields has Chinese punctuation ("{path}：{err}") instead.
CHINESE = re.compile(r"[\u4e00-\u9fff\u3000-\u303f\uff00-\uffef\u2026]")
# The assignments whose checks have a catalogue (autograder/assignments/<name>/messages_zh.yml).
TRANSLATED = ("ps1_primitives",)


def _keys(path) -> set[str]:
    return set(check_text._load(path).get("messages") or {})


def _assignment(name: str):
    return importlib.import_module(f"autograder.assignments.{name}.checks").ASSIGNMENT


@pytest.mark.parametrize("name", TRANSLATED)
def test_every_message_of_the_checks_and_probes_has_a_template(name):
    keys = _keys(check_text.catalogue_path(name))
    missing = sorted(message_sources.assignment_templates(name) - keys)
    assert not missing, f"no Chinese template in messages_zh.yml of {name} for: {missing}"


@pytest.mark.parametrize("name", TRANSLATED)
def test_every_description_and_blame_is_translated(name):
    assignment = _assignment(name)
    descriptions = check_text.descriptions(name)
    stale = [c.id for c in assignment.checks
             if (descriptions.get(c.id) or {}).get("en") != c.description]
    assert not stale, f"descriptions changed or new since translated: {stale}"
    assert set(descriptions) == {c.id for c in assignment.checks}  # no entry for a lost check
    keys = _keys(check_text.catalogue_path(name))
    assert not sorted({c.blame for c in assignment.checks if c.blame} - keys)


def test_every_message_of_the_judges_and_the_cell_policy_has_a_template():
    keys = _keys(check_text.ENGINE)
    missing = sorted((message_sources.engine_templates() | message_sources.policy_templates())
                     - keys)
    assert not missing, f"no Chinese template in autograder/grade/messages_zh.yml for: {missing}"


@pytest.mark.parametrize("path", [check_text.ENGINE,
                                  *(check_text.catalogue_path(n) for n in TRANSLATED)],
                         ids=lambda p: p.parent.name)
def test_each_template_keeps_its_fields_and_is_chinese(path):
    data = check_text._load(path)
    for english, entry in (data.get("messages") or {}).items():
        chinese = entry["zh"] if isinstance(entry, dict) else entry
        dropped = set(entry.get("drop", ())) if isinstance(entry, dict) else set()
        assert set(check_text.FIELD.findall(chinese)) == \
            set(check_text.FIELD.findall(english)) - dropped, english
        assert CHINESE.search(chinese), english
    for check_id, entry in (data.get("descriptions") or {}).items():
        assert CJK.search(entry["zh"]), check_id


def test_the_runner_joins_a_message_as_check_text_splits_it():
    from autograder.worker import runner

    assert check_text.REFUSED_THEN == runner.REFUSED_THEN
    for text in ("the impl rule (x) is at fault.", "jnp.sum must ...", "in lse_ffi"):
        assert check_text._sentence(text) == runner._sentence(text)


def _zh(message: str, name: str = "ps1_primitives") -> str | None:
    return check_text.translate(name, message)


def test_what_the_judges_write_is_rendered_with_its_inputs_as_code():
    expected = np.zeros((2, 3), np.float32)
    wrong = judge.close(expected, Outcome(value=np.ones((2, 3), np.float32)))
    assert _zh(wrong.message) == ("<code>result</code>：数值错误（6 个元素中有 6 个不对，"
                                  "第一个在 <code>(0, 0)</code>）")
    shape = judge.close([expected], Outcome(value=[np.zeros((3,), np.float32)]))
    assert _zh(shape.message) == ("<code>result[0]</code>：形状为 <code>(3,)</code>，"
                                  "应为 <code>(2, 3)</code>")
    raised = judge.close(expected, Outcome(raised="ValueError", message="x & y"))
    assert _zh(raised.message) == "抛出了 <code>ValueError</code>：<code>x &amp; y</code>"
    assert _zh("a sentence no catalogue has") is None


def test_a_whole_failure_message_is_chinese_with_its_rule_at_fault():
    blame = "the impl rule (weighted_sum_impl) computes the eager result."
    html = check_text.message_html(
        "ps1_primitives", "[ps1.impl] result[1]: wrong values (2 of 6 entries, first at (0,)). "
        "The impl rule (weighted_sum_impl) computes the eager result.", str, blame=blame)
    assert html == ("[ps1.impl] <code>result[1]</code>：数值错误（6 个元素中有 2 个不对，第一个在 "
                    "<code>(0,)</code>）。即时执行的结果由 impl 规则（<code>weighted_sum_impl</code>）"
                    "计算。")
    refused = check_text.message_html(
        "ps1_primitives", "[ps1.jvp] Your cell for this task was not run: line 2: lazy imports "
        "are not allowed; line 5: import of 'os' is not allowed (allowed: the modules of the cell "
        "policy's allowlist under jax, numpy; the students' guide lists them). What the check "
        "then saw: raised NameError: name 'f' is not defined.", str)
    assert refused.startswith("[ps1.jvp] 你为这个任务写的单元格没有运行：第 2 行：不允许延迟导入；"
                              "第 5 行：不允许导入 <code>&#x27;os&#x27;</code>")
    assert "检查随后看到的是：抛出了 <code>NameError</code>" in refused


def test_a_part_without_a_template_falls_back_to_the_fixed_phrases():
    html = check_text.message_html("ps1_primitives", "[ps1.jvp] not a known sentence.",
                                   lambda part: f"<{part}>")
    assert html == "[ps1.jvp] &lt;not a known sentence.&gt;"


def _comments(code: str) -> list[str]:
    import io
    import tokenize

    return [t.string[1:].strip() for t in tokenize.generate_tokens(io.StringIO(code).readline)
            if t.type == tokenize.COMMENT]


@pytest.mark.parametrize("name", TRANSLATED)
def test_every_comment_of_the_snippets_is_translated(name):
    from autograder.grade.reproduce import reproducer

    snippets = {c.id: reproducer(name, c.id) for c in _assignment(name).checks}
    assert sum(code is not None for code in snippets.values()) >= 30
    missing = sorted({text for code in snippets.values() if code
                      for text in _comments(code) if check_text.comment(name, text) is None})
    assert not missing, f"no Chinese in messages_zh.yml's comments for: {missing}"
    code = next(code for code in snippets.values() if code)
    chinese = check_text.snippet(name, code)
    assert chinese != code and _comments(chinese) and all(CJK.search(c) for c in
                                                          _comments(chinese))
    # Only the comments change: the same tokens otherwise.
    assert [line.split("#")[0] for line in chinese.splitlines()] == \
        [line.split("#")[0] for line in code.splitlines()]


def test_a_time_limit_is_chinese_with_chinese_punctuation():
    from autograder.worker.runner import TIME_ERROR

    html = check_text.message_html(
        "ps1_primitives", f"[ps1.jvp] the time limit of 20 s was exceeded while running this "
        f"check (the second time, with the longer limit); {TIME_ERROR}.", str)
    assert html == ("[ps1.jvp] 运行这项检查时超过了 20 秒的时限（第二次运行，已放宽时限）；"
                    "状态为“出错”：需要重新评分，并非答案错误。")
