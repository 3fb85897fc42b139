#!/usr/bin/env bash
# Checks server/'s layering from the #include lines (see ../README.md, "Layout"):
#   - a file includes only from its own folder, from folders below it, and from proto/ (or the
#     plugin ABI header); the folders, lowest first:
#         log  addr  config  thread  hooks  data  ops  control  (server/ itself: main.c, server.c)
#   - no include cycle between modules (x.c, x.h and x_internal.h are one module);
#   - reports files over 800 lines (a report, not a failure: style.md says to split past ~1000).
# Exit 1 on an upward include or a cycle that is not listed in KNOWN or KNOWN_CYCLES below, or
# on an entry of those lists that no longer exists (so the lists can only shrink).
set -euo pipefail
cd "$(dirname "$0")/.."

python3 - "$@" <<'PY'
import os, re, sys

ORDER = ["log", "addr", "config", "thread", "hooks", "data", "ops", "control", "."]
RANK = {name: i for i, name in enumerate(ORDER)}

# Upward includes and cycles still to be removed, each with the mechanism that will replace it
# (none are left: the acceptor and the workers reach each other through server/thread/mailbox.h
# and get what they need of the server through their env structs).
KNOWN = set()
KNOWN_CYCLES = set()

inc_re = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
files = []
for root, _, names in os.walk("server"):
    for n in names:
        if n.endswith((".c", ".h")):
            files.append(os.path.join(root, n))
files.sort()

def folder(path):
    d = os.path.dirname(path)[len("server"):].lstrip("/")
    return d or "."

def module(path):
    """x.c, x.h and x_internal.h (helpers shared inside module x, style.md) are one module"""
    base = path[:-2]
    return base[: -len("_internal")] if base.endswith("_internal") else base

bad = []
seen_known = set()
edges = {}
for f in files:
    src = open(f, encoding="utf-8").read()
    if folder(f) not in RANK:
        bad.append(f"{f}: folder server/{folder(f)} has no place in the layer order")
        continue
    for inc in inc_re.findall(src):
        if inc.startswith(("proto/", "plugins/include/")):
            continue
        if not inc.startswith("server/"):
            bad.append(f'{f}: #include "{inc}": include project headers by their path from the root')
            continue
        if not os.path.exists(inc):
            bad.append(f'{f}: #include "{inc}": no such file')
            continue
        if module(inc) != module(f):
            edges.setdefault(module(f), set()).add(module(inc))
        a, b = folder(f), folder(inc)
        if RANK[b] > RANK[a]:
            if (f, inc) in KNOWN:
                seen_known.add((f, inc))
            else:
                bad.append(f'{f}: #include "{inc}": server/{b} is above server/{a}')

for k in sorted(KNOWN - seen_known):
    bad.append(f"{k[0]} no longer includes {k[1]}: remove it from KNOWN in scripts/check-layout.sh")

# cycles between modules: Tarjan's strongly connected components
index, low, stack, on, sccs = {}, {}, [], set(), []
sys.setrecursionlimit(10000)
def visit(v):
    index[v] = low[v] = len(index)
    stack.append(v); on.add(v)
    for w in edges.get(v, ()):
        if w not in index:
            visit(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop(); on.discard(w); comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            sccs.append(sorted(comp))
for v in sorted(set(edges) | {w for ws in edges.values() for w in ws}):
    if v not in index:
        visit(v)
for comp in sccs:
    if tuple(comp) in KNOWN_CYCLES:
        KNOWN_CYCLES.discard(tuple(comp))
        print("known include cycle (to break): " + " <-> ".join(comp))
    else:
        bad.append("include cycle: " + " <-> ".join(comp))
for comp in sorted(KNOWN_CYCLES):
    bad.append("no longer a cycle: " + " <-> ".join(comp) + ": remove it from KNOWN_CYCLES")

for f in files:
    n = sum(1 for _ in open(f, encoding="utf-8"))
    if n > 800:
        print(f"note: {f} has {n} lines (over 800)")
print(f"check-layout: {len(files)} files, {sum(len(v) for v in edges.values())} module includes, "
      f"{len(KNOWN)} known upward includes left")
if bad:
    print("\n".join(bad))
    sys.exit(1)
PY
