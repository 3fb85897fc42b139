#!/usr/bin/env bash
# tls-verify, client-connect, client-disconnect and learn-address scripts, and the same events
# in an OpenVPN plugin (tests/plugin/test_plugin.c), with the stock client; one server:
#  - client 1: its client-connect script writes ifconfig-push and a pushed route; the client gets
#    both; the script's environment has the documented variables with the right values;
#  - client 2: the client-connect script exits 1 for it: AUTH_FAILED, the log names the script's
#    status; client 3: the tls-verify script refuses its certificate at depth 0 (depth 1, the CA,
#    is asked first and accepted);
#  - client 4: the plugin's CLIENT_CONNECT_V2 answer gives it its address; it stays up and pings;
#    the plugin's LEARN_ADDRESS and TLS_VERIFY calls are logged with their argv;
#  - client 5: its client-connect script hangs: at hand-window the script is killed and the client
#    refused, and the address it was given is free again;
#  - client 4's renegotiation (its reneg-sec 8) runs tls-verify again, script and plugin;
#  - client 1 exits: client-disconnect runs with bytes_received, bytes_sent > 0 and
#    time_duration; learn-address saw "add" and then "delete" for its address.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init hooks

plugin=${OVT_TEST_PLUGIN:-$(dirname "$OVPND")/tests/test_plugin.so}
[ -f "$plugin" ] || fail "test plugin not found at $plugin (build the test_plugin target)"
[ "$OVPN_SERVER_IMPL" = ovpnd ] || ovt_skip "the test plugin is built against ovpnd's header"

netns_setup 5
pki_make "$OVT_DIR" --clients 5
d=$OVT_DIR

cat >"$d/cc.sh" <<EOF
#!/bin/sh
env | sort >"$d/cc-\$common_name.env"
echo "\$@" >"$d/cc-\$common_name.argv"
case "\$common_name" in
client1)
    printf 'ifconfig-push 198.19.0.66 255.255.255.0\npush "route 198.19.70.0 255.255.255.0"\n' >"\$1"
    ;;
client2) exit 1 ;;
client5)
    echo \$\$ >"$d/cc-client5.pid"
    sleep 60
    ;;
esac
exit 0
EOF
cat >"$d/cd.sh" <<EOF
#!/bin/sh
env | sort >"$d/cd-\$common_name.env"
EOF
cat >"$d/la.sh" <<EOF
#!/bin/sh
echo "\$script_type \$*" >>"$d/la.log"
EOF
cat >"$d/tv.sh" <<EOF
#!/bin/sh
echo "\$1 \$2" >>"$d/tv.log"
if [ "\$1" = 0 ]; then
    env | sort >"$d/tv-\$X509_0_CN.env"
    [ "\$X509_0_CN" = client3 ] && exit 1
fi
exit 0
EOF
chmod 755 "$d"/cc.sh "$d"/cd.sh "$d"/la.sh "$d"/tv.sh

server_conf_write "$d" \
    "script-security 2" \
    "setenv HOOKS_TEST yes" \
    "client-connect $d/cc.sh" \
    "client-disconnect $d/cd.sh" \
    "learn-address $d/la.sh" \
    "tls-verify $d/tv.sh" \
    "hand-window 8" \
    "plugin $plugin hooks $d/plugin.log client4 198.19.0.88"
server_start "$d"

client_start "$d" 1
client_start "$d" 2 "auth-retry none"
client_start "$d" 3 "auth-retry none"
client_start "$d" 4 "reneg-sec 8"
client_start "$d" 5 "auth-retry none"
wait_tunnel 1
wait_tunnel 4
ns1=$(client_ns 1)
ns4=$(client_ns 4)

