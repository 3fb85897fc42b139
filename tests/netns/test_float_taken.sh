#!/usr/bin/env bash
# A session does not float onto an address another client's session uses (openvpn 2.6,
# multi.c multi_process_float: "Disallow float to an address taken by another client").
# Clients A (198.18.0.2:40001) and B (198.18.0.3:40002) are connected. One of A's data-channel
# datagrams is taken off the wire before the server gets it and sent again from B's address and
# port: an authentic packet the server has not seen, from an address that is not A's. The server must not
# send A's traffic there: right after it, the server's pings to A's tunnel address come back
# (before A sends anything that would move it back), the status file still shows A and B at
# their own addresses, and both tunnels carry pings in both directions. ovpnd logs the refused
# float and counts the dropped datagram (its worker statistics at exit).
# Then the same with one certificate on both clients (duplicate-cn): see below.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init float_taken

netns_setup 2
pki_make "$OVT_DIR"
OVT_STATUS_VERSION=2 OVT_KEEPALIVE="10 120" server_conf_write "$OVT_DIR"
server_start "$OVT_DIR"
OVT_CLIENT_BIND="lport 40001" client_start "$OVT_DIR" 1
OVT_CLIENT_BIND="lport 40002" client_start "$OVT_DIR" 2
wait_tunnel 1
wait_tunnel 2
a_ns=$(client_ns 1)
b_ns=$(client_ns 2)
a_real="$(client_ip 1):40001"
b_real="$(client_ip 2):40002"
assert_ping "$a_ns" "$OVT_SERVER_TUN_IP" 5 0.05 0 "client A before"
assert_ping "$b_ns" "$OVT_SERVER_TUN_IP" 5 0.05 0 "client B before"
at_own_addresses() {
    grep -q "^CLIENT_LIST,client1,$a_real," "$OVT_DIR/status.log" &&
        grep -q "^CLIENT_LIST,client2,$b_real," "$OVT_DIR/status.log"
}
wait_for 5 at_own_addresses || fail "the status file does not show A at $a_real and B at $b_real"

# steal_and_resend: take one of A's datagrams before the server gets it (for a moment A's
# namespace routes the server's address into a veth pair of its own, sink0 -> sink1, where a
# packet socket copies it) and send it to the server from B's address and port.
steal_and_resend() {
    local stolen=$OVT_DIR/stolen.bin cap_pid rc=0
    rm -f "$stolen"
    ip -n "$a_ns" link show sink0 >/dev/null 2>&1 || {
        ip -n "$a_ns" link add sink0 type veth peer name sink1
        ip -n "$a_ns" link set sink0 up
        ip -n "$a_ns" link set sink1 up
        ip -n "$a_ns" neigh add "$OVT_SERVER_IP" lladdr 02:00:00:00:00:01 dev sink0 nud permanent
    }
    : >"$OVT_DIR/capture.log"
    ovt_spawn "$a_ns" "$OVT_DIR/capture.log" "$OVT_PY" "$OVT_LIB_DIR/steal_datagram.py" capture \
        --dev sink1 --src "$a_real" --dst-port "$OVT_PORT" --out "$stolen" --timeout 20
    cap_pid=$OVT_LAST_PID
    wait_for 10 grep -q "listening on" "$OVT_DIR/capture.log" || fail "the capture did not start"
    ip -n "$a_ns" route add "$OVT_SERVER_IP/32" dev sink0 src "$(client_ip 1)"
    ovt_run 10 "$a_ns" ping -n -q -c 3 -i 0.2 -W 1 "$OVT_SERVER_TUN_IP" >/dev/null 2>&1 || true
    ovt_wait "$cap_pid" || rc=$?
    ip -n "$a_ns" route del "$OVT_SERVER_IP/32" dev sink0
    cat "$OVT_DIR/capture.log" >&2
    [ "$rc" = 0 ] && [ -s "$stolen" ] || fail "no datagram of A's was captured"
    ovt_run 10 "$b_ns" "$OVT_PY" "$OVT_LIB_DIR/steal_datagram.py" send --file "$stolen" \
        --host "$OVT_SERVER_IP" --port "$OVT_PORT" --from-port 40002 >&2 ||
        fail "could not send the copy from B's address"
}

