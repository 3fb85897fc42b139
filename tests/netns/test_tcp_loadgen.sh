#!/usr/bin/env bash
# 400 simulated TCP clients (build/ovpnd-loadgen --proto tcp: one connection each, openvpn's
# 2-byte framing) connect to a `proto tcp-server` server (at most 64 handshakes at a time),
# all pass echo traffic through the tunnel for 5 s, and leave with an explicit exit: every
# client connects, the echo replies come back, and afterwards the status file lists nobody
# and the server holds no connection.
# ovt: serial (see tests/CMakeLists.txt)
# ovt: optimised build only: 400 TLS handshakes
# ovt: timeout 600
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init tcp_loadgen

loadgen_find
[ "$OVT_WRAP" = tls-crypt ] || ovt_skip "this test runs with tls-crypt"

netns_setup 1
pki_make "$OVT_DIR"
ns=$(client_ns 1)
for i in 50 51 52 53; do
    ip -n "$ns" addr add "198.18.0.$i/24" dev eth0
done
export OVT_PROTO=tcp-server
server_conf_write "$OVT_DIR" "duplicate-cn" "max-clients 500" "server 198.19.0.0 255.255.248.0"
server_start "$OVT_DIR"
srv_pid=$(server_process_pid) || fail "cannot find the $OVPN_SERVER_IMPL process in $NS_SRV"
pki=$OVT_DIR/pki

ovt_log "400 TCP clients, 64 handshakes at a time, 5 s of echo traffic at 2/s each"
ovt_run 400 "$ns" "$LOADGEN" --proto tcp --server "$OVT_SERVER_IP:$OVT_PORT" --ca "$pki/ca.crt" \
    --cert "$pki/client1.crt" --key "$pki/client1.key" --tls-crypt "$pki/ta.key" \
    --clients 400 --rate 0 --concurrency 64 --duration 5 --data-rate 2 \
    --bind-range 198.18.0.50-53 --hand-window 120 --server-pid "$srv_pid" \
    --json "$OVT_DIR/run.json" >"$OVT_DIR/loadgen.log" 2>&1 || {
    tail -n 30 "$OVT_DIR/loadgen.log" >&2
    fail "not every TCP client connected, passed traffic and left"
}
ovt_log "$(grep -m1 -E '^(all connected|not all)' "$OVT_DIR/loadgen.log" || tail -n 3 "$OVT_DIR/loadgen.log")"
"$OVT_PY" - "$OVT_DIR/run.json" <<'PY' || fail "the load generator's report does not add up"
import json, sys
r = json.load(open(sys.argv[1]))
per = r["per_client"]
assert len(per) == 400, len(per)
bad = [c for c in per if c.get("state") != "done" or c.get("echoed", 0) == 0]
assert not bad, "%d clients without a connection or an echo answer: %s" % (len(bad), bad[:3])
PY
nobody() {
    ! grep -q "^client1," "$OVT_DIR/status.log" 2>/dev/null &&
        [ -z "$(ip netns exec "$NS_SRV" ss -Htn state established "sport = :$OVT_PORT")" ]
}
wait_for 30 nobody || fail "clients or connections left after the run: $(grep -c '^client1,' "$OVT_DIR/status.log") listed"
server_alive || fail "server died"
