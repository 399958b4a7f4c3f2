import json
import socket
import struct
import time

import ml_dtypes
import numpy as np
import pytest

from autograder.student import plain
from autograder.student.channel import MAX_FRAME, Channel, ChannelError, carried, decode, encode


def pair(secret=b"s" * 32):
    a, b = socket.socketpair()
    return (a, b), Channel(a.fileno(), secret, sends_first=True), Channel(b.fileno(), secret,
                                                                           sends_first=False)


def test_plain_data_round_trip():
    value = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": (1, 2.5, None, "x", [True]),
             "c": np.ones(3, dtype=ml_dtypes.bfloat16), "d": np.int64(7) * np.ones(2, np.int64)}
    got = decode(encode(value))
    assert got["b"] == (1, 2.5, None, "x", [True])
    assert got["a"].dtype == np.float32 and np.array_equal(got["a"], value["a"])
    assert got["c"].dtype == ml_dtypes.bfloat16


def test_shapes_survive_exactly():
    for arr in (np.array(1.5), np.zeros((0, 3)), np.arange(12.0).reshape(3, 4).T,
                np.array(2, dtype=ml_dtypes.bfloat16)):
        got = decode(encode(arr))
        assert got.shape == arr.shape and got.dtype == arr.dtype
        assert np.array_equal(got.astype(np.float64), arr.astype(np.float64))


@pytest.mark.parametrize("bad", [object(), np.array([object()]), {1: 2}, type("L", (list,), {})()])
def test_non_plain_refused(bad):
    with pytest.raises(TypeError):
        encode(bad)


def _nested(depth: int) -> list:
    """``depth`` lists around a 1."""
    value: list = 1
    for _ in range(depth):
        value = [value]
    return value


# A NumPy scalar is not plain data (the channel would not send a check's inputs holding one); a
# probe that returns one (the student's code computed it) has it made an array first.
@pytest.mark.parametrize("scalar", [np.float32(1.5), np.int64(3), np.bool_(True),
                                    np.complex64(1j), ml_dtypes.bfloat16(2)])
def test_a_numpy_scalar_is_refused_and_a_probe_value_of_one_becomes_an_array(scalar):
    assert plain.refusal(scalar) == f"{type(scalar).__name__} is not plain data"
    with pytest.raises(TypeError, match="is not plain data"):
        encode({"inputs": {"x": scalar}})
    got = carried(plain.to_plain(scalar))
    assert type(got) is np.ndarray and got.shape == () and got.dtype == np.asarray(scalar).dtype


# One definition (autograder.student.plain): what to_plain lets through, the channel carries; what
# the channel refuses, to_plain refuses (before, an array of strings passed to_plain and then
# broke the sandbox's reply).
@pytest.mark.parametrize("value", [
    np.array(["a"]), np.str_("a"), np.datetime64("2020-01-01"), np.array([object()]),
    np.zeros(1, dtype="V4"), {1: 2}, type("L", (list,), {})(), _nested(plain.MAX_DEPTH + 1)])
def test_to_plain_refuses_what_the_channel_refuses(value):
    with pytest.raises(TypeError):
        plain.to_plain(value)
    with pytest.raises(TypeError):
        encode({"value": value})
    assert plain.refusal(value) is not None


@pytest.mark.parametrize("value", [
    None, True, 3, 2.5, "x", np.zeros((2, 0)), np.ones(2, ml_dtypes.int4), (1, [2.0, {"a": None}]),
    _nested(plain.MAX_DEPTH)])
def test_what_to_plain_returns_the_channel_carries_unchanged(value):
    made = plain.to_plain(value)
    assert plain.refusal(made) is None
    got = carried(made)
    assert type(got) is type(made) and repr(got) == repr(made)


def test_a_frame_nested_past_the_value_limit_is_refused_on_arrival():
    assert decode(encode({"value": _nested(plain.MAX_DEPTH)}))
    structure = json.dumps({"d": {"value": _nested(plain.MAX_DEPTH + 1)}}).encode()
    deep = struct.pack(">I", len(structure)) + structure + struct.pack(">I", 0)
    with pytest.raises(ChannelError, match="nested too deeply"):
        decode(deep)


def test_carried_refuses_a_frame_over_the_limit():
    with pytest.raises(ValueError, match="over the channel's limit"):
        carried(np.zeros(MAX_FRAME // 8 + 1))


def test_forged_and_replayed_frames_rejected():
    socks, grader, child = pair()
    child.send({"check": "c", "value": 1})
    assert grader.recv() == {"check": "c", "value": 1}
    # A frame signed with another key (student code does not know the secret).
    other, _, forger = pair(b"f" * 32)
    forger.fd = socks[1].fileno()
    forger._send_seq = 0
    forger.send({"check": "c", "value": 2})
    with pytest.raises(ChannelError):
        grader.recv()
    assert other


def test_replay_rejected():
    socks, _, child = pair()
    child.send({"v": 1})
    raw = socks[0].recv(1 << 16)
    socks[1].sendall(raw)  # the same bytes again: right MAC, stale sequence number
    socks[1].sendall(raw)
    grader2 = Channel(socks[0].fileno(), b"s" * 32, sends_first=True)
    assert grader2.recv() == {"v": 1}
    with pytest.raises(ChannelError):
        grader2.recv()


def test_recv_deadline():
    socks, grader, _ = pair()
    with pytest.raises(TimeoutError):
        grader.recv(time.monotonic() + 0.05)
    assert socks  # the sockets must outlive the channels
