#!/usr/bin/env bash
# Clients with non-default replay protection settings connect and ping; the server stays up.
#   client 1: replay-window 128 30     (smaller window, 30 s time window)
#   client 2: replay-window 0          (2.6 accepts 0..65536; 0 means strict sequence: the
#                                       client then rejects everything after one lost packet)
#   client 3: replay-window 65536 0    (the largest window 2.6 accepts)
#   client 4: no-replay                2.6.14 still accepts the option (with a warning), but its
#             own client then stops on an internal assertion once the AEAD data channel starts,
#             so it never carries traffic. What matters for the server: a client that vanishes
#             right after its handshake must not disturb the server or the other clients.
# Replay settings are local to the receiver; nothing about them goes on the wire.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init replay_options

netns_setup 4
pki_make "$OVT_DIR"
server_conf_write "$OVT_DIR"
server_start "$OVT_DIR"

opts=("replay-window 128 30" "replay-window 0" "replay-window 65536 0")
for i in 1 2 3; do
    client_start "$OVT_DIR" "$i" "${opts[$((i - 1))]}"
done
for i in 1 2 3; do
    wait_tunnel "$i"
done
for i in 1 2 3; do
    assert_ping "$(client_ns "$i")" "$OVT_SERVER_TUN_IP" 100 0.01 0 "client $i (${opts[$((i - 1))]})"
    assert_ping "$NS_SRV" "${CLIENT_TUN_IP[$i]}" 10 0.05 0 "server -> client $i"
done

# Then the no-replay client. It runs last because when it dies, the ICMP port-unreachable for
# the server's next packet to it can surface as a send error on a packet to another client;
# with replay-window 0 (strict sequence) the client that misses one packet rejects all later
# ones, which would be a client-side artefact rather than a server fault.
client_start "$OVT_DIR" 4 "no-replay"
no_replay_settled() { client_up 4 || ! client_alive 4; }
wait_for 30 no_replay_settled || fail "no-replay client neither came up nor exited within 30 s"
if client_up 4; then
    ovt_log "no-replay client came up; checking its tunnel too"
    assert_ping "$(client_ns 4)" "$OVT_SERVER_TUN_IP" 50 0.01 0 "client 4 (no-replay)"
else
    ovt_log "no-replay client exited by itself: $(grep -m1 -E 'Assertion|fatal|rror' \
        "$OVT_DIR/client4.log" | cut -c21- || true)"
fi
server_alive || fail "server died after the no-replay client"
for i in 1 3; do
    assert_ping "$(client_ns "$i")" "$OVT_SERVER_TUN_IP" 50 0.01 0 "client $i still works"
done
server_alive || fail "server died"
