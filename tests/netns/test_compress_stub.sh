#!/usr/bin/env bash
# Client profiles with a compression option (comp-lzo, compress lz4-v2: common in older
# profiles) work: ovpnd compresses nothing, pushes "compress stub-v2" to such clients (2.6's
# "compress migrate"), and frames their packets accordingly; the data channel carries pings of
# every size. A client without compression gets no compression option pushed.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init compress_stub
[ "$OVPN_SERVER_IMPL" = ovpnd ] || ovt_skip "checks ovpnd's compress-migrate behaviour"

netns_setup 3
pki_make "$OVT_DIR"
server_conf_write "$OVT_DIR" "comp-lzo no"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1 "comp-lzo"
client_start "$OVT_DIR" 2 "compress lz4-v2"
client_start "$OVT_DIR" 3
for i in 1 2 3; do
    wait_tunnel "$i"
done
for i in 1 2; do
    grep -q "PUSH_REPLY.*,compress stub-v2," "$OVT_DIR/client$i.log" ||
        fail "client $i (compression configured) was not pushed 'compress stub-v2'"
    for size in 56 1000 1400; do
        assert_ping "$(client_ns "$i")" "$OVT_SERVER_TUN_IP" 10 0.02 0 \
            "client $i, ping -s $size" -s "$size"
    done
    assert_ping "$NS_SRV" "${CLIENT_TUN_IP[$i]}" 10 0.02 0 "server -> client $i"
done
if grep -q "PUSH_REPLY.*compress\|PUSH_REPLY.*comp-lzo" "$OVT_DIR/client3.log"; then
    fail "client 3 (no compression) was pushed a compression option"
fi
assert_ping "$(client_ns 3)" "$OVT_SERVER_TUN_IP" 10 0.02 0 "client 3 (no compression)"
