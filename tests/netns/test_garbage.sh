#!/usr/bin/env bash
# Junk on the server's UDP port does not hurt real clients: while client 1 pings through the
# tunnel, another namespace sends 10,000 random, lookalike, truncated, corrupted and replayed
# datagrams (the last three made from a tcpdump capture of the real session) to
# 198.18.0.1:1194. The ping loses at most 1%, the server is still running.
# Then the same kinds of junk come from client 1's own address and port (a raw socket in its
# namespace; with tls-crypt, as here, only replays of its real packets get past the wrapper,
# among them its first hard reset): client 1 keeps its tunnel (its session may be replaced by
# a new one it starts itself, with the same peer-id), the server lists it once, and a new
# client connects and pings afterwards.
# ovt: serial (see tests/CMakeLists.txt)
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init garbage

netns_setup 3 # 1: pinging client, 2: junk sender, 3: the client that connects afterwards
pki_make "$OVT_DIR"
server_conf_write "$OVT_DIR"
server_start "$OVT_DIR"

# Capture the real session's first packets (handshake and data) to mutate later.
pcap=$OVT_DIR/session.pcap
have_pcap=0
if command -v tcpdump >/dev/null; then
    ovt_spawn "$NS_SRV" "$OVT_DIR/tcpdump.log" tcpdump -i br0 -n -U --immediate-mode -s 0 -c 400 -w "$pcap" \
        udp port "$OVT_PORT"
    tcpdump_pid=$OVT_LAST_PID
    if wait_for 10 grep -q "listening on" "$OVT_DIR/tcpdump.log"; then
        have_pcap=1
    else
        ovt_log "tcpdump did not start; mutating synthetic packets only"
    fi
fi

sport=40001 # client 1's fixed port, for the junk in its name
OVT_CLIENT_BIND="lport $sport" client_start "$OVT_DIR" 1
wait_tunnel 1
cns=$(client_ns 1)
assert_ping "$cns" "$OVT_SERVER_TUN_IP" 20 0.02 0 "before the junk"
if [ "$have_pcap" = 1 ]; then
    kill -INT "$tcpdump_pid" 2>/dev/null || true
    ovt_wait "$tcpdump_pid" || true
fi

# 600 pings at 10 ms (about 6 s) while the junk (10,000 datagrams at up to 4,000/s) goes out.
ovt_spawn "$cns" "$OVT_DIR/ping.log" ping -n -q -c 600 -i 0.01 -W 2 "$OVT_SERVER_TUN_IP"
ping_pid=$OVT_LAST_PID
garbage_args=(--host "$OVT_SERVER_IP" --port "$OVT_PORT" --rate 4000 --max-seconds 30)
[ "$have_pcap" = 1 ] && garbage_args+=(--pcap "$pcap")
ovt_run 60 "$(client_ns 2)" "$OVT_PY" "$OVT_LIB_DIR/garbage.py" "${garbage_args[@]}" --count 10000 \
    >"$OVT_DIR/garbage.log" 2>&1 || {
    cat "$OVT_DIR/garbage.log" >&2
    fail "the junk sender failed or did not send all 10,000 datagrams"
}
while read -r line; do ovt_log "$line"; done <"$OVT_DIR/garbage.log"
# (without --immediate-mode tcpdump held the packets in its buffer until it was stopped, and
# the capture stayed empty)
if [ "$have_pcap" = 1 ] && grep -q ' 0 real packets to mutate' "$OVT_DIR/garbage.log"; then
    fail "the capture of the real session is empty: no truncated or flipped packets were sent"
fi
grep -q 'sent 10000 datagrams' "$OVT_DIR/garbage.log" || fail "not all junk datagrams were sent"
ovt_wait "$ping_pid" || true

server_alive || fail "the server died under junk traffic"
loss=$(sed -n 's/.* \([0-9.]*\)% packet loss.*/\1/p' "$OVT_DIR/ping.log" | head -n 1)
[ -n "$loss" ] || {
    cat "$OVT_DIR/ping.log" >&2
    fail "ping during the junk printed no summary"
}
ovt_log "ping during the junk: $(grep 'packets transmitted' "$OVT_DIR/ping.log")"
# at most 1% of 600 pings may be lost
awk -v l="$loss" 'BEGIN { exit !(l <= 1.0) }' || fail "ping through the tunnel lost $loss% during the junk"

assert_ping "$cns" "$OVT_SERVER_TUN_IP" 20 0.02 0 "client 1 after the junk"

# ---- the junk from client 1's own address and port ----
# A restart first, so that the captured packets belong to an earlier session: its replayed hard
# reset then names a session id the server no longer has.
client_restart 1
assert_ping "$cns" "$OVT_SERVER_TUN_IP" 5 0.05 0 "client 1 after its restart"
ovt_spawn "$cns" "$OVT_DIR/ping2.log" ping -n -q -c 500 -i 0.01 -W 2 "$OVT_SERVER_TUN_IP"
ping_pid=$OVT_LAST_PID
ovt_run 60 "$cns" "$OVT_PY" "$OVT_LIB_DIR/garbage.py" "${garbage_args[@]}" --count 4000 \
    --from-port "$sport" >"$OVT_DIR/garbage2.log" 2>&1 || {
    cat "$OVT_DIR/garbage2.log" >&2
    fail "the junk sender in client 1's name failed or did not send all 4,000 datagrams"
}
while read -r line; do ovt_log "in client 1's name: $line"; done <"$OVT_DIR/garbage2.log"
ovt_wait "$ping_pid" || true
server_alive || fail "the server died under junk in client 1's name"
ovt_log "ping during the junk in client 1's name: $(grep 'packets transmitted' "$OVT_DIR/ping2.log")"
loss=$(sed -n 's/.* \([0-9.]*\)% packet loss.*/\1/p' "$OVT_DIR/ping2.log" | head -n 1)
[ -n "$loss" ] || fail "ping during the junk in client 1's name printed no summary"
# at most 2% of 500 pings may be lost (a session change may cost a packet or two)
awk -v l="$loss" 'BEGIN { exit !(l <= 2.0) }' ||
    fail "ping through the tunnel lost $loss% during the junk in client 1's name"
# A replayed hard reset makes the server answer the client, which then starts a new session;
# the old one carries the traffic until the new one replaces it, so the tunnel stays up.
assert_ping "$cns" "$OVT_SERVER_TUN_IP" 20 0.02 0 "client 1 after the junk in its name"
ids=$(client_peer_ids 1)
[ "$ids" = "0 " ] || fail "client 1's sessions got peer-ids $ids, not always 0"
wait_for 5 status_lists_once client1 || fail "the status file does not list client 1 exactly once"
ovt_log "client 1 started $(grep -c 'Initialization Sequence Completed' "$OVT_DIR/client1.log") session(s) in all"

# A new client can still connect.
client_start "$OVT_DIR" 3
wait_tunnel 3
assert_ping "$(client_ns 3)" "$OVT_SERVER_TUN_IP" 20 0.02 0 "new client 3 after the junk"
server_alive || fail "the server died"
