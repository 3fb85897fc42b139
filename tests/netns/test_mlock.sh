#!/usr/bin/env bash
# `mlock` (openvpn 2.6: mlockall so that keys and traffic are never paged out): the server's
# memory is locked (VmLck in /proc/PID/status) and a stock client connects and pings as usual.
# Runs against OVPN_SERVER_IMPL=openvpn as well, where 2.6 can raise RLIMIT_MEMLOCK (it does so
# first and stops when it may not).
# ovt: optimised build only: under ASan, mlockall would lock the sanitizer's shadow memory
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init mlock

if [ "$OVPN_SERVER_IMPL" = openvpn ] && ! prlimit --memlock=104857600 true 2>/dev/null; then
    ovt_skip "openvpn 2.6 raises RLIMIT_MEMLOCK to 100 MB before mlockall and stops when it may not (no CAP_SYS_RESOURCE here)"
fi
netns_setup 1
pki_make "$OVT_DIR"
server_conf_write "$OVT_DIR" "mlock"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1
wait_tunnel 1
assert_ping "$(client_ns 1)" "$OVT_SERVER_TUN_IP" 5 0.1 0 "with mlock"
pid=$(server_process_pid) || fail "no server process"
locked=$(awk '/^VmLck:/ { print $2 }' "/proc/$pid/status")
[ "${locked:-0}" -gt 0 ] || fail "the server's memory is not locked (VmLck ${locked:-none} kB)"
ovt_log "VmLck ${locked} kB"
client_stop 1
server_stop
