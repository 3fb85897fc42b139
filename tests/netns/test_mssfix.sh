#!/usr/bin/env bash
# mssfix: the server clamps the MSS of TCP SYNs it carries into the tunnel (default mssfix 1492
# with AES-GCM and P_DATA_V2 gives 1400, as the stock client computes), even for a client that
# does no clamping itself (mssfix 0). Seen on the client's tun device with tcpdump.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init mssfix
command -v tcpdump >/dev/null || ovt_skip "tcpdump is not installed"

netns_setup 1
pki_make "$OVT_DIR"
server_conf_write "$OVT_DIR"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1 "mssfix 0"
wait_tunnel 1
ns=$(client_ns 1)
dev=$(client_tun_dev 1)

ovt_spawn "$ns" "$OVT_DIR/tcpdump.log" timeout 20 tcpdump -l -n -v -i "$dev" -c 1 \
    'tcp[tcpflags] & tcp-syn != 0'
cap=$OVT_LAST_PID
listening() { grep -q "listening on" "$OVT_DIR/tcpdump.log"; }
wait_for 10 listening || fail "tcpdump did not start on $dev"
ovt_run 5 "$NS_SRV" bash -c "exec 3<>/dev/tcp/${CLIENT_TUN_IP[1]}/5555" 2>/dev/null || true
ovt_wait "$cap" || true
mss=$(grep -o 'mss [0-9]*' "$OVT_DIR/tcpdump.log" | head -n 1 | cut -d' ' -f2)
[ -n "$mss" ] || fail "no SYN seen on the client's tun (tcpdump: $(tail -n 3 "$OVT_DIR/tcpdump.log"))"
[ "$mss" = 1400 ] || fail "SYN arrived with MSS $mss, expected 1400 (server mssfix 1492)"
ovt_log "SYN from the server side arrived with MSS $mss"
