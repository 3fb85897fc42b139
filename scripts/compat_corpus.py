#!/usr/bin/env python3
"""Helper of scripts/compat-corpus.sh (stdlib only).

  compat_corpus.py rewrite CONF WORKDIR PKIDIR SRCDIR
      Writes WORKDIR/server.conf (CONF made runnable in the test namespaces), WORKDIR/client.conf
      (a stock openvpn 2.6 client config that matches it), WORKDIR/notes (one rewrite a line) and
      WORKDIR/meta (shell assignments: PROTO, PORT, PING_IP, DEV_TYPE, BRIDGE_IP, BRIDGE_BITS).
  compat_corpus.py push LOG
      Prints the first PUSH_REPLY the client logged, options sorted, one per line.

Addresses: IPv4 networks move into 198.19.0.0/16 (one aligned block per distinct top-level
network, masks kept; masks shorter than /20 become /20), IPv6 prefixes into 2001:2::/48 (the
top 64 bits of each distinct prefix become 2001:2:0:N, prefixes shorter than /64 become /64).
"""
import ipaddress
import os
import re
import shlex
import sys

FILE_KEYS = {
    "ca": "ca.crt", "cert": "server.crt", "key": "server.key", "extra-certs": "ca.crt",
    "crl-verify": "crl.pem", "tls-crypt": "ta.key", "tls-auth": "tls-auth.key",
    "tls-crypt-v2": "tls-crypt-v2-server.key", "secret": "static.key",
    "auth-gen-token-secret": "auth-token.key", "dh": "dh.pem",
}
INLINE = {"ca", "cert", "key", "extra-certs", "crl-verify", "tls-crypt", "tls-auth", "tls-crypt-v2",
          "secret", "dh", "pkcs12", "auth-gen-token-secret", "http-proxy-user-pass", "connection"}
SCRIPT_KEYS = {"client-connect", "client-disconnect", "learn-address", "auth-user-pass-verify", "up",
               "down", "route-up", "route-pre-down", "ipchange", "tls-verify", "tls-crypt-v2-verify"}
WORK_PATHS = {"status": "status.log", "ifconfig-pool-persist": "ipp.txt", "writepid": "pid",
              "replay-persist": "replay", "tmp-dir": "tmp"}
DIR_KEYS = {"client-config-dir"}
DROP = {"daemon", "log", "log-append", "syslog", "chroot", "cd", "dev-node", "mlock", "nice",
        "management-hold", "iproute", "askpass"}
PLUGIN_DIRS = ["/usr/lib/x86_64-linux-gnu/openvpn/plugins", "/usr/lib/openvpn/plugins",
               "/usr/lib/openvpn", "/usr/lib64/openvpn/plugins", "/usr/local/lib/openvpn/plugins"]
CLIENT_COPY = {"cipher", "data-ciphers", "ncp-ciphers", "data-ciphers-fallback", "auth", "comp-lzo",
               "compress", "allow-compression", "tun-mtu", "fragment", "mssfix", "link-mtu",
               "key-direction", "keysize", "tls-version-min", "tun-mtu-extra", "tls-cipher"}


def v4(tok):
    try:
        return ipaddress.IPv4Address(tok)
    except ValueError:
        return None


def mask_bits(tok):
    a = v4(tok)
    if a is None:
        return None
    n = int(a)
    inv = (~n) & 0xFFFFFFFF
    if (inv + 1) & inv:
        return None
    return 32 - bin(inv).count("1") if n else 0


