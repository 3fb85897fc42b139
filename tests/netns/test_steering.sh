#!/usr/bin/env bash
# Workers and kernel steering. 8 simulated clients (build/ovpnd-loadgen: the real protocol, one
# certificate with duplicate-cn) exchange echo traffic with ovpnd:
#  - workers 2 with steering: every echo comes back, both workers carry traffic, and no packet
#    had to be handed from one worker to another (the reuseport cBPF program steers datagrams by
#    peer-id, the TUN eBPF program steers by client address);
#  - workers 2 with OVPND_STEERING=off (the fallback a kernel without the programs gets):
#    every echo still comes back, and the workers report packets handed over;
#  - workers 1: everything on the one worker.
# The per-worker counters come from the server's SIGUSR2/exit statistics lines.
# ovt: serial (see tests/CMakeLists.txt)
# ovt: optimised build only: kernel steering counters with the load generator
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init steering
[ "$OVPN_SERVER_IMPL" = ovpnd ] || ovt_skip "workers and steering are ovpnd's own"
loadgen_find

netns_setup 1
pki_make "$OVT_DIR"
ns=$(client_ns 1)
pki=$OVT_DIR/pki

# worker_stat N FIELD: FIELD ("packets in", "handed over") of worker N from the last stats line.
worker_stat() {
    server_log_since | grep "worker $1: packets in" | tail -n 1 |
        sed -n "s/.*$2 \([0-9]*\).*/\1/p"
}

run() { # run WORKERS STEERING
    local workers=$1 steering=$2 rc=0
    server_conf_write "$OVT_DIR" "workers $workers" "duplicate-cn"
    OVPND_STEERING=$steering server_start "$OVT_DIR"
    ovt_run 60 "$ns" "$LOADGEN" --server "$OVT_SERVER_IP:$OVT_PORT" --ca "$pki/ca.crt" \
        --cert "$pki/client1.crt" --key "$pki/client1.key" --tls-crypt "$pki/ta.key" \
        --clients 8 --rate 0 --duration 3 --data-rate 20 --json "$OVT_DIR/lg.json" \
        >"$OVT_DIR/lg.log" 2>&1 || rc=$?
    [ "$rc" = 0 ] || {
        cat "$OVT_DIR/lg.log" >&2
        fail "workers $workers, steering $steering: load generator exited with $rc"
    }
    "$OVT_PY" -c 'import json,sys; r=json.load(open(sys.argv[1]));
sys.exit(0 if r["connected"] == 8 and all(c["echoed"] > 0 for c in r["per_client"]) else 1)' \
        "$OVT_DIR/lg.json" || fail "workers $workers, steering $steering: not every client got echoes"
    server_stop # logs each worker's counters on the way out
}

run 2 on
in0=$(worker_stat 0 "packets in")
in1=$(worker_stat 1 "packets in")
ho0=$(worker_stat 0 "handed over")
ho1=$(worker_stat 1 "handed over")
ovt_log "workers 2, steering on: packets in $in0 / $in1, handed over $ho0 / $ho1"
[ -n "$in0" ] && [ -n "$in1" ] || fail "no per-worker statistics in the server log"
[ "$in0" -gt 0 ] && [ "$in1" -gt 0 ] || fail "one worker carried no traffic ($in0 / $in1)"
[ "$ho0" = 0 ] && [ "$ho1" = 0 ] || fail "steering on, yet packets were handed over ($ho0 / $ho1)"
server_log_grep "refused the (UDP|TUN) steering" && fail "the kernel refused a steering program"

run 2 off
ho0=$(worker_stat 0 "handed over")
ho1=$(worker_stat 1 "handed over")
ovt_log "workers 2, steering off: handed over $ho0 / $ho1"
[ $((ho0 + ho1)) -gt 0 ] || fail "steering off, yet nothing was handed over: fallback not exercised"
# Hand-over messages come from each worker's pool (server/thread/msg.h), which bounds them: at this
# rate far fewer than a pool's 1024 are ever in flight, so none is dropped.
nf0=$(worker_stat 0 "hand-overs dropped (owner behind)")
nf1=$(worker_stat 1 "hand-overs dropped (owner behind)")
[ "$nf0" = 0 ] && [ "$nf1" = 0 ] ||
    fail "steering off: hand-overs dropped although the owners keep up ($nf0 / $nf1)"

run 1 on
in0=$(worker_stat 0 "packets in")
ovt_log "workers 1: packets in $in0"
[ -n "$in0" ] && [ "$in0" -gt 0 ] || fail "workers 1 carried no traffic"
