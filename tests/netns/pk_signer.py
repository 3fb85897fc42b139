#!/usr/bin/env python3
"""A management client that holds the server's private key (management-external-key; openvpn
2.6 doc/management-notes.txt, ">PK_SIGN" and `pk-sig`), its certificate
(management-external-cert, ">NEED-CERTIFICATE" and `certificate`) or its key's password
(management-query-passwords, ">PASSWORD:Need" and `password`) or its PKCS#11 id
(pkcs11-id-management, ">NEED-STR" and `needstr`) for the netns tests.

  pk_signer.py ADDR --out LOG [--key KEY [--modes FILE]] [--version N] [--password PW]
               [--cert FILE] [--go FILE] [--hold-release] [--needstr S]

Connect to ADDR (a unix socket path, or HOST:PORT; with --go, once FILE exists: Python starts
slowly, so a test starts this early and says when), send `version N` (default 3), then answer
">PASSWORD:Need 'TYPE' password" with `password "TYPE" "PW"` (with --password),
">NEED-CERTIFICATE:TAG" with `certificate`, the lines of FILE and END (with --cert),
">HOLD:Waiting for hold release" with `hold release` (with --hold-release),
">NEED-STR:Need 'TYPE' string" with `pkcs11-id-count`, `pkcs11-id-get 0`, `1` and `2`, then
`needstr TYPE S` (with --needstr), and
each >PK_SIGN:DATA[,ALG] (or >RSA_SIGN:DATA) by the next word of FILE (read at each request;
"good" once the words run out, or without --modes):
  good     sign DATA with KEY through `openssl pkeyutl` as ALG says (RSA_PKCS1_PADDING: PKCS#1
           v1.5 padding of DATA, a DigestInfo; RSA_NO_PADDING: DATA as it is;
           RSA_PKCS1_PSS_PADDING,hashalg=H,saltlen=S: PSS of the hash DATA; ECDSA: DATA is the
           hash, the answer a DER signature)
  garbage  answer with 64 random bytes
  silent   no answer
Every line received and every answer sent ("SENT<TAB>mode alg", "SENT<TAB>password",
"SENT<TAB>certificate", "SENT<TAB>hold release") is appended to LOG.
"""
import argparse
import base64
import os
import socket
import subprocess
import sys
import time


def connect(addr):
    if "/" in addr:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(addr)
    else:
        host, port = addr.rsplit(":", 1)
        s = socket.create_connection((host, int(port)))
    return s


def sign(key, data, alg):
    cmd = ["openssl", "pkeyutl", "-sign", "-inkey", key]
    if alg.startswith("RSA_PKCS1_PADDING"):
        cmd += ["-pkeyopt", "rsa_padding_mode:pkcs1"]
    elif alg.startswith("RSA_NO_PADDING"):
        cmd += ["-pkeyopt", "rsa_padding_mode:none"]
    elif alg.startswith("RSA_PKCS1_PSS_PADDING"):
        p = dict(kv.split("=", 1) for kv in alg.split(",")[1:])
        cmd += ["-pkeyopt", "rsa_padding_mode:pss", "-pkeyopt",
                "digest:" + p["hashalg"].lower(), "-pkeyopt",
                "rsa_pss_saltlen:" + p.get("saltlen", "digest")]
    elif not alg.startswith("ECDSA") and alg != "":
        raise ValueError("algorithm not handled: " + alg)
    return subprocess.run(cmd, input=data, capture_output=True, check=True).stdout


def quote(text):
    """text for a double-quoted word of a management command (2.6 parse_line)."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("addr")
    ap.add_argument("--key")
    ap.add_argument("--modes")
    ap.add_argument("--out", required=True)
    ap.add_argument("--version", default="3")
    ap.add_argument("--password")
    ap.add_argument("--cert")
    ap.add_argument("--go")
    ap.add_argument("--hold-release", action="store_true")
    ap.add_argument("--needstr")
    a = ap.parse_args()
    while a.go and not os.path.exists(a.go):
        time.sleep(0.02)
    s = connect(a.addr)
    f = s.makefile("rwb", buffering=0)
    log = open(a.out, "a", buffering=1)
    f.write(("version %s\n" % a.version).encode())
    n = 0
    for raw in f:
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        log.write(line + "\n")
        if line.startswith(">PASSWORD:Need '") and a.password is not None:
            kind = line.split("'")[1]
            f.write(('password "%s" "%s"\n' % (quote(kind), quote(a.password))).encode())
            log.write("SENT\tpassword\n")
            continue
        if line.startswith(">NEED-STR:Need '") and a.needstr is not None:
            kind = line.split("'")[1]
            # list the ids first, as a front-end choosing one would
            f.write(b"pkcs11-id-count\npkcs11-id-get 0\npkcs11-id-get 1\npkcs11-id-get 2\n")
            f.write(('needstr "%s" "%s"\n' % (quote(kind), quote(a.needstr))).encode())
            log.write("SENT\tneedstr\n")
            continue
        if line.startswith(">HOLD:Waiting for hold release") and a.hold_release:
            f.write(b"hold release\n")
            log.write("SENT\thold release\n")
            continue
        if line.startswith(">NEED-CERTIFICATE:") and a.cert:
            with open(a.cert) as c:
                pem = c.read().strip().splitlines()
            f.write(("certificate\n" + "\n".join(pem) + "\nEND\n").encode())
            log.write("SENT\tcertificate\n")
            continue
        if not (line.startswith(">PK_SIGN:") or line.startswith(">RSA_SIGN:")):
            continue
        body = line.split(":", 1)[1]
        b64, _, alg = body.partition(",")
        words = []
        if a.modes:
            with open(a.modes) as m:
                words = m.read().split()
        mode = words[n] if n < len(words) else "good"
        n += 1
        if mode == "silent":
            log.write("SENT\tsilent %s\n" % alg)
            continue
        if mode == "garbage":
            sig = os.urandom(64)
        else:
            sig = sign(a.key, base64.b64decode(b64), alg)
        enc = base64.b64encode(sig).decode()
        lines = [enc[i:i + 64] for i in range(0, len(enc), 64)]
        f.write(("pk-sig\n" + "\n".join(lines) + "\nEND\n").encode())
        log.write("SENT\t%s %s\n" % (mode, alg))
    log.write("EOF\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
