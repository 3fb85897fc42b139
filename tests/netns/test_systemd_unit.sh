#!/usr/bin/env bash
# contrib/ovpnd@.service as the build renders it for installation: `systemd-analyze verify`
# passes on it; ExecStart is the ovpnd of the install prefix the build was configured with;
# Type=notify (ovpnd tells systemd READY=1, STATUS= and WATCHDOG=1: test_metrics.sh) and the
# hardening (ProtectSystem=strict with writable directories for status, ipp and log files, a
# capability bounding set, RestrictAddressFamilies, SystemCallFilter=@system-service) are there,
# and `systemd-analyze security --offline` rates it no worse than OK. Whether the server runs
# with that capability set is checked by test_metrics.sh. No server runs here; the unit is
# ovpnd's, so there is nothing to compare with openvpn 2.6 (its Debian unit is its own).
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init systemd_unit

[ "$OVPN_SERVER_IMPL" = ovpnd ] || ovt_skip "the unit under test is ovpnd's; openvpn 2.6 ships its own"
command -v systemd-analyze >/dev/null || ovt_skip "systemd-analyze not installed (run scripts/install-deps.sh)"
build=$(dirname "$OVPND")
unit=$build/contrib/ovpnd@.service
[ -f "$unit" ] || fail "no rendered unit at $unit (the build writes it from contrib/ovpnd@.service)"
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
[ -n "$prefix" ] || fail "no CMAKE_INSTALL_PREFIX in $build/CMakeCache.txt"

grep -q "@[A-Z_]*@" "$unit" && fail "unrendered placeholders in $unit: $(grep "@[A-Z_]*@" "$unit")"
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
case "$exec_start" in
"$prefix/sbin/ovpnd --config %i.conf") ;;
*) fail "ExecStart is '$exec_start', not the install prefix's $prefix/sbin/ovpnd" ;;
esac
for line in Type=notify NotifyAccess=main WatchdogSec= ProtectSystem=strict RuntimeDirectory=ovpnd \
    StateDirectory=ovpnd LogsDirectory=ovpnd ReadWritePaths= CapabilityBoundingSet=CAP_NET_ADMIN \
    RestrictAddressFamilies= SystemCallFilter=@system-service NoNewPrivileges=true; do
    grep -q "^$line" "$unit" || fail "the unit has no $line line"
done

# systemd-analyze verify needs ExecStart's program to exist: the copy runs the built one (the
# only line that differs).
mkdir -p "$OVT_DIR/units"
sed "s|^ExecStart=$prefix/sbin/ovpnd |ExecStart=$OVPND |" "$unit" >"$OVT_DIR/units/ovpnd@.service"
[ "$(diff "$unit" "$OVT_DIR/units/ovpnd@.service" | grep -c '^[<>]')" = 2 ] ||
    fail "the copy for systemd-analyze differs in more than ExecStart"
# (Lines about the host's own units, which verify loads too, are not the unit's: a Debian
# package's unit may draw a deprecation warning, e.g. freeradius.service's MemoryLimit=.)
if ! systemd-analyze verify "$OVT_DIR/units/ovpnd@test.service" >"$OVT_DIR/verify.log" 2>&1 ||
    grep -v -E '^(/usr)?/lib/systemd/|^/etc/systemd/' "$OVT_DIR/verify.log" | grep -q .; then
    cat "$OVT_DIR/verify.log" >&2
    fail "systemd-analyze verify does not pass on the unit"
fi
ovt_log "systemd-analyze verify: no complaint"
if systemd-analyze security --help 2>/dev/null | grep -q -- --offline; then
    systemd-analyze security --offline=true --threshold=40 "$OVT_DIR/units/ovpnd@test.service" \
        >"$OVT_DIR/security.log" 2>&1 || {
        cat "$OVT_DIR/security.log" >&2
        fail "systemd-analyze security rates the unit above 4.0"
    }
    ovt_log "$(grep -o 'Overall exposure level.*' "$OVT_DIR/security.log")"
fi
ovt_log "PASS"
