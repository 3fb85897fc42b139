#!/usr/bin/env python3
"""Check an OpenVPN server status file (status-version 1, 2 or 3) the way a user's tooling would.

The layouts are the ones openvpn 2.6 writes (src/openvpn/multi.c, multi_print_status):

version 1 (comma separated):
    OpenVPN CLIENT LIST
    Updated,<YYYY-MM-DD HH:MM:SS>
    Common Name,Real Address,Bytes Received,Bytes Sent,Connected Since
    <one row per client>
    ROUTING TABLE
    Virtual Address,Common Name,Real Address,Last Ref
    <one row per route>
    GLOBAL STATS
    Max bcast/mcast queue length,<n>
    END

versions 2 (comma) and 3 (tab): TITLE, TIME, HEADER,CLIENT_LIST,..., CLIENT_LIST rows,
HEADER,ROUTING_TABLE,..., ROUTING_TABLE rows, GLOBAL_STATS rows, END.

Fields are read with the csv module, so a field holding the separator or a double quote must be
quoted the CSV way for the row to keep its field count.

Exit 0 when every check passes, 1 with the reasons on stderr otherwise, 2 on bad usage.
"""
import argparse
import csv
import datetime
import io
import ipaddress
import re
import sys

V1_CLIENT_HEADER = ["Common Name", "Real Address", "Bytes Received", "Bytes Sent", "Connected Since"]
V1_ROUTE_HEADER = ["Virtual Address", "Common Name", "Real Address", "Last Ref"]
V2_CLIENT_HEADER = [
    "HEADER", "CLIENT_LIST", "Common Name", "Real Address", "Virtual Address",
    "Virtual IPv6 Address", "Bytes Received", "Bytes Sent", "Connected Since",
    "Connected Since (time_t)", "Username", "Client ID", "Peer ID", "Data Channel Cipher",
]
V2_ROUTE_HEADER = [
    "HEADER", "ROUTING_TABLE", "Virtual Address", "Common Name", "Real Address", "Last Ref",
    "Last Ref (time_t)",
]
UNDERLAY = ipaddress.ip_network("198.18.0.0/24")
POOL = ipaddress.ip_network("198.19.0.0/24")


class Report:
    def __init__(self):
        self.errors = []

    def check(self, cond, msg):
        if not cond:
            self.errors.append(msg)
        return cond


def is_date(s):
    try:
        datetime.datetime.strptime(s, "%Y-%m-%d %H:%M:%S")
        return True
    except ValueError:
        return False


def is_uint(s):
    return re.fullmatch(r"[0-9]+", s) is not None


def real_address_ok(s):
    # openvpn prints an IPv4 peer as a.b.c.d:port
    m = re.fullmatch(r"([0-9.]+):([0-9]+)", s)
    if not m:
        return False
    try:
        return ipaddress.ip_address(m.group(1)) in UNDERLAY and 0 < int(m.group(2)) < 65536
    except ValueError:
        return False


def virtual_address_ok(s):
    try:
        return ipaddress.ip_address(s) in POOL
    except ValueError:
        return False


def rows(text, sep):
    return list(csv.reader(io.StringIO(text), delimiter=sep, quotechar='"', strict=True))


