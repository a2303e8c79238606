#!/usr/bin/env python3
"""Keystroke echo through srun --pty: run ARGV (an srun --pty command
whose task echoes what it reads, e.g. `cat` on its terminal) on a
pseudo-terminal, wait for it to echo a first key, then type N keys one
at a time and time each from the write to its echo. Prints the median,
p90, p99 and max in milliseconds. Figures only: nothing is compared."""
import os
import pty
import select
import signal
import sys
import time


def wait_for(fd, want, timeout):
    got = b""
    end = time.monotonic() + timeout
    while want not in got:
        left = end - time.monotonic()
        if left <= 0:
            raise SystemExit("no echo of %r within %ss: %r" % (want, timeout, got[-200:]))
        r, _, _ = select.select([fd], [], [], left)
        if r:
            got += os.read(fd, 4096)
    return got


def main():
    n = int(sys.argv[1])
    argv = sys.argv[2:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(argv[0], argv)
    # Until the remote end echoes (the step has started).
    deadline = time.monotonic() + 120
    while True:
        os.write(fd, b"r")
        try:
            wait_for(fd, b"r", 1)
            break
        except SystemExit:
            if time.monotonic() > deadline:
                raise
    time.sleep(0.5)
    # Drain what is left (repeated r's).
    while select.select([fd], [], [], 0.2)[0]:
        os.read(fd, 4096)
    lat = []
    keys = b"abcdefghijklmnopqrstuvwxyz"
    for i in range(n):
        k = keys[i % len(keys):i % len(keys) + 1]
        t0 = time.monotonic()
        os.write(fd, k)
        wait_for(fd, k, 30)
        lat.append((time.monotonic() - t0) * 1000)
        if i % 64 == 63:
            os.write(fd, b"\r")   # a line now and then: cat's buffer
            wait_for(fd, b"\n", 30)
        time.sleep(0.002)
    os.write(fd, b"\x03")         # Ctrl-C ends cat, then srun
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    lat.sort()
    q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))]
    print("keystroke echo over %d keys, ms: median %.2f p90 %.2f p99 %.2f max %.2f"
          % (n, q(0.5), q(0.9), q(0.99), lat[-1]))


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    main()