steal_and_resend
loss=$(ping_loss "$NS_SRV" "${CLIENT_TUN_IP[1]}" 3 0.2)
ovt_log "server -> A right after A's datagram came from B's address: $loss% loss"
[ "$loss" = 0 ] || fail "the server's pings to A were lost ($loss%): A's traffic went to B's address"
wait_for 3 at_own_addresses || fail "the status file no longer shows A at $a_real and B at $b_real"

assert_ping "$a_ns" "$OVT_SERVER_TUN_IP" 10 0.05 0 "client A after"
assert_ping "$b_ns" "$OVT_SERVER_TUN_IP" 10 0.05 0 "client B after"
assert_ping "$NS_SRV" "${CLIENT_TUN_IP[1]}" 5 0.05 0 "server -> client A after"
assert_ping "$NS_SRV" "${CLIENT_TUN_IP[2]}" 5 0.05 0 "server -> client B after"
wait_for 3 at_own_addresses || fail "the status file does not show A and B at their addresses"

if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    # (openvpn 2.6 logs its refusal at verb 4 and has no such counter)
    server_log_grep "float to $b_real refused: .*another client" ||
        fail "the server did not log the refused float"
    server_stop # logs each worker's counters on the way out
    # A is on whichever worker its peer-id names (it depends on which client connected first):
    # the workers' counters together, from the stop's statistics lines.
    refused=$(server_log_since | sed -n 's/.*worker [0-9]*: .*address not floated to \([0-9]*\).*/\1/p' |
        awk '{ n += $1 } END { print n + 0 }')
    ovt_log "workers: $refused datagram(s) dropped for a refused float"
    [ -n "$refused" ] && [ "$refused" -ge 1 ] || fail "the refused float's datagram was not counted"
fi

# The same with one certificate on both (duplicate-cn): to the server A and B are the same client,
# and as in 2.6 the float goes ahead and closes the session that was at that address (a client's
# own earlier session, as far as the server can tell). A's next datagram from its own address
# moves it back.
client_stop 1
client_stop 2
server_stop
OVT_STATUS_VERSION=2 OVT_KEEPALIVE="10 120" server_conf_write "$OVT_DIR" "duplicate-cn"
server_start "$OVT_DIR"
export OVT_CLIENT_CERT=$OVT_DIR/pki/client1.crt OVT_CLIENT_KEY=$OVT_DIR/pki/client1.key
OVT_CLIENT_BIND="lport 40001" client_start "$OVT_DIR" 1
OVT_CLIENT_BIND="lport 40002" client_start "$OVT_DIR" 2
unset OVT_CLIENT_CERT OVT_CLIENT_KEY
wait_tunnel 1
wait_tunnel 2
assert_ping "$a_ns" "$OVT_SERVER_TUN_IP" 5 0.05 0 "one certificate: client A before"
assert_ping "$b_ns" "$OVT_SERVER_TUN_IP" 5 0.05 0 "one certificate: client B before"
wait_for 5 count_lines "^CLIENT_LIST,client1," "$OVT_DIR/status.log" 2 ||
    fail "one certificate: the status file does not list two sessions of client1"
steal_and_resend
wait_for 5 count_lines "^CLIENT_LIST,client1," "$OVT_DIR/status.log" 1 ||
    fail "one certificate: the session at B's address was not closed when A floated there"
assert_ping "$a_ns" "$OVT_SERVER_TUN_IP" 10 0.05 0 "one certificate: client A after its float back"
wait_for 5 grep -q "^CLIENT_LIST,client1,$a_real," "$OVT_DIR/status.log" ||
    fail "one certificate: the status file does not show A back at $a_real"
