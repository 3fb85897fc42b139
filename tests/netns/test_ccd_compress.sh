#!/usr/bin/env bash
# Compression for one client only, from its client-config-dir file (openvpn 2.6 takes compress
# and comp-lzo in a client instance). The server config has no compression, only
# `allow-compression yes`; client1's ccd file says `compress lz4-v2`, and client1's profile
# has `compress lz4-v2` and `allow-compression yes`:
#  - 256 KiB of compressible text goes up and down through the tunnel over TCP with its sha256
#    intact, and takes far fewer bytes on client1's wire both ways (the server decompressed
#    client1's lz4-v2 packets and compressed its own towards it);
#  - client2 (no ccd file, no compression) connects and pings client1's tunnel address through
#    the server (client-to-client: decompressed from one, plain to the other).
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init ccd_compress

netns_setup 2
pki_make "$OVT_DIR" --clients 2
ccd=$OVT_DIR/ccd
mkdir -p "$ccd"
chmod 755 "$ccd"
printf 'compress lz4-v2\n' >"$ccd/client1"
size=$((256 * 1024))
head -c "$size" < <(yes "ovpnd ccd compression test: the quick brown fox jumps over the lazy dog") \
    >"$OVT_DIR/text.bin"
cns=$(client_ns 1)
wire_bytes() { ip netns exec "$cns" cat "/sys/class/net/eth0/statistics/${1}_bytes"; }

server_conf_write "$OVT_DIR" "client-config-dir $ccd" "allow-compression yes" "client-to-client"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1 "compress lz4-v2" "allow-compression yes"
wait_tunnel 1
cip=${CLIENT_TUN_IP[1]}
before=$(wire_bytes tx)
tcp_transfer "text up" "$NS_SRV" "$OVT_SERVER_TUN_IP" "$cns" "$OVT_DIR/text.bin" "$OVT_DIR/recv.bin" 5001 30
up=$(($(wire_bytes tx) - before))
before=$(wire_bytes rx)
tcp_transfer "text down" "$cns" "$cip" "$NS_SRV" "$OVT_DIR/text.bin" "$OVT_DIR/recv.bin" 5002 30
down=$(($(wire_bytes rx) - before))
ovt_log "client1's wire: text up $up bytes, down $down bytes (of $size)"
[ "$up" -lt $((size / 2)) ] || fail "client1's compressible upload took $up bytes on the wire"
[ "$down" -lt $((size / 2)) ] || fail "the server did not compress towards client1: $down bytes"

client_start "$OVT_DIR" 2
wait_tunnel 2
assert_ping "$(client_ns 2)" "$cip" 5 0.05 0 "client2 (no compression) -> client1 (lz4-v2)" -s 1000
client_stop 2
client_stop 1
server_stop
ovt_log "PASS"
