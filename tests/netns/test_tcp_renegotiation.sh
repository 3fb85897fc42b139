#!/usr/bin/env bash
# Key renegotiations over the TCP transport, under load: the server renegotiates every 3 s
# (reneg-sec 3) while a paced 12 MiB transfer (about 12 s) crosses the tunnel of a stock client
# connected with `proto tcp-client`. At least 3 renegotiations complete during it (the client
# logs a TLS handshake for each), the data arrives with the same sha256, and the client never
# restarts (no TLS error, no SIGUSR1, one TCP connection from start to end).
# ovt: serial (see tests/CMakeLists.txt)
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init tcp_renegotiation

netns_setup 1
pki_make "$OVT_DIR"
export OVT_PROTO=tcp-server OVT_CLIENT_PROTO=tcp4-client
server_conf_write "$OVT_DIR" "reneg-sec 3"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1 "reneg-sec 0"
wait_tunnel 1
handshakes() { grep -c "Control Channel: TLS" "$OVT_DIR/client1.log" || true; }
connections() { grep -c "TCP connection established" "$OVT_DIR/client1.log" || true; }

head -c $((12 * 1024 * 1024)) /dev/urandom >"$OVT_DIR/data.bin"
ovt_spawn "$NS_SRV" "$OVT_DIR/listen.log" "$OVT_PY" "$OVT_LIB_DIR/tcpxfer.py" listen \
    --bind "$OVT_SERVER_TUN_IP" --port 5003 --ready "$OVT_DIR/ready" --recv "$OVT_DIR/data.recv" \
    --timeout 60
lpid=$OVT_LAST_PID
wait_for 10 test -s "$OVT_DIR/ready" || fail "TCP listener did not start"
before=$(handshakes)
ovt_run 70 "$(client_ns 1)" "$OVT_PY" "$OVT_LIB_DIR/tcpxfer.py" connect --host \
    "$OVT_SERVER_TUN_IP" --port 5003 --send "$OVT_DIR/data.bin" --rate $((1024 * 1024)) \
    --timeout 60 >"$OVT_DIR/connect.log" 2>&1 || {
    cat "$OVT_DIR/connect.log" "$OVT_DIR/listen.log" >&2
    fail "TCP transfer across renegotiations failed or stalled"
}
ovt_wait "$lpid" || fail "TCP receiver failed"
n=$(($(handshakes) - before))
[ "$n" -ge 3 ] || fail "only $n renegotiations happened during the transfer"
[ "$(sha256sum <"$OVT_DIR/data.bin")" = "$(sha256sum <"$OVT_DIR/data.recv")" ] ||
    fail "the data changed on its way across $n renegotiations"
if grep -Eq "TLS Error|SIGUSR1" "$OVT_DIR/client1.log"; then
    fail "the client restarted (TLS error) instead of renegotiating"
fi
[ "$(connections)" = 1 ] || fail "the client connected $(connections) times instead of once"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 10 0.05 0 "after the renegotiations"
ovt_log "12 MiB across $n renegotiations on one TCP connection, sha256 matches: $(cat "$OVT_DIR/connect.log")"
