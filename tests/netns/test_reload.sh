#!/usr/bin/env bash
# Reload without dropping clients: four stock clients ping the server without pause (every
# 0.2 s) through five SIGHUPs, each re-reading the config:
#   1. the server certificate renewed (new files, new subject and serial): a new client sees
#      the new certificate, the connected ones renegotiate with it (client reneg-sec 6);
#   2. a pushed route added: a new client receives it;
#   3. a CRL revoking client2 added (`crl-verify`): client2 is disconnected at once;
#   4. a broken config (an unknown directive; the pushed route removed): the error is logged
#      with FILE:LINE and nothing changes (a new client still gets the route);
#   5. the pool grown by a /24 (server 198.19.0.0/24 -> /23): a client whose client-config-dir
#      file pushes 198.19.1.10 (outside the old subnet) connects and is reachable.
# Reloads 2 and 5 come from the management interface's `signal SIGHUP`, the others from kill.
# A sixth reload (ovpnd only) shrinks the pool back while client5 holds an address in the
# /24 it would lose: refused, the client keeps its address.
# The clients that stay (1, 3, 4) lose no ping, and none of them starts a second session.
#
# openvpn 2.6 restarts on SIGHUP and drops every client, so against it (OVPN_SERVER_IMPL=openvpn)
# the test checks only what a new client sees after each reload (steps 1, 2, 3 and 5: 2.6
# re-reads everything when it restarts); step 4 is skipped (2.6 exits on a config that does not
# parse) and so are the checks that the connected clients stay and lose no ping.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init reload

is_ovpnd=0
[ "$OVPN_SERVER_IMPL" = ovpnd ] && is_ovpnd=1
netns_setup 5
pki_make "$OVT_DIR" --clients 5
dir=$OVT_DIR
pki=$dir/pki
mkdir -p "$dir/ccd" # client5's file comes with step 5

# write_conf: the server config for the current step (variables below).
push_route=0 crl=0 broken=0 netmask=255.255.255.0
write_conf() {
    local -a lines=("client-config-dir $dir/ccd" "reneg-sec 0" "management 127.0.0.1 7505")
    [ "$push_route" = 1 ] && lines+=('push "route 198.19.77.0 255.255.255.0"')
    [ "$crl" = 1 ] && lines+=("crl-verify $pki/crl.pem")
    [ "$broken" = 1 ] && lines+=("no-such-directive 1")
    OVT_SERVER_LINE="server 198.19.0.0 $netmask" server_conf_write "$dir" "${lines[@]}"
}
write_conf
server_start "$dir"

# hup: SIGHUP to the server, from outside or (with "mgmt") as the management interface's
# `signal SIGHUP`.
hup() {
    local out
    if [ "${1:-}" = mgmt ]; then
        out=$(ovt_run 10 "$NS_SRV" "$OVT_PY" "$OVT_LIB_DIR/mgmt_client.py" run 127.0.0.1:7505 \
            "signal SIGHUP" 2>&1) || true
        grep -q "SUCCESS: signal SIGHUP thrown" <<<"$out" ||
            fail "management: signal SIGHUP was not accepted: $out"
    else
        kill -HUP "$(server_process_pid)"
    fi
}

# reload [mgmt]: hup, then wait until the server has dealt with it (ovpnd logs a summary line;
# openvpn restarts and logs its start again).
n_reload=0
reload() {
    n_reload=$((n_reload + 1))
    if [ "$is_ovpnd" = 1 ]; then
        hup "$@"
        # (each reload ends with exactly one of these lines)
        wait_for 10 bash -c "[ \$(grep -Ec 'reload: (applied|no change|refused)' '$dir/server.log') -ge $n_reload ]" ||
            fail "reload $n_reload: no 'reload:' line in the server log"
        server_alive || fail "reload $n_reload ended the server"
    else
        local n
        n=$(grep -c "Initialization Sequence Completed" "$dir/server.log" || true)
        hup "$@"
        wait_for 20 bash -c "[ \$(grep -c 'Initialization Sequence Completed' '$dir/server.log') -gt $n ]" ||
            fail "openvpn did not come back from SIGHUP"
    fi
}

for i in 1 2 3 4; do
    client_start "$dir" "$i" "reneg-sec 6"
done
for i in 1 2 3 4; do
    wait_tunnel "$i"
done

# Each client pings the server all along; the summary comes at SIGINT.
declare -A PINGER=()
for i in 1 2 3 4; do
    ovt_spawn "$(client_ns "$i")" "$dir/ping$i.log" ping -n -i 0.2 -W 1 "$OVT_SERVER_TUN_IP"
    PINGER[$i]=$OVT_LAST_PID
done

# new_client: (re)start client 5, the one that connects after each reload.
new_client() {
    client_stop 5
    client_start "$dir" 5 "$@"
}

