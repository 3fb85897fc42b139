#!/usr/bin/env bash
# Hostile compressed data. A server with `compress lz4-v2` and `allow-compression yes`; a forged
# client (ovpnd-loadgen --lz4-v2-forge: "compress lz4-v2" in its options, IV_LZ4v2=1) sends 20
# LZ4-compressed echo requests a second for 10 s and, before each, one bad compressed payload in
# turn: a decompression bomb (a 250-byte block of 60000 zero bytes), a block whose match points
# before its start, a block cut short, an unknown 0x50 byte. The server drops every bad one (and
# counts it, in the workers' counters at the stop), answers the echo requests (its replies come
# back compressed, and the forged client decompresses them), and afterwards a stock client with
# `compress lz4-v2` connects and pings: the server is fine.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init compress_forged
loadgen_find

netns_setup 2
pki_make "$OVT_DIR"
pki=$OVT_DIR/pki
server_conf_write "$OVT_DIR" "compress lz4-v2" "allow-compression yes"
server_start "$OVT_DIR"

rc=0
ovt_run 60 "$(client_ns 1)" "$LOADGEN" --server "$OVT_SERVER_IP:$OVT_PORT" \
    --ca "$pki/ca.crt" --cert "$pki/client1.crt" --key "$pki/client1.key" \
    --tls-crypt "$pki/ta.key" --lz4-v2-forge --clients 1 --rate 0 --duration 10 \
    --data-rate 20 --payload 1000 --json "$OVT_DIR/lg.json" >"$OVT_DIR/loadgen.log" 2>&1 || rc=$?
cat "$OVT_DIR/loadgen.log" >&2
[ -f "$OVT_DIR/lg.json" ] || fail "the load generator wrote no report (exit $rc)"
server_alive || fail "the server died under forged compressed data"
"$OVT_PY" - "$OVT_DIR/lg.json" >"$OVT_DIR/forged.txt" <<'EOF' ||
import json, sys
r = json.load(open(sys.argv[1]))
print("forged client: %d bad compressed payloads sent, %d echo requests, %d replies, "
      "%d of them compressed" % (r["forged"], r["sent"], r["echoed"], r["decompressed"]),
      file=sys.stderr)
ok = (r["connected"] == 1 and r["forged"] >= 150 and r["sent"] >= 150
      and r["echoed"] >= r["sent"] * 0.95 and r["decompressed"] >= r["echoed"] * 0.95)
print(r["forged"])
sys.exit(0 if ok else 1)
EOF
    fail "the forged client's echo requests were not all answered, compressed"
forged=$(cat "$OVT_DIR/forged.txt")

client_start "$OVT_DIR" 2 "compress lz4-v2"
wait_tunnel 2
assert_ping "$(client_ns 2)" "$OVT_SERVER_TUN_IP" 10 0.02 0 "stock client after the forged one" \
    -s 1000
server_alive || fail "the server died"

if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    # Each bad payload was dropped and counted (openvpn 2.6 drops them too, counted nowhere).
    server_stop
    bad=$(server_log_since |
        sed -n 's/.*worker [0-9]*: packets in.*dropped bad framing or compressed data \([0-9]*\).*/\1/p' |
        awk '{ n += $1 } END { print n + 0 }')
    ovt_log "server: $bad payloads dropped as bad framing or compressed data, of $forged forged"
    [ "$bad" -eq "$forged" ] || fail "the server counted $bad bad payloads, $forged were sent"
    server_log_grep "bad compression framing, or compressed data" >/dev/null ||
        fail "the server did not log the bad payloads"
fi