# client 1: the script's ifconfig-push and pushed route.
[ "${CLIENT_TUN_IP[1]}" = 198.19.0.66 ] || fail "client 1 got ${CLIENT_TUN_IP[1]}, not the script's 198.19.0.66"
rt1=$(ip -n "$ns1" -4 route show)
grep -q '^198\.19\.70\.0/24 ' <<<"$rt1" || fail "client 1 lacks the route its client-connect script pushed"
env1=$d/cc-client1.env
for want in "script_type=client-connect" "common_name=client1" "trusted_ip=198.18.0.2" \
    "untrusted_ip=198.18.0.2" "ifconfig_pool_netmask=255.255.255.0" "ifconfig_local=198.19.0.1" \
    "IV_PLAT=linux" "X509_0_CN=client1" "HOOKS_TEST=yes" "script_context=init" \
    "config=$d/server.conf" "dev_type=tun" "proto_1=udp" "local_port_1=1194"; do
    grep -qx "$want" "$env1" || fail "client-connect environment lacks $want"
done
grep -qE '^ifconfig_pool_remote_ip=198\.19\.0\.[0-9]+$' "$env1" || fail "no ifconfig_pool_remote_ip in the client-connect environment"
grep -qE '^IV_VER=2\.6\.' "$env1" || fail "no IV_VER=2.6.x in the client-connect environment"
grep -qE '^trusted_port=[0-9]+$' "$env1" || fail "no trusted_port"
grep -qE '^time_unix=[0-9]+$' "$env1" || fail "no time_unix"
grep -qE '^time_ascii=[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$' "$env1" || fail "time_ascii missing or not as 2.6 writes it"
grep -qE '^dev=tun' "$env1" || fail "no dev"
grep -qE '^tls_serial_0=[0-9]+$' "$env1" || fail "no tls_serial_0"
grep -qE "^client_connect_config_file=$d|^client_connect_config_file=/" "$env1" || fail "no client_connect_config_file"
[ -f "$d/cc-client1.argv" ] && [ ! -e "$(cat "$d/cc-client1.argv")" ] || fail "the client-connect file was not given as argv[1] or not removed"

# tls-verify: depth 1 (the CA) then depth 0 for each client; its environment.
grep -qE '^1 CN=ovpnd test CA ' "$d/tv.log" || fail "tls-verify was not called for the CA at depth 1"
grep -qx '0 CN=client1' "$d/tv.log" || fail "tls-verify was not called with '0 CN=client1'"
tv1=$d/tv-client1.env
grep -qE '^tls_digest_sha256_0=([0-9a-f]{2}:){31}[0-9a-f]{2}$' "$tv1" || fail "tls_digest_sha256_0 missing or malformed"
grep -qE '^tls_serial_hex_1=([0-9A-F]{2}:)*[0-9A-F]{2}$' "$tv1" || fail "tls_serial_hex_1 missing or malformed"
grep -qE '^X509_1_CN=ovpnd test CA ' "$tv1" || fail "X509_1_CN missing at depth 0"
grep -qx 'script_type=tls-verify' "$tv1" || fail "tls-verify: no script_type"
grep -qx 'common_name=client1' "$tv1" || fail "tls-verify: no common_name at depth 0"

# client 2 (client-connect exit 1) and client 3 (tls-verify refusal) get AUTH_FAILED.
wait_for 20 grep -q "AUTH_FAILED" "$d/client2.log" || fail "client 2 was not refused"
wait_for 20 grep -q "AUTH_FAILED" "$d/client3.log" || fail "client 3 was not refused"
server_log_grep "client2/.*client-connect script exited with status 1" ||
    fail "the server log does not name client 2 and the script's exit status"
server_log_grep "client3/.*tls-verify refused the certificate at depth 0" ||
    fail "the server log does not say tls-verify refused client 3"
client_tun_ip 2 | grep -q . && fail "client 2 got an address"

