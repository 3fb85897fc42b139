#!/usr/bin/env bash
# The scripts around the TUN device (openvpn 2.6 init.c run_up_down, do_route): `up` and
# `route-up` at start-up once the device has its address and routes, `route-pre-down` at the
# end before the routes go (and before down-pre), `down` at the end, after
# the device is closed (before it with `down-pre`), as the user the server runs as then. Each
# gets 2.6's arguments (up/down: DEV TUN_MTU 0 LOCAL NETMASK init; route-up none) and
# variables (script_type, dev, tun_mtu, ifconfig_local, script_context; down also signal).
# With ifconfig-noexec the server leaves the device to the up script and adds the routes after
# it. (Debian's down-root plugin: test_down_root.sh.)
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

# ifconfig-noexec (2.6 init.c do_open_tun): the server gives the device no address, MTU or link
# state; the up script gets the addresses (arguments, ifconfig_*) and configures the device
# itself; the routes are added after it, before route-up.
cat >"$OVT_DIR/noexec_up.sh" <<'SH'
#!/bin/sh
n=$(ip -4 -o addr show dev "$1" | wc -l)
echo "up args=[$*] ifconfig_local=$ifconfig_local ifconfig_netmask=$ifconfig_netmask inet=$n" >>"${0%/*}/noexec.log"
ip addr add "$4/24" dev "$1" && ip link set dev "$1" mtu "$2" up
SH
cat >"$OVT_DIR/noexec_rt.sh" <<'SH'
#!/bin/sh
echo "route-up route=$(ip -4 route show 198.19.64.0/24 | wc -l)" >>"${0%/*}/noexec.log"
SH
chmod 755 "$OVT_DIR/noexec_up.sh" "$OVT_DIR/noexec_rt.sh"
: >"$OVT_DIR/noexec.log"
server_conf_write "$OVT_DIR" "script-security 2" "ifconfig-noexec" "up $OVT_DIR/noexec_up.sh" \
    "route-up $OVT_DIR/noexec_rt.sh" "route 198.19.64.0 255.255.255.0"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1
wait_tunnel 1
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 3 0.1 0 "ifconfig-noexec, the up script configured the device"
client_stop 1
server_stop
dev=$(sed -n 's/^up args=\[\([^ ]*\) .*/\1/p' "$OVT_DIR/noexec.log")
expected="up args=[$dev 1500 0 198.19.0.1 255.255.255.0 init] ifconfig_local=198.19.0.1 ifconfig_netmask=255.255.255.0 inet=0
route-up route=1"
got=$(cat "$OVT_DIR/noexec.log")
[ "$got" = "$expected" ] || fail "ifconfig-noexec: the scripts recorded
$got
expected
$expected"
ovt_log "ifconfig-noexec: the device was left to the up script, the route added after it"

