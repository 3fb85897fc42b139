#!/usr/bin/env bash
# ovpnd's own plugin interface (plugins/include/ovpnd_plugin.h) with the two plugins that use
# it, and the stock client; one server with
#   plugin ovpnd-auth-cert.so cn=client1 list=ALLOW crl=CRL   (ALLOW lists client2 and client3)
#   plugin ovpnd-pool.so STATIC                               (client1 .50, client2 .51)
#  - client 1 (allowed by a cn= word) and client 2 (allowed by the list file) connect and get
#    their static addresses; client 3 is on the list but revoked in the CRL, client 4 is on no
#    list: both get AUTH_FAILED and the log says why;
#  - STATIC is edited (client2 -> .52): client 2 reconnects and gets .52 without a restart;
#  - with topology net30, client 1's static .50 is paired with .49, its /30 block's other end;
#  - a bad line in STATIC, or a bad argument, stops start-up naming the file and line (or the
#    argument).
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init native_plugins

[ "$OVPN_SERVER_IMPL" = ovpnd ] || ovt_skip "ovpnd's own plugin interface"
pdir=$(dirname "$OVPND")/plugins
for p in ovpnd-auth-cert ovpnd-pool; do
    [ -f "$pdir/$p.so" ] || fail "$pdir/$p.so not built"
done

netns_setup 4
pki_make "$OVT_DIR"
d=$OVT_DIR
bash "$OVT_SRC/scripts/pki.sh" --revoke client3 "$d/pki" >>"$d/pki.log" 2>&1 || fail "revoking client3 failed"
printf '# allowed besides the cn= words\ncn client2\ncn client3\n' >"$d/allow"
printf 'client1 198.19.0.50\nclient2 198.19.0.51   # bob\n' >"$d/static"

server_conf_write "$d" \
    "plugin $pdir/ovpnd-auth-cert.so cn=client1 list=$d/allow crl=$d/pki/crl.pem" \
    "plugin $pdir/ovpnd-pool.so $d/static"
server_start "$d"
server_log_grep "ovpnd-auth-cert.so loaded \\(ovpnd plugin interface; events: TLS_VERIFY\\)" ||
    fail "auth-cert was not loaded through ovpnd's interface"
server_log_grep "ovpnd-pool.so loaded \\(ovpnd plugin interface; events: CLIENT_CONNECT_V2\\)" ||
    fail "pool was not loaded through ovpnd's interface"

for i in 1 2 3 4; do
    if [ "$i" -le 2 ]; then client_start "$d" "$i"; else client_start "$d" "$i" "auth-retry none"; fi
done
wait_tunnel 1
wait_tunnel 2
[ "${CLIENT_TUN_IP[1]}" = 198.19.0.50 ] || fail "client 1 got ${CLIENT_TUN_IP[1]}, not its static 198.19.0.50"
[ "${CLIENT_TUN_IP[2]}" = 198.19.0.51 ] || fail "client 2 got ${CLIENT_TUN_IP[2]}, not its static 198.19.0.51"
wait_for 20 grep -q AUTH_FAILED "$d/client3.log" || fail "client 3 (revoked) was not refused"
wait_for 20 grep -q AUTH_FAILED "$d/client4.log" || fail "client 4 (not on the list) was not refused"
server_log_grep "ovpnd-auth-cert.so: refused 'CN=client3': certificate serial .* is revoked" ||
    fail "the log does not say client 3 is revoked"
server_log_grep "ovpnd-auth-cert.so: refused 'CN=client4': neither its CN 'client4'" ||
    fail "the log does not say client 4 is not on the list"
client_tun_ip 4 | grep -q . && fail "client 4 got an address"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.05 0 "client 1 -> server"
assert_ping "$(client_ns 2)" "$OVT_SERVER_TUN_IP" 5 0.05 0 "client 2 -> server"

# The map is read again when it changes: client 2 moves to .52 at its next connection.
sleep 1 # a new mtime
printf 'client1 198.19.0.50\nclient2 198.19.0.52\n' >"$d/static"
client_stop 2
client_start "$d" 2
wait_tunnel 2
[ "${CLIENT_TUN_IP[2]}" = 198.19.0.52 ] || fail "client 2 got ${CLIENT_TUN_IP[2]} after the edit, not 198.19.0.52"
server_log_grep "ovpnd-pool.so: $d/static changed: 2 clients" || fail "no log line for the reloaded map"
assert_ping "$(client_ns 2)" "$OVT_SERVER_TUN_IP" 5 0.05 0 "client 2 -> server after the move"
server_stop


# Start-up errors: a bad map line, a bad argument.
printf 'client1 198.19.0.50\nclient2 not-an-address\n' >"$d/static"
rc=0
out=$(timeout 20 ip netns exec "$NS_SRV" "$OVPND" --config "$d/server.conf" 2>&1) || rc=$?
[ "$rc" != 0 ] || fail "ovpnd started with a bad line in the pool map"
grep -q "$d/server.conf:[0-9]*: plugin: .*ovpnd-pool.so failed to initialise: $d/static:2: not an IPv4 address" <<<"$out" ||
    fail "the start-up error does not name the map's line: $out"
sed -i "s|cn=client1 list=|cn=client1 colour=blue list=|" "$d/server.conf"
printf 'client1 198.19.0.50\n' >"$d/static"
rc=0
out=$(timeout 20 ip netns exec "$NS_SRV" "$OVPND" --config "$d/server.conf" 2>&1) || rc=$?
[ "$rc" != 0 ] || fail "ovpnd started with a bad plugin argument"
grep -q "server.conf:[0-9]*: plugin: .*ovpnd-auth-cert.so failed to initialise: argument 'colour=blue'" <<<"$out" ||
    fail "the start-up error does not name the bad argument: $out"
# topology net30: client 1's static 198.19.0.50 gets the other middle address of its /30 block
# (.49) as the server's end, and the tunnel works.
client_stop 1
client_stop 2
OVT_TOPOLOGY=net30 server_conf_write "$d" "plugin $pdir/ovpnd-pool.so $d/static"
server_start "$d"
client_start "$d" 1
wait_tunnel 1
[ "${CLIENT_TUN_IP[1]}" = 198.19.0.50 ] || fail "net30: client 1 got ${CLIENT_TUN_IP[1]}, not 198.19.0.50"
wait_for 3 out_has "inet 198\.19\.0\.50 peer 198\.19\.0\.49/32 " ip -n "$(client_ns 1)" -4 -o addr show ||
    fail "net30: client 1's tun is not 198.19.0.50 peer 198.19.0.49: $(ip -n "$(client_ns 1)" -4 -o addr show)"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.05 0 "net30: client 1 -> server"
server_stop
ovt_log "PASS"
