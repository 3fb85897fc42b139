#!/usr/bin/env python3
"""A scripted management-interface client (openvpn 2.6 doc/management-notes.txt) for the netns
tests. ADDR is HOST:PORT (TCP) or a unix socket path.

  mgmt_client.py run ADDR [--password P] CMD...
      Connect, answer the password prompt, send each CMD and collect its reply; print one line
      per line received, tagged: "P<TAB>ENTER PASSWORD:" for the prompt, "A<TAB>line" for
      answers to passwords, "W<TAB>line" for the welcome, "<N><TAB>line" for the reply to
      CMD number N (from 0), "N<TAB>line" for notifications (">...") and "EOF" if the server
      closed the connection.
      A reply ends at its SUCCESS:/ERROR: line, or at END for listings (status, version, help,
      log/state/echo with N or all); `exit`/`quit` wait for the server to close.
  mgmt_client.py watch ADDR [--password P] --out FILE CMD...
      Connect, send the CMDs, then append every line received to FILE until killed or EOF.
  mgmt_client.py flood ADDR [--password P] --count N --hold S
      Connect, send N `help` commands, never read; keep the socket open S seconds.
  mgmt_client.py authd ADDR [--password P] --out FILE [--rule USER=ACTION]... [--cmd CMD]...
      An external authentication daemon for management-client-auth: send the CMDs, then answer
      each >CLIENT:CONNECT / REAUTH by the rule for its username (from its >CLIENT:ENV block),
      appending every line received and every command sent ("SENT<TAB>command") to FILE:
        auth[:LINE|LINE...]    client-auth CID KID with those config lines, then END
        nt                     client-auth-nt CID KID
        deny:REASON[:CLIENT]   client-deny CID KID "REASON" ["CLIENT"]
        defer:S                client-auth-nt S seconds later
        pending:T:S:EXTRA      client-pending-auth CID KID EXTRA T, then client-auth-nt S
                               seconds later (S < 0: never)
        crtext:T:CODE:EXTRA    client-pending-auth CID KID EXTRA T; then, at the client's
                               >CLIENT:CR_RESPONSE, client-auth-nt if it decodes (base64) to
                               CODE, else client-deny "wrong code"
        ignore                 no answer
      A username without a rule gets `nt`; REAUTH always gets `nt`.
"""
import argparse
import base64
import re
import socket
import sys
import time

TIMEOUT_S = 10.0


def connect(addr):
    if "/" in addr:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(addr)
    else:
        host, port = addr.rsplit(":", 1)
        s = socket.create_connection((host, int(port)), timeout=TIMEOUT_S)
    s.settimeout(TIMEOUT_S)
    return s


class Reader:
    def __init__(self, s):
        self.s = s
        self.buf = b""
        self.eof = False

    def fill(self):
        data = self.s.recv(65536)
        if not data:
            self.eof = True
        self.buf += data

    def line(self):
        while b"\n" not in self.buf:
            if self.eof:
                return None
            self.fill()
        raw, self.buf = self.buf.split(b"\n", 1)
        return raw.decode("utf-8", "replace").rstrip("\r")

    def prompt(self, text):
        """Wait for text at the start of the buffer without a line end (ENTER PASSWORD:)."""
        t = text.encode()
        while not self.buf.startswith(t):
            if self.eof or not t.startswith(self.buf[:len(t)]):
                return False
            self.fill()
        if self.buf.startswith(text.encode()):
            self.buf = self.buf[len(text):]
            return True
        return False


def is_listing(cmd):
    w = cmd.split()
    if not w:
        return 0
    if w[0] in ("status", "help") or (w[0] == "version" and len(w) == 1):
        return 1
    if w[0] in ("log", "state", "echo"):
        if len(w) == 1 and w[0] == "state":
            return 1
        return sum(1 for a in w[1:] if a not in ("on", "off"))
    return 0


def n_ends(cmd):
    """How many terminating lines the reply to cmd has: (SUCCESS/ERROR lines, END lines)."""
    w = cmd.split()
    if not w:
        return (0, 0)
    if w[0] in ("log", "state", "echo") and len(w) > 1:
        return (sum(1 for a in w[1:] if a in ("on", "off")), is_listing(cmd))
    if is_listing(cmd):
        return (0, 1)
    if w[0] == "version":
        return (0, 0)  # "version N" has no reply
    return (1, 0)


