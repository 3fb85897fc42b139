#!/usr/bin/env bash
# The same client connects 10 times in a row (stop, start): every time the tunnel comes up,
# carries pings, and the client's tun device gets the same MTU.
# ovt: optimised build only: ten reconnects of the same client
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init reconnect_mtu

rounds=10
netns_setup 1
pki_make "$OVT_DIR"
server_conf_write "$OVT_DIR"
server_start "$OVT_DIR"
cns=$(client_ns 1)

first_mtu=
for round in $(seq 1 "$rounds"); do
    client_start "$OVT_DIR" 1
    wait_tunnel 1
    dev=$(client_tun_dev 1)
    mtu=$(ip -n "$cns" -o link show dev "$dev" | sed -n 's/.* mtu \([0-9]*\) .*/\1/p')
    [ -n "$mtu" ] || fail "round $round: cannot read the MTU of $dev"
    if [ -z "$first_mtu" ]; then
        first_mtu=$mtu
        # openvpn's default tun-mtu is 1500; anything far off would break real traffic
        [ "$mtu" -ge 1200 ] && [ "$mtu" -le 1500 ] || fail "tun MTU $mtu is outside 1200..1500"
    elif [ "$mtu" != "$first_mtu" ]; then
        fail "round $round: tun MTU $mtu differs from the first connection's $first_mtu"
    fi
    # A full-size packet must fit the tunnel too: 1500-byte MTU minus 28 bytes of IP+ICMP.
    assert_ping "$cns" "$OVT_SERVER_TUN_IP" 5 0.05 0 "round $round (tun mtu $mtu)"
    ovt_run 10 "$cns" ping -n -q -c 2 -i 0.1 -W 2 -M "do" -s $((mtu - 28)) "$OVT_SERVER_TUN_IP" \
        >/dev/null || fail "round $round: a ping of MTU size ($mtu bytes, DF) did not go through"
    client_stop 1
    server_alive || fail "round $round: server died"
done
ovt_log "$rounds connections, tun MTU $first_mtu every time"
