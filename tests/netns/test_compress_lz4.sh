#!/usr/bin/env bash
# Real compression with stock clients. For each of `compress lz4-v2`, `compress lz4` (swap
# framing) and `comp-lzo yes` (LZO), a server with that line and `allow-compression asym`, then
# `allow-compression yes`, and a client with the same line plus `allow-compression yes` (so that
# it compresses what it sends). Through the tunnel, 1 MiB of compressible text and 1 MiB of
# random bytes go each way over TCP and arrive with the same sha256. The client's underlay
# interface counts what crossed the wire: its compressible uploads take far fewer bytes than the
# text (the server decompressed them), and downloads do too with `allow-compression yes` only
# (with asym the server never compresses). A second client with the same line (without
# `allow-compression yes`: it takes compressed packets but sends none) and the first exchange
# 1000-byte pings through the server (client-to-client: decompressed from one, framed or
# compressed again for the other). With `compress lz4-v2` and `allow-compression yes`, a third
# client whose profile has no compression option pings the server and the first client too.
# ovt: timeout 600
# ovt: optimised build only: six server restarts of transfers; the decoders' bad input runs under the sanitizers in test_compress_forged
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init compress_lz4

netns_setup 3
pki_make "$OVT_DIR"
size=$((1024 * 1024))
head -c "$size" < <(yes "ovpnd compression test: the quick brown fox jumps over the lazy dog") \
    >"$OVT_DIR/text.bin"
head -c "$size" /dev/urandom >"$OVT_DIR/random.bin"
cns=$(client_ns 1)


# The client's underlay byte counter (tx or rx) on its eth0.
wire_bytes() {
    ip netns exec "$cns" cat "/sys/class/net/eth0/statistics/${1}_bytes"
}

# worker_sum SED_CAPTURE: the captured number of the workers' counters (logged at the stop),
# summed over the workers.
worker_sum() {
    server_log_since | sed -n "s/.*worker [0-9]*: packets in.*$1.*/\1/p" |
        awk '{ n += $1 } END { print n + 0 }'
}

port=5000
run_case() { # run_case NAME SERVER_LINE ALLOW
    local name=$1 line=$2 allow=$3 cip before up_text down_text
    ovt_log "--- $name: server '$line', allow-compression $allow"
    server_conf_write "$OVT_DIR" "$line" "allow-compression $allow" "client-to-client"
    server_start "$OVT_DIR"
    client_start "$OVT_DIR" 1 "$line" "allow-compression yes"
    wait_tunnel 1
    cip=${CLIENT_TUN_IP[1]}

    before=$(wire_bytes tx)
    tcp_transfer "$name: text up" "$NS_SRV" "$OVT_SERVER_TUN_IP" "$cns" "$OVT_DIR/text.bin" \
        "$OVT_DIR/recv.bin" $((port += 1))
    up_text=$(($(wire_bytes tx) - before))
    before=$(wire_bytes rx)
    tcp_transfer "$name: text down" "$cns" "$cip" "$NS_SRV" "$OVT_DIR/text.bin" "$OVT_DIR/recv.bin" \
        $((port += 1))
    down_text=$(($(wire_bytes rx) - before))
    tcp_transfer "$name: random up" "$NS_SRV" "$OVT_SERVER_TUN_IP" "$cns" "$OVT_DIR/random.bin" \
        "$OVT_DIR/recv.bin" $((port += 1))
    tcp_transfer "$name: random down" "$cns" "$cip" "$NS_SRV" "$OVT_DIR/random.bin" \
        "$OVT_DIR/recv.bin" $((port += 1))
    ovt_log "$name: checksums match; on the client's wire: text up $up_text bytes, text down" \
        "$down_text bytes (of $size)"
    # The client compresses its uploads (allow-compression yes on its side): they only arrive
    # intact if the server decompressed them, and they take far fewer bytes than the text.
    [ "$up_text" -lt $((size / 2)) ] ||
        fail "$name: the client's compressible upload took $up_text bytes on the wire"
    if [ "$allow" = yes ]; then
        [ "$down_text" -lt $((size / 2)) ] ||
            fail "$name: allow-compression yes, yet the download took $down_text bytes"
    else
        [ "$down_text" -gt "$size" ] ||
            fail "$name: allow-compression asym, yet the download took only $down_text bytes"
    fi
    client_start "$OVT_DIR" 2 "$line"
    wait_tunnel 2
    assert_ping "$(client_ns 2)" "$cip" 10 0.02 0 "$name: client 2 -> client 1, ping -s 1000" \
        -s 1000
    assert_ping "$cns" "${CLIENT_TUN_IP[2]}" 10 0.02 0 "$name: client 1 -> client 2, ping -s 1000" \
        -s 1000
    client_stop 2
    if [ "$name" = lz4-v2-yes ]; then
        # A client without compression in its profile, beside the compressing one: 2.6 frames
        # and compresses towards it all the same (its 1000-byte pings then arrive as LZ4 the
        # client cannot read); ovpnd gives it no framing.
        client_start "$OVT_DIR" 3
        wait_tunnel 3
        if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
            assert_ping "$(client_ns 3)" "$OVT_SERVER_TUN_IP" 10 0.02 0 \
                "$name: client without compression, ping -s 1000" -s 1000
            assert_ping "$(client_ns 3)" "$cip" 10 0.02 0 \
                "$name: client without compression -> client 1, ping -s 1000" -s 1000
        fi
        assert_ping "$(client_ns 3)" "$OVT_SERVER_TUN_IP" 10 0.02 0 \
            "$name: client without compression, ping -s 56"
        client_stop 3
    fi
    server_alive || fail "$name: the server died"
    client_stop 1
    server_stop
    if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
        # The workers' counters at the stop: what was decompressed and compressed, and nothing
        # dropped for bad framing or data.
        local dec comp bad
        dec=$(worker_sum 'compression: decompressed \([0-9]*\),')
        comp=$(worker_sum 'compression: decompressed [0-9]*, compressed \([0-9]*\),')
        bad=$(worker_sum 'dropped bad framing or compressed data \([0-9]*\)')
        ovt_log "$name: server decompressed $dec, compressed $comp, bad $bad"
        [ "$dec" -gt $((size / 2048)) ] || fail "$name: the server decompressed only $dec packets"
        [ "$bad" -eq 0 ] || fail "$name: the server dropped $bad packets as badly framed"
        if [ "$allow" = yes ]; then
            [ "$comp" -gt $((size / 2048)) ] || fail "$name: the server compressed only $comp packets"
        else
            [ "$comp" -eq 0 ] || fail "$name: allow-compression asym, yet $comp compressed"
        fi
    fi
}

run_case lz4-v2-asym "compress lz4-v2" asym
run_case lz4-v2-yes "compress lz4-v2" yes
run_case lz4-asym "compress lz4" asym
run_case lz4-yes "compress lz4" yes
run_case lzo-asym "comp-lzo yes" asym
run_case lzo-yes "comp-lzo yes" yes
