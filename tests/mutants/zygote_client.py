"""A fresh mutant host in milliseconds: hand this process's stdin, stdout and stderr to a zygote
(`mutant_host.py --zygote NAME SOCKET`), which forks a host that serves on them.

Why: the kill matrix plays each killing (mutant, fixture) pair alone on a fresh host, about two
thousand hosts per regeneration; starting a Python host costs a quarter second of imports, a
fork of a zygote that already made them costs a few milliseconds. The forked child has served
nothing, so it is as fresh as a new process. Stdlib only, so `python3 -S` starts it fast.

    python3 -S tests/mutants/zygote_client.py SOCKET
"""

import os
import signal
import socket
import sys


def main(path: str) -> int:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    socket.send_fds(conn, [b"fork\n"], [0, 1, 2])
    stream = conn.makefile("r")
    pid = int(stream.readline())

    def forward(signum: int, _frame: object) -> None:
        try:
            os.kill(pid, signum)
        except OSError:
            pass

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(signum, forward)
    for fd in (0, 1):  # only the child holds the pipes now: its exit closes them
        os.close(fd)
    line = stream.readline()
    return int(line) if line.strip() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
