#!/usr/bin/env bash
# Server config lines openvpn 2.6 starts with, and what a stock client sees of them:
#  - tolerated lines (tls-crypt with a key direction, script-security 5, opt-verify,
#    replay-persist, providers, socket-flags TCP_NODELAY) and server-ipv6 with host bits set:
#    the server starts, the client gets 2.6's IPv6 address (counted from the address as
#    written) and pings over IPv4 and IPv6;
#  - tcp-nodelay: the client gets "socket-flags TCP_NODELAY" pushed;
#  - txqueuelen 77, nice 5, remap-usr1 SIGTERM in the same config: the server's tun device has
#    qlen 77 and every thread of the server runs at nice 5; a SIGUSR1 does not stop the server
#    (2.6 remaps only signals it raises itself: sent SIGUSR1, it restarts; ovpnd ignores it);
#  - data-ciphers AES-192-GCM on both sides: the data channel uses it and pings pass;
#  - reneg-bytes: the server renegotiates after that much traffic (the client completes more
#    TLS handshakes while a ping flood runs), without loss;
#  - remote-cert-ku / remote-cert-eku on the client certificate (scripts/pki.sh gives it key
#    usage a8 and clientAuth): matching values admit it, others refuse it;
#  - ping-exit without keepalive: an idle client is dropped after that many seconds;
#  - route-noexec with ifconfig-noexec and the net30 default (a router's generated config): the
#    server adds no route into the device, not even the pool route `server` implies for net30;
#    the up script gives the device its address, the server starts and a client connects;
#  - a route the kernel refuses (the device left down by ifconfig-noexec's up script): logged,
#    and the server starts and serves as 2.6 does;
#  - dh FILE with a tls-cipher of DHE suites only (a configuration-management default): the key
#    exchange uses the file's group (here ffdhe3072; Mbed TLS alone would use its 2048-bit one).
# Each also runs against openvpn 2.6 (OVPN_SERVER_IMPL=openvpn), which behaves the same.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init openvpn26_lines

netns_setup 1
pki_make "$OVT_DIR"
pki=$OVT_DIR/pki
ns1=$(client_ns 1)
is_ovpnd() { [ "$OVPN_SERVER_IMPL" = ovpnd ]; }

# ---- tolerated lines, server-ipv6 with host bits, tcp-nodelay ----
# tls-crypt with a direction replaces the harness's own tls-crypt line (OVT_WRAP=tls-crypt).
[ "$OVT_WRAP" = tls-crypt ] || ovt_skip "written for OVT_WRAP=tls-crypt"
server_conf_write "$OVT_DIR" "tls-crypt $pki/ta.key 0" "script-security 5" "opt-verify" \
    "replay-persist $OVT_DIR/replay.id" "providers default" "socket-flags TCP_NODELAY" \
    "tcp-nodelay" "server-ipv6 2001:2:0:19:160:98::/64" "txqueuelen 77" "nice 5" \
    "remap-usr1 SIGTERM"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1
wait_tunnel 1
push=$(grep -m1 "PUSH_REPLY" "$OVT_DIR/client1.log" || true)
grep -q "socket-flags TCP_NODELAY" <<<"$push" ||
    fail "tcp-nodelay: the client did not get 'socket-flags TCP_NODELAY' pushed: $push"
a6=$(ip -n "$ns1" -6 -o addr show dev "$(client_tun_dev 1)" scope global | awk '{print $4}')
[ "$a6" = "2001:2:0:19:160:98:0:1000/64" ] ||
    fail "server-ipv6 with host bits: the client has '$a6', not 2.6's 2001:2:0:19:160:98:0:1000/64"
assert_ping "$ns1" "$OVT_SERVER_TUN_IP" 10 0.05 0 "tolerated lines: IPv4 ping"
assert_ping "$ns1" 2001:2:0:19:160:98:0:1 10 0.05 0 "server-ipv6 with host bits: IPv6 ping"
if is_ovpnd; then
    for w in "tls-crypt: the key direction '0' is ignored" "script-security: 5 is treated as 3" \
        "opt-verify: ignored" "replay-persist: ignored" "providers: ignored" \
        "socket-flags: TCP_NODELAY only applies to TCP" "server-ipv6: .* has bits set outside"; do
        server_log_grep "$w" || fail "no warning '$w' in the server log"
    done
fi
# txqueuelen: the device the server's address is on; nice: field 19 of each thread's stat
# (counted after the ")" that ends the thread's name)
srv_dev=$(ip -n "$NS_SRV" -4 -o addr show | awk -v a="$OVT_SERVER_TUN_IP" \
    'index($4, a "/") == 1 || $4 == a {print $2; exit}')
