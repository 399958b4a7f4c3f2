"""Authenticated frames between the grader and the student's sandboxed process.

The channel is an inherited socket on a high file descriptor, never stdout. Each frame is
``[u32 length][32-byte HMAC-SHA256][payload]``; the MAC covers a per-direction sequence number and
the payload, under a random per-run secret, so student code that writes to the socket (or replays
an old frame) produces a frame the grader rejects. The payload encodes plain data only, in both
directions (autograder.student.plain, the one definition): JSON for the structure, ``.npy`` bytes
(``allow_pickle=False``) for arrays. Nothing here unpickles anything.

The MAC keeps out bytes that the notebook's code writes to a descriptor it guessed; it is not
what the grader's trust rests on. The key is in the student's process (its harness must sign),
so code that reaches the process's heap could sign anything; the tripwire (autograder.student.guard)
ends any process whose notebook code walks the heap, and the grader treats every authenticated
frame as hostile data all the same: a frame is at most ``MAX_FRAME`` bytes, and anything
``decode`` cannot read as plain data is a :class:`ChannelError`, never another exception.
"""

from __future__ import annotations

import io
import json
import os
import select
import struct
import time

# Bound here, before any student code runs, so patching hmac/hashlib later cannot see the key.
from _hashlib import compare_digest as _compare_digest
from _hashlib import hmac_digest as _hmac_digest
from typing import Any

import numpy as np

from autograder.student import plain

MAX_FRAME = 1 << 20  # each way; a probe's value is small plain data
# A frame is a dict holding one value (a check's inputs, a probe's value): one level above the
# value's own (autograder.student.plain.MAX_DEPTH).
FRAME_LEVELS = 1
# _from_json stops here, before plain.refusal would (it counts the frame itself as 1).
MAX_DEPTH = plain.MAX_DEPTH + FRAME_LEVELS + 1
_HEADER = struct.Struct(">I")
_SEQ = struct.Struct(">Q")


# The channel's own encoder and decoder, not json's shared default instances: the guard
# (autograder.student.guard) compares their attributes before every reply.
ENCODER = json.JSONEncoder()
DECODER = json.JSONDecoder()


class ChannelError(Exception):
    """A frame was malformed, forged or replayed."""


class Channel:
    def __init__(self, fd: int, secret: bytes, *, sends_first: bool):
        self.fd = fd
        self._secret = secret
        # Each direction has its own counter so a frame cannot be reflected back.
        self._send_seq = 0 if sends_first else 1 << 62
        self._recv_seq = 1 << 62 if sends_first else 0

    def _mac(self, seq: int, payload: bytes) -> bytes:
        return _hmac_digest(self._secret, _SEQ.pack(seq) + payload, "sha256")

    def send(self, message: Any, deadline: float | None = None) -> None:
        """Send one frame; TimeoutError past ``deadline`` (the grader's descriptor is
        non-blocking, so a child that stops reading cannot stall it)."""
        payload = _sized(encode(message))
        frame = _HEADER.pack(len(payload)) + self._mac(self._send_seq, payload) + payload
        self._send_seq += 1
        view = memoryview(frame)
        while view:
            self._wait(deadline, write=True)
            try:
                view = view[os.write(self.fd, view):]
            except BlockingIOError:
                continue

    def recv(self, deadline: float | None = None) -> Any:
        """The next message; EOFError when the other side closed, TimeoutError past ``deadline``
        (a ``time.monotonic()`` value)."""
        (length,) = _HEADER.unpack(self._read_exact(_HEADER.size, deadline))
        if length > MAX_FRAME:
            raise ChannelError("frame too large")
        mac = self._read_exact(32, deadline)
        payload = self._read_exact(length, deadline)
        if not _compare_digest(mac, self._mac(self._recv_seq, payload)):
            raise ChannelError("frame failed authentication")
        self._recv_seq += 1
        try:
            return decode(payload)
        except ChannelError:
            raise
        except Exception as err:  # noqa: BLE001 - hostile bytes: any failure is a bad frame
            raise ChannelError(f"malformed payload ({type(err).__name__})") from None

    def _wait(self, deadline: float | None, *, write: bool) -> None:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            raise TimeoutError("no answer in time")
        fds = ([], [self.fd], []) if write else ([self.fd], [], [])
        if not any(select.select(*fds, left)):
            raise TimeoutError("no answer in time")

    def _read_exact(self, n: int, deadline: float | None = None) -> bytes:
        chunks, got = [], 0
        while got < n:
            self._wait(deadline, write=False)
            try:
                chunk = os.read(self.fd, min(n - got, 1 << 20))
            except BlockingIOError:
                continue
            if not chunk:
                raise EOFError("channel closed")
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)


