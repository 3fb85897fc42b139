#!/usr/bin/env bash
# The scripts around the TUN device (openvpn 2.6 init.c run_up_down, do_route): `up` and
# `route-up` at start-up once the device has its address and routes, `route-pre-down` at the
# end before the routes go (and before down-pre), `down` at the end, after
# the device is closed (before it with `down-pre`), as the user the server runs as then. Each
# gets 2.6's arguments (up/down: DEV TUN_MTU 0 LOCAL NETMASK init; route-up none) and
# variables (script_type, dev, tun_mtu, ifconfig_local, script_context; down also signal).
# (Debian's down-root plugin: test_down_root.sh.)
# Runs against OVPN_SERVER_IMPL=openvpn as well; the recorded lines must be the same.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init updown

netns_setup 1
pki_make "$OVT_DIR"
cat >"$OVT_DIR/rec.sh" <<'SH'
#!/bin/sh
# the device's state too: up and route-up see it configured, down (without down-pre) gone
if ip link show "$dev" >/dev/null 2>&1; then state=present; else state=absent; fi
echo "$script_type args=[$*] dev=$dev tun_mtu=$tun_mtu ifconfig_local=$ifconfig_local context=$script_context signal=${signal:-} uid=$(id -u) device=$state" >>"${0%/*}/rec.log"
SH
chmod 755 "$OVT_DIR/rec.sh"

for mode in plain down-pre; do
    : >"$OVT_DIR/rec.log"
    extra=()
    [ "$mode" = down-pre ] && extra=("down-pre")
    server_conf_write "$OVT_DIR" "script-security 2" "up $OVT_DIR/rec.sh" \
        "route-up $OVT_DIR/rec.sh" "down $OVT_DIR/rec.sh" "route 198.19.64.0 255.255.255.0" \
        "route-pre-down $OVT_DIR/rec.sh" \
        "${extra[@]}"
    server_start "$OVT_DIR"
    client_start "$OVT_DIR" 1
    wait_tunnel 1
    assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 3 0.1 0 "with up/route-up scripts ($mode)"
    client_stop 1
    server_stop
    dev=$(sed -n 's/^up .* dev=\([^ ]*\) .*/\1/p' "$OVT_DIR/rec.log")
    down_state=absent
    [ "$mode" = down-pre ] && down_state=present
    expected="up args=[$dev 1500 0 198.19.0.1 255.255.255.0 init] dev=$dev tun_mtu=1500 ifconfig_local=198.19.0.1 context=init signal= uid=0 device=present
route-up args=[] dev=$dev tun_mtu=1500 ifconfig_local=198.19.0.1 context=init signal= uid=0 device=present
route-pre-down args=[$dev 1500 0 198.19.0.1 255.255.255.0 init] dev=$dev tun_mtu=1500 ifconfig_local=198.19.0.1 context=init signal=sigterm uid=0 device=present
down args=[$dev 1500 0 198.19.0.1 255.255.255.0 init] dev=$dev tun_mtu=1500 ifconfig_local=198.19.0.1 context=init signal=sigterm uid=0 device=$down_state"
    got=$(cat "$OVT_DIR/rec.log")
    [ "$got" = "$expected" ] || fail "$mode: the scripts recorded
$got
expected
$expected"
    ovt_log "$mode: up, route-up and down ran with 2.6's arguments and variables"
done

