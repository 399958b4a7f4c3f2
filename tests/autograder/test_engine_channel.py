import socket
import time

import ml_dtypes
import numpy as np
import pytest

from autograder.student.channel import Channel, ChannelError, decode, encode


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