def encode(message: Any) -> bytes:
    """``message`` as a frame's payload; TypeError (saying which part) when it is not plain data
    (autograder.student.plain.refusal: the one definition)."""
    why = plain.refusal(message, -FRAME_LEVELS)
    if why is not None:
        raise TypeError(why)
    blobs: list[bytes] = []
    structure = ENCODER.encode(_to_json(message, blobs)).encode()
    parts = [_HEADER.pack(len(structure)), structure, _HEADER.pack(len(blobs))]
    for blob in blobs:
        parts += [_HEADER.pack(len(blob)), blob]
    return b"".join(parts)


def _sized(payload: bytes) -> bytes:
    if len(payload) > MAX_FRAME:
        raise ValueError(f"a message of {len(payload)} bytes is over the channel's limit")
    return payload


def carried(value: Any) -> Any:
    """``value`` as the channel's other end receives it, in a frame (a check's inputs, a probe's
    value): encoded and decoded as ``Channel.send`` and ``recv`` do. TypeError when it is not
    plain data, ValueError when its frame would be over ``MAX_FRAME``. The in-process runner
    (autograder.inprocess) and the contract tests send values through this, so what they grade is
    what crosses the sandbox's channel."""
    return decode(_sized(encode({"value": value})))["value"]


def decode(payload: bytes) -> Any:
    view = memoryview(payload)
    pos = 0

    def take(n: int) -> bytes:
        nonlocal pos
        if pos + n > len(view):
            raise ChannelError("truncated payload")
        out = bytes(view[pos:pos + n])
        pos += n
        return out

    (n_struct,) = _HEADER.unpack(take(4))
    structure = DECODER.decode(take(n_struct).decode())
    (n_blobs,) = _HEADER.unpack(take(4))
    blobs = []
    for _ in range(n_blobs):
        (n,) = _HEADER.unpack(take(4))
        blobs.append(take(n))
    if pos != len(view):
        raise ChannelError("trailing bytes")
    message = _from_json(structure, blobs, 0)
    # What encode would refuse is refused here too (the one definition, depth included).
    why = plain.refusal(message, -FRAME_LEVELS)
    if why is not None:
        raise ChannelError(why)
    return message


def _to_json(value: Any, blobs: list[bytes]) -> Any:
    """The JSON structure of ``value``, plain data (``encode`` has refused anything else)."""
    kind = type(value)
    if kind is list:
        return [_to_json(v, blobs) for v in value]
    if kind is tuple:
        return {"t": [_to_json(v, blobs) for v in value]}
    if kind is dict:
        return {"d": {k: _to_json(v, blobs) for k, v in value.items()}}
    if kind is np.ndarray:
        name = value.dtype.name
        if name in plain.EXTENDED_DTYPES:
            value = value.view(np.dtype(f"u{value.dtype.itemsize}"))
        buf = io.BytesIO()
        np.save(buf, value, allow_pickle=False)  # keeps 0-d arrays 0-d (ascontiguousarray won't)
        blobs.append(buf.getvalue())
        return {"a": len(blobs) - 1, "dtype": name}
    return value  # one of plain.SCALARS


def _from_json(value: Any, blobs: list[bytes], depth: int) -> Any:
    if value is None or type(value) in (bool, int, float, str):
        return value
    depth += 1
    if depth > MAX_DEPTH:
        raise ChannelError("nested too deeply")
    if type(value) is list:
        return [_from_json(v, blobs, depth) for v in value]
    if type(value) is dict and len(value) == 1 and "t" in value and type(value["t"]) is list:
        return tuple(_from_json(v, blobs, depth) for v in value["t"])
    if type(value) is dict and len(value) == 1 and "d" in value and type(value["d"]) is dict:
        return {k: _from_json(v, blobs, depth) for k, v in value["d"].items()}
    if type(value) is dict and set(value) == {"a", "dtype"} and type(value["a"]) is int:
        if not 0 <= value["a"] < len(blobs):
            raise ChannelError("bad array reference")
        arr = np.load(io.BytesIO(blobs[value["a"]]), allow_pickle=False)
        if value["dtype"] in plain.EXTENDED_DTYPES:
            return arr.view(plain.EXTENDED_DTYPES[value["dtype"]])
        if plain.array_refusal(arr.dtype) is not None or arr.dtype.name != value["dtype"]:
            raise ChannelError("bad array dtype")
        return arr
    raise ChannelError("malformed payload")
