"""The class's similarity report: how much of each student's solution code another's shares.

`grade` writes ``OUT/similarity.html`` beside the summary, which links it. It compares only the
solution cells (nbgrader's ``solution: true``; the released stubs are boilerplate, so a student
who left a cell untouched shares nothing through it), with copydetect's winnowed fingerprints
(the MOSS method: k-grams of the tokenized code, comments and names normalised, a fingerprint
chosen per window, so a copy with renamed variables and moved lines still matches). The page
never changes a grade: it lists, for the instructor to read, the groups whose code is the same
once comments and spacing are removed, and the pairs that share most of their code, each pair
with the shared code marked.

A student's file is data: read with the grader's size caps, a cell's source only when it is
text, a notebook that cannot be read listed as not compared.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import sys
from dataclasses import dataclass
from html import escape
from pathlib import Path

from autograder.worker.normalise import MAX_CELL_CHARS, MAX_NOTEBOOK_BYTES, nbgrader_meta

# copydetect's defaults: a match shorter than NOISE tokens is ignored, one of GUARANTEE tokens or
# more is always found; the window follows from the two.
NOISE = 25
GUARANTEE = 30
# Pairs listed: those sharing at least THRESHOLD of either student's fingerprinted code; at most
# SHOWN of them with their code side by side (the costliest part of the page).
THRESHOLD = 0.8
LISTED = 200
SHOWN = 20
MAX_CODE_CHARS = 400_000

STRINGS = {
    "en": {
        "title": "Similarity of solution code: {assignment}",
        "intro": ("Solution cells only, the released stubs left out; copydetect's winnowed "
                  "fingerprints ({noise}-token matches and longer; comments, spacing and names "
                  "normalised). Nothing here changes a grade: read the code before you decide "
                  "anything. A correct solution of a short task can be written only a few ways, "
                  "so identical short answers are common."),
        "same": "The same code once comments and spacing are removed",
        "same_row": "{n} students",
        "none_same": "No two students handed in the same code.",
        "pairs": "Pairs sharing {threshold:.0%} or more of either's code",
        "none_pairs": "No pair shares that much.",
        "a": "student", "b": "other student", "share": "share of each's code",
        "tokens": "tokens shared",
        "shown": "The {n} closest pairs, shared code marked",
        "skipped": "Not compared",
        "link": "Similarity of the class's solution code (never a grade change)",
        "empty": "no solution code beyond the stubs",
    },
    "zh": {
        "title": "解答代码相似度：{assignment}",
        "intro": ("只比较解答单元格，发布时的桩代码不计；用 copydetect 的 winnowing 指纹（{noise} 个"
                  "词元及以上的匹配；注释、空白和名字都先规范化）。这里的任何内容都不改变成绩："
                  "先读代码，再作判断。短任务的正确解法写法不多，相同的短答案很常见。"),
        "same": "去掉注释和空白后完全相同的代码",
        "same_row": "{n} 名学生",
        "none_same": "没有两名学生交了相同的代码。",
        "pairs": "共享任一方代码 {threshold:.0%} 及以上的学生对",
        "none_pairs": "没有这样的学生对。",
        "a": "学生", "b": "另一名学生", "share": "各自代码中共享的比例",
        "tokens": "共享的词元数",
        "shown": "最接近的 {n} 对，共享的代码已标出",
        "skipped": "未比较",
        "link": "全班解答代码的相似度（从不改变成绩）",
        "empty": "除桩代码外没有解答代码",
    },
}

CSS = """
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 1em; }
.pair pre { overflow-x: auto; font-size: 0.85em; background: #f6f6f6; padding: 0.5em; }
.pair mark { background: #ffe08a; }
"""


@dataclass
class _Fingerprint:
    filtered: str  # the code as copydetect compares it: tokens, names and comments normalised
    offsets: object  # numpy array: where filtering moved the characters (copydetect's)
    hashes: set
    idx: dict  # hash -> where in ``filtered`` it was taken


@dataclass
class _Student:
    sid: str
    code: str
    fingerprint: _Fingerprint


def solution_code(path: Path) -> str | None:
    """The text of a notebook's solution cells in order, each headed by its grade id; None when
    the file is not a notebook the grader could read."""
    try:
        if path.stat().st_size > MAX_NOTEBOOK_BYTES:
            return None
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        return None
    if not isinstance(cells, list):
        return None
    parts = []
    for cell in cells:
        if not isinstance(cell, dict) or not nbgrader_meta(cell).get("solution"):
            continue
        source = cell.get("source")
        source = "".join(s for s in source if isinstance(s, str)) if isinstance(
            source, list) else source
        if isinstance(source, str):
            parts.append(source[:MAX_CELL_CHARS])
    return "\n".join(parts)[:MAX_CODE_CHARS]


def _utils():
    """copydetect.utils (tokenizing, winnowing, overlaps) without copydetect.detector, which the
    package's __init__ imports and which imports matplotlib.pyplot for a chart this page does not
    draw: a second or more of every grading run. The package is registered without running its
    __init__ unless something in this process imported it already."""
    if "copydetect" not in sys.modules:
        spec = importlib.util.find_spec("copydetect")
        sys.modules["copydetect"] = importlib.util.module_from_spec(spec)
    return importlib.import_module("copydetect.utils")


def _fingerprint(code: str, boilerplate) -> _Fingerprint:
    utils = _utils()
    filtered, offsets = utils.filter_code(code, "solution.py", "python")
    hashes, idx = utils.get_document_fingerprints(filtered, NOISE, GUARANTEE - NOISE + 1,
                                                  boilerplate)
    return _Fingerprint(filtered, offsets, hashes, idx)


def _boilerplate(release_cells: list[dict]) -> list[int]:
    stubs = "\n".join(c["source"] for c in release_cells if nbgrader_meta(c).get("solution"))
    return sorted(_fingerprint(stubs, None).hashes) if stubs.strip() else []


def render(assignment: str, notebooks: dict[str, Path | None], release_cells: list[dict], *,
           lang: str = "en") -> str:
    """The page: ``notebooks`` maps each student id to the notebook graded (None: none)."""
    s = STRINGS[lang]
    boilerplate = _boilerplate(release_cells)
    students: list[_Student] = []
    skipped: list[tuple[str, str]] = []
    for sid, path in sorted(notebooks.items()):
        code = solution_code(path) if path is not None else None
        if code is None:
            continue  # the grader's own row says why
        fingerprint = _fingerprint(code, boilerplate)
        if not fingerprint.hashes:
            skipped.append((sid, s["empty"]))
            continue
        students.append(_Student(sid, code, fingerprint))

    groups: dict[str, list[str]] = {}
    for st in students:
        key = hashlib.sha256(st.fingerprint.filtered.encode()).hexdigest()
        groups.setdefault(key, []).append(st.sid)
    same = sorted((g for g in groups.values() if len(g) > 1), key=lambda g: (-len(g), g))

    pairs = []
    for i, a in enumerate(students):
        ha = a.fingerprint.hashes
        for b in students[i + 1:]:
            hb = b.fingerprint.hashes
            shared = len(ha & hb)
            if shared:
                share = (shared / len(ha), shared / len(hb))
                if max(share) >= THRESHOLD:
                    pairs.append((max(share), a, b, share))
    pairs.sort(key=lambda p: (-p[0], p[1].sid, p[2].sid))

    title = escape(s["title"].format(assignment=assignment))
    parts = [
        f"<!DOCTYPE html><html lang='{'zh-CN' if lang == 'zh' else 'en'}'><head>",
        "<meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{title}</title><style>{CSS}</style></head><body>",
        f"<h1>{title}</h1>",
        f"<p>{escape(s['intro'].format(noise=NOISE))}</p>",
        f"<h2>{escape(s['same'])}</h2>",
    ]
    if same:
        parts.append("<ul>" + "".join(
            f"<li>{escape(s['same_row'].format(n=len(g)))}: {escape(', '.join(g))}</li>"
            for g in same) + "</ul>")
    else:
        parts.append(f"<p>{escape(s['none_same'])}</p>")
    parts.append(f"<h2>{escape(s['pairs'].format(threshold=THRESHOLD))}</h2>")
    if pairs:
        parts.append(f"<table><tr><th>{escape(s['a'])}</th><th>{escape(s['b'])}</th>"
                     f"<th>{escape(s['share'])}</th></tr>")
        for _, a, b, share in pairs[:LISTED]:
            parts.append(f"<tr><td>{escape(a.sid)}</td><td>{escape(b.sid)}</td>"
                         f"<td>{share[0]:.0%} / {share[1]:.0%}</td></tr>")
        parts.append("</table>")
        parts.append(f"<h2>{escape(s['shown'].format(n=min(SHOWN, len(pairs))))}</h2>")
        parts.extend(_side_by_side(a, b, s) for _, a, b, _ in pairs[:SHOWN])
    else:
        parts.append(f"<p>{escape(s['none_pairs'])}</p>")
    if skipped:
        parts.append(f"<h2>{escape(s['skipped'])}</h2><ul>" + "".join(
            f"<li>{escape(sid)}: {escape(why)}</li>" for sid, why in skipped) + "</ul>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _slices(f: _Fingerprint, overlap) -> tuple:
    """The copied stretches of ``f``'s code, as (starts, ends) in its unfiltered text (what
    copydetect.detector.compare_files does, without that module)."""
    import numpy as np

    utils = _utils()
    starts, ends = utils.get_copied_slices(overlap, NOISE)
    if len(starts) and len(f.offsets):
        shift = lambda at: at + f.offsets[:, 1][np.clip(
            np.searchsorted(f.offsets[:, 0], at), 0, f.offsets.shape[0] - 1)]
        starts, ends = shift(starts), shift(ends)
    return starts, ends


def _side_by_side(a: _Student, b: _Student, s: dict) -> str:
    utils = _utils()
    fa, fb = a.fingerprint, b.fingerprint
    in_a, in_b = utils.find_fingerprint_overlap(fa.hashes, fb.hashes, fa.idx, fb.idx)
    slices_a, slices_b = _slices(fa, in_a), _slices(fb, in_b)
    tokens = int(sum(int(e) - int(st) for st, e in zip(*utils.get_copied_slices(in_a, NOISE))))
    return (f"<h3>{escape(a.sid)} · {escape(b.sid)} <span class='muted'>({tokens} "
            f"{escape(s['tokens'])})</span></h3><div class='pair'>"
            f"<pre>{_marked(a.code, slices_a)}</pre><pre>{_marked(b.code, slices_b)}</pre></div>")


def _marked(code: str, slices) -> str:
    """The code, escaped, with each copied slice (start and end offsets) in <mark>."""
    out, at = [], 0
    for start, end in sorted(zip(*slices)) if len(slices) == 2 and len(slices[0]) else []:
        start, end = max(int(start), at), min(int(end), len(code))
        if start >= end:
            continue
        out.append(escape(code[at:start]))
        out.append(f"<mark>{escape(code[start:end])}</mark>")
        at = end
    out.append(escape(code[at:]))
    return "".join(out)


def link(lang: str) -> str:
    return f"<p><a href='similarity.html'>{escape(STRINGS[lang]['link'])}</a></p>"
