#!/usr/bin/env bash
# Pushed options and client-config-dir, with the stock client, on a remote-access config of the
# usual shape:
#  - 150 pushed routes (more than one PUSH_REPLY holds: push-continuation) all reach client 1's
#    routing table; redirect-gateway def1 installs 0.0.0.0/1 and 128.0.0.0/1 into the tunnel;
#    dhcp-option and the 2.6 `dns` option reach the client's --up script environment;
#  - client 1's CCD file gives it a fixed address (ifconfig-push) and an iroute (listed in the
#    status file's routing table as 2.6 lists it): a host on a LAN
#    behind client 1 (its own namespace) answers pings from the server namespace, and its
#    replies are accepted (source inside the iroute);
#  - client 2 gets the DEFAULT file (an extra pushed route, and push-remove of the DNS options);
#  - client 3's CCD file has a bad line: it gets AUTH_FAILED and the log names file and line;
#    client 4's file pushes the address client 1 holds: refused the same way; clients 1 and 2
#    keep working; a CCD edit applies at the next connection without a restart.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init push_ccd

netns_setup 4
pki_make "$OVT_DIR"
ccd=$OVT_DIR/ccd
mkdir -p "$ccd"
chmod 755 "$ccd"

# A LAN behind client 1: namespace lan, 198.19.50.2/24, default route via client 1 (198.19.50.1).
lan=ovt-lan-$OVT_ID
ovt_add_ns "$lan"
ip -n "$(client_ns 1)" link add lan0 type veth peer name eth0 netns "$lan"
ip -n "$(client_ns 1)" addr add 198.19.50.1/24 dev lan0
ip -n "$(client_ns 1)" link set lan0 up
ip -n "$lan" addr add 198.19.50.2/24 dev eth0
ip -n "$lan" link set eth0 up
ip -n "$lan" route add default via 198.19.50.1
ip netns exec "$(client_ns 1)" sysctl -q -w net.ipv4.ip_forward=1
# A default route in every client namespace, so that redirect-gateway has a gateway to bypass.
for i in 1 2 3 4; do
    ip -n "$(client_ns "$i")" route add default via "$OVT_SERVER_IP"
done

routes=()
for n in $(seq 100 249); do
    routes+=("push \"route 198.19.$n.0 255.255.255.0\"")
