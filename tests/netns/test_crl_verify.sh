#!/usr/bin/env bash
# crl-verify: a client whose certificate is on the CA's CRL is refused at the TLS handshake,
# with a log line naming its address and certificate CN and the reason, and gets no address;
# the others connect. Revoking one more certificate while the server runs takes effect at that
# client's next connection, without a restart (the CRL file is read again when it changes).
# The server runs as user nobody: a new CRL installed with mode 0600 (as easy-rsa writes it)
# cannot be read, and then no client is admitted, revoked or not (fail closed, as openvpn 2.6:
# "VERIFY ERROR: CRL not loaded"), while the clients already connected stay; once the file can
# be read, the new CRL is in force: the good client connects, the newly revoked one does not.
# Last (ovpnd only), a reload (SIGHUP) that adds a pushed route, with `persist-key`: the server
# key is root's (mode 0600) and the server runs as nobody, so it cannot read it again; the one
# read at start-up stays, the reload goes through, and a client that connects afterwards gets
# the route. openvpn 2.6 exits at that SIGHUP ("Options error: --key fails with 'FILE':
# Permission denied"): its persist-key keeps the keys across a SIGUSR1 restart only.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init crl_verify

netns_setup 3
pki_make "$OVT_DIR" --clients 5
dir=$OVT_DIR
pki=$dir/pki
bash "$OVT_SRC/scripts/pki.sh" --revoke client2 "$pki"
install -m 600 "$pki/crl.pem" "$dir/crl.pem" # as easy-rsa writes it: read at start-up, as root
chmod 644 "$pki/ta.key" # (2.6 reads the tls-crypt key again for each client, as nobody)

# refused_re I CN: the server's log line refusing client namespace I's certificate CN as revoked
refused_re() {
    local ip
    ip=$(client_ip "$1" | sed 's/\./\\./g')
    if [ "$OVPN_SERVER_IMPL" = openvpn ]; then
        echo "$ip:[0-9]+ VERIFY ERROR: depth=0, error=certificate revoked: CN=$2"
    else
        echo "$ip:[0-9]+.*certificate has been revoked.*CN '$2'"
    fi
}
# unloaded_re I: the server's log line refusing client namespace I while the CRL cannot be read
unloaded_re() {
    local ip
    ip=$(client_ip "$1" | sed 's/\./\\./g')
    if [ "$OVPN_SERVER_IMPL" = openvpn ]; then
        echo "$ip:[0-9]+ VERIFY ERROR: CRL not loaded"
    else
        echo "$ip:[0-9]+.*refused: .*crl-verify: CRL not loaded: cannot read $dir/crl\.pem: Permission denied"
    fi
}

conf_lines=("crl-verify $dir/crl.pem" "user nobody" "group nogroup" "persist-key" "persist-tun")
OVT_STATUS_VERSION=2 server_conf_write "$dir" "${conf_lines[@]}"
server_start "$dir"

client_start "$dir" 1
wait_tunnel 1
client_start "$dir" 2 "auth-retry none"
wait_server_log "$(refused_re 2 client2)" 30 ||
    fail "the revoked client2 was not refused with a log line naming it"
[ -z "$(client_tun_ip 2)" ] || fail "the revoked client got an address"
client_alive 2 && client_up 2 && fail "the revoked client's tunnel came up"
grep -q "^CLIENT_LIST,client2," "$dir/status.log" && fail "the revoked client is in the status file"
ovt_log "revoked certificate refused"

# Revoke client3 now: the server notices the new file (2.6 reads it at the next connection).
bash "$OVT_SRC/scripts/pki.sh" --revoke client3 "$pki"
install -m 644 "$pki/crl.pem" "$dir/crl.pem.new"
mv "$dir/crl.pem.new" "$dir/crl.pem"
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    wait_server_log "crl-verify: .*crl.pem changed, CRL reloaded" 10 || fail "the new CRL was not read"
fi
client_start "$dir" 3 "auth-retry none"
wait_server_log "$(refused_re 3 client3)" 30 ||
    fail "client3, revoked while the server ran, was not refused"
[ -z "$(client_tun_ip 3)" ] || fail "client3 got an address after its revocation"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.1 0 "the good client still works"
ovt_log "a certificate revoked at run time is refused at its next connection"