class Mapper:
    def __init__(self):
        self.v4 = []  # (src network, dst network)
        self.next4 = 1 << 12  # offset within 198.19.0.0/16, /20 granularity start (198.19.16.0)
        self.v6 = {}
        self.notes = []

    def add4(self, net):
        if net.prefixlen < 20:
            self.notes.append(f"network {net} is wider than /20: mapped as /20")
            net = ipaddress.IPv4Network((net.network_address, 20))
        for s, _ in self.v4:
            if net.subnet_of(s):
                return
        # a wider network swallows narrower ones already mapped
        self.v4 = [(s, d) for s, d in self.v4 if not s.subnet_of(net)]
        size = net.num_addresses
        off = (self.next4 + size - 1) // size * size
        if off + size > (1 << 16):
            raise SystemExit("too many networks for 198.19.0.0/16")
        self.next4 = off + size
        dst = ipaddress.IPv4Network((int(ipaddress.IPv4Address("198.19.0.0")) + off, net.prefixlen))
        self.v4.append((net, dst))

    def map4(self, a):
        if int(a) == 0 or str(a).startswith("255.") or a.is_loopback:
            return a
        for s, d in self.v4:
            if a in s:
                return ipaddress.IPv4Address(int(d.network_address) + int(a) - int(s.network_address))
        self.add4(ipaddress.IPv4Network((a, 24), strict=False))
        return self.map4(a)

    def map6(self, a, plen=128):
        top = int(a) >> 64
        if int(a) == 0:
            return a, plen
        if top not in self.v6:
            self.v6[top] = len(self.v6) + 1
        if plen < 64:
            self.notes.append(f"IPv6 prefix {a}/{plen} wider than /64: mapped as /64")
            plen = 64
        base = (0x2001_0002_0000 << 16 | self.v6[top]) << 64
        return ipaddress.IPv6Address(base | (int(a) & ((1 << 64) - 1))), plen


def split(line):
    try:
        return shlex.split(line, comments=False, posix=True)
    except ValueError:
        return line.split()


def collect_networks(lines, m):
    for toks in lines:
        flat = []
        for t in toks:
            flat += t.split() if " " in t else [t]
        for i, t in enumerate(flat[:-1]):
            a, bits = v4(t), mask_bits(flat[i + 1])
            if a is not None and bits is not None and int(a) != 0 and not t.startswith("255."):
                if flat[0] == "ifconfig" and bits == 32:
                    continue
                m.add4(ipaddress.IPv4Network((a, bits), strict=False))


def map_token(t, m):
    if " " in t:
        return " ".join(map_token(x, m) for x in t.split(" "))
    a = v4(t)
    if a is not None:
        bits = mask_bits(t)
        if bits is not None and t.startswith("255."):
            return "255.255.240.0" if bits < 20 else t  # the network was mapped as a /20
        return str(m.map4(a))
    if ":" in t and re.fullmatch(r"[0-9a-fA-F:.]+(/\d+)?", t):
        addr, _, plen = t.partition("/")
        try:
            a6 = ipaddress.IPv6Address(addr)
        except ValueError:
            return t
        na, np = m.map6(a6, int(plen) if plen else 128)
        return f"{na}/{np}" if plen else str(na)
    return t


def quote(t):
    return '"' + t + '"' if (" " in t or not t) else t


