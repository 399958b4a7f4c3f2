"""The Chinese notebook's code lines may change comments and strings only
(autograder/instructor/code_translation.py)."""

from __future__ import annotations

from autograder.instructor.code_translation import code_tokens, translate_code

CELL = ('def f(x):\n    # ps1.impl: say what f does.\n    # YOUR CODE HERE\n'
        '    raise NotImplementedError("ps1.impl: write f")\n')


def test_comments_and_strings_are_translated_with_their_indentation():
    lines = {"# ps1.impl: say what f does.": "# ps1.impl：说明 f 做什么。",
             'raise NotImplementedError("ps1.impl: write f")':
             'raise NotImplementedError("ps1.impl: 请写出 f")'}
    out, problems, used = translate_code(CELL, lines)
    assert problems == [] and used == set(lines)
    assert out == ('def f(x):\n    # ps1.impl：说明 f 做什么。\n    # YOUR CODE HERE\n'
                   '    raise NotImplementedError("ps1.impl: 请写出 f")\n')
    assert code_tokens(out) == code_tokens(CELL)


def test_a_translation_that_changes_code_is_refused_and_the_cell_stays_english():
    out, problems, _ = translate_code(CELL, {'raise NotImplementedError("ps1.impl: write f")':
                                             'raise ValueError("ps1.impl: 请写出 f")'})
    assert out == CELL and "change its code" in problems[0]


def test_a_translation_that_drops_a_task_id_or_the_marker_is_refused():
    out, problems, _ = translate_code(CELL, {"# ps1.impl: say what f does.": "# 说明 f 做什么。",
                                            "# YOUR CODE HERE": "# 在这里写代码"})
    assert out == CELL
    assert any("ps1.impl" in p for p in problems) and any("YOUR CODE HERE" in p for p in problems)


def test_f_string_fields_are_code():
    english = 'assert ok, f"got {got}, expected {want}"\n'
    assert translate_code(english, {english.strip(): 'assert ok, f"得到 {got}，应为 {want}"'})[1] == []
    _, problems, _ = translate_code(english, {english.strip(): 'assert ok, f"得到 {want}"'})
    assert problems  # a field dropped is a change of what the message computes
