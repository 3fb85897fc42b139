#!/usr/bin/env bash
# A client's established session stays until a new session from its address and port is
# authenticated, and the new one then takes its place with the same peer-id and tunnel
# address (2.6 runs such a session as "untrusted" beside the old one, ssl.c TM_UNTRUSTED, and
# keeps the client's multi_instance):
# 1. Without tls-auth/tls-crypt, someone on the client's path opens a session in its name (its
#    address and port) and never finishes it (tests/netns/forge_session.py). The client's
#    tunnel keeps working: the forged session's TLS fails, and the stock client, which answers
#    the server's reset for it by starting a new session itself, goes on with peer-id 0.
# 2. The client itself restarts twice (SIGUSR1, fixed port 40001): each new session replaces
#    the old one once authenticated, with peer-id 0 and address 198.19.0.2, and traffic flows.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init session_restart

[ "$OVPN_SERVER_IMPL" = ovpnd ] || ovt_skip "checks ovpnd's log lines"
OVT_WRAP=none
netns_setup 1
pki_make "$OVT_DIR"
server_conf_write "$OVT_DIR"
server_start "$OVT_DIR"
sport=40001
OVT_CLIENT_BIND="lport $sport" client_start "$OVT_DIR" 1
wait_tunnel 1
ns=$(client_ns 1)
[ "${CLIENT_TUN_IP[1]}" = 198.19.0.2 ] || fail "client 1 got ${CLIENT_TUN_IP[1]}, not 198.19.0.2"
assert_ping "$ns" "$OVT_SERVER_TUN_IP" 5 0.05 0 "before the forged session"

# ---- 1. a forged session from the client's address and port ----
ovt_run 30 "$ns" "$OVT_PY" "$OVT_LIB_DIR/forge_session.py" --host "$OVT_SERVER_IP" \
    --port "$OVT_PORT" --from-port "$sport" >"$OVT_DIR/forge.log" 2>&1 || {
    cat "$OVT_DIR/forge.log" >&2
    fail "forge_session.py did not complete a handshake"
}
ovt_log "$(cat "$OVT_DIR/forge.log")"
# The server took the forged session on rather than refusing its packets. It ends when its
# TLS fails, or sooner: the 2.6 client answers the server's reset for it (sent to the client's
# address) by starting a new session of its own, which replaces the unfinished one.
forged_ended() {
    server_log_grep "198\.18\.0\.2:$sport: (TLS handshake failed|client started another session)"
}
wait_for 10 forged_ended || fail "the server never ran the forged session"
assert_ping "$ns" "$OVT_SERVER_TUN_IP" 20 0.05 10 "client 1 after the forged session"

# ---- 2. the client restarts from the same address and port ----
inits_at_least() { [ "$(grep -c "Initialization Sequence Completed" "$OVT_DIR/client1.log")" -ge "$1" ]; }
for i in 1 2; do
    pid=$(pgrep -f "openvpn --config $OVT_DIR/client1.conf" | while read -r p; do
        [ "$(cat "/proc/$p/comm" 2>/dev/null)" = openvpn ] && echo "$p"
    done)
    [ -n "$pid" ] || fail "cannot find client 1's openvpn process"
    n=$(grep -c "Initialization Sequence Completed" "$OVT_DIR/client1.log")
    kill -USR1 "$pid"
    wait_for 30 inits_at_least $((n + 1)) || fail "client 1 did not come back after restart $i"
    assert_ping "$ns" "$OVT_SERVER_TUN_IP" 5 0.05 0 "client 1 after restart $i"
    ip=$(client_tun_ip 1)
    [ "$ip" = 198.19.0.2 ] || fail "after restart $i client 1 has $ip, not its address 198.19.0.2"
done
n=$(server_log_since | grep -c "client1/198\.18\.0\.2:$sport: client restarted its session" || true)
[ "$n" -ge 2 ] || fail "the server log shows $n session replacements for client 1, not at least 2"
ids=$(grep -o "Data Channel: .*peer-id: [0-9]*" "$OVT_DIR/client1.log" | awk '{ print $NF }' |
    sort -u | tr '\n' ' ')
[ "$ids" = "0 " ] || fail "client 1's sessions got peer-ids $ids, not always its first one (0)"
one_row() { [ "$(grep -c '^client1,' "$OVT_DIR/status.log" 2>/dev/null)" = 1 ]; }
wait_for 5 one_row || fail "the status file does not list client 1 exactly once"
ovt_log "client 1 kept its tunnel through a forged session and two restarts (peer-id 0, 198.19.0.2)"