def rewrite(conf, work, pki, src):
    raw = open(conf, encoding="utf-8", errors="replace").read().splitlines()
    notes = []
    lines = []  # token lists
    inline = None
    for ln in raw:
        s = ln.strip()
        if inline:
            if s.lower() == f"</{inline}>":
                lines.append([inline, "[inline]"])
                inline = None
            continue
        mo = re.fullmatch(r"<([a-z0-9-]+)>", s)
        if mo:
            inline = mo.group(1)
            continue
        if not s or s[0] in "#;":
            continue
        t = split(s)
        if t:
            t[0] = t[0].lstrip("-")
            lines.append(t)
    m = Mapper()
    collect_networks(lines, m)
    out, cl = [], {}
    keys = [t[0] for t in lines]
    info = {"PROTO": "udp", "PORT": "1194", "DEV_TYPE": "tun", "PING_IP": "", "BRIDGE_IP": "",
            "BRIDGE_BITS": ""}
    tls_wrap = None
    auth_pass = False
    certless = False
    for t in lines:
        k, args = t[0], t[1:]
        orig = " ".join(t)
        if k in DROP:
            notes.append(f"dropped: {orig}")
            continue
        if k == "pkcs12":
            out += [f"ca {pki}/ca.crt", f"cert {pki}/server.crt", f"key {pki}/server.key"]
            notes.append(f"{orig} -> ca/cert/key of the test PKI")
            continue
        if k in FILE_KEYS and args:
            if k == "dh":
                if args[0] == "none":
                    out.append("dh none")
                    continue
            new = [k, f"{pki}/{FILE_KEYS[k]}"] + ([a for a in args[1:]] if k in ("tls-auth",) else
                                                    args[1:] if k == "tls-crypt-v2" else [])
            if k == "crl-verify" and len(args) > 1 and args[1] == "dir":
                new = [k, f"{pki}/crl.pem"]
                notes.append(f"{orig} (dir) -> CRL file")
            if k in ("tls-auth", "tls-crypt", "tls-crypt-v2"):
                tls_wrap = (k, args[1] if k == "tls-auth" and len(args) > 1 else None)
            if k == "secret":
                notes.append("static-key (secret) config: the client gets the same key")
            out.append(" ".join(new))
            notes.append(f"{k}: {args[0]} -> test PKI {FILE_KEYS[k]}")
            if k in ("cipher", "auth"):
                pass
            continue
        if k == "local":
            out.append("local 198.18.0.1")
            notes.append(f"{orig} -> local 198.18.0.1")
            continue
        if k == "management" and args:
            if len(args) >= 2 and args[1] == "unix":
                out.append(f"management {work}/mgmt.sock unix")
            else:
                port = args[1] if len(args) > 1 else "7505"
                out.append(f"management 127.0.0.1 {port}")
            notes.append(f"{orig} -> local management (password file dropped)" if len(args) > 2
                         else f"{orig} -> local management")
            continue
        if k in WORK_PATHS and args:
            new = [k, f"{work}/{WORK_PATHS[k]}"] + args[1:]
            if k == "tmp-dir":
                os.makedirs(f"{work}/tmp", exist_ok=True)
            out.append(" ".join(new))
            continue
        if k == "capath" and args:
            out.append(f"ca {pki}/ca.crt")
            notes.append(f"{orig} -> ca of the test PKI (one file, not a hashed directory)")
            continue
        if k in DIR_KEYS and args:
            d = f"{work}/ccd"
            os.makedirs(d, exist_ok=True)
            sd = os.path.join(src, os.path.basename(args[0].rstrip("/"))) if args else ""
            if sd and os.path.isdir(sd):
                for f in os.listdir(sd):
                    body = open(os.path.join(sd, f)).read().splitlines()
                    with open(os.path.join(d, f), "w") as fh:
                        for b in body:
                            bt = split(b.strip()) if b.strip() and b.strip()[0] not in "#;" else []
                            fh.write((" ".join(quote(map_token(x, m)) for x in bt) if bt else b) + "\n")
                notes.append(f"{k}: copied {len(os.listdir(sd))} file(s) from the corpus, addresses moved")
            out.append(f"{k} {d}")
            continue
        if k in SCRIPT_KEYS and args:
            sc = f"{work}/ok.sh"
            with open(sc, "w") as fh:
                fh.write("#!/bin/sh\nexit 0\n")
            os.chmod(sc, 0o755)
            os.chmod(work, 0o755)
            out.append(" ".join([k, sc] + args[1:]))
            notes.append(f"{k} {args[0]} -> a script that succeeds")
            if k == "auth-user-pass-verify":
                auth_pass = True
            continue
        if k == "plugin" and args:
            path = args[0]
            cands = [path] + [os.path.join(d, os.path.basename(path)) for d in PLUGIN_DIRS]
            found = next((c for c in cands if os.path.isfile(c)), None)
            if found:
                out.append(" ".join([k, found] + [quote(a) for a in args[1:]]))
                if "auth-pam" in found:
                    auth_pass = True
                    notes.append(f"plugin {path} kept ({found}); PAM must accept the test user")
            else:
                out.append("# " + orig)
                notes.append(f"plugin {path} not here: commented out")
            continue
        if k in ("user", "group") and args:
            want = "nobody" if k == "user" else "nogroup"
            if args[0] != want:
                notes.append(f"{orig} -> {k} {want}")
            out.append(f"{k} {want}")
            continue
        if k in ("verify-client-cert", "client-cert-not-required"):
            if k == "client-cert-not-required" or (args and args[0] == "none"):
                certless = True
        if k == "port" and args:
            info["PORT"] = args[0]
        if k == "lport" and args:
            info["PORT"] = args[0]
        if k == "proto" and args:
            info["PROTO"] = "tcp" if args[0].startswith("tcp") else "udp"
        if k == "dev" and args:
            if args[0].startswith("tap"):
                info["DEV_TYPE"] = "tap"
        if k == "dev-type" and args:
            info["DEV_TYPE"] = args[0]
        if k == "verb":
            out.append("verb 4")
            continue
        nt = [k] + [map_token(a, m) for a in args]
        new = " ".join(quote(a) for a in nt)
        if nt != t:
            notes.append(f"{orig} -> {new}")
        out.append(new)
        if k in CLIENT_COPY:
            cl[k] = new
        if k == "server" and len(nt) >= 3:
            info["PING_IP"] = str(ipaddress.IPv4Address(nt[1]) + 1)
        if k == "server-bridge" and len(nt) >= 3:
            info["PING_IP"] = nt[1]
            info["BRIDGE_IP"] = nt[1]
            info["BRIDGE_BITS"] = str(mask_bits(nt[2]))
        if k == "ifconfig" and len(nt) >= 2 and not info["PING_IP"]:
            info["PING_IP"] = nt[1]
    if "verb" not in keys:
        out.append("verb 4")
    notes += m.notes
    with open(f"{work}/server.conf", "w") as fh:
        fh.write("\n".join(out) + "\n")
    # the client
    c = ["client", f"dev {info['DEV_TYPE']}",
         f"remote 198.18.0.1 {info['PORT']} {'tcp4-client' if info['PROTO'] == 'tcp' else 'udp4'}",
         "nobind", f"ca {pki}/ca.crt", "connect-retry 1 1", "verb 4",
         'pull-filter ignore "block-outside-dns"']
    if not certless:
        c += [f"cert {pki}/client1.crt", f"key {pki}/client1.key"]
    if tls_wrap:
        kind, direction = tls_wrap
        if kind == "tls-auth":
            d = "" if direction is None else " " + ("1" if direction == "0" else "0")
            c.append(f"tls-auth {pki}/tls-auth.key{d}")
        elif kind == "tls-crypt":
            c.append(f"tls-crypt {pki}/ta.key")
        else:
            c.append(f"tls-crypt-v2 {pki}/tls-crypt-v2-client.key")
    for k, v in cl.items():
        if k == "key-direction":
            v = "key-direction " + ("1" if v.split()[1] == "0" else "0")
        c.append(v)
    if auth_pass:
        with open(f"{work}/up.txt", "w") as fh:
            fh.write("corpususer\ncorpuspass\n")
        c.append(f"auth-user-pass {work}/up.txt")
    with open(f"{work}/client.conf", "w") as fh:
        fh.write("\n".join(c) + "\n")
    with open(f"{work}/notes", "w") as fh:
        fh.write("\n".join(notes) + ("\n" if notes else ""))
    with open(f"{work}/meta", "w") as fh:
        for k, v in info.items():
            fh.write(f"{k}={shlex.quote(v)}\n")


def push(log):
    for ln in open(log, errors="replace"):
        mo = re.search(r"PUSH: Received control message: '(PUSH_REPLY,.*)'", ln)
        if mo:
            opts = [o.strip() for o in mo.group(1).split(",")[1:] if o.strip()]
            print("\n".join(sorted(opts)))
            return


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "rewrite":
        rewrite(*sys.argv[2:])
    elif len(sys.argv) == 3 and sys.argv[1] == "push":
        push(sys.argv[2])
    else:
        sys.exit(__doc__)
