"""The guard compares by content what can be rewritten in place without rebinding anything.

An attack with raw memory (issue 26: NumPy's ``__array_interface__`` over an ``id()``) rewrote a
probe's code and constants in place: the function object stays the same, so a comparison by
identity saw nothing. Here ctypes, in this trusted test process, does the same to a probe
module of our own, and to the attributes of the channel's JSON encoder that every reply passes
through.
"""

from __future__ import annotations

import ctypes
import importlib
import sys

import pytest

from autograder.student import channel
from autograder.student.guard import Guard

PROBES = '''
def probe_value(ns, inputs):
    return "grader-constant-1f3e9"


def probe_other(ns, inputs, scale=2):
    return inputs["x"] * scale
'''


@pytest.fixture()
def probes(tmp_path, monkeypatch):
    (tmp_path / "guarded_probes.py").write_text(PROBES)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("guarded_probes")
    yield module
    sys.modules.pop("guarded_probes", None)


def _overwrite_in_place(text: str, new: bytes) -> None:
    """Write ``new`` over the characters of the compact ASCII str ``text``, in memory."""
    assert text.isascii() and len(new) == len(text)
    offset = sys.getsizeof(text) - len(text) - 1
    ctypes.memmove(id(text) + offset, new, len(new))


def test_nothing_is_reported_when_nothing_changed(probes):
    guard = Guard((), extra_modules=("guarded_probes",))
    assert guard.restore() == []
    assert probes.probe_value({}, {}) == "grader-constant-1f3e9"
    assert guard.restore() == []


def test_a_constant_rewritten_in_place_is_reported(probes):
    guard = Guard((), extra_modules=("guarded_probes",))
    constant = next(c for c in probes.probe_value.__code__.co_consts if isinstance(c, str)
                    and c.startswith("grader-"))
    _overwrite_in_place(constant, b"studnt-constant-1f3e9")
    assert probes.probe_value({}, {}) == "studnt-constant-1f3e9"  # same function object
    assert guard.restore() == ["guarded_probes.probe_value (rewritten in place)"]


def test_a_rebound_code_object_is_reported(probes):
    guard = Guard((), extra_modules=("guarded_probes",))
    probes.probe_other.__code__ = probes.probe_value.__code__.replace(co_name="probe_other")
    assert "guarded_probes.probe_other (rewritten in place)" in guard.restore()


def test_the_channel_encoder_is_watched(probes):
    guard = Guard((), extra_modules=("guarded_probes",))
    channel.ENCODER.default = lambda value: 1
    channel.DECODER.object_hook = dict
    assert guard.restore() == ["channel decoder.object_hook", "channel encoder.default (added)"]
    assert guard.restore() == []  # put back
    assert channel.decode(channel.encode({"a": [1.5]})) == {"a": [1.5]}