# Revoke client4; the new CRL arrives with mode 0600 (root), which the server (nobody) cannot
# read. Namespace 2 tries with client4's certificate, namespace 3 with client5's (good).
client_stop 2
client_stop 3
bash "$OVT_SRC/scripts/pki.sh" --revoke client4 "$pki"
install -m 600 "$pki/crl.pem" "$dir/crl.pem.new"
mv "$dir/crl.pem.new" "$dir/crl.pem"
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    wait_server_log "crl-verify: cannot read $dir/crl\.pem: Permission denied" 10 ||
        fail "the unreadable CRL was not reported"
fi
OVT_CLIENT_CERT=$pki/client4.crt OVT_CLIENT_KEY=$pki/client4.key client_start "$dir" 2
wait_server_log "$(unloaded_re 2)" 30 ||
    fail "client4 (revoked in the unreadable CRL) was not refused for want of a CRL"
OVT_CLIENT_CERT=$pki/client5.crt OVT_CLIENT_KEY=$pki/client5.key client_start "$dir" 3
wait_server_log "$(unloaded_re 3)" 30 ||
    fail "the good client5 was not refused while the CRL could not be read (fail closed)"
[ -z "$(client_tun_ip 2)$(client_tun_ip 3)" ] || fail "a client got an address while the CRL could not be read"
# Connected clients stay until their next renegotiation (as 2.6: its CRL counts at handshakes).
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 3 0.1 0 "the connected client while the CRL cannot be read"
ovt_log "an unreadable new CRL: every new client refused"

chmod 644 "$dir/crl.pem"
if [ "$OVPN_SERVER_IMPL" = openvpn ]; then
    # 2.6 reads the file again only when its mtime (seconds) or size changed; chmod changes
    # neither, so 2.6 would refuse every client until the file is written again.
    touch -d "@$(($(stat -c %Y "$dir/crl.pem") + 2))" "$dir/crl.pem"
    # 2.6 failed their TLS handshakes: its clients try again only after hand-window (60 s);
    # ovpnd sent them RESTART, so they kept trying. Start them again here.
    client_stop 2
    client_stop 3
    OVT_CLIENT_CERT=$pki/client4.crt OVT_CLIENT_KEY=$pki/client4.key client_start "$dir" 2
    OVT_CLIENT_CERT=$pki/client5.crt OVT_CLIENT_KEY=$pki/client5.key client_start "$dir" 3
else
    wait_for 10 count_lines "crl-verify: .*crl\.pem changed, CRL reloaded" "$dir/server.log" 2 ||
        fail "the CRL, readable again, was not read"
fi
# The good client gets in (with ovpnd by itself), the revoked one is refused.
wait_tunnel 3
wait_server_log "$(refused_re 2 client4)" 30 ||
    fail "client4 was not refused as revoked once the CRL could be read"
[ -z "$(client_tun_ip 2)" ] || fail "client4 got an address after its revocation"
ovt_log "the CRL readable again: in force, the good client connects, the revoked one does not"

# persist-key: a reload as nobody, the server key (0600, root's) not readable any more
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    [ "$(stat -c %a "$pki/server.key")" = 600 ] || fail "the server key is not mode 0600: $(stat -c %a "$pki/server.key")"
    OVT_STATUS_VERSION=2 server_conf_write "$dir" "${conf_lines[@]}" 'push "route 198.19.99.0 255.255.255.0"'
    kill -HUP "$SERVER_PID"
    wait_server_log "reload: applied" 10 || fail "the reload was not applied: $(grep reload "$dir/server.log")"
    server_log_grep "key: cannot read '$pki/server\\.key' now \\(Permission denied\\); persist-key: the one read at start-up stays" ||
        fail "the reload does not say the server key was kept (persist-key)"
    client_stop 3
    OVT_CLIENT_CERT=$pki/client5.crt OVT_CLIENT_KEY=$pki/client5.key client_start "$dir" 3
    wait_tunnel 3
    wait_for 10 out_has "^198\\.19\\.99\\.0/24 " ip -n "$(client_ns 3)" route show ||
        fail "a client connecting after the reload did not get the pushed route: $(ip -n "$(client_ns 3)" route show)"
    ovt_log "persist-key: the reload as nobody kept the unreadable server key; a new client gets the new route"
fi
