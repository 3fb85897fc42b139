#!/usr/bin/env bash
# A 20 MB random file crosses the tunnel over TCP in both directions (client -> server, then
# server -> client) and arrives with the same sha256. The server -> client direction leaves
# ovpnd in UDP GSO sends (runs of full-size datagrams to one client in one send) where the
# kernel has UDP_SEGMENT (Linux 4.18+), and both directions use the TUN device's offloads
# (TCP super-packets cut into segments on the way out, coalesced on the way in): the workers'
# counters show it. Interrupt moderation is adaptive: the workers poll their sockets while the
# client sends bulk data (client -> server), never for the client's ACKs alone (server ->
# client), which must not wait for a polling period.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init tcp_transfer

netns_setup 1
pki_make "$OVT_DIR"
# two workers: SIGUSR2 then logs two counter lines (openvpn is told to skip the line)
server_conf_write "$OVT_DIR" "ignore-unknown-option workers" "workers 2"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1
wait_tunnel 1
cip=${CLIENT_TUN_IP[1]}
cns=$(client_ns 1)

head -c $((20 * 1024 * 1024)) /dev/urandom >"$OVT_DIR/up.bin"
head -c $((20 * 1024 * 1024)) /dev/urandom >"$OVT_DIR/down.bin"

tcp_transfer "client->server" "$NS_SRV" "$OVT_SERVER_TUN_IP" "$cns" "$OVT_DIR/up.bin" "$OVT_DIR/up.recv" \
    5001 150
# worker_sum SED_CAPTURE [OFFSET]: the captured number summed over the workers' counter lines
# in the server log from byte OFFSET on (default: this run's start)
worker_sum() {
    tail -c "+$((${2:-$OVT_SERVER_LOG_OFF} + 1))" "$OVT_DIR/server.log" |
        sed -n "s/.*worker [0-9]*: packets in.*$1.*/\1/p" | awk '{ n += $1 } END { print n + 0 }'
}
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    # The workers' counters between the two transfers (SIGUSR2: each worker logs one line).
    usr2_off=$(stat -c %s "$OVT_DIR/server.log")
    kill -USR2 "$(server_process_pid)"
    usr2_logged() {
        [ "$(tail -c "+$((usr2_off + 1))" "$OVT_DIR/server.log" |
            grep -c 'worker [0-9]*: packets in' || true)" -ge 2 ]
    }
    wait_for 10 usr2_logged || fail "the workers did not log their counters on SIGUSR2"
    polls_up=$(worker_sum 'polling periods \([0-9]*\);' "$usr2_off")
    stop_off=$(stat -c %s "$OVT_DIR/server.log")
fi
tcp_transfer "server->client" "$cns" "$cip" "$NS_SRV" "$OVT_DIR/down.bin" "$OVT_DIR/down.recv" \
    5002 150

sha() { sha256sum "$1" | cut -d' ' -f1; }
check_same() { # check_same SENT RECEIVED WHAT
    local a b
    a=$(sha "$OVT_DIR/$1")
    b=$(sha "$OVT_DIR/$2")
    [ "$a" = "$b" ] ||
        fail "$3: sha256 mismatch (sent $a, got $b, $(stat -c %s "$OVT_DIR/$2") bytes)"
    ovt_log "$3: 20 MiB, sha256 $a matches"
}
check_same up.bin up.recv "client->server"
check_same down.bin down.recv "server->client"
server_alive || fail "server died during the transfers"

if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    # The workers' counters are logged when the server stops (and on SIGUSR2).
    server_stop
    gso=$(worker_sum 'sent by UDP GSO \([0-9]*\);' "$stop_off")
    [ "$gso" -gt 1000 ] || fail "only $gso datagrams left in UDP GSO sends during 20 MiB server -> client"
    ovt_log "server -> client: $gso datagrams sent by UDP GSO"
    # TUN offloads: the server's TCP sent super-packets that ovpnd cut into segments, and the
    # client's segments reached the server's TCP coalesced into super-packets.
    tso=$(worker_sum 'TUN super-packets read [0-9]* (segments \([0-9]*\))' "$stop_off")
    gro=$(worker_sum 'written [0-9]* (segments \([0-9]*\))' "$stop_off")
    [ "$tso" -gt 5000 ] ||
        fail "only $tso segments came from TUN super-packets during 20 MiB server -> client"
    [ "$gro" -gt 5000 ] ||
        fail "only $gro segments went into TUN super-packets during 20 MiB client -> server"
    ovt_log "TUN offloads: $tso segments cut from super-packets, $gro coalesced into them"
    # Interrupt moderation: a bulk transfer makes the receiving worker poll its socket; the
    # client's ACKs of the download do not (they would wait up to a period each).
    polls=$(worker_sum 'polling periods \([0-9]*\);' "$stop_off")
    [ "$polls_up" -gt 0 ] ||
        fail "the workers never switched to polling during 20 MiB client -> server"
    [ "$polls" = "$polls_up" ] ||
        fail "the workers switched to polling $((polls - polls_up)) times during 20 MiB" \
            "server -> client, where the client sends only ACKs"
    ovt_log "interrupt moderation: $polls_up polling periods client -> server, none server -> client"
fi