# --- 1: the server certificate renewed in place
(
    cd "$pki" &&
        printf '%s\n' 'basicConstraints = CA:FALSE' \
            'keyUsage = critical, digitalSignature, keyEncipherment, keyAgreement' \
            'extendedKeyUsage = serverAuth' >server2.ext &&
        openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out server2.key &&
        openssl req -new -sha256 -key server2.key -subj "/CN=server-renewed" -out server2.csr &&
        openssl x509 -req -sha256 -days 30 -in server2.csr -CA ca.crt -CAkey ca.key \
            -set_serial 4242 -extfile server2.ext -out server2.crt &&
        cp server2.crt server.crt && cp server2.key server.key
) >"$dir/renew.log" 2>&1 || fail "could not make the renewed server certificate: $(cat "$dir/renew.log")"
reload
if [ "$is_ovpnd" = 1 ]; then
    server_log_grep "reload: .*ca/cert/key" || fail "reload 1: the new certificate was not taken"
fi
new_client "auth-retry none"
wait_for 20 grep -q "VERIFY OK: depth=0, CN=server-renewed" "$dir/client5.log" ||
    fail "a new client did not see the renewed server certificate"
ovt_log "1: a new client sees the renewed certificate"

# --- 2: a pushed route added
push_route=1
write_conf
reload mgmt
new_client "auth-retry none"
wait_for 20 out_has "198\.19\.77\.0/24" ip -n "$(client_ns 5)" route show ||
    fail "a new client did not get the pushed route 198.19.77.0/24"
ovt_log "2: a new client receives the added route"

# --- 3: a CRL revoking client2
bash "$OVT_SRC/scripts/pki.sh" --revoke client2 "$pki"
crl=1
write_conf
reload
if [ "$is_ovpnd" = 1 ]; then
    wait_for 3 server_log_grep "client2.*(revoked|certificate has been revoked)" ||
        fail "client2 was not disconnected at once after its certificate was revoked"
    wait_for 3 bash -c "! grep -q '^client2,' '$dir/status.log'" ||
        fail "client2 is still in the status file after its revocation"
else
    # (2.6 dropped everybody; client2 is refused when it comes back)
    wait_for 20 server_log_grep "VERIFY ERROR: depth=0, error=certificate revoked.*CN=client2" ||
        fail "openvpn did not refuse the revoked client2"
fi
ovt_log "3: client2 revoked and disconnected"

# --- 4: a broken config changes nothing
if [ "$is_ovpnd" = 1 ]; then
    push_route=0 broken=1
    write_conf
    reload
    server_log_grep "$dir/server.conf:[0-9]+: no-such-directive" ||
        fail "reload 4: the error was not logged with FILE:LINE"
    server_log_grep "reload: .*(refused|nothing changed)" ||
        fail "reload 4: the server did not say it kept its config"
    new_client "auth-retry none"
    wait_for 20 out_has "198\.19\.77\.0/24" ip -n "$(client_ns 5)" route show ||
        fail "after the broken config a new client lost the pushed route"
    ovt_log "4: a broken config changed nothing"
else
    ovt_log "4: skipped: openvpn 2.6 exits on a config that does not parse at SIGHUP"
fi

# --- 5: the pool grown by a /24
push_route=1 broken=0 netmask=255.255.254.0
echo "ifconfig-push 198.19.1.10 255.255.254.0" >"$dir/ccd/client5"
write_conf
reload mgmt
new_client
wait_for 20 out_has "inet 198\.19\.1\.10/23" ip -n "$(client_ns 5)" -4 addr show ||
    fail "client5 did not get 198.19.1.10 from the grown pool"
assert_ping "$NS_SRV" 198.19.1.10 5 0.1 0 "the server reaches the client in the new /24"
ovt_log "5: the pool grew by a /24"
if [ "$is_ovpnd" = 1 ]; then
    # and back to the /24 while client5 holds 198.19.1.10: refused, the pool stays
    netmask=255.255.255.0
    write_conf
    reload
    server_log_grep "reload: the pool cannot shrink: a client holds 198\.19\.1\.10" ||
        fail "shrinking the pool below a held address was not refused"
    assert_ping "$NS_SRV" 198.19.1.10 3 0.1 0 "client5 keeps its address"
fi

# The connected clients renegotiated with the renewed certificate (reneg-sec 6).
wait_for 15 grep -q "VERIFY OK: depth=0, CN=server-renewed" "$dir/client1.log" ||
    fail "client1 did not renegotiate with the renewed certificate"

for i in 1 2 3 4; do
    ovt_signal "${PINGER[$i]}" INT
    ovt_wait "${PINGER[$i]}" || true
done
if [ "$is_ovpnd" = 1 ]; then
    for i in 1 3 4; do
        loss=$(sed -n 's/.* \([0-9.]*\)% packet loss.*/\1/p' "$dir/ping$i.log")
        sent=$(sed -n 's/^\([0-9]*\) packets transmitted.*/\1/p' "$dir/ping$i.log")
        [ "$loss" = 0 ] || fail "client $i lost $loss% of its pings through the reloads"
        [ "$(grep -c "Initialization Sequence Completed" "$dir/client$i.log")" = 1 ] ||
            fail "client $i started a new session during the reloads"
        ovt_log "client $i: $sent pings, 0% loss, one session"
    done
    # the same management line at every reload: its warning (no password file) once, at start-up
    n=$(grep -c "management: a TCP port WITHOUT a password file" "$dir/server.log" || true)
    [ "$n" = 1 ] || fail "the management warning was logged $n times over $n_reload reloads, not once"
fi
ovt_log "PASS"