qlen=$(ip -n "$NS_SRV" link show dev "$srv_dev" | grep -o 'qlen [0-9]*' || true)
[ "$qlen" = "qlen 77" ] || fail "txqueuelen 77: the server's device $srv_dev has '$qlen'"
spid=$(server_process_pid) || fail "no server process"
nices=$(for st in /proc/"$spid"/task/*/stat; do sed 's/.*) //' "$st" | awk '{print $17}'; done)
if [ -z "$nices" ] || grep -qvx 5 <<<"$nices"; then
    fail "nice 5: the server's threads run at nice $(tr '\n' ' ' <<<"$nices")"
fi
server_log_grep "nice 5 succeeded" || fail "nice 5: not logged as done"
ovt_log "txqueuelen 77 on $srv_dev, nice 5 on $(wc -l <<<"$nices") server thread(s)"
client_stop 1
# remap-usr1 SIGTERM: a SIGUSR1 sent to the server is not remapped (2.6 multi.c
# multi_process_signal): the server is still there, same process, after it
kill -USR1 "$spid"
if is_ovpnd; then
    usr1_re="SIGUSR1: a restart in place is not implemented; ignored"
else
    usr1_re="SIGUSR1\\[hard,\\] received, process restarting"
fi
wait_server_log "$usr1_re" 5 || fail "remap-usr1 SIGTERM: no '$usr1_re' after SIGUSR1"
sleep 0.5
kill -0 "$spid" 2>/dev/null || fail "remap-usr1 SIGTERM: SIGUSR1 ended the server"
ovt_log "remap-usr1 SIGTERM: SIGUSR1 did not stop the server ('$usr1_re')"
server_stop

# ---- AES-192-GCM ----
server_conf_write "$OVT_DIR" "data-ciphers AES-192-GCM"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1 "data-ciphers AES-192-GCM"
wait_tunnel 1
grep -q "Data Channel: cipher 'AES-192-GCM'" "$OVT_DIR/client1.log" ||
    fail "AES-192-GCM: the client's data channel is not AES-192-GCM: $(grep 'Data Channel:' "$OVT_DIR/client1.log")"
assert_ping "$ns1" "$OVT_SERVER_TUN_IP" 20 0.05 0 "AES-192-GCM: ping"
assert_ping "$ns1" "$OVT_SERVER_TUN_IP" 10 0.05 0 "AES-192-GCM: 1400-byte pings" -s 1400
client_stop 1
server_stop

# ---- reneg-bytes ----
# 200 pings of 1000 bytes are about 400 kB both ways; a 100 kB limit renegotiates several times.
server_conf_write "$OVT_DIR" "reneg-bytes 100000" "reneg-sec 0"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1 "reneg-sec 0"
wait_tunnel 1
handshakes() { grep -c "Control Channel: TLS" "$OVT_DIR/client1.log" || true; }
before=$(handshakes)
assert_ping "$ns1" "$OVT_SERVER_TUN_IP" 200 0.02 1 "reneg-bytes: pings across renegotiations" -s 1000
wait_for 10 test "$(handshakes)" -ge $((before + 2)) ||
    fail "reneg-bytes 100000: only $(($(handshakes) - before)) renegotiations after ~400 kB"
ovt_log "reneg-bytes: $(($(handshakes) - before)) renegotiations during the pings"
grep -Eq "TLS Error|SIGUSR1" "$OVT_DIR/client1.log" && fail "reneg-bytes: the client restarted"
client_stop 1
server_stop

# ---- remote-cert-ku / remote-cert-eku ----
admitted() { # admitted WHAT LINE...: the client comes up with these server lines
    local what=$1
    shift
    server_conf_write "$OVT_DIR" "$@"
    server_start "$OVT_DIR"
    client_start "$OVT_DIR" 1
    wait_tunnel 1
    ovt_log "$what: admitted"
    client_stop 1
    server_stop
}
refused() { # refused WHAT SERVER_LOG_REGEX LINE...: the server refuses the client's certificate
    local what=$1 re=$2
    shift 2
    server_conf_write "$OVT_DIR" "$@"
    server_start "$OVT_DIR"
    client_start "$OVT_DIR" 1
    wait_server_log "$re" 20 || fail "$what: the server did not refuse the client ('$re')"
    client_up 1 && fail "$what: the client came up although its certificate was refused"
    ovt_log "$what: refused"
    client_stop 1
    server_stop
}
if is_ovpnd; then
    ku_refused='remote-cert-ku: the client certificate.s key usage is 00a8'
    eku_refused="remote-cert-eku: the client certificate lacks extended key usage"
else
    ku_refused="VERIFY KU ERROR"
    eku_refused="VERIFY EKU ERROR"
fi
admitted "remote-cert-ku a0 + remote-cert-eku by name" "remote-cert-ku a0" \
    'remote-cert-eku "TLS Web Client Authentication"'
admitted "remote-cert-ku without values + remote-cert-eku by OID" "remote-cert-ku" \
    "remote-cert-eku 1.3.6.1.5.5.7.3.2"
refused "remote-cert-ku 04 (keyCertSign)" "$ku_refused" "remote-cert-ku 04"
refused "remote-cert-eku serverAuth" "$eku_refused" 'remote-cert-eku "TLS Web Server Authentication"'

# ---- route-noexec, ifconfig-noexec, net30 by default ----
# 2.6 init.c do_route adds no route at all with route-noexec, the pool route of `server` in
# net30 included; the device stays down until the up script configures it.
cat >"$OVT_DIR/net30_up.sh" <<'SH'
#!/bin/sh
ip addr add "$4" peer "$5" dev "$1" && ip link set dev "$1" mtu "$2" up
SH
chmod 755 "$OVT_DIR/net30_up.sh"
OVT_TOPOLOGY=none server_conf_write "$OVT_DIR" "script-security 2" "ifconfig-noexec" \
    "route-noexec" "up $OVT_DIR/net30_up.sh"
server_start "$OVT_DIR"
routes=$(ip -n "$NS_SRV" -4 route show 198.19.0.0/24)
[ -z "$routes" ] || fail "route-noexec: the server added the pool route: $routes"
client_start "$OVT_DIR" 1
wait_tunnel 1
ovt_log "route-noexec + ifconfig-noexec (net30): started without routes, client up"
client_stop 1
server_stop

# ---- dh FILE with DHE suites only ----
# 2.6 hands the file's parameters to the TLS library (ssl_openssl.c tls_ctx_load_dh_params); a
# client limited to TLS 1.2 and DHE reports the group's size as the peer's temporary key.
mkdir -p "$OVT_DIR/rsa"
pki_make "$OVT_DIR/rsa" --rsa --clients 1
rsa=$OVT_DIR/rsa/pki
openssl genpkey -genparam -algorithm DH -pkeyopt group:ffdhe3072 -out "$OVT_DIR/dh3072.pem" ||
    fail "openssl cannot write ffdhe3072 parameters"
server_conf_write "$OVT_DIR" "ca $rsa/ca.crt" "cert $rsa/server.crt" "key $rsa/server.key" \
    "dh $OVT_DIR/dh3072.pem" \
    "tls-cipher TLS-DHE-RSA-WITH-AES-256-GCM-SHA384:TLS-DHE-RSA-WITH-AES-128-GCM-SHA256"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1 "ca $rsa/ca.crt" "cert $rsa/client1.crt" "key $rsa/client1.key" \
    "tls-version-max 1.2" "tls-cipher DHE-RSA-AES256-GCM-SHA384:DHE-RSA-AES128-GCM-SHA256"
wait_tunnel 1
cc=$(grep -m1 "Control Channel:" "$OVT_DIR/client1.log" || true)
grep -q "peer temporary key: 3072 bits DH" <<<"$cc" ||
    fail "dh FILE: the key exchange did not use the file's 3072-bit group: $cc"
ovt_log "dh FILE: $cc"
client_stop 1
server_stop

# ---- a route the kernel refuses ----
# With ifconfig-noexec and an up script that leaves the device down, adding a route into it
# fails ("Network is down"). 2.6 logs "ERROR: Linux route add command failed" and serves on
# (route.c add_routes); so does ovpnd, naming the route.
printf '#!/bin/sh\nexit 0\n' >"$OVT_DIR/noop_up.sh"
chmod 755 "$OVT_DIR/noop_up.sh"
OVT_TOPOLOGY=none server_conf_write "$OVT_DIR" "script-security 2" "ifconfig-noexec" \
    "up $OVT_DIR/noop_up.sh" "route 198.19.7.0 255.255.255.0"
server_spawn "$OVT_DIR"
wait_server_log "Initialization Sequence Completed" 20 ||
    fail "a refused route: the server did not start"
if is_ovpnd; then
    server_log_grep "route: cannot add route 198.19.7.0/24 into .*(starting without it)" ||
        fail "a refused route: ovpnd did not name the route it could not add"
else
    server_log_grep "ERROR: Linux route add command failed" || fail "2.6 did not log the failed route"
fi
client_start "$OVT_DIR" 1
wait_for 20 grep -q "Initialization Sequence Completed" "$OVT_DIR/client1.log" ||
    fail "a refused route: the client did not connect to the server that started without it"
ovt_log "a refused route: logged, the server started and a client connected"
client_stop 1
server_stop

# ---- ping-exit ----
server_conf_write "$OVT_DIR" "ping-exit 4"
sed -i '/^keepalive /d' "$OVT_DIR/server.conf"
server_start "$OVT_DIR"
client_start "$OVT_DIR" 1
wait_tunnel 1
t0=$SECONDS
if is_ovpnd; then
    drop_re='no packet for 4 s \(ping-exit\), dropping client'
else
    drop_re='Inactivity timeout \(--ping-exit\)'
fi
wait_server_log "$drop_re" 20 || fail "ping-exit 4: the idle client was not dropped within 20 s"
[ $((SECONDS - t0)) -ge 3 ] || fail "ping-exit 4: the client was dropped after $((SECONDS - t0)) s"
ovt_log "ping-exit 4: idle client dropped after about $((SECONDS - t0)) s"
client_stop 1
server_stop
ovt_log "PASS"
