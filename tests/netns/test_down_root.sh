#!/usr/bin/env bash
# Debian's openvpn-plugin-down-root.so with `user nobody`: the plugin forks its helper at the UP
# event, before privileges are dropped, and at DOWN that helper runs the down command as root;
# the plain `down` script runs as nobody. Runs against OVPN_SERVER_IMPL=openvpn as well.
# ovt: optimised build only: the plugin forks a copy of the server that never execs, and LeakSanitizer reports that copy's whole heap when it exits
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init down-root

netns_setup 1
pki_make "$OVT_DIR"
cat >"$OVT_DIR/rec.sh" <<'SH'
#!/bin/sh
echo "$script_type args=[$*] dev=$dev uid=$(id -u)" >>"${0%/*}/rec.log"
SH
chmod 755 "$OVT_DIR/rec.sh"
DOWN_ROOT=/usr/lib/x86_64-linux-gnu/openvpn/plugins/openvpn-plugin-down-root.so
[ -f "$DOWN_ROOT" ] || fail "no $DOWN_ROOT (Debian's openvpn package)"
: >"$OVT_DIR/rec.log"
chmod 0755 "$OVT_DIR"       # (the work directory is root's: nobody runs the plain down script)
chmod 0666 "$OVT_DIR/rec.log"
# (openvpn 2.6 reads ta.key again for each client, after it became nobody)
chmod 0755 "$OVT_DIR/pki"
chmod 0644 "$OVT_DIR/pki/ta.key"
server_conf_write "$OVT_DIR" "script-security 2" "user nobody" "group nogroup" \
    "plugin $DOWN_ROOT $OVT_DIR/rec.sh" "down $OVT_DIR/rec.sh"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1
wait_tunnel 1
client_stop 1
server_stop
nobody=$(id -u nobody)
grep -q "^down args=\[.* init\] dev=[^ ]* uid=$nobody$" "$OVT_DIR/rec.log" ||
    fail "the down script did not run as nobody: $(cat "$OVT_DIR/rec.log")"
# (down-root runs its command without arguments, with the variables of the UP event)
grep -q "^ args=\[\] dev=[^ ]* uid=0$" "$OVT_DIR/rec.log" ||
    fail "down-root did not run its script as root: $(cat "$OVT_DIR/rec.log")"
ovt_log "down-root ran its script as root after privileges were dropped; down ran as nobody"
