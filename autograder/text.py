"""Text from a student's process made safe to show: control characters out, length bounded.

Used on both sides of a worker's boundary: the worker cleans what the student's process sends
(autograder.worker.runner), the main process what it writes (autograder.grade.record).
"""

from __future__ import annotations

import re

# C0 and C1 controls (ANSI escapes start with ESC or CSI) but tab and newline, DEL, and the
# Unicode controls that reorder or hide text.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e"
                      "\u2060-\u2069\ufeff]")


def clean_text(text: str, limit: int, *, keep_lines: bool = False) -> str:
    """``text`` without control characters, at most ``limit`` characters (said when cut)."""
    text = _CONTROL.sub("", str(text))
    if not keep_lines:
        text = text.replace("\n", " ").replace("\t", " ")
    if len(text) > limit:
        text = text[:max(0, limit - 30)] + f" [... {len(text) - limit} more characters]"
    return text
