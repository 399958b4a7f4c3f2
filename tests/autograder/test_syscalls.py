"""The seccomp filter of the student's process (autograder.student.syscalls), loaded in a child.

Each denied call fails with EPERM (Python sees PermissionError, the process lives on); what a
notebook does, JAX compiling and running under jit, threads, fork, stays allowed.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from autograder.student import syscalls

CHILD = r'''
import ctypes, errno, json, os, threading
from autograder.student import syscalls
out = {"install": syscalls.install()}
libc = ctypes.CDLL(None, use_errno=True)
def call(name, fn):
    ctypes.set_errno(0)
    r = fn()
    out[name] = "ok" if r >= 0 else errno.errorcode[ctypes.get_errno()]
call("prctl_set_dumpable", lambda: libc.prctl(4, 1, 0, 0, 0))
call("prctl_clear_pdeathsig", lambda: libc.prctl(1, 0, 0, 0, 0))
call("prctl_set_pdeathsig", lambda: libc.prctl(1, 9, 0, 0, 0))
call("prctl_set_ptracer", lambda: libc.prctl(0x59616D61, -1, 0, 0, 0))
call("prctl_get_dumpable", lambda: libc.prctl(3, 0, 0, 0, 0))
call("ptrace", lambda: libc.ptrace(0, 0, 0, 0))
call("unshare", lambda: libc.unshare(0x20000000))
call("setns", lambda: libc.setns(-1, 0))
call("mount", lambda: libc.mount(b"none", b"/tmp", b"tmpfs", 0, None))
call("personality", lambda: libc.personality(0xffffffff))
for name, fn in (("setsid", os.setsid), ("setpgid", lambda: os.setpgid(0, 0))):
    try:
        fn()
        out[name] = "ok"
    except OSError as err:
        out[name] = errno.errorcode[err.errno]
import jax, jax.numpy as jnp
out["jit"] = float(jax.jit(lambda x: jnp.sin(x) @ x.T)(jnp.ones((8, 8))).sum())
box = []
t = threading.Thread(target=lambda: box.append(1)); t.start(); t.join()
out["thread"] = box == [1]
pid = os.fork()
if pid == 0:
    os._exit(7)
out["fork"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def report():
    if syscalls.seccomp is None:
        pytest.skip(f"pyseccomp/libseccomp unavailable here ({syscalls._MISSING}); the sandbox "
                    "then runs without the filter and says so in its isolation note")
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_filter_is_installed(report):
    assert report["install"] == ["seccomp filter"]


@pytest.mark.parametrize("call", ["prctl_set_dumpable", "prctl_clear_pdeathsig",
                                  "prctl_set_ptracer", "ptrace", "unshare", "setns", "mount",
                                  "personality", "setsid", "setpgid"])
def test_denied_calls_fail_with_eperm(report, call):
    assert report[call] == "EPERM"


def test_what_a_notebook_needs_still_works(report):
    assert report["prctl_set_pdeathsig"] == "ok" and report["prctl_get_dumpable"] == "ok"
    assert report["jit"] == pytest.approx(report["jit"]) and report["jit"] != 0
    assert report["thread"] is True
    assert report["fork"] == 7


def test_missing_library_is_a_note_not_a_crash(monkeypatch):
    monkeypatch.setattr(syscalls, "seccomp", None)
    monkeypatch.setattr(syscalls, "_MISSING", "OSError: libseccomp.so.2 not found", raising=False)
    note = syscalls.install()
    assert note == ["no seccomp filter (RuntimeError: OSError: libseccomp.so.2 not found)"]
