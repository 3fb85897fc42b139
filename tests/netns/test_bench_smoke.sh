#!/usr/bin/env bash
# scripts/bench.sh --quick runs to the end against both servers and its report is well formed:
# the JSON has a run for ovpnd and for openvpn, each with numeric TCP throughput above zero in
# both directions, and the markdown table is printed with a row for each server. The figures
# themselves are never judged (a shared CI machine makes them meaningless as pass/fail).
# ovt: serial (see tests/CMakeLists.txt)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=${OVPND_SOURCE_DIR:-$(cd "$here/../.." && pwd)}

log() { printf '[bench_smoke %s] %s\n' "$(date +%T)" "$*" >&2; }

if [ "$(id -u)" != 0 ]; then
    log "SKIP: needs root (network namespaces, tun devices)"
    exit 77
fi
if [ "${OVT_SANITIZER_PASS:-0}" = 1 ]; then
    log "SKIP: the benchmark smoke test runs once, in the optimised build (not the sanitizer pass)"
    exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/ovt-bench-smoke.XXXXXX")
trap 'rm -rf "$work"' EXIT

rc=0
timeout --kill-after=10 150 bash "$src/scripts/bench.sh" --quick --time 1 --json "$work/bench.json" \
    >"$work/bench.md" 2>"$work/bench.err" || rc=$?
if [ "$rc" = 77 ]; then
    tail -n 3 "$work/bench.err" >&2
    log "SKIP: bench.sh cannot run here"
    exit 77
fi
if [ "$rc" != 0 ]; then
    tail -n 60 "$work/bench.err" >&2
    log "FAIL: scripts/bench.sh --quick exited with $rc"
    exit 1
fi
grep '^\[bench ' "$work/bench.err" | tail -n 8 >&2 || true
cat "$work/bench.md" >&2

python3 - "$work/bench.json" "$work/bench.md" <<'PY'
import json, math, re, sys

bad = []
def check(cond, what):
    if not cond:
        bad.append(what)

def positive(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0

r = json.load(open(sys.argv[1]))
md = open(sys.argv[2]).read()
runs = r.get("runs", [])
servers = sorted({x.get("server") for x in runs})
check(servers == ["openvpn", "ovpnd"], "the JSON has runs for both servers (got %s)" % servers)
for x in runs:
    for k in ("tcp_c2s", "tcp_s2c"):
        v = (x.get(k) or {}).get("mbps")
        check(positive(v), "%s %s: %s mbps is a number > 0 (got %r)"
              % (x.get("server"), x.get("cipher"), k, v))
for k in ("tcp_c2s", "tcp_s2c"):
    v = (r.get("direct", {}).get(k) or {}).get("mbps")
    check(positive(v), "direct %s mbps is a number > 0 (got %r)" % (k, v))
check(len(r.get("comparison", [])) >= 1, "the JSON has an ovpnd/openvpn comparison")
check(re.search(r"^\| server \| cipher \| TCP c->s Mbit/s \|", md, re.M) is not None,
      "the markdown table header is printed")
for s in ("ovpnd", "openvpn"):
    check(re.search(r"^\| %s \| AES-256-GCM \| [0-9]+ \| [0-9]+ \|" % s, md, re.M) is not None,
          "the markdown table has a row for %s with numbers" % s)
check(re.search(r"^\| AES-256-GCM \| [0-9.]+x \|", md, re.M) is not None,
      "the ratio table is printed")
for b in bad:
    print("  not true: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY

# --repeat's summary (bench_report.py repeat), here over the same run twice: one row per run and
# a median row equal to that run's ratios.
python3 "$src/scripts/bench_report.py" repeat --json "$work/repeat.json" "$work/bench.json" \
    "$work/bench.json" >"$work/repeat.md"
cat "$work/repeat.md" >&2
python3 - "$work/bench.json" "$work/repeat.json" "$work/repeat.md" <<'PY'
import json, re, sys

run = json.load(open(sys.argv[1]))["comparison"][0]
rep = json.load(open(sys.argv[2]))
md = open(sys.argv[3]).read()
med = rep["medians"][run["cipher"]]
bad = [k for k in ("tcp_c2s_ratio", "tcp_s2c_ratio", "server_cpu_s_per_gb_ratio")
       if abs(med[k] - run[k]) > 1e-9]
if len(rep["runs"]) != 2 or bad or not re.search(r"^\| median \| AES-256-GCM \| [0-9.]+x \|",
                                                  md, re.M):
    print("  bench_report.py repeat: runs %d, medians off for %s" % (len(rep["runs"]), bad),
          file=sys.stderr)
    sys.exit(1)
PY
log "PASS"
