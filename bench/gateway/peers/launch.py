"""What the HTTP peers share: reading loadgen's arguments, a free loopback port, and handing
the process over to the server with its LISTENING line printed."""
import os
import socket
import sys


def loadgen_tail(argv):
    """Splits off what loadgen appends after the command: `--http ADDR [--stateless]`.
    Returns the rest, the address and whether `--stateless` was given."""
    stateless = bool(argv) and argv[-1] == "--stateless"
    if stateless:
        argv = argv[:-1]
    if len(argv) < 2 or argv[-2] != "--http":
        sys.exit("expected loadgen's `--http 127.0.0.1:0` last")
    if argv[-1].rsplit(":", 1)[0] != "127.0.0.1":
        sys.exit("loopback only")
    return argv[:-2], argv[-1], stateless


def free_port():
    """A loopback port free now: bound and released here, for the server to bind a moment
    later (loadgen retries connecting while it starts)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def exec_listening(url, argv, keep_fds=()):
    """Prints `LISTENING url`, points stdout at /dev/null (the server's own output is not
    read, and a pipe nobody reads fills up) and replaces this process with `argv`, so the
    process loadgen measures is the server's own."""
    sys.stdout.write(f"LISTENING {url}\n")
    sys.stdout.flush()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    for fd in keep_fds:
        os.set_inheritable(fd, True)
    os.execvp(argv[0], argv)
