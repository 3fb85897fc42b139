#!/usr/bin/env python3
"""Stop some threads of a running process while the others go on: a consumer thread that has
fallen behind, made certain. Standard library only (ptrace through ctypes); root.

    freeze_threads.py --pid PID --thread NAME [--thread NAME ...] --release FILE [--max-seconds S]

For each NAME, the first thread of PID with that name (/proc/PID/task/TID/comm; the one that
started first: threads a thread starts inherit its name, e.g. libuv's thread pool) is attached with
PTRACE_SEIZE and stopped with PTRACE_INTERRUPT: that thread alone stops (a signal such as
SIGSTOP would stop the whole process). Prints "frozen N thread(s)" once they are all stopped,
then waits until FILE exists (or --max-seconds pass) and detaches, which lets them run on.
Exit status 0 when every named thread was found, frozen and released, 1 otherwise.
"""
import argparse
import ctypes
import os
import sys
import time

PTRACE_DETACH = 17
PTRACE_SEIZE = 0x4206
PTRACE_INTERRUPT = 0x4207
WALL = 0x40000000  # __WALL: wait for threads too

libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
libc.ptrace.restype = ctypes.c_long


def ptrace(req, tid):
    if libc.ptrace(req, tid, None, None) != 0:
        e = ctypes.get_errno()
        raise OSError(e, "ptrace(%#x, %d): %s" % (req, tid, os.strerror(e)))


def start_time(pid, tid):
    """When thread tid started, in clock ticks since boot (/proc/PID/task/TID/stat field 22)."""
    with open("/proc/%d/task/%d/stat" % (pid, tid)) as f:
        stat = f.read()
    return int(stat[stat.rindex(")") + 2:].split()[19])


def threads_named(pid, names):
    """{tid: name}: for each name, the thread with that name that started first (then the
    lowest TID): thread IDs wrap around on a busy machine, so a thread started later may have
    a lower one."""
    first = {}
    for tid in (int(t) for t in os.listdir("/proc/%d/task" % pid)):
        try:
            with open("/proc/%d/task/%d/comm" % (pid, tid)) as f:
                comm = f.read().strip()
            key = (start_time(pid, tid), tid)
        except (OSError, ValueError, IndexError):
            continue
        if comm in names and (comm not in first or key < first[comm]):
            first[comm] = key
    return {key[1]: comm for comm, key in first.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--thread", action="append", required=True)
    ap.add_argument("--release", required=True)
    ap.add_argument("--max-seconds", type=float, default=60.0)
    a = ap.parse_args()

    tids = threads_named(a.pid, set(a.thread))
    missing = set(a.thread) - set(tids.values())
    if missing:
        print("freeze_threads: no thread named %s in process %d" % (", ".join(sorted(missing)), a.pid))
        return 1
    frozen = []
    try:
        for tid in tids:
            ptrace(PTRACE_SEIZE, tid)
            frozen.append(tid)
            ptrace(PTRACE_INTERRUPT, tid)
            os.waitpid(tid, WALL)
        print("freeze_threads: frozen %d thread(s): %s" % (
            len(frozen), ", ".join("%s (%d)" % (tids[t], t) for t in frozen)), flush=True)
        deadline = time.monotonic() + a.max_seconds
        while not os.path.exists(a.release) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        for tid in frozen:
            try:
                ptrace(PTRACE_DETACH, tid)
            except OSError as e:
                print("freeze_threads: %s" % e)
    print("freeze_threads: released", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
