#!/usr/bin/env bash
# Session limits of openvpn 2.6 (options.c, forward.c): `inactive N [BYTES]`, `session-timeout N`
# and `max-routes-per-client N`, in the server config and in client-config-dir files.
#  - run 1, `inactive 4`: client1 sends nothing but keepalive pings and leaves the status file
#    within a few seconds; client2's ccd file says `inactive 0` and it stays; client3's says
#    `inactive 3 1000000` and it is dropped although it pings (too few bytes); client3's ccd
#    also has `max-routes-per-client 2` with two iroutes: the second is not routed (the quota
#    is logged).
#  - run 2, `session-timeout 5`: client1, pinging all the time, is dropped after its 5 s;
#    client2's ccd `session-timeout 0` keeps it.
# The clients are not told (as 2.6, which closes the client instance silently). Runs against
# OVPN_SERVER_IMPL=openvpn as well.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init session-limits

netns_setup 3
pki_make "$OVT_DIR"
CCD=$OVT_DIR/ccd
mkdir -p "$CCD"
in_status() { grep -q "^client$1," "$OVT_DIR/status.log"; }
not_in_status() { ! in_status "$1"; }

ovt_log "--- run 1: inactive"
printf 'inactive 0\n' >"$CCD/client2"
printf 'inactive 3 1000000\nmax-routes-per-client 2\niroute 198.19.64.0 255.255.255.0\niroute 198.19.65.0 255.255.255.0\n' \
    >"$CCD/client3"
server_conf_write "$OVT_DIR" "client-config-dir $CCD" "inactive 4" \
    "route 198.19.64.0 255.255.254.0"
server_start "$OVT_DIR"
for i in 1 2 3; do client_start "$OVT_DIR" "$i"; done
for i in 1 2 3; do wait_tunnel "$i"; done
for i in 1 2 3; do wait_for 10 in_status "$i" || fail "client$i is not in the status file"; done
ping_pid=
ovt_spawn "$(client_ns 3)" "$OVT_DIR/ping3.log" ping -n -i 0.2 -W 1 "$OVT_SERVER_TUN_IP"
ping_pid=$OVT_LAST_PID
wait_for 20 not_in_status 1 || fail "client1 (idle) was not dropped by inactive 4"
ovt_log "idle client1 dropped by inactive 4"
wait_for 20 not_in_status 3 || fail "client3 (pinging, fewer bytes than its ccd minimum) was not dropped"
ovt_log "client3 dropped by its ccd 'inactive 3 1000000' although it pinged"
kill "$ping_pid" 2>/dev/null || true
in_status 2 || fail "client2 (ccd inactive 0) was dropped"
ovt_log "client2 (ccd inactive 0) stays"
if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then
    server_log_grep 'route quota \(2\) exceeded .*iroute 198\.19\.65\.0/24' ||
        fail "no route quota line for client3's second iroute"
else
    server_log_grep 'route quota \(2\) exceeded' || fail "no route quota line for client3"
fi
ovt_log "client3's second iroute was over its max-routes-per-client 2"
for i in 1 2 3; do client_stop "$i"; done
server_stop

ovt_log "--- run 2: session-timeout"
rm -f "$CCD"/*
printf 'session-timeout 0\n' >"$CCD/client2"
server_conf_write "$OVT_DIR" "client-config-dir $CCD" "session-timeout 5"
rm -f "$OVT_DIR/status.log" # (run 1's rows must not answer for run 2)
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1
client_start "$OVT_DIR" 2
wait_tunnel 1
wait_tunnel 2
wait_for 10 in_status 1 || fail "client1 is not in the status file"
wait_for 10 in_status 2 || fail "client2 is not in the status file"
t0=$SECONDS
ovt_spawn "$(client_ns 1)" "$OVT_DIR/ping1.log" ping -n -i 0.2 -W 1 "$OVT_SERVER_TUN_IP"
wait_for 20 not_in_status 1 || fail "client1 was not dropped by session-timeout 5"
ovt_log "client1 dropped by session-timeout 5 (after about $((SECONDS - t0)) s of pinging)"
in_status 2 || fail "client2 (ccd session-timeout 0) was dropped"
ovt_log "client2 (ccd session-timeout 0) stays"
client_stop 1
client_stop 2
server_stop
