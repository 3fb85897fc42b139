#!/usr/bin/env bash
# port-share: VPN and a web server on one TCP port. A small HTTP server (python3 -m http.server)
# listens on 127.0.0.1:8080 inside the server's namespace; the VPN server runs `proto tcp-server`
# with `port-share 127.0.0.1 8080 DIR`:
#  - a plain HTTP request to the VPN port gets the web server's page (twice, from two clients);
#  - while a proxied request is open, DIR holds a file named after the proxy's address and port
#    towards the web server ("[AF_INET]127.0.0.1:PORT"), naming the HTTP client
#    ("[AF_INET]198.18.0.3:PORT"), as 2.6 writes them; it is gone once the connection ends;
#  - a stock client connects to the same port meanwhile and pings through its tunnel.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init tcp_port_share

netns_setup 2
pki_make "$OVT_DIR"
mkdir -p "$OVT_DIR/www" "$OVT_DIR/journal"
token="port-share page $$ $RANDOM"
echo "$token" >"$OVT_DIR/www/index.html"
ovt_spawn "$NS_SRV" "$OVT_DIR/http.log" "$OVT_PY" -m http.server --bind 127.0.0.1 \
    --directory "$OVT_DIR/www" 8080
http_up() { out_has . ip netns exec "$NS_SRV" ss -Hltn "sport = :8080"; }
wait_for 10 http_up || fail "the HTTP server did not start"

export OVT_PROTO=tcp-server OVT_CLIENT_PROTO=tcp4-client
server_conf_write "$OVT_DIR" "port-share 127.0.0.1 8080 $OVT_DIR/journal"
server_start "$OVT_DIR"

get_page() { # get_page NS: fetch http://198.18.0.1:1194/ from client namespace NS
    ovt_run 20 "$1" "$OVT_PY" -c '
import sys, urllib.request
print(urllib.request.urlopen("http://%s:%s/index.html" % (sys.argv[1], sys.argv[2]), timeout=10).read().decode().strip())
' "$OVT_SERVER_IP" "$OVT_PORT"
}
page=$(get_page "$(client_ns 2)") || fail "HTTP request to the VPN port failed"
[ "$page" = "$token" ] || fail "HTTP request to the VPN port got '$page', not the web server's page"
ovt_log "HTTP to the VPN port: got the web server's page"

client_start "$OVT_DIR" 1
wait_tunnel 1
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 10 0.05 0 "VPN client on the shared port"

# A request held open: its journal file names the HTTP client while it lasts.
ovt_spawn "$(client_ns 2)" "$OVT_DIR/held.log" "$OVT_PY" -c '
import socket, sys, time, os
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=20)
s.sendall(b"GET /index.html HTTP/1.0\r\n")
open(sys.argv[3], "w").write("%s:%d" % s.getsockname())
while not os.path.exists(sys.argv[4]):
    time.sleep(0.05)
s.sendall(b"\r\n")
data = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
print(data.decode(errors="replace").splitlines()[-1])
' "$OVT_SERVER_IP" "$OVT_PORT" "$OVT_DIR/held.addr" "$OVT_DIR/held.go"
held_pid=$OVT_LAST_PID
wait_for 10 test -s "$OVT_DIR/held.addr" || fail "the held HTTP request did not start"
journal_has() {
    grep -qxF "[AF_INET]$(cat "$OVT_DIR/held.addr")" "$OVT_DIR"/journal/\[AF_INET\]127.0.0.1:* 2>/dev/null
}
wait_for 10 journal_has || fail "no journal file names the HTTP client $(cat "$OVT_DIR/held.addr"): $(ls "$OVT_DIR/journal")"
ovt_log "journal: $(cd "$OVT_DIR/journal" && grep -H . ./*)"
touch "$OVT_DIR/held.go"
ovt_wait "$held_pid" || fail "the held HTTP request failed"
[ "$(cat "$OVT_DIR/held.log")" = "$token" ] || fail "the held HTTP request got: $(cat "$OVT_DIR/held.log")"
journal_empty() { [ -z "$(ls -A "$OVT_DIR/journal")" ]; }
wait_for 10 journal_empty || fail "the journal file stayed after the connection ended: $(ls "$OVT_DIR/journal")"

page=$(get_page "$(client_ns 2)") || fail "second HTTP request failed"
[ "$page" = "$token" ] || fail "second HTTP request got '$page'"
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 10 0.05 0 "VPN client after the HTTP requests"
server_alive || fail "server died"
