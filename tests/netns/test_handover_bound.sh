#!/usr/bin/env bash
# With kernel steering off (OVPND_STEERING=off, what a kernel that refuses the programs gets),
# a datagram that reaches the wrong thread is handed to its owner through the owner's inbox.
# That hand-over is bounded: when the owner falls behind, datagrams beyond a fixed number in
# flight are dropped and counted, and the server's memory stays flat. To make the owners fall
# behind for certain, the acceptor thread and worker 1 are stopped (ptrace, the other threads
# run on) while another namespace sends 100,000 junk datagrams of 1400 bytes from 64 ports:
# the control-looking ones that land on worker 0 are for the acceptor, the P_DATA_V2 ones (odd
# peer-ids) for worker 1. The server's RSS grows by less than 16 MB over the flood (handed over
# through an unbounded queue, they took more than 40 MB); once the threads run again the server
# is alive, the client's tunnel carries pings, and worker 0 reports the dropped hand-overs.
# ovt: serial (see tests/CMakeLists.txt)
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init handover_bound
[ "$OVPN_SERVER_IMPL" = ovpnd ] || ovt_skip "workers, steering and hand-over are ovpnd's own"

netns_setup 2 # 1: a stock client, 2: the junk sender
pki_make "$OVT_DIR"
server_conf_write "$OVT_DIR" "workers 2"
OVPND_STEERING=off server_start "$OVT_DIR"
client_start "$OVT_DIR" 1
wait_tunnel 1
cns=$(client_ns 1)
assert_ping "$cns" "$OVT_SERVER_TUN_IP" 5 0.05 0 "before the flood"
pid=$(server_process_pid) || fail "no server process"
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status"; }

ovt_spawn - "$OVT_DIR/freeze.log" "$OVT_PY" "$OVT_LIB_DIR/freeze_threads.py" --pid "$pid" \
    --thread ovpnd-acceptor --thread ovpnd-worker-1 --release "$OVT_DIR/release" \
    --max-seconds 120
freeze_pid=$OVT_LAST_PID
wait_for 10 grep -q "frozen 2 thread" "$OVT_DIR/freeze.log" || {
    cat "$OVT_DIR/freeze.log" >&2
    fail "could not stop the acceptor and worker 1"
}
rss0=$(rss_kb)
ovt_run 120 "$(client_ns 2)" "$OVT_PY" "$OVT_LIB_DIR/junk_flood.py" --host "$OVT_SERVER_IP" \
    --port "$OVT_PORT" --count 100000 --size 1400 --sources 64 --peer-id 1 --peer-id 3 \
    >"$OVT_DIR/flood.log" 2>&1 || {
    cat "$OVT_DIR/flood.log" >&2
    fail "the junk sender failed"
}
ovt_log "$(cat "$OVT_DIR/flood.log")"
# worker 0 keeps handing over until its socket is empty
settled() {
    local now
    now=$(rss_kb)
    [ "$now" = "${last_rss:-}" ] && return 0
    last_rss=$now
    return 1
}
last_rss=
wait_for 5 settled || true
rss1=$(rss_kb)
touch "$OVT_DIR/release"
ovt_wait "$freeze_pid" || true
cat "$OVT_DIR/freeze.log" >&2
growth=$((rss1 - rss0))
ovt_log "server RSS with the acceptor and worker 1 stopped: $rss0 kB before the flood, $rss1 kB after (+$growth kB)"
[ "$growth" -lt 16384 ] || fail "the server's RSS grew by $growth kB during the flood: hand-over not bounded"

server_alive || fail "the server died"
assert_ping "$cns" "$OVT_SERVER_TUN_IP" 10 0.05 0 "after the flood"
server_stop # logs each worker's counters on the way out
dropped=$(server_log_since | sed -n 's/.*worker 0: .*hand-overs dropped (owner behind) \([0-9]*\).*/\1/p' |
    tail -n 1)
ovt_log "worker 0: $dropped hand-overs dropped"
[ -n "$dropped" ] && [ "$dropped" -gt 0 ] || fail "worker 0 counted no dropped hand-over"
