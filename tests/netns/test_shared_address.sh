#!/usr/bin/env bash
# Two clients behind one address and port, as a NAT that hands a second client the mapping (the
# source address and port) a first client's session had. Here the second client's namespace
# takes the first one's address, both clients use `lport 40001`, and the server's neighbour
# entry for that address says which of the two namespaces gets the server's packets (as the
# NAT's mapping would). A new session from an address and port replaces only the sessions there
# that authenticated as the same client; anyone else's stays:
#  1. client1 is connected; client2 (another certificate) connects from its address and port:
#     both are listed, and once client2 has left and the path is client1's again, client1's
#     tunnel works without a reconnect. Then client1 restarts from its address and port: its
#     new session replaces its old one (listed once).
#  2. password only (verify-client-cert none, no username-as-common-name: both are "UNDEF"):
#     bob's session from alice's address and port leaves alice's session alone. Then from
#     different addresses, with duplicate-cn off: clients without a common name are no
#     duplicates of each other (2.6 gives them none), both stay.
#  3. duplicate-cn, and a second certificate with client1's common name (another device of the
#     same user) from client1's address and port: another client, so client1's session stays
#     (2.6 refuses the new session: "client-provided SSL certs unexpectedly changed").
# openvpn 2.6 keeps one instance per address and port (multi.c, mudp.c) and runs a new session
# there beside the old one (ssl.c TM_INITIAL); a new session with another common name or
# username fails its checks ("TLS object CN attempted to change", "username attempted to
# change") and takes the old session's authentication with it (ssl_verify.c
# tls_deauthenticate): the instance sends AUTH_FAILED and exits 5 s later. So with openvpn the
# second client gets no tunnel and the first one's ends too (2.6 lets any holder of a valid
# credential on the path end a session this way): those assertions are skipped for openvpn,
# which is checked for the refusal it logs instead.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init shared_address

netns_setup 2
pki_make "$OVT_DIR" --clients 2
d=$OVT_DIR
sport=40001
shared=$(client_ip 1)
ns1=$(client_ns 1)
ns2=$(client_ns 2)
mac1=$(ip netns exec "$ns1" cat /sys/class/net/eth0/address)
mac2=$(ip netns exec "$ns2" cat /sys/class/net/eth0/address)
is_ovpnd() { [ "$OVPN_SERVER_IMPL" = ovpnd ]; }

# path_to I: the server's packets for $shared go to client namespace I from now on.
path_to() {
    local mac=$mac1
    [ "$1" = 2 ] && mac=$mac2
    ip -n "$NS_SRV" neigh replace "$shared" lladdr "$mac" dev br0 nud permanent
}
# share_address: client namespace 2 takes client 1's address (and gives back its own).
share_address() {
    ip -n "$ns2" addr flush dev eth0
    ip -n "$ns2" addr add "$shared/24" dev eth0
    path_to 2
    wait_for 10 ovt_run 3 "$ns2" ping -c 1 -W 1 -q "$OVT_SERVER_IP" >/dev/null ||
        fail "client namespace 2 cannot reach the server from $shared"
    path_to 1
}
own_address() {
    ip -n "$ns2" addr flush dev eth0
    ip -n "$ns2" addr add "$(client_ip 2)/24" dev eth0
    wait_for 10 ovt_run 3 "$ns2" ping -c 1 -W 1 -q "$OVT_SERVER_IP" >/dev/null ||
        fail "client namespace 2 cannot reach the server from $(client_ip 2)"
}
n_rows() { grep -c "^$1," "$d/status.log" 2>/dev/null || true; }
n_inits() { grep -c "Initialization Sequence Completed" "$d/client$1.log" || true; }
replaced_log() { server_log_since | grep "$1/$shared:$sport: client restarted its session" || true; }

share_address
OVT_CLIENT_BIND="lport $sport"

# ---- 1. another certificate from client1's address and port ----
server_conf_write "$d"
server_start "$d"
client_start "$d" 1
wait_tunnel 1
assert_ping "$ns1" "$OVT_SERVER_TUN_IP" 5 0.05 0 "client1 at first"
ids1=$(client_peer_ids 1)

path_to 2
client_start "$d" 2
if is_ovpnd; then
    wait_tunnel 2
    assert_ping "$ns2" "$OVT_SERVER_TUN_IP" 5 0.05 0 "client2 from client1's address and port"
    wait_for 5 status_lists_once client2 || fail "the status file does not list client2"
    status_lists_once client1 ||
        fail "client1's session is gone from the status file after client2 connected from its address and port"
    [ -z "$(replaced_log client1)" ] || fail "client2's session replaced client1's: $(replaced_log client1)"
    ovt_log "client2 connected from client1's address and port; client1's session stays"
else
    # 2.6: client2's session on client1's instance fails its checks and disables the tunnel.
    wait_server_log "TLS object CN attempted to change from 'client1' to 'client2'" 30 ||
        fail "openvpn did not log the common name change"
    ovt_log "openvpn 2.6: client2's session refused on client1's instance (CN change)"
fi
client_stop 2
if is_ovpnd; then
    wait_for 10 bash -c "! grep -q '^client2,' '$d/status.log'" ||
        fail "client2 is still listed after it left"
