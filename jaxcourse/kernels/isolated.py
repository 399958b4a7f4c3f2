"""A kernel library run in a process of its own: the child's side.

``python -I -m jaxcourse.kernels.isolated LIBRARY SYMBOL TARGET PLATFORM`` loads one compiled
library, registers its handler and then answers calls on stdin/stdout until stdin closes. It is
started by :func:`jaxcourse.kernels.build.run_isolated` (the parent's side, which says why), with
an empty environment and no inherited descriptor but the two pipes, so that native code loaded
here shares its memory with nothing of the process that asked.

A frame each way is ``[u32 length][u32 header length][JSON header][array bytes...]``; arrays are
raw bytes with their dtype name and shape in the header, so nothing is unpickled on either side.

Before it loads the library, the child reads its undefined symbols again
(jaxcourse.kernels.linkage, whose text comes first in the script the child runs; hence no
``from __future__`` import here): what the notebook's process recorded as the library to load
is not trusted to have been checked there.
"""

import json
import os
import struct
import sys
import time

HEADER = struct.Struct(">I")


def read_frame(stream) -> tuple[dict, list[bytes]] | None:
    """One frame from ``stream``: (header, array buffers), or None at its end."""
    head = stream.read(HEADER.size)
    if len(head) < HEADER.size:
        return None
    (size,) = HEADER.unpack(head)
    body = stream.read(size)
    if len(body) < size or size < HEADER.size:
        return None
    (header_size,) = HEADER.unpack(body[:HEADER.size])
    header = json.loads(body[HEADER.size:HEADER.size + header_size])
    rest, buffers = body[HEADER.size + header_size:], []
    for nbytes in header.get("nbytes", []):
        buffers.append(rest[:nbytes])
        rest = rest[nbytes:]
    return header, buffers


def frame(header: dict, buffers: list[bytes]) -> bytes:
    header = {**header, "nbytes": [len(b) for b in buffers]}
    text = json.dumps(header).encode()
    body = HEADER.pack(len(text)) + text + b"".join(buffers)
    return HEADER.pack(len(body)) + body


def _call(jax, np, target: str, device, header: dict, buffers: list[bytes]) -> dict:
    operands = [np.frombuffer(b, dtype=np.dtype(d)).reshape(s)
                for b, d, s in zip(buffers, header["dtypes"], header["shapes"])]
    shape, dtype = header["result"]
    attributes = {name: np.dtype(kind).type(value)
                  for name, (kind, value) in header["attributes"].items()}
    call = jax.ffi.ffi_call(target, jax.ShapeDtypeStruct(tuple(shape), np.dtype(dtype)))
    run = jax.jit(lambda *args: call(*args, **attributes))
    operands = [jax.device_put(o, device) for o in operands]
    y = np.asarray(run(*operands))
    best = None
    for _ in range(int(header.get("repeats", 0))):
        start = time.perf_counter()
        run(*operands).block_until_ready()
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)
    return {"ok": True, "dtype": y.dtype.name, "shape": list(y.shape), "seconds": best,
            "value": y}


def main(argv: list[str], refused_symbols, refusal_message) -> int:
    library, symbol, target, platform, nm = argv
    # (nvcc links CUDA's runtime into the library, which itself loads the driver with dlopen:
    # a CUDA library is not checked by its symbols.)
    refused = refused_symbols(library, nm) if platform == "cpu" else []
    if refused:  # said on stderr, which the parent reports; nothing of the library ran
        print(refusal_message(refused), file=sys.stderr)
        return 3
    # Replies go out on a copy of stdout; what the library prints goes where stderr goes.
    stdout = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    import ctypes

    import jax
    import numpy as np

    jax.config.update("jax_enable_x64", True)
    handler = getattr(ctypes.cdll.LoadLibrary(library), symbol)
    jax.ffi.register_ffi_target(target, jax.ffi.pycapsule(handler), platform=platform)
    device = jax.devices("gpu" if platform == "CUDA" else "cpu")[0]
    stdin = sys.stdin.buffer
    stdout.write(frame({"ready": True}, []))
    stdout.flush()
    while (request := read_frame(stdin)) is not None:
        try:
            reply = _call(jax, np, target, device, *request)
            value = reply.pop("value")
            stdout.write(frame(reply, [value.tobytes()]))
        except Exception as err:  # noqa: BLE001 - what the kernel raised is the answer
            stdout.write(frame({"ok": False, "error": type(err).__name__,
                                "message": str(err)[:2000]}, []))
        stdout.flush()
    return 0


if __name__ == "__main__":
    # Run as the child's script, linkage.py's text first: its functions are defined above.
    sys.exit(main(sys.argv[1:], refused_symbols, refusal_message))  # noqa: F821