def login(r, s, password, out):
    # the welcome (or the password prompt) comes first; a wrong password gets the prompt again
    if password is not None:
        out["prompt"] = "ENTER PASSWORD:" if r.prompt("ENTER PASSWORD:") else ""
        for pw in password:
            s.sendall(pw.encode() + b"\n")
            if r.prompt("ENTER PASSWORD:"):
                out["auth"].append("ENTER PASSWORD:")
                continue
            line = r.line()
            if line is None:
                return False
            out["auth"].append(line)
            if line.startswith("SUCCESS"):
                break
        else:
            return False
    line = r.line()
    if line is not None:
        out["welcome"].append(line)
    return line is not None


def cmd_run(args):
    s = connect(args.addr)
    r = Reader(s)
    out = {"prompt": "", "auth": [], "welcome": [], "replies": [], "notes": [], "eof": False}
    if not login(r, s, args.password, out):
        out["eof"] = r.eof
        emit(out)
        return 0
    for cmd in args.cmds:
        s.sendall(cmd.encode() + b"\n")
        lines = []
        w = cmd.split()
        if w and w[0] in ("exit", "quit"):
            while r.line() is not None:
                pass
            out["eof"] = True
            out["replies"].append(lines)
            break
        oks, ends = n_ends(cmd)
        while oks > 0 or ends > 0:
            line = r.line()
            if line is None:
                out["eof"] = True
                break
            if line.startswith(">"):  # a notification, whatever the command
                out["notes"].append(line)
                continue
            lines.append(line)
            if line == "END" and ends:
                ends -= 1
            elif re.match(r"^(SUCCESS|ERROR):", line) and oks:
                oks -= 1
            elif re.match(r"^ERROR:", line):
                break
        out["replies"].append(lines)
        if out["eof"]:
            break
    emit(out)
    return 0


def emit(out):
    if out["prompt"]:
        print("P\t" + out["prompt"])
    for tag, key in (("A", "auth"), ("W", "welcome")):
        for line in out[key]:
            print("%s\t%s" % (tag, line))
    for i, lines in enumerate(out.get("replies", [])):
        for line in lines:
            print("%d\t%s" % (i, line))
    for line in out["notes"]:
        print("N\t" + line)
    if out.get("eof"):
        print("EOF")


def cmd_watch(args):
    s = connect(args.addr)
    s.settimeout(None)
    r = Reader(s)
    out = {"prompt": "", "auth": [], "welcome": [], "notes": []}
    with open(args.out, "a", buffering=1) as f:
        s.settimeout(TIMEOUT_S)
        if not login(r, s, args.password, out):
            f.write("LOGIN FAILED\n")
            return 1
        for line in out["welcome"]:
            f.write(line + "\n")
        for cmd in args.cmds:
            s.sendall(cmd.encode() + b"\n")
        s.settimeout(None)
        while True:
            line = r.line()
            if line is None:
                f.write("EOF\n")
                return 0
            f.write(line + "\n")


def cmd_flood(args):
    s = connect(args.addr)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    if args.password is not None:
        s.sendall(args.password[-1].encode() + b"\n")
    s.settimeout(None)
    s.sendall(b"help\n" * args.count)
    time.sleep(args.hold)
    return 0


def authd_action(rules, user, what):
    if what == "REAUTH":
        return "nt"
    return rules.get(user, "nt")