done
cat >"$ccd/client1" <<'CCD'
# fixed address and a LAN behind this client
ifconfig-push 198.19.0.77 255.255.255.0
iroute 198.19.50.0 255.255.255.0
push "redirect-gateway def1"
CCD
cat >"$ccd/DEFAULT" <<'CCD'
push "route 198.19.61.0 255.255.255.0"
push-remove dhcp-option
push-remove dns
CCD
printf 'push "route 198.19.62.0 255.255.255.0"\niroute 198.19.300.0 255.255.255.0\n' >"$ccd/client3"
printf 'ifconfig-push 198.19.0.77 255.255.255.0\n' >"$ccd/client4"
chmod 644 "$ccd"/*

server_conf_write "$OVT_DIR" \
    "client-config-dir $ccd" \
    "route 198.19.50.0 255.255.255.0" \
    'push "dhcp-option DNS 198.19.0.53"' \
    'push "dhcp-option DOMAIN corp.example"' \
    'push "dns server 1 address 198.19.0.54"' \
    "${routes[@]}"
server_start "$OVT_DIR"

# --up scripts that keep the client's environment (where the pushed options show up).
for i in 1 2; do
    printf '#!/bin/sh\nenv | sort >%s/up-client%s.env\n' "$OVT_DIR" "$i" >"$OVT_DIR/up$i.sh"
    chmod 755 "$OVT_DIR/up$i.sh"
done

client_start "$OVT_DIR" 1 "script-security 2" "up $OVT_DIR/up1.sh"
client_start "$OVT_DIR" 2 "script-security 2" "up $OVT_DIR/up2.sh"
wait_tunnel 1
wait_tunnel 2
ns1=$(client_ns 1)
ns2=$(client_ns 2)

# Fixed address from the CCD file.
[ "${CLIENT_TUN_IP[1]}" = 198.19.0.77 ] || fail "client 1 got ${CLIENT_TUN_IP[1]}, not its ifconfig-push 198.19.0.77"

# 150 routes (PUSH_REPLY split with push-continuation) plus redirect-gateway's two halves.
# (route tables are read into variables first: with pipefail, `ip | grep -q` can fail by SIGPIPE)
tun1=$(client_tun_dev 1)
rt1=$(ip -n "$ns1" -4 route show dev "$tun1")
n=$(grep -cE '^198\.19\.(1[0-9][0-9]|2[0-4][0-9])\.0/24 ' <<<"$rt1" || true)
[ "$n" = 150 ] || fail "client 1 has $n of the 150 pushed routes"
grep -q '^0\.0\.0\.0/1 ' <<<"$rt1" || fail "redirect-gateway def1: no 0.0.0.0/1 route"
grep -q '^128\.0\.0\.0/1 ' <<<"$rt1" || fail "redirect-gateway def1: no 128.0.0.0/1 route"
[ "$(grep -c "PUSH: Received control message" "$OVT_DIR/client1.log")" -ge 2 ] ||
    fail "150 routes arrived in a single PUSH_REPLY: push-continuation not exercised"
ovt_log "client 1: 150 pushed routes and redirect-gateway def1 installed"

# DNS settings in client 1's --up environment. A 2.6 client given both, lets the `dns` server
# replace the dhcp-option DNS servers (options.c, tuntap_options_copy_dns) and keeps the rest.
env1=$OVT_DIR/up-client1.env
[ -s "$env1" ] || fail "client 1 ran no --up script"
grep -qx "dns_server_1_address_1=198.19.0.54" "$env1" || fail "the dns option did not reach client 1"
grep -qx "foreign_option_[0-9]*=dhcp-option DNS 198.19.0.54" "$env1" || fail "client 1 made no dhcp-option DNS of the dns option"
grep -qx "foreign_option_[0-9]*=dhcp-option DOMAIN corp.example" "$env1" || fail "dhcp-option DOMAIN did not reach client 1"

# Client 2 (DEFAULT file): its extra route, none of the DNS options.
rt2=$(ip -n "$ns2" -4 route show dev "$(client_tun_dev 2)")
grep -q '^198\.19\.61\.0/24 ' <<<"$rt2" || fail "client 2 lacks the DEFAULT file's route"
grep -q '^198\.19\.100\.0/24 ' <<<"$rt2" || fail "client 2 lacks the global routes"
grep -q '^198\.19\.61\.0/24 ' <<<"$rt1" && fail "client 1 got the DEFAULT file's route"
env2=$OVT_DIR/up-client2.env
[ -s "$env2" ] || fail "client 2 ran no --up script"
grep -q "dhcp-option\|dns_server" "$env2" && fail "push-remove in DEFAULT did not remove the DNS options for client 2"

# The LAN behind client 1 is reachable from the server side (route + iroute), both ways.
assert_ping "$NS_SRV" 198.19.50.2 10 0.1 0 "server -> host behind client 1 (iroute)"
assert_ping "$lan" "$OVT_SERVER_TUN_IP" 10 0.1 0 "host behind client 1 -> server tun"
assert_ping "$ns1" "$OVT_SERVER_TUN_IP" 10 0.05 0 "client 1 -> server"
assert_ping "$ns2" "$OVT_SERVER_TUN_IP" 10 0.05 0 "client 2 -> server"
# The status file's routing table lists the iroute as 2.6 does ("NETWORK/BITS,CN,...").
wait_for 5 grep -q '^198\.19\.50\.0/24,client1,198\.18\.0\.2:' "$OVT_DIR/status.log" ||
    fail "the status routing table lacks client 1's iroute 198.19.50.0/24: $(grep -A8 '^ROUTING TABLE' "$OVT_DIR/status.log")"

if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    # Bad CCD line: AUTH_FAILED, the log names the file and line; address collision refused too.
    client_start "$OVT_DIR" 3 "auth-retry none"
    client_start "$OVT_DIR" 4 "auth-retry none"
    wait_for 30 grep -q "AUTH_FAILED" "$OVT_DIR/client3.log" || fail "client 3 (bad CCD file) was not refused"
    wait_for 30 grep -q "AUTH_FAILED" "$OVT_DIR/client4.log" || fail "client 4 (address collision) was not refused"
    server_log_grep "$ccd/client3:2: iroute: '198.19.300.0' is not an IPv4 network" ||
        fail "the server log does not name the bad CCD line"
    server_log_grep "$ccd/client4: ifconfig-push 198.19.0.77 is the address of client 'client1'" ||
        fail "the server log does not explain the address collision"
    client_tun_ip 3 | grep -q . && fail "client 3 got an address"
    assert_ping "$ns1" "$OVT_SERVER_TUN_IP" 10 0.05 0 "client 1 after the refusals"
    assert_ping "$ns2" "$OVT_SERVER_TUN_IP" 10 0.05 0 "client 2 after the refusals"

    # Fix client 3's file: the next connection uses it, no restart.
    printf 'ifconfig-push 198.19.0.99 255.255.255.0\n' >"$ccd/client3"
    client_start "$OVT_DIR" 3
    wait_tunnel 3
    [ "${CLIENT_TUN_IP[3]}" = 198.19.0.99 ] || fail "client 3 got ${CLIENT_TUN_IP[3]} after the CCD edit, not 198.19.0.99"
fi
ovt_log "PASS"
