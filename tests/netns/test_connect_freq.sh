#!/usr/bin/env bash
# connect-freq-initial and connect-freq (openvpn 2.6 semantics) against floods from
# ovpnd-loadgen --half-open, then a stock client that still gets in:
#  1. connect-freq-initial 20 10: 200 clients send a hard reset and nothing else. The server
#     answers at most 20 of them, logs that the limit was exceeded, and a stock client started
#     right after the flood connects once the period is over.
#  2. connect-freq 5 10 with max-clients 10: 50 clients complete the three-way handshake (they ACK
#     the server's reset) and then stay silent, each a half-open session the server would keep
#     for hand-window (60 s). Only 5 sessions are created, so a stock client still finds a free
#     place and connects within the next period; without the limit the flood would fill
#     max-clients and lock it out for a minute.
# ovt: serial (see tests/CMakeLists.txt)
# ovt: optimised build only: handshake rate limits: timing, unit-tested in test_connect_freq
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init connect_freq

loadgen_find
[ "$OVT_WRAP" = tls-crypt ] || ovt_skip "written for tls-crypt, not OVT_WRAP=$OVT_WRAP"

netns_setup 2
pki_make "$OVT_DIR"
flood_ns=$(client_ns 2)
for i in 50 51 52 53; do
    ip -n "$flood_ns" addr add "198.18.0.$i/24" dev eth0
done
pki=$OVT_DIR/pki
flood_args=(--server "$OVT_SERVER_IP:$OVT_PORT" --ca "$pki/ca.crt" --cert "$pki/client1.crt"
    --key "$pki/client1.key" --tls-crypt "$pki/ta.key" --rate 0 --duration 0
    --bind-range 198.18.0.50-53)

json_check() { # json_check FILE PYTHON-EXPRESSIONS...: each must hold for r (the report)
    "$OVT_PY" - "$@" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
half = r["failures"].get("half-open: stopped after the server's reset", 0)
bad = [e for e in sys.argv[2:] if not eval(e)]
print("  %d clients, %d answered by the server, failures %s" % (r["clients"], half, r["failures"]),
      file=sys.stderr)
for e in bad:
    print("  not true: " + e, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}

# ovpnd's SIGUSR2 counters (the line starts "control: N clients, M sessions; ...").
ovpnd_stats() {
    kill -USR2 "$(server_process_pid)"
    wait_server_log 'control: [0-9]+ clients' 10 || fail "no counters after SIGUSR2"
    server_log_since | grep -E 'control: [0-9]+ clients' | tail -n 1
}

# --- 1. a flood of hard resets
server_conf_write "$OVT_DIR" "duplicate-cn" "connect-freq-initial 20 10"
server_start "$OVT_DIR"
ovt_log "200 clients send a hard reset only"
rc=0
ovt_run 60 "$flood_ns" "$LOADGEN" "${flood_args[@]}" --clients 200 --half-open reset \
    --hand-window 4 --json "$OVT_DIR/flood1.json" >"$OVT_DIR/flood1.log" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "ovpnd-loadgen --half-open reset exited with $rc (expected 1: none connect)"
json_check "$OVT_DIR/flood1.json" 'r["clients"] == 200' 'r["connected"] == 0' \
    '1 <= half <= 20' \
    'r["failures"].get("not connected within the hand-window", 0) == 200 - half' ||
    fail "the server answered more resets than connect-freq-initial 20 10 allows"
server_log_grep 'connect-freq-initial 20 10 rate limit exceeded' ||
    fail "the server did not log that connect-freq-initial was exceeded"
client_start "$OVT_DIR" 1
wait_tunnel 1 40
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.1 0 "client after the reset flood"
client_stop 1
server_stop

# --- 2. a flood of half-open sessions
server_conf_write "$OVT_DIR" "duplicate-cn" "connect-freq 5 10" "max-clients 10"
server_start "$OVT_DIR"
ovt_log "50 clients ACK the server's reset, then stay silent"
rc=0
ovt_run 60 "$flood_ns" "$LOADGEN" "${flood_args[@]}" --clients 50 --half-open ack \
    --hand-window 5 --json "$OVT_DIR/flood2.json" >"$OVT_DIR/flood2.log" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "ovpnd-loadgen --half-open ack exited with $rc (expected 1: none connect)"
json_check "$OVT_DIR/flood2.json" 'r["clients"] == 50' 'half == 50' ||
    fail "the server did not answer every reset of the half-open flood"
server_log_grep 'exceed.*connect-freq' ||
    fail "the server did not log that connect-freq refused new connections"
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    stats=$(ovpnd_stats)
    ovt_log "server counters: $stats"
    sessions=$(printf '%s\n' "$stats" | sed -n 's/.* \([0-9]*\) sessions;.*/\1/p')
    refused=$(printf '%s\n' "$stats" | sed -n 's/.*, connect-freq \([0-9]*\),.*/\1/p')
    [ -n "$sessions" ] && [ "$sessions" -le 5 ] ||
        fail "the flood created '$sessions' sessions, more than connect-freq 5 10 allows"
    [ -n "$refused" ] && [ "$refused" -ge 45 ] ||
        fail "connect-freq refused '$refused' new connections, expected at least 45"
fi
client_start "$OVT_DIR" 1
wait_tunnel 1 40
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.1 0 "client after the half-open flood"
client_stop 1
server_alive || fail "server died"
