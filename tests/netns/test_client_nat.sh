#!/usr/bin/env bash
# client-nat in a server config (openvpn 2.6 applies it to every client's IPv4 packets, clinat.c):
# with `client-nat snat 198.19.0.0 255.255.255.0 198.19.7.0` the server's side of the tunnel is
# seen by clients as 198.19.7.0/24. A stock client (given the route to 198.19.7.0/24) pings
# 198.19.7.1 and opens a TCP connection to 198.19.7.1 that the server's 198.19.0.1 answers: the
# destination is rewritten on the way in, the source on the way out, and the TCP checksums
# stay valid (the kernels at both ends verify them; a TCP reply from the untranslated address
# would not match the client's connection). Client-to-client traffic is not translated (2.6
# multi_get_queue): client 2 reaches client 1 at its own address. A bad rule gets a start-up
# error naming the file and line (ovpnd's --test-config). Also against openvpn 2.6.
# ovt: optimised build only: the translation itself runs under the sanitizers in unit test_client_nat
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init client_nat

netns_setup 2
pki_make "$OVT_DIR"
server_conf_write "$OVT_DIR" "client-nat snat 198.19.0.0 255.255.255.0 198.19.7.0" \
    'push "route 198.19.7.0 255.255.255.0"' "client-to-client"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1
wait_tunnel 1
client_start "$OVT_DIR" 2
wait_tunnel 2

assert_ping "$(client_ns 1)" 198.19.7.1 10 0.05 0 "client 1 -> 198.19.7.1 (the server's tun, translated)"

# A TCP echo on the server's tun address, reached by its alias.
ovt_spawn "$NS_SRV" "$OVT_DIR/echo.log" python3 -c '
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("198.19.0.1", 5001))
s.listen(4)
while True:
    c, a = s.accept()
    c.sendall(("from %s: " % a[0]).encode() + c.recv(100))
    c.close()
'
tcp_ask() { # NS ADDR: the echo's answer to "hello" at ADDR:5001
    ip netns exec "$1" python3 -c '
import socket, sys
c = socket.create_connection((sys.argv[1], 5001), timeout=3)
c.sendall(b"hello")
print(c.recv(100).decode())' "$2" 2>/dev/null
}
echo_up() { tcp_ask "$NS_SRV" 198.19.0.1 >/dev/null; }
wait_for 5 echo_up || fail "the TCP echo in the server namespace did not start"
ip1=${CLIENT_TUN_IP[1]}
ip2=${CLIENT_TUN_IP[2]}
answer=$(tcp_ask "$(client_ns 1)" 198.19.7.1) || fail "client 1 could not talk TCP to 198.19.7.1"
[ "$answer" = "from $ip1: hello" ] || fail "unexpected TCP answer through client-nat: '$answer'"

# client-to-client: not translated, client 1 is reached at its own address
assert_ping "$(client_ns 2)" "$ip1" 5 0.05 0 "client 2 -> client 1 (client-to-client)"
assert_ping "$(client_ns 1)" "$ip2" 5 0.05 0 "client 1 -> client 2 (client-to-client)"
client_stop 1
client_stop 2
server_stop

if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    server_conf_write "$OVT_DIR" "client-nat xnat 198.19.0.0 255.255.255.0 198.19.7.0" \
        "client-nat snat 198.19.0.0 255.255.255.0 vpn.example"
    out=$("$OVPND" --test-config --config "$OVT_DIR/server.conf" 2>&1) &&
        fail "bad client-nat lines were accepted"
    grep -q "server.conf:[0-9]*: client-nat: type must be 'snat' or 'dnat', not 'xnat'" <<<"$out" ||
        fail "no error naming the bad type: $out"
    grep -q "server.conf:[0-9]*: client-nat: bad alias 'vpn.example'" <<<"$out" ||
        fail "no error naming the bad alias: $out"
fi
ovt_log "PASS"
