#!/usr/bin/env bash
# multihome: the server has two addresses on its underlay (198.18.0.1 and 198.18.0.200) and
# listens on all of them (no `local`). Client 1 connects to the first, client 2 to the second;
# each must get the server's answers from the address it sent to: the stock client drops
# datagrams from any other address ("Incoming packet rejected"), so without multihome, where
# the kernel would answer client 2 from 198.18.0.1, client 2 never connects. A capture on the
# server's bridge checks the source addresses of the server's datagrams to each client too.
# `proto udp` without `local` listens on IPv4 only (0.0.0.0), as openvpn 2.6 on Linux does
# ("Could not determine IPv4/IPv6 protocol. Using AF_INET").
# With `passtos` (2.6 forward.c process_ip_header), a packet the server sends to client 2 with
# DSCP EF (ping -Q 0xb8) leaves in a datagram with DSCP EF, from the second address still; the
# pings without a TOS do not.
# The same server has `mark 42` and `bind-dev br0` (2.6: SO_MARK and SO_BINDTODEVICE on its
# socket): its sockets are bound to br0 and carry mark 42 (ss shows both).
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init multihome

second=198.18.0.200
netns_setup 2
pki_make "$OVT_DIR" --clients 2
d=$OVT_DIR
ip -n "$NS_SRV" addr add "$second/24" dev br0
server_conf_write "$d" "multihome" "mark 42" "bind-dev br0" "passtos"
server_start "$d"
socks=$(ip netns exec "$NS_SRV" ss -Hlune "sport = :$OVT_PORT")
grep -q "0\.0\.0\.0%br0:$OVT_PORT " <<<"$socks" ||
    fail "proto udp without local and bind-dev br0: not listening on 0.0.0.0%br0: $socks"
# every socket of the server (ovpnd has one per thread) carries the mark (fwmark:0x2a)
grep -v -q "fwmark:0x2a" <<<"$socks" && fail "mark 42: a listening socket without the mark: $socks"
grep -q "\[::\]:$OVT_PORT " <<<"$socks" && fail "proto udp without local listens on IPv6 too: $socks"

capture=0
if command -v tcpdump >/dev/null; then
    ovt_spawn "$NS_SRV" "$d/tcpdump.log" tcpdump -n -l -i br0 "udp and src port $OVT_PORT"
    capture=1
    wait_for 5 grep -q "listening on" "$d/tcpdump.log" || fail "tcpdump did not start"
fi

client_start "$d" 1
OVT_CLIENT_REMOTE="remote $second $OVT_PORT udp4" client_start "$d" 2
wait_tunnel 1 20
wait_tunnel 2 20
grep -q "Incoming packet rejected" "$d/client2.log" &&
    fail "client 2 saw datagrams from an address it did not send to"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 10 0.02 0 "client 1 (to $OVT_SERVER_IP) -> server"
assert_ping "$(client_ns 2)" "$OVT_SERVER_TUN_IP" 10 0.02 0 "client 2 (to $second) -> server"

# passtos: only the EF pings to client 2 leave as EF datagrams, and from the second address
if command -v tcpdump >/dev/null; then
    ovt_spawn "$NS_SRV" "$d/tcpdump-ef.log" tcpdump -n -l -i br0 \
        "udp and src port $OVT_PORT and (ip[1] & 0xfc) = 0xb8"
    wait_for 5 grep -q "listening on" "$d/tcpdump-ef.log" || fail "tcpdump did not start"
    c2=$(client_tun_ip 2)
    ovt_run 10 "$NS_SRV" ping -n -q -c 5 -i 0.05 -W 2 "$c2" >/dev/null 2>&1 || fail "server -> client 2 ping failed"
    ovt_run 10 "$NS_SRV" ping -n -q -c 5 -i 0.05 -W 2 -Q 0xb8 "$c2" >/dev/null 2>&1 ||
        fail "server -> client 2 ping with DSCP EF failed"
    wait_for 5 out_has "^5$" sh -c "grep -c '> 198\.18\.0\.3\.' '$d/tcpdump-ef.log'" ||
        fail "passtos: not 5 datagrams with DSCP EF to client 2 for its 5 EF pings: $(cat "$d/tcpdump-ef.log")"
    grep "> 198\.18\.0\.3\." "$d/tcpdump-ef.log" | grep -v "IP $second\.$OVT_PORT >" | head -3 | grep . &&
        fail "passtos: EF datagrams to client 2 left from another address than $second"
    ovt_log "passtos: the 5 EF pings to client 2 went in EF datagrams, the 5 others not"
fi

# Renegotiated traffic and the control channel keep to it too: a short transfer-free check of
# the capture is enough (every datagram to client 2 came from the second address).
if [ "$capture" = 1 ]; then
    wait_for 5 grep -q "> 198\.18\.0\.3\." "$d/tcpdump.log" || fail "the capture saw no datagram to client 2"
    grep "> 198\.18\.0\.3\." "$d/tcpdump.log" | grep -v "IP $second\.$OVT_PORT >" | head -3 | grep . &&
        fail "datagrams to client 2 left from another address than $second"
    grep "> 198\.18\.0\.2\." "$d/tcpdump.log" | grep -v "IP $OVT_SERVER_IP\.$OVT_PORT >" | head -3 | grep . &&
        fail "datagrams to client 1 left from another address than $OVT_SERVER_IP"
fi
ovt_log "PASS"
