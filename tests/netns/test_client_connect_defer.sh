#!/usr/bin/env bash
# Deferred client-connect answers (2.6 multi.c: $client_connect_deferred_file, and the
# CLIENT_CONNECT_V2 / CLIENT_CONNECT_DEFER_V2 plugin calls), with the stock client; one server:
#  - client 1: its client-connect script writes 2 to $client_connect_deferred_file and exits;
#    3 s later a process it left behind writes a pushed route into $client_connect_config_file
#    and 1 into the deferred file: client 1 comes up after that, with the route;
#  - client 2, started right after client 1, is not deferred: its tunnel is up while client 1
#    still waits (a deferred client delays nobody else); it has the route the plugin's
#    CLIENT_CONNECT (v1) call wrote into its file;
#  - client 3: the test plugin's CLIENT_CONNECT_V2 answers "deferred", CLIENT_CONNECT_DEFER_V2
#    answers 3 s later with a pushed route: client 3 comes up with it;
#  - client 4: the script defers, then writes 0: the client is refused (AUTH_FAILED);
#  - the plugin's TLS_FINAL (after the TLS handshake and key-method-2 message, 2.6 ssl.c) is
#    called for every client with its common_name; it refuses client 5, which gets AUTH_FAILED;
#  - keying-material-exporter on the server and on client 2 (which loads the test plugin too):
#    both TLS_FINAL calls get the same exported_keying_material, 32 bytes under the label.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init client_connect_defer

plugin=${OVT_TEST_PLUGIN:-$(dirname "$OVPND")/tests/test_plugin.so}
[ -f "$plugin" ] || fail "test plugin not found at $plugin (build the test_plugin target)"

netns_setup 5
pki_make "$OVT_DIR" --clients 5
d=$OVT_DIR

cat >"$d/cc.sh" <<EOF
#!/bin/sh
env | sort >"$d/cc-\$common_name.env"
case "\$common_name" in
client1)
    echo 2 >"\$client_connect_deferred_file"
    (
        sleep 3
        printf 'push "route 198.19.70.0 255.255.255.0"\n' >"\$1"
        date +%s.%N >"$d/answered-client1"
        echo 1 >"\$client_connect_deferred_file"
    ) </dev/null >/dev/null 2>&1 &
    ;;
client4)
    echo 2 >"\$client_connect_deferred_file"
    ( sleep 1; echo 0 >"\$client_connect_deferred_file" ) </dev/null >/dev/null 2>&1 &
    ;;
esac
exit 0
EOF
chmod 755 "$d/cc.sh"

server_conf_write "$d" \
    "script-security 2" \
    "client-connect $d/cc.sh" \
    "hand-window 20" \
    "keying-material-exporter EXPORTER-ovpnd-test 32" \
    "plugin $plugin hooks $d/plugin.log nobody 198.19.0.88 v1,defer,final client3 client5"
server_start "$d"

client_start "$d" 1
client_start "$d" 2 "keying-material-exporter EXPORTER-ovpnd-test 32" \
    "plugin ${plugin%/*}/test_plugin_client.so hooks $d/client2-plugin.log nobody 198.19.0.88 final x nobody"
client_start "$d" 3
client_start "$d" 4 "auth-retry none"
client_start "$d" 5 "auth-retry none"

# has_route I PREFIX-ERE: client I's routing table has a route matching PREFIX-ERE (the client
# adds its routes just after its address, so a check right after wait_tunnel waits for them).
has_route() { ip -n "$(client_ns "$1")" -4 route show | grep -q "$2"; }

# client 2 is up while client 1's answer is still outstanding.
wait_tunnel 2 15
[ -e "$d/answered-client1" ] &&
    fail "client 2 came up only after client 1's deferred answer: the deferred client held it up"
grep -q "Initialization Sequence Completed" "$d/client1.log" &&
    fail "client 1 is up before its deferred client-connect answer"
wait_for 5 has_route 2 '^198\.19\.71\.0/24 ' ||
    fail "client 2 lacks the route the plugin's CLIENT_CONNECT call wrote"
grep -qE "^client_connect_deferred_file=/" "$d/cc-client1.env" ||
    fail "no client_connect_deferred_file in the client-connect environment"

# client 1: admitted once the answer is written, with the config written with it.
wait_tunnel 1 20
up1=$(date +%s.%N)
awk -v a="$(cat "$d/answered-client1")" -v u="$up1" 'BEGIN { exit !(u >= a) }' ||
    fail "client 1 was up before its answer"
wait_for 5 has_route 1 '^198\.19\.70\.0/24 ' ||
    fail "client 1 lacks the route written with the deferred answer"
[ "$OVPN_SERVER_IMPL" = ovpnd ] && { server_log_grep "client1/.*client-connect script: deferred answer accepted after [0-9]+ ms" ||
    fail "the server log does not say client 1's deferred answer was accepted"; }

# client 3: the plugin's deferred answer, through CLIENT_CONNECT_DEFER_V2.
wait_tunnel 3 20
grep -qx 'CLIENT_CONNECT_V2 cn=client3' "$d/plugin.log" || fail "plugin CLIENT_CONNECT_V2 not called for client 3"
grep -qx 'CLIENT_CONNECT_DEFER_V2 cn=client3' "$d/plugin.log" ||
    fail "plugin CLIENT_CONNECT_DEFER_V2 not called for client 3"
wait_for 5 has_route 3 '^198\.19\.72\.0/24 ' ||
    fail "client 3 lacks the route from the plugin's deferred answer"
grep -q 'CLIENT_CONNECT_DEFER_V2' <(grep -v client3 "$d/plugin.log") &&
    fail "CLIENT_CONNECT_DEFER_V2 was called for a client that was not deferred"

# client 4: deferred, then refused.
wait_for 20 grep -q "AUTH_FAILED" "$d/client4.log" || fail "client 4 (deferred, then 0) was not refused"
client_tun_ip 4 | grep -q . && fail "client 4 got an address"

# TLS_FINAL: called for the admitted clients, refuses client 5.
grep -qx 'TLS_FINAL cn=client2' "$d/plugin.log" || fail "plugin TLS_FINAL not called for client 2"
ekm_server=$(awk '$1 == "EKM" && $2 == "cn=client2" { print $3 }' "$d/plugin.log")
ekm_client=$(awk '$1 == "EKM" { print $3 }' "$d/client2-plugin.log")
[[ $ekm_server =~ ^[0-9a-f]{64}$ ]] ||
    fail "TLS_FINAL for client 2: exported_keying_material is '$ekm_server', not 32 bytes in hex"
[ "$ekm_server" = "$ekm_client" ] ||
    fail "exported keying material differs: server $ekm_server, client 2 $ekm_client"
wait_for 20 grep -q "AUTH_FAILED" "$d/client5.log" || fail "client 5 (refused by TLS_FINAL) was not refused"
grep -qx 'TLS_FINAL cn=client5' "$d/plugin.log" || fail "plugin TLS_FINAL not called for client 5"
client_tun_ip 5 | grep -q . && fail "client 5 got an address"
grep -q 'CLIENT_CONNECT_V2 cn=client5' "$d/plugin.log" && fail "client 5 reached client-connect after TLS_FINAL refused it"

assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.05 0 "client 1 -> server"
assert_ping "$(client_ns 3)" "$OVT_SERVER_TUN_IP" 5 0.05 0 "client 3 -> server"
ovt_log "PASS"
