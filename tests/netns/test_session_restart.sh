#!/usr/bin/env bash
# A client's established session stays until a new session from its address and port is
# authenticated, and the new one then takes its place with the same peer-id and tunnel
# address (2.6 runs such a session as "untrusted" beside the old one, ssl.c TM_UNTRUSTED, and
# keeps the client's multi_instance). The stock 2.6 client, whose new session came from a
# server reset, keeps sending with its first peer-id, so a new one would cut its tunnel.
# With tls-crypt (the default here), client on the fixed port 40001:
# 1. The client restarts twice (SIGUSR1): each time traffic flows again, with peer-id 0 and
#    address 198.19.0.2, and the status file lists it once.
# 2. Its first hard reset, captured at connect, is replayed from its address and port
#    (tls-crypt authenticates a replay like the original). The server answers the client, which
#    starts a new session itself; its tunnel keeps working, still with peer-id 0.
# Without tls-auth/tls-crypt:
# 3. Someone on the path opens a session in the client's name and never finishes it
#    (tests/netns/forge_session.py): the client's tunnel keeps working.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init session_restart

[ "$OVPN_SERVER_IMPL" = ovpnd ] || ovt_skip "checks ovpnd's log lines"
command -v tcpdump >/dev/null || ovt_skip "tcpdump not installed (run scripts/install-deps.sh)"
netns_setup 1
pki_make "$OVT_DIR"
server_conf_write "$OVT_DIR"
server_start "$OVT_DIR"
sport=40001
ns=$(client_ns 1)
first=$OVT_DIR/first-reset.pcap
ovt_spawn "$NS_SRV" "$OVT_DIR/tcpdump.log" tcpdump -i br0 -n -U --immediate-mode -s 0 -c 1 \
    -w "$first" "udp and src port $sport and dst port $OVT_PORT"
wait_for 10 grep -q "listening on" "$OVT_DIR/tcpdump.log" || fail "tcpdump did not start"
OVT_CLIENT_BIND="lport $sport" client_start "$OVT_DIR" 1
wait_tunnel 1
[ "${CLIENT_TUN_IP[1]}" = 198.19.0.2 ] || fail "client 1 got ${CLIENT_TUN_IP[1]}, not 198.19.0.2"
assert_ping "$ns" "$OVT_SERVER_TUN_IP" 5 0.05 0 "client 1 at first"

# ---- 1. the client restarts from the same address and port ----
for i in 1 2; do
    client_restart 1
    assert_ping "$ns" "$OVT_SERVER_TUN_IP" 5 0.05 0 "client 1 after restart $i"
    ip=$(client_tun_ip 1)
    [ "$ip" = 198.19.0.2 ] || fail "after restart $i client 1 has $ip, not its address 198.19.0.2"
done
n=$(server_log_since | grep -c "client1/198\.18\.0\.2:$sport: client restarted its session" || true)
[ "$n" = 2 ] || fail "the server log shows $n session replacements for client 1, not 2"
[ "$(client_peer_ids 1)" = "0 " ] || fail "client 1's sessions got peer-ids $(client_peer_ids 1), not always 0"
wait_for 5 status_lists_once client1 || fail "the status file does not list client 1 exactly once"

# ---- 2. its first hard reset replayed from its address and port ----
n=$(grep -c "Initialization Sequence Completed" "$OVT_DIR/client1.log")
ovt_run 30 "$ns" "$OVT_PY" "$OVT_LIB_DIR/forge_session.py" --host "$OVT_SERVER_IP" \
    --port "$OVT_PORT" --from-port "$sport" --replay-pcap "$first" >"$OVT_DIR/replay.log" 2>&1 || {
    cat "$OVT_DIR/replay.log" >&2
    fail "could not replay the captured hard reset"
}
ovt_log "$(cat "$OVT_DIR/replay.log")"
wait_for 15 client_inits_at_least 1 $((n + 1)) ||
    fail "the client did not start a new session after the replayed reset (nothing tested)"
assert_ping "$ns" "$OVT_SERVER_TUN_IP" 20 0.05 10 "client 1 after the replayed reset"
[ "$(client_peer_ids 1)" = "0 " ] || fail "client 1's sessions got peer-ids $(client_peer_ids 1), not always 0"

# ---- 3. without tls-auth/tls-crypt: a forged session in the client's name ----
client_stop 1
server_stop
OVT_WRAP=none
server_conf_write "$OVT_DIR"
server_start "$OVT_DIR"
OVT_CLIENT_BIND="lport $sport" client_start "$OVT_DIR" 1
wait_tunnel 1
ovt_run 30 "$ns" "$OVT_PY" "$OVT_LIB_DIR/forge_session.py" --host "$OVT_SERVER_IP" \
    --port "$OVT_PORT" --from-port "$sport" >"$OVT_DIR/forge.log" 2>&1 || {
    cat "$OVT_DIR/forge.log" >&2
    fail "forge_session.py did not complete a handshake"
}
ovt_log "$(cat "$OVT_DIR/forge.log")"
# The server took the forged session on rather than refusing its packets. It ends when its
# TLS fails, or sooner: the stock client answers the server's reset for it by starting a new
# session itself, which replaces the unfinished one.
forged_ended() {
    server_log_grep "198\.18\.0\.2:$sport: (TLS handshake failed|client started another session)"
}
wait_for 10 forged_ended || fail "the server never ran the forged session"
assert_ping "$ns" "$OVT_SERVER_TUN_IP" 20 0.05 10 "client 1 after the forged session"
ovt_log "client 1 kept its tunnel through two restarts, a replayed reset and a forged session"
