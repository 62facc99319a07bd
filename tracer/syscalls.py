"""Syscall names for display, per architecture.

Only the calls the Linux tracer records (the ones that wait or communicate,
kext/linux syscall filter) are named; Python's standard library has no syscall
table, and the numbers are fixed ABI (asm/unistd_64.h), so a small table is the
simplest correct source.  Unknown numbers print as `syscall_<n>`.
"""
import platform
from argus.tracer.kdebug import xnu_syscall_name

X86_64 = {
    0: "read", 1: "write", 3: "close", 7: "poll", 16: "ioctl", 17: "pread64", 18: "pwrite64",
    19: "readv", 20: "writev", 23: "select", 24: "sched_yield", 34: "pause", 35: "nanosleep",
    42: "connect", 43: "accept", 44: "sendto", 45: "recvfrom", 46: "sendmsg", 47: "recvmsg",
    60: "exit", 61: "wait4", 65: "semop", 69: "msgsnd", 70: "msgrcv", 72: "fcntl", 73: "flock", 74: "fsync",
    75: "fdatasync", 128: "rt_sigtimedwait", 130: "rt_sigsuspend", 202: "futex",
    208: "io_getevents", 220: "semtimedop", 230: "clock_nanosleep", 231: "exit_group",
    232: "epoll_wait", 242: "mq_timedsend", 243: "mq_timedreceive", 247: "waitid",
    257: "openat", 270: "pselect6", 271: "ppoll", 275: "splice", 281: "epoll_pwait",
    286: "timerfd_settime", 288: "accept4", 299: "recvmmsg", 307: "sendmmsg",
    426: "io_uring_enter", 441: "epoll_pwait2", 449: "futex_waitv",
}

TABLES = {"x86_64": X86_64}
NAMES = TABLES.get(platform.machine(), X86_64)
NUMBERS = {name: nr for nr, name in NAMES.items()}



def name(nr):
    nr = int(nr)
    if nr == 0xFFFFFFFF:
        return "-"
    known = NAMES.get(nr)
    if known is None and nr >= 0x10000:
        # macOS traces (argus import-kdebug) put Mach traps and BSD calls in
        # their own number spaces above every Linux syscall number.
        known = xnu_syscall_name(nr)
    return known or f"syscall_{nr}"