def parse_v1(text, rep):
    """Return (clients, routes): lists of dicts keyed by the v1 header names."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    rep.check(lines[:1] == ["OpenVPN CLIENT LIST"], "v1: first line is not 'OpenVPN CLIENT LIST'")
    rep.check(len(lines) > 1 and lines[1].startswith("Updated,") and is_date(lines[1][8:]),
              "v1: second line is not 'Updated,<YYYY-MM-DD HH:MM:SS>'")
    rep.check(len(lines) > 2 and lines[2] == ",".join(V1_CLIENT_HEADER),
              "v1: client header line differs from openvpn's")
    section = None
    clients, routes, raw = [], [], {"client": [], "route": []}
    saw = set()
    for line in lines[3:]:
        if line == "ROUTING TABLE":
            section = "route_header"
            saw.add(line)
            continue
        if section == "route_header":
            rep.check(line == ",".join(V1_ROUTE_HEADER), "v1: routing table header differs")
            section = "route"
            continue
        if line == "GLOBAL STATS":
            section = "global"
            saw.add(line)
            continue
        if line == "END":
            saw.add(line)
            section = "end"
            continue
        if section is None:
            raw["client"].append(line)
        elif section == "route":
            raw["route"].append(line)
        elif section == "global":
            rep.check(re.fullmatch(r"[^,]+,.*", line) is not None, "v1: bad GLOBAL STATS line %r" % line)
            if line.startswith("Max bcast/mcast queue length,"):
                saw.add("maxbcast")
        elif section == "end":
            rep.check(False, "v1: text after END: %r" % line)
    for need in ("ROUTING TABLE", "GLOBAL STATS", "END", "maxbcast"):
        rep.check(need in saw, "v1: missing %s" % need)
    for kind, header, out in (("client", V1_CLIENT_HEADER, clients), ("route", V1_ROUTE_HEADER, routes)):
        for line in raw[kind]:
            try:
                fields = rows(line, ",")[0]
            except (csv.Error, IndexError) as e:
                out.append({"_raw": line, "_error": "not valid CSV (%s)" % e})
                continue
            if len(fields) != len(header):
                out.append({"_raw": line, "_error": "%d fields, expected %d" % (len(fields), len(header))})
                continue
            d = dict(zip(header, fields))
            d["_raw"] = line
            out.append(d)
    return clients, routes


def parse_v23(text, sep, rep):
    name = "v2" if sep == "," else "v3"
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    clients, routes = [], []
    saw = set()
    for n, line in enumerate(lines):
        tag = line.split(sep, 1)[0]
        if n == 0:
            rep.check(tag == "TITLE" and len(line) > 6, "%s: first line is not TITLE%s<title>" % (name, sep))
            continue
        if n == 1:
            f = line.split(sep)
            rep.check(len(f) == 3 and f[0] == "TIME" and is_date(f[1]) and is_uint(f[2]),
                      "%s: second line is not TIME%s<date>%s<time_t>" % (name, sep, sep))
            continue
        if tag == "HEADER":
            f = line.split(sep)
            if f[1:2] == ["CLIENT_LIST"]:
                rep.check(f == V2_CLIENT_HEADER, "%s: CLIENT_LIST header differs from openvpn's" % name)
            elif f[1:2] == ["ROUTING_TABLE"]:
                rep.check(f == V2_ROUTE_HEADER, "%s: ROUTING_TABLE header differs from openvpn's" % name)
            else:
                rep.check(False, "%s: unknown HEADER %r" % (name, line))
            saw.add(sep.join(f[:2]))
            continue
        if tag in ("CLIENT_LIST", "ROUTING_TABLE"):
            header = V2_CLIENT_HEADER if tag == "CLIENT_LIST" else V2_ROUTE_HEADER
            out = clients if tag == "CLIENT_LIST" else routes
            try:
                fields = rows(line, sep)[0]
            except (csv.Error, IndexError) as e:
                out.append({"_raw": line, "_error": "not valid CSV (%s)" % e})
                continue
            if len(fields) != len(header) - 1:
                out.append({"_raw": line,
                            "_error": "%d fields, expected %d" % (len(fields), len(header) - 1)})
                continue
            d = dict(zip(header[2:], fields[1:]))
            d["_raw"] = line
            out.append(d)
            continue
        if tag == "GLOBAL_STATS":
            if line.startswith("GLOBAL_STATS%sMax bcast/mcast queue length%s" % (sep, sep)):
                saw.add("maxbcast")
            continue
        if tag == "END":
            rep.check(n == len(lines) - 1, "%s: text after END" % name)
            saw.add("END")
            continue
        rep.check(False, "%s: unexpected line %r" % (name, line))
    for need in ("HEADER%sCLIENT_LIST" % sep, "HEADER%sROUTING_TABLE" % sep, "maxbcast", "END"):
        rep.check(need in saw, "%s: missing %s" % (name, need.replace(sep, ",")))
    return clients, routes


def check_client_row(d, version, rep):
    cn = d["Common Name"]
    rep.check(real_address_ok(d["Real Address"]), "client %r: bad Real Address %r" % (cn, d["Real Address"]))
    rep.check(is_uint(d["Bytes Received"]) and is_uint(d["Bytes Sent"]),
              "client %r: byte counters are not integers" % cn)
    rep.check(is_date(d["Connected Since"]), "client %r: bad Connected Since %r" % (cn, d["Connected Since"]))
    if version >= 2:
        rep.check(virtual_address_ok(d["Virtual Address"]),
                  "client %r: Virtual Address %r not in %s" % (cn, d["Virtual Address"], POOL))
        rep.check(is_uint(d["Connected Since (time_t)"]), "client %r: bad Connected Since (time_t)" % cn)
        rep.check(d["Username"] != "", "client %r: empty Username (openvpn writes UNDEF)" % cn)
        rep.check(is_uint(d["Client ID"]) and is_uint(d["Peer ID"]), "client %r: bad Client/Peer ID" % cn)
        rep.check(d["Data Channel Cipher"] != "", "client %r: empty Data Channel Cipher" % cn)


def check_route_row(d, version, rep):
    cn = d["Common Name"]
    rep.check(virtual_address_ok(d["Virtual Address"]),
              "route of %r: Virtual Address %r not in %s" % (cn, d["Virtual Address"], POOL))
    rep.check(real_address_ok(d["Real Address"]), "route of %r: bad Real Address" % cn)
    rep.check(is_date(d["Last Ref"]), "route of %r: bad Last Ref" % cn)
    if version >= 2:
        rep.check(is_uint(d["Last Ref (time_t)"]), "route of %r: bad Last Ref (time_t)" % cn)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("--version", type=int, choices=(1, 2, 3), required=True)
    ap.add_argument("--cn", action="append", default=[], help="must be listed, once, with valid fields")
    ap.add_argument("--absent-cn", action="append", default=[], help="must not be listed")
    ap.add_argument("--username", action="append", nargs=2, default=[], metavar=("CN", "USER"),
                    help="(versions 2 and 3) CN's client row has USER in the Username column")
    ap.add_argument("--tolerate-cn", action="append", default=[],
                    help="rows whose raw text contains this are not checked (known-broken server)")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args()

    try:
        with open(a.file, encoding="utf-8", newline="") as f:
            text = f.read()
    except OSError as e:
        print("status_check: %s" % e, file=sys.stderr)
        return 1
    rep = Report()
    if "\r" in text:
        rep.check(False, "status file has CR characters")
    if a.version == 1:
        clients, routes = parse_v1(text, rep)
    else:
        clients, routes = parse_v23(text, "," if a.version == 2 else "\t", rep)

    def tolerated(d):
        return any(t in d["_raw"] for t in a.tolerate_cn)

    good_clients, good_routes = [], []
    for kind, items, good, check in (("client", clients, good_clients, check_client_row),
                                     ("route", routes, good_routes, check_route_row)):
        for d in items:
            if tolerated(d):
                continue
            if "_error" in d:
                rep.check(False, "%s row %r: %s" % (kind, d["_raw"], d["_error"]))
                continue
            check(d, a.version, rep)
            good.append(d)
    for cn in a.cn:
        n_c = sum(1 for d in good_clients if d["Common Name"] == cn)
        n_r = sum(1 for d in good_routes if d["Common Name"] == cn)
        rep.check(n_c == 1, "CN %r: %d client rows, expected 1" % (cn, n_c))
        rep.check(n_r >= 1, "CN %r: no routing table row" % cn)
    for cn, user in a.username:
        got = [d["Username"] for d in good_clients if d["Common Name"] == cn and "Username" in d]
        rep.check(got == [user], "CN %r: Username %r, expected %r" % (cn, got, user))
    for cn in a.absent_cn:
        pat = re.compile(r"(^|[,\t])" + re.escape(cn) + r"([,\t]|$)")
        n = sum(1 for d in clients + routes if d.get("Common Name") == cn or pat.search(d["_raw"]))
        rep.check(n == 0, "CN %r still listed (%d rows)" % (cn, n))
    if rep.errors:
        if not a.quiet:
            for e in rep.errors:
                print("status_check: " + e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