def cmd_authd(args):
    rules = {}
    for r in args.rule or []:
        user, _, action = r.partition("=")
        rules[user] = action
    s = connect(args.addr)
    r = Reader(s)
    out = {"prompt": "", "auth": [], "welcome": [], "notes": []}
    f = open(args.out, "a", buffering=1)
    if not login(r, s, args.password, out):
        f.write("LOGIN FAILED\n")
        return 1
    for line in out["welcome"]:
        f.write(line + "\n")

    def send(cmd):
        f.write("SENT\t" + cmd + "\n")
        s.sendall(cmd.encode() + b"\n")

    for cmd in args.cmd + args.cmds:
        send(cmd)
    later = []  # (when, command)
    codes = {}  # CID -> the code its CR_RESPONSE must carry
    block = None  # [what, cid, kid, env] while reading a >CLIENT block
    s.setblocking(False)
    while True:
        now = time.monotonic()
        for item in [x for x in later if x[0] <= now]:
            later.remove(item)
            send(item[1])
        try:
            data = s.recv(65536)
            if not data:
                f.write("EOF\n")
                return 0
            r.buf += data
        except BlockingIOError:
            time.sleep(0.05)
            continue
        while b"\n" in r.buf:
            raw, r.buf = r.buf.split(b"\n", 1)
            line = raw.decode("utf-8", "replace").rstrip("\r")
            f.write(line + "\n")
            m = re.match(r"^>CLIENT:(CONNECT|REAUTH),(\d+),(\d+)$", line)
            if m:
                block = [m.group(1), m.group(2), m.group(3), {}]
                continue
            m = re.match(r"^>CLIENT:CR_RESPONSE,(\d+),(\d+),(.*)$", line)
            if m:
                block = ["CR_RESPONSE", m.group(1), m.group(2), {"response": m.group(3)}]
                continue
            if block and line.startswith(">CLIENT:ENV,"):
                kv = line[len(">CLIENT:ENV,"):]
                if kv != "END":
                    k, _, v = kv.partition("=")
                    block[3][k] = v
                    continue
                what, cid, kid, env = block
                block = None
                if what == "CR_RESPONSE":
                    if cid in codes:
                        try:
                            got = base64.b64decode(env["response"]).decode()
                        except Exception:
                            got = None
                        if got == codes.pop(cid):
                            send("client-auth-nt %s %s" % (cid, kid))
                        else:
                            send('client-deny %s %s "wrong code" "wrong code"' % (cid, kid))
                    continue
                action = authd_action(rules, env.get("username", ""), what)
                verb, _, rest = action.partition(":")
                if verb == "auth":
                    lines = [x for x in rest.split("|") if x]
                    send("client-auth %s %s" % (cid, kid))
                    for x in lines:
                        send(x)
                    send("END")
                elif verb == "nt":
                    send("client-auth-nt %s %s" % (cid, kid))
                elif verb == "deny":
                    reason, _, client = rest.partition(":")
                    cmd = 'client-deny %s %s "%s"' % (cid, kid, reason)
                    if client:
                        cmd += ' "%s"' % client
                    send(cmd)
                elif verb == "defer":
                    later.append((time.monotonic() + float(rest),
                                  "client-auth-nt %s %s" % (cid, kid)))
                elif verb == "crtext":
                    t, _, rest = rest.partition(":")
                    code, _, extra = rest.partition(":")
                    codes[cid] = code
                    send('client-pending-auth %s %s "%s" %s' % (cid, kid, extra, t))
                elif verb == "pending":
                    t, _, rest = rest.partition(":")
                    after, _, extra = rest.partition(":")
                    send('client-pending-auth %s %s "%s" %s' % (cid, kid, extra, t))
                    if float(after) >= 0:
                        later.append((time.monotonic() + float(after),
                                      "client-auth-nt %s %s" % (cid, kid)))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="what", required=True)
    for name in ("run", "watch", "flood", "authd"):
        p = sub.add_parser(name)
        p.add_argument("addr")
        p.add_argument("--password", action="append",
                       help="passwords to try in order (the last one should be right)")
        if name in ("watch", "authd"):
            p.add_argument("--out", required=True)
        if name == "authd":
            p.add_argument("--rule", action="append")
            p.add_argument("--cmd", action="append", default=[],
                           help="commands to send first (before the CMDs)")
        if name == "flood":
            p.add_argument("--count", type=int, default=20000)
            p.add_argument("--hold", type=float, default=30)
        else:
            p.add_argument("cmds", nargs="*")
    args = ap.parse_args()
    return {"run": cmd_run, "watch": cmd_watch, "flood": cmd_flood,
            "authd": cmd_authd}[args.what](args)


if __name__ == "__main__":
    sys.exit(main())
