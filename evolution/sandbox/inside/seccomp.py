"""Defence in depth behind the namespaces: the seccomp filter a test runs under, built and
installed without any library (calls that could reach the kernel's larger attack surface,
inspect or alter other processes, or open non-local sockets fail with EPERM).
"""

# ruff: noqa: SIM105 - contextlib.suppress would cost an import in every sandbox start.

import os

# Defence in depth behind the namespaces: calls that could reach the kernel's larger attack
# surface, inspect or alter other processes, or open non-local sockets fail with EPERM.
_X86_64_DENY = {
    "ptrace": 101,
    "syslog": 103,
    "personality": 135,
    "vhangup": 153,
    "pivot_root": 155,
    "chroot": 161,
    "acct": 163,
    "settimeofday": 164,
    "mount": 165,
    "umount2": 166,
    "swapon": 167,
    "swapoff": 168,
    "reboot": 169,
    "sethostname": 170,
    "setdomainname": 171,
    "init_module": 175,
    "delete_module": 176,
    "quotactl": 179,
    "lookup_dcookie": 212,
    "clock_settime": 227,
    "kexec_load": 246,
    "add_key": 248,
    "request_key": 249,
    "keyctl": 250,
    "unshare": 272,
    "perf_event_open": 298,
    "name_to_handle_at": 303,
    "open_by_handle_at": 304,
    "setns": 308,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "finit_module": 313,
    "kexec_file_load": 320,
    "bpf": 321,
    "userfaultfd": 323,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "pidfd_getfd": 438,
    "mount_setattr": 442,
    # System V and POSIX message queues are not needed by solutions; shared memory (shmget)
    # is left to multiprocessing users, and lives in the per-submission IPC namespace.
    "msgget": 68,
    "msgsnd": 69,
    "msgrcv": 70,
    "msgctl": 71,
    "mq_open": 240,
    "mq_unlink": 241,
}
_SYS_SOCKET = 41
_SYS_CLONE = 56
_SYS_CLONE3 = 435
_AF_UNIX = 1
CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS = 0x00020000, 0x02000000, 0x04000000
CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = (
    0x08000000,
    0x10000000,
    0x20000000,
    0x40000000,
)
_CLONE_NEW_ANY = (
    CLONE_NEWNS
    | CLONE_NEWCGROUP
    | CLONE_NEWUTS
    | CLONE_NEWIPC
    | CLONE_NEWUSER
    | CLONE_NEWPID
    | CLONE_NEWNET
)


def seccomp_program():
    """Return the BPF program (list of (code, jt, jf, k)) or None when unsupported here."""
    if os.uname().machine != "x86_64":
        return None
    ld_w_abs, jeq_k, jge_k, jset_k, ret_k = 0x20, 0x15, 0x35, 0x45, 0x06
    allow, errno_eperm, kill_process = 0x7FFF0000, 0x00050000 | 1, 0x80000000
    arch_x86_64 = 0xC000003E
    prog = [
        (ld_w_abs, 0, 0, 4),  # seccomp_data.arch
        (jeq_k, 1, 0, arch_x86_64),
        (ret_k, 0, 0, kill_process),
        (ld_w_abs, 0, 0, 0),  # seccomp_data.nr
        (jge_k, 0, 1, 0x40000000),  # the x32 ABI: refuse wholesale
        (ret_k, 0, 0, errno_eperm),
    ]
    for nr in sorted(_X86_64_DENY.values()):
        prog.append((jeq_k, 0, 1, nr))
        prog.append((ret_k, 0, 0, errno_eperm))
    # clone3 passes its flags in memory, out of a filter's reach: ENOSYS makes libc fall back
    # to clone, whose flags are checked below.
    prog.append((jeq_k, 0, 1, _SYS_CLONE3))
    prog.append((ret_k, 0, 0, 0x00050000 | 38))
    # clone(flags, ...): no new namespaces of any kind.
    prog.append((jeq_k, 0, 3, _SYS_CLONE))
    prog.append((ld_w_abs, 0, 0, 16))  # seccomp_data.args[0], low 32 bits
    prog.append((jset_k, 0, 1, _CLONE_NEW_ANY))
    prog.append((ret_k, 0, 0, errno_eperm))
    prog.append((ld_w_abs, 0, 0, 0))  # reload seccomp_data.nr
    # socket(domain, ...): only AF_UNIX (multiprocessing, asyncio self-pipes) is allowed.
    prog.append((jeq_k, 0, 3, _SYS_SOCKET))
    prog.append((ld_w_abs, 0, 0, 16))  # seccomp_data.args[0], low 32 bits
    prog.append((jeq_k, 1, 0, _AF_UNIX))
    prog.append((ret_k, 0, 0, errno_eperm))
    prog.append((ret_k, 0, 0, allow))
    return prog


def prepare_seccomp(libc, prog):
    """Build the filter in the runner once; the returned callable installs it in a child."""
    import ctypes

    class SockFilter(ctypes.Structure):
        _fields_ = [
            ("code", ctypes.c_ushort),
            ("jt", ctypes.c_ubyte),
            ("jf", ctypes.c_ubyte),
            ("k", ctypes.c_uint),
        ]

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]

    filters = (SockFilter * len(prog))(*[SockFilter(*ins) for ins in prog])
    fprog = SockFprog(len(prog), filters)
    pointer = ctypes.byref(fprog)
    pr_set_no_new_privs, pr_set_seccomp, seccomp_mode_filter = 38, 22, 2

    def install():
        if libc.prctl(pr_set_no_new_privs, 1, 0, 0, 0) != 0:
            return False
        return libc.prctl(pr_set_seccomp, seccomp_mode_filter, pointer, 0, 0) == 0

    install.keep = (filters, fprog)  # the buffers must outlive the pointer
    return install
