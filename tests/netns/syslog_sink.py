#!/usr/bin/env python3
"""A stand-in for the syslog daemon in the netns tests.

syslog_sink.py SOCKET OUT: bind a unix datagram socket at SOCKET (as /dev/log is) and append each
message that arrives to OUT as one line, as it came ("<PRI>TIMESTAMP TAG[PID]: MESSAGE"), a
final newline dropped and any other newline written as the two characters \\n. Runs until it is
killed; the socket is writable by everyone (a server that dropped its privileges still logs).
"""
import os
import socket
import sys


def main():
    path, out = sys.argv[1], sys.argv[2]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    sock.bind(path + ".tmp")
    os.chmod(path + ".tmp", 0o666)
    os.rename(path + ".tmp", path)  # the path appears only once the socket is ready
    with open(out, "ab", buffering=0) as f:
        while True:
            data = sock.recv(65536)
            f.write(data.rstrip(b"\n").replace(b"\n", b"\\n") + b"\n")


if __name__ == "__main__":
    main()
