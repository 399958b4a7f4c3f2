"""A seccomp filter for the student's process: the system calls a notebook never needs fail.

Installed by the sandbox in the student's process after its own set-up (namespaces, mounts,
limits, uid, death signal) and before the first cell runs; inherited by every thread and
process the notebook starts, and irrevocable. Denied calls fail with ``EPERM`` (``ENOSYS`` for
``clone3``, so that the C library falls back to ``clone``, whose flags the filter can read), so
Python raises ``PermissionError`` instead of the process being killed.

Denied: debugging and reading other processes (``ptrace``, ``process_vm_readv/writev``,
``kcmp``), leaving or building namespaces (``unshare``, ``setns``, ``clone`` with a
``CLONE_NEW*`` flag), mounts, escaping the session or process group the grader kills
(``setsid``, ``setpgid``), ``prctl`` options that undo the sandbox (``PR_SET_DUMPABLE``,
clearing ``PR_SET_PDEATHSIG``, ``PR_SET_PTRACER``, ``PR_SET_MM``, ``PR_SET_CHILD_SUBREAPER``),
kernel keyrings, BPF, perf events, kernel modules and kexec, reboot, swap, ``personality``,
``userfaultfd``, ``io_uring``, System V IPC (segments outlive the process), clock and host
name changes, raw port access.

Where libseccomp or the kernel's seccomp support is missing, nothing is installed and
:func:`install` says so in the isolation note; the other walls still hold.
"""

from __future__ import annotations

import errno

try:  # imported by the fork server, before the student's process hides any file
    import pyseccomp as seccomp
except (ImportError, OSError) as _err:  # no binding, or no libseccomp.so.2 on this machine
    seccomp = None
    _MISSING = f"{type(_err).__name__}: {_err}"

DENIED = (
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree",
    "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    "setsid", "setpgid",
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "fanotify_init",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "reboot", "swapon", "swapoff", "personality", "userfaultfd", "acct", "quotactl", "syslog",
    "vhangup", "open_by_handle_at", "name_to_handle_at", "lookup_dcookie",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "shmget", "shmat", "semget", "msgget",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname",
    "setdomainname", "iopl", "ioperm",
)
CLONE_NEW = {"CLONE_NEWNS": 0x00020000, "CLONE_NEWCGROUP": 0x02000000,
             "CLONE_NEWUTS": 0x04000000, "CLONE_NEWIPC": 0x08000000,
             "CLONE_NEWUSER": 0x10000000, "CLONE_NEWPID": 0x20000000,
             "CLONE_NEWNET": 0x40000000, "CLONE_NEWTIME": 0x00000080}
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_MM, PR_SET_CHILD_SUBREAPER = 1, 4, 35, 36
PR_SET_PTRACER = 0x59616D61


def build():  # -> pyseccomp.SyscallFilter
    """The filter, not yet loaded (the tests inspect it and load it in a child)."""
    if seccomp is None:
        raise RuntimeError(_MISSING)
    deny = seccomp.ERRNO(errno.EPERM)
    filt = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for name in DENIED:
        try:
            filt.add_rule(deny, name)
        except (OSError, ValueError, RuntimeError):
            continue  # not a system call on this architecture
    for flag in CLONE_NEW.values():
        filt.add_rule(deny, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    filt.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    for option in (PR_SET_DUMPABLE, PR_SET_MM, PR_SET_CHILD_SUBREAPER, PR_SET_PTRACER):
        filt.add_rule(deny, "prctl", seccomp.Arg(0, seccomp.EQ, option))
    # Setting a death signal is harmless; clearing it would let a process outlive the grader.
    filt.add_rule(deny, "prctl", seccomp.Arg(0, seccomp.EQ, PR_SET_PDEATHSIG),
                  seccomp.Arg(1, seccomp.EQ, 0))
    return filt


def install() -> list[str]:
    """Load the filter into this process; a one-item list for the sandbox's isolation note."""
    try:
        build().load()
    except Exception as err:  # noqa: BLE001 - missing library or kernel support: say so
        return [f"no seccomp filter ({type(err).__name__}: {err})"]
    return ["seccomp filter"]
