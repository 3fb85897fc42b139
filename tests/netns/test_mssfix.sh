#!/usr/bin/env bash
# mssfix: the server clamps the MSS of TCP SYNs it carries into the tunnel, for each client
# by what that client's packets add (2.6 computes it per client once the cipher is
# negotiated), even for clients that do no clamping themselves (mssfix 0). Seen on each
# client's tun device with tcpdump. One dual-stack server (`proto udp6`, default mssfix 1492
# with AES-GCM and P_DATA_V2): client 1 over IPv4 gets 1400 (as the stock client computes for
# itself), client 2 over IPv6 (2001:2::/64, RFC 5180's benchmarking range, as in
# test_ipv6_transport.sh) 1380: its outer IPv6 header is 20 bytes longer.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init mssfix
command -v tcpdump >/dev/null || ovt_skip "tcpdump is not installed"

netns_setup 2
pki_make "$OVT_DIR"
ip -n "$NS_SRV" addr add 2001:2::1/64 dev br0 nodad
ip -n "$(client_ns 2)" addr add 2001:2::3/64 dev eth0 nodad
wait_for 10 ovt_run 3 "$(client_ns 2)" ping -6 -c 1 -W 1 -q 2001:2::1 >/dev/null ||
    fail "underlay: client 2 cannot reach 2001:2::1"
server_conf_write "$OVT_DIR" "proto udp6"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1 "mssfix 0"
OVT_CLIENT_REMOTE="remote 2001:2::1 $OVT_PORT udp6" client_start "$OVT_DIR" 2 "mssfix 0"
wait_tunnel 1
wait_tunnel 2

# syn_mss I: the MSS of a SYN sent from the server's side to client I, as it arrives on the
# client's tun device.
syn_mss() {
    local ns dev log=$OVT_DIR/tcpdump$1.log cap
    ns=$(client_ns "$1")
    dev=$(client_tun_dev "$1")
    ovt_spawn "$ns" "$log" timeout 20 tcpdump -l -n -v -i "$dev" -c 1 \
        'tcp[tcpflags] & tcp-syn != 0'
    cap=$OVT_LAST_PID
    # shellcheck disable=SC2317 # called through wait_for
    listening() { grep -q "listening on" "$log"; }
    wait_for 10 listening || fail "tcpdump did not start on $dev"
    ovt_run 5 "$NS_SRV" bash -c "exec 3<>/dev/tcp/${CLIENT_TUN_IP[$1]}/5555" 2>/dev/null || true
    ovt_wait "$cap" || true
    grep -o 'mss [0-9]*' "$log" | head -n 1 | cut -d' ' -f2
}

mss=$(syn_mss 1)
[ -n "$mss" ] || fail "no SYN seen on client 1's tun"
if [ "${OVPN_SERVER_IMPL:-ovpnd}" = openvpn ]; then
    # 2.6 counts an IPv6 header for IPv4 clients of a dual-stack socket (their address is
    # v4-mapped: mss.c get_ip_encap_overhead takes the socket address's family)
    [ "$mss" = 1380 ] || fail "client 1 (IPv4): SYN arrived with MSS $mss, expected 1380 from 2.6"
else
    [ "$mss" = 1400 ] || fail "client 1 (IPv4): SYN arrived with MSS $mss, expected 1400"
fi
ovt_log "client 1 (IPv4 transport): SYN from the server side arrived with MSS $mss"
mss=$(syn_mss 2)
[ -n "$mss" ] || fail "no SYN seen on client 2's tun"
[ "$mss" = 1380 ] || fail "client 2 (IPv6): SYN arrived with MSS $mss, expected 1380"
ovt_log "client 2 (IPv6 transport): SYN from the server side arrived with MSS $mss"
