#!/usr/bin/env bash
# Tunnel packets whose encrypted datagrams exceed the underlay's 1500-byte MTU reach the client:
# with the default tun-mtu 1500 a full-size inner packet becomes a datagram of about 1550 bytes,
# which the kernel IP-fragments when it is sent alone but refuses (EMSGSIZE) as a segment of a
# UDP GSO send. Checked with one worker, so every packet takes the same worker's send path:
# 1. 800 UDP datagrams of 1472 bytes (1500-byte inner packets) from the server's side to the
#    client, in bursts of 8 so that the worker sends runs of them together: at least 98% arrive
#    (the code that sent such runs with GSO delivered under 2%).
# 2. ping -s 3000 both ways (fragmented inner packets, sent back to back): no loss.
# 3. The worker counts no send drops, and at least those 800 datagrams as packets out.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init big_packets

netns_setup 1
pki_make "$OVT_DIR"
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    server_conf_write "$OVT_DIR" "workers 1"
else
    server_conf_write "$OVT_DIR"
fi
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1
wait_tunnel 1
ns=$(client_ns 1)
cip=${CLIENT_TUN_IP[1]}

# ---- 1. full-size UDP datagrams towards the client ----
cat >"$OVT_DIR/udp_rx.py" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
s.bind(("0.0.0.0", int(sys.argv[1])))
open(sys.argv[2], "w").write("ready\n")
# The sender may start seconds later on a loaded machine: wait long for the first datagram,
# then stop after 3 s without one.
s.settimeout(60.0)
n = 0
try:
    while True:
        if len(s.recv(65535)) == int(sys.argv[3]):
            n += 1
        s.settimeout(3.0)
except socket.timeout:
    pass
print("received %d" % n)
EOF
cat >"$OVT_DIR/udp_tx.py" <<'EOF'
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
host, port, size, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
for i in range(count):
    s.sendto(b"x" * size, (host, port))
    if i % 8 == 7:
        time.sleep(0.004)
print("sent %d" % count)
EOF
ovt_spawn "$ns" "$OVT_DIR/udp_rx.log" "$OVT_PY" "$OVT_DIR/udp_rx.py" 9999 "$OVT_DIR/rx.ready" 1472
rx=$OVT_LAST_PID
wait_for 10 test -s "$OVT_DIR/rx.ready" || fail "the UDP receiver in the client's namespace did not start"
ovt_run 30 "$NS_SRV" "$OVT_PY" "$OVT_DIR/udp_tx.py" "$cip" 9999 1472 800 >"$OVT_DIR/udp_tx.log" ||
    fail "the UDP sender failed: $(cat "$OVT_DIR/udp_tx.log")"
ovt_wait "$rx" || true
got=$(sed -n 's/^received \([0-9]*\)$/\1/p' "$OVT_DIR/udp_rx.log")
[ -n "$got" ] || fail "the UDP receiver printed no count: $(cat "$OVT_DIR/udp_rx.log")"
ovt_log "800 datagrams of 1472 bytes to the client: $got arrived"
[ "$got" -ge 784 ] || fail "only $got of 800 full-size datagrams reached the client"

# ---- 2. fragmented inner packets both ways ----
assert_ping "$ns" "$OVT_SERVER_TUN_IP" 10 0.05 0 "client -> server, 3000-byte pings" -s 3000
assert_ping "$NS_SRV" "$cip" 10 0.05 0 "server -> client, 3000-byte pings" -s 3000

# ---- 3. the worker's counters (logged when the server stops) ----
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    server_stop
    line=$(server_log_since | grep -E 'worker 0: packets in [0-9]+, out [0-9]+' | tail -n 1)
    [ -n "$line" ] || fail "the server logged no counters for worker 0 at its stop"
    out=$(sed -n 's/.*, out \([0-9]*\),.*/\1/p' <<<"$line")
    send=$(sed -n 's/.* send \([0-9]*\),.*/\1/p' <<<"$line")
    ovt_log "worker 0: packets out $out, send drops $send"
    [ "$send" = 0 ] || fail "worker 0 dropped $send datagrams it could not send"
    [ "$out" -ge 800 ] || fail "worker 0 counts $out packets out, fewer than the 800 datagrams"
fi