# client 4: the plugin's address; LEARN_ADDRESS and TLS_VERIFY with their argv.
[ "${CLIENT_TUN_IP[4]}" = 198.19.0.88 ] || fail "client 4 got ${CLIENT_TUN_IP[4]}, not the plugin's 198.19.0.88"
plog=$d/plugin.log
grep -qx 'LEARN_ADDRESS add 198.19.0.88 client4 cn=client4' "$plog" || fail "plugin LEARN_ADDRESS did not see 'add 198.19.0.88 client4'"
grep -qx 'TLS_VERIFY 0 CN=client4 cn=client4' "$plog" || fail "plugin TLS_VERIFY did not see '0 CN=client4'"
grep -qx 'CLIENT_CONNECT_V2 cn=client4' "$plog" || fail "plugin CLIENT_CONNECT_V2 not called for client 4"
grep -q "^LEARN_ADDRESS add 198.19.0.66 client1" "$plog" || fail "plugin LEARN_ADDRESS did not see client 1's address"
assert_ping "$ns4" "$OVT_SERVER_TUN_IP" 10 0.05 0 "client 4 -> server"
assert_ping "$ns1" "$OVT_SERVER_TUN_IP" 10 0.05 0 "client 1 -> server"

# Client 4's renegotiation runs tls-verify again (2.6 verifies at every TLS handshake).
wait_for 20 count_lines '^TLS_VERIFY 0 CN=client4 cn=client4$' "$plog" 2 ||
    fail "no second TLS_VERIFY plugin call for client 4 (renegotiation)"
wait_for 5 count_lines '^0 CN=client4$' "$d/tv.log" 2 || fail "no second tls-verify script call for client 4"
wait_for 10 server_log_grep "client4/.*renegotiation done" || fail "client 4's renegotiation did not finish"
assert_ping "$ns4" "$OVT_SERVER_TUN_IP" 5 0.05 0 "client 4 after its renegotiation"

# client 1 leaves: client-disconnect with its byte counts and duration; learn-address delete.
client_stop 1
wait_for 15 test -s "$d/cd-client1.env" || fail "client-disconnect did not run for client 1"
cd1=$d/cd-client1.env
grep -qx "script_type=client-disconnect" "$cd1" || fail "client-disconnect: no script_type"
grep -qE '^bytes_received=[1-9][0-9]*$' "$cd1" || fail "client-disconnect: bytes_received missing or 0"
grep -qE '^bytes_sent=[1-9][0-9]*$' "$cd1" || fail "client-disconnect: bytes_sent missing or 0"
grep -qE '^time_duration=[0-9]+$' "$cd1" || fail "client-disconnect: no time_duration"
grep -qx "ifconfig_pool_remote_ip=198.19.0.66" "$cd1" || fail "client-disconnect: ifconfig_pool_remote_ip is not the final address"
wait_for 10 grep -qx "learn-address delete 198.19.0.66" "$d/la.log" || fail "learn-address delete for client 1's address not seen"
grep -qx "learn-address add 198.19.0.66 client1" "$d/la.log" || fail "learn-address add for client 1's address not seen"
[ "$(grep -n . "$d/la.log" | grep 'add 198.19.0.66' | cut -d: -f1)" -lt \
    "$(grep -n . "$d/la.log" | grep 'delete 198.19.0.66' | cut -d: -f1)" ] || fail "learn-address: delete came before add"
wait_for 10 grep -q "^CLIENT_DISCONNECT cn=client1" "$plog" || fail "plugin CLIENT_DISCONNECT not called for client 1"
assert_ping "$ns4" "$OVT_SERVER_TUN_IP" 5 0.05 0 "client 4 after client 1 left"

# client 5: the hanging client-connect script is killed at hand-window, the client refused.
wait_for 20 grep -q "AUTH_FAILED" "$d/client5.log" || fail "client 5 (hanging client-connect) was not refused"
server_log_grep "client5/.*client-connect did not finish within hand-window" ||
    fail "the server log does not say client-connect timed out for client 5"
pid5=$(cat "$d/cc-client5.pid")
wait_for 5 pid_gone "$pid5" || fail "the hanging client-connect script ($pid5) was not killed"
grep -q "AUTH_FAILED" "$d/client4.log" && fail "client 4 was refused"
st=$(cat "$d/status.log")
grep -q "^CLIENT_LIST,client5," <<<"$st" && fail "client 5 is in the status file"

# Shutdown runs client-disconnect for client 4 too.
server_stop
[ -s "$d/cd-client4.env" ] || fail "client-disconnect did not run for client 4 at shutdown"
ovt_log "PASS"
