#!/usr/bin/env bash
# chroot DIR (with user nobody, group nogroup), as openvpn 2.6: client-config-dir and crl-verify
# name files inside the jail, the status file a file outside it (opened before the chroot).
#  - client 1 gets the ifconfig-push and the pushed route of its file in the jail's /ccd;
#  - client 2, revoked in the jail's /crl.pem at start-up, is refused;
#  - client 3 is revoked while the server runs, in the jail's CRL: the server reads it again
#    there and refuses client 3;
#  - the status file outside the jail lists client 1;
#  - a status file and an ifconfig-pool-persist file that cannot be opened (the status path is a
#    directory, the other's directory does not exist) do not stop the start-up: the server
#    warns, naming each file and the reason (openvpn 2.6: "Note: cannot open FILE for WRITE" /
#    "for READ/WRITE"), and client 1 connects; --test-config gives the same warnings and
#    "configuration OK". (openvpn 2.6 refuses to start when the status file's directory is
#    missing or not writable, so that case is not used here; ovpnd warns and starts.)
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init chroot

netns_setup 3
pki_make "$OVT_DIR" --clients 3
d=$OVT_DIR
jail=$d/jail
mkdir -p "$jail/ccd" "$jail/tmp"
chmod 755 "$jail" "$jail/ccd"
chmod 1777 "$jail/tmp" # 2.6 wants its tmp-dir (default /tmp) inside the jail
printf 'ifconfig-push 198.19.0.77 255.255.255.0\npush "route 198.19.73.0 255.255.255.0"\n' \
    >"$jail/ccd/client1"
bash "$OVT_SRC/scripts/pki.sh" --revoke client2 "$d/pki" >/dev/null
install -m 644 "$d/pki/crl.pem" "$jail/crl.pem"
chmod 644 "$jail/ccd/client1"

if [ "$OVPN_SERVER_IMPL" = openvpn ]; then
    # openvpn 2.6 reads the tls-crypt key file again for each new client, after the chroot
    # (ovpnd reads it once at start-up): 2.6 needs a copy at the same path inside the jail.
    install -D -m 644 "$d/pki/ta.key" "$jail$d/pki/ta.key"
fi
server_conf_write "$d" \
    "chroot $jail" \
    "client-config-dir /ccd" \
    "crl-verify /crl.pem" \
    "user nobody" \
    "group nogroup"
server_start "$d"
[ "$OVPN_SERVER_IMPL" = ovpnd ] && { server_log_grep "chroot to '$jail'" || fail "the server log does not mention the chroot"; }
srv_pid=$(server_process_pid) || fail "no server process"
[ "$(readlink "/proc/$srv_pid/root")" = "$jail" ] || fail "the server's root is $(readlink "/proc/$srv_pid/root"), not $jail"

client_start "$d" 1
wait_tunnel 1
[ "${CLIENT_TUN_IP[1]}" = 198.19.0.77 ] || fail "client 1 got ${CLIENT_TUN_IP[1]}, not its ccd file's 198.19.0.77"
# (the client adds its routes just after its address: wait for them)
wait_for 5 out_has '^198\.19\.73\.0/24 ' ip -n "$(client_ns 1)" -4 route show ||
    fail "client 1 lacks the route pushed by its ccd file in the jail"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.05 0 "client 1 -> server"
wait_for 5 grep -q "^client1," "$d/status.log" ||
    fail "the status file outside the jail does not list client 1"

client_start "$d" 2 "auth-retry none"
wait_server_log "198\.18\.0\.3:[0-9]+.*(certificate has been revoked|certificate revoked)" 30 ||
    fail "client 2, revoked in the jail's CRL, was not refused"
[ -z "$(client_tun_ip 2)" ] || fail "the revoked client 2 got an address"

# Revoked while the server runs: the CRL inside the jail is read again.
bash "$OVT_SRC/scripts/pki.sh" --revoke client3 "$d/pki" >/dev/null
install -m 644 "$d/pki/crl.pem" "$jail/crl.pem.new"
mv "$jail/crl.pem.new" "$jail/crl.pem"
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    # (once, for this change: the file seen from outside the jail at start-up is the same one)
    wait_for 10 count_lines "crl-verify: /crl\.pem changed, CRL reloaded" "$d/server.log" 1 ||
        fail "the server did not read the new CRL inside the jail"
    [ "$(grep -c "CRL reloaded" "$d/server.log")" = 1 ] || fail "the CRL was reloaded more than once"
fi
client_start "$d" 3 "auth-retry none"
wait_server_log "198\.18\.0\.4:[0-9]+.*(certificate has been revoked|certificate revoked)" 30 ||
    fail "client 3, revoked in the jail's CRL while the server ran, was not refused"
[ -z "$(client_tun_ip 3)" ] || fail "the revoked client 3 got an address"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.05 0 "client 1 still works"

# Files that cannot be opened before the privileges are dropped: a warning, not a refusal.
server_stop
client_stop 1
client_stop 2
client_stop 3
missing=$d/missing
mkdir "$d/status-dir"
server_conf_write "$d" "chroot $jail" "user nobody" "group nogroup" \
    "status $d/status-dir 1" "ifconfig-pool-persist $missing/ipp.txt 1"
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    out=$("$OVPND" --config "$d/server.conf" --test-config 2>&1) ||
        fail "--test-config refused the config: $out"
    for f in "status: cannot open $d/status-dir for writing: Is a directory" \
        "ifconfig-pool-persist: cannot open $missing/ipp.txt for reading and writing: No such file or directory"; do
        grep -qF -- "$f" <<<"$out" || fail "--test-config does not warn '$f': $out"
    done
    grep -q "configuration OK" <<<"$out" || fail "--test-config did not say the config is OK: $out"
    status_warn="status: cannot open $d/status-dir for writing: Is a directory"
    ipp_warn="ifconfig-pool-persist: cannot open $missing/ipp\.txt for reading and writing: No such file or directory"
else
    status_warn="Note: cannot open $d/status-dir for WRITE"
    ipp_warn="Note: cannot open $missing/ipp\.txt for READ/WRITE"
fi
server_start "$d"
server_log_grep "$status_warn" || fail "no warning naming the status file and the reason"
server_log_grep "$ipp_warn" || fail "no warning naming the ifconfig-pool-persist file and the reason"
client_start "$d" 1
wait_tunnel 1
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.05 0 "client 1 -> server without the two files"
[ -e "$missing" ] && fail "$missing was made"
server_alive || fail "the server exited"
ovt_log "PASS"