fi
path_to 1
if is_ovpnd; then
    assert_ping "$ns1" "$OVT_SERVER_TUN_IP" 10 0.1 0 "client1 after client2 left"
    [ "$(n_inits 1)" = 1 ] || fail "client1 reconnected ($(n_inits 1) sessions)"
    [ "$(client_peer_ids 1)" = "$ids1" ] || fail "client1's peer-id changed: $(client_peer_ids 1)"
    status_lists_once client1 || fail "the status file does not list client1 once"
    ovt_log "client1's tunnel works on, same session and peer-id"
    # The same client from its own address and port: the new session replaces the old one.
    client_restart 1
    assert_ping "$ns1" "$OVT_SERVER_TUN_IP" 5 0.05 0 "client1 after its restart"
    wait_for 5 status_lists_once client1 || fail "client1 is not listed exactly once after its restart"
    [ -n "$(replaced_log client1)" ] || fail "client1's new session did not replace its old one"
else
    # 2.6 took client1's authentication away with client2's refusal: its tunnel is dead until
    # its ping-restart.
    if [ "$(ping_loss "$ns1" "$OVT_SERVER_TUN_IP" 3 0.2)" = 100 ]; then
        ovt_log "openvpn 2.6: client1's tunnel stopped with client2's refusal"
    else
        ovt_log "openvpn 2.6: client1's tunnel still works"
    fi
fi
client_stop 1
server_stop

# ---- 2. password only: the username tells the clients apart ----
cat >"$d/verify.sh" <<'EOF'
#!/bin/sh
[ "$(sed -n 2p "$1")" = "secret-$(sed -n 1p "$1")" ]
EOF
chmod 755 "$d/verify.sh"
start_user() { # start_user I USER: a client without a certificate, with USER's password
    printf '%s\nsecret-%s\n' "$2" "$2" >"$d/up$1.txt"
    chmod 600 "$d/up$1.txt"
    OVT_CLIENT_CERT=none client_start "$d" "$1" "auth-user-pass $d/up$1.txt" "auth-retry none"
}
server_conf_write "$d" "verify-client-cert none" "script-security 2" \
    "auth-user-pass-verify $d/verify.sh via-file" "tmp-dir $d"
server_start "$d"
path_to 1
start_user 1 alice
wait_tunnel 1
path_to 2
start_user 2 bob
if is_ovpnd; then
    wait_tunnel 2
    wait_for 5 count_lines '^UNDEF,' "$d/status.log" 2 ||
        fail "bob from alice's address and port: $(n_rows UNDEF) sessions listed, not 2"
    [ -z "$(replaced_log UNDEF)" ] || fail "bob's session replaced alice's: $(replaced_log UNDEF)"
else
    wait_server_log "username attempted to change from 'alice' to 'bob'" 30 ||
        fail "openvpn did not log the username change"
    ovt_log "openvpn 2.6: bob's session refused on alice's instance (username change)"
fi
client_stop 2
path_to 1
if is_ovpnd; then
    assert_ping "$ns1" "$OVT_SERVER_TUN_IP" 10 0.1 0 "alice after bob left"
    [ "$(n_inits 1)" = 1 ] || fail "alice reconnected ($(n_inits 1) sessions)"
    ovt_log "bob from alice's address and port left alice's session alone"
fi
# From its own address, bob is no duplicate of alice (duplicate-cn is off).
client_stop 1
start_user 1 alice
wait_tunnel 1
own_address
OVT_CLIENT_BIND=nobind start_user 2 bob
wait_tunnel 2
assert_ping "$ns2" "$OVT_SERVER_TUN_IP" 5 0.05 0 "bob from his own address"
assert_ping "$ns1" "$OVT_SERVER_TUN_IP" 5 0.05 0 "alice while bob is connected"
wait_for 5 count_lines '^UNDEF,' "$d/status.log" 2 ||
    fail "$(n_rows UNDEF) password-only sessions listed, not 2"
ovt_log "two password-only clients without a common name are no duplicates"
client_stop 2
client_stop 1
server_stop

# ---- 3. another certificate with the same common name (duplicate-cn) ----
pki_sign_client "$d/twin" client1 "ec -pkeyopt ec_paramgen_curve:P-256" -days 30
share_address
server_conf_write "$d" "duplicate-cn"
server_start "$d"
path_to 1
client_start "$d" 1
wait_tunnel 1
path_to 2
OVT_CLIENT_CERT=$d/twin/client.crt OVT_CLIENT_KEY=$d/twin/client.key client_start "$d" 2
if is_ovpnd; then
    wait_tunnel 2
    wait_for 5 count_lines '^client1,' "$d/status.log" 2 ||
        fail "the second certificate of client1 from its address and port: $(n_rows client1) sessions listed, not 2"
    [ -z "$(replaced_log client1)" ] ||
        fail "a session with another certificate replaced client1's: $(replaced_log client1)"
else
    wait_server_log "certs unexpectedly changed" 30 ||
        fail "openvpn did not log the certificate change"
    ovt_log "openvpn 2.6: the second certificate's session refused on client1's instance"
fi
client_stop 2
path_to 1
if is_ovpnd; then
    assert_ping "$ns1" "$OVT_SERVER_TUN_IP" 10 0.1 0 "client1 after its twin left"
    [ "$(n_inits 1)" = 1 ] || fail "client1 reconnected ($(n_inits 1) sessions)"
    ovt_log "another certificate with client1's common name left client1's session alone"
fi
client_stop 1
server_stop
