#!/usr/bin/env bash
# Show ovpnd working end to end on this machine, inside two throwaway network namespaces:
# build it, make a throwaway PKI, run it with sample-config/server.conf, connect the stock
# openvpn client, ping through the tunnel and print the server's client list.
#
# usage: sudo scripts/demo.sh [--keep] [--server ovpnd|openvpn] [--config FILE]
#   --keep     leave the server, the client and the namespaces running, and print how to get in
#              and how to tear it all down
#   --server   run Debian's openvpn on the same config instead of ovpnd (for comparison)
#   --config   another server config instead of sample-config/server.conf
#
# The config is used on a copy, with its addresses moved into the benchmarking ranges that
# stay inside the namespaces: the `server` subnet becomes 198.19.0.0/24, other addresses
# (pushed routes, DNS) become 198.19.x ones, and `status` is refreshed every 2 seconds. The
# namespaces are linked by one veth pair: server 198.18.0.1, client 198.18.0.2.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

keep=0
impl=${OVPN_SERVER_IMPL:-ovpnd}
conf_src=$repo/sample-config/server.conf
usage() {
    sed -n '6,10p' "$0" >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case "$1" in
    --keep) keep=1 ;;
    --server)
        [ $# -ge 2 ] || usage
        impl=$2
        shift
        ;;
    --config)
        [ $# -ge 2 ] || usage
        conf_src=$(realpath "$2")
        shift
        ;;
    *) usage ;;
    esac
    shift
done
case "$impl" in ovpnd | openvpn) ;; *) usage ;; esac

if [ -t 1 ]; then
    say() { printf '\033[1m==> %s\033[0m\n' "$*"; }
else
    say() { printf '==> %s\n' "$*"; }
fi
die() {
    printf 'demo: %s\n' "$*" >&2
    exit 1
}

[ "$(id -u)" = 0 ] || die "needs root for network namespaces and tun devices: sudo $0 $*"
[ -c /dev/net/tun ] || die "no /dev/net/tun on this machine"
[ -f "$conf_src" ] || die "no server config at $conf_src"

say "Checking packages"
bash scripts/install-deps.sh

ovpnd_bin=$repo/build/ovpnd
if [ "$impl" = ovpnd ]; then
    say "Building ovpnd (build/)"
    cmake -S . -B build >/dev/null
    cmake --build build -j"$(nproc)" --target ovpnd >/dev/null
fi

id=$$
ns_srv=ovpnd-demo-srv-$id
ns_cli=ovpnd-demo-cli-$id
work=$(mktemp -d /tmp/ovpnd-demo.XXXXXX)
chmod 755 "$work"
pids=()

teardown() {
    local pid
    for pid in "${pids[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for _ in $(seq 1 50); do
        local alive=0
        for pid in "${pids[@]}"; do
            kill -0 "$pid" 2>/dev/null && alive=1
        done
        [ "$alive" = 0 ] && break
        sleep 0.1
    done
    for pid in "${pids[@]}"; do
        kill -KILL "$pid" 2>/dev/null || true
    done
    ip netns del "$ns_cli" 2>/dev/null || true
    ip netns del "$ns_srv" 2>/dev/null || true
    rm -rf "$work"
}
on_exit() {
    local rc=$?
    if [ "$keep" = 1 ] && [ "$rc" = 0 ]; then
        return
    fi
    [ "$rc" = 0 ] || {
        echo "demo failed; last lines of the logs:" >&2
        tail -n 20 "$work/server/server.log" "$work/client/client.log" 2>/dev/null >&2 || true
    }
    teardown
}
trap on_exit EXIT

say "Making a throwaway PKI in $work/pki"
bash scripts/pki.sh "$work/pki" >/dev/null

say "Copying $(basename "$conf_src") with its addresses moved into 198.19.0.0/16"
mkdir -p "$work/server" "$work/client"
python3 - "$conf_src" "$work/server/server.conf" <<'EOF'
import ipaddress, re, sys

src, dst = sys.argv[1], sys.argv[2]
lines = open(src).read().split("\n")
server_net = None
for line in lines:
    m = re.match(r"\s*server\s+(\S+)\s+(\S+)", line)
    if m:
        server_net = ipaddress.ip_network("%s/%s" % m.groups(), strict=False)
pool = ipaddress.ip_network("198.19.0.0/24")
keep_nets = [ipaddress.ip_network(n) for n in ("198.18.0.0/15", "127.0.0.0/8", "0.0.0.0/32")]
other = {}  # original /24 -> 198.19.k.0/24, k = 1, 2, ...
ip_re = re.compile(r"\b(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})\b")


def mask_len(s):
    """Prefix length if s is a netmask such as 255.255.0.0, else None."""
    if not s.startswith("255."):
        return None
    try:
        return ipaddress.ip_network("0.0.0.0/" + s).prefixlen
    except ValueError:
        return None


def move(s):
    n = mask_len(s)
    if n is not None:
        # a network wider than /24 would have host bits set once moved into a 198.19.k.0/24
        return "255.255.255.0" if n < 24 else s
    ip = ipaddress.ip_address(s)
    if any(ip in n for n in keep_nets):
        return s
    if server_net is not None and ip in server_net:
        return str(pool.network_address + (int(ip) & 0xFF))
    key = int(ip) >> 8
    if key not in other:
        other[key] = len(other) + 1
    if other[key] > 254:
        raise SystemExit("too many distinct networks in the config")
    return "198.19.%d.%d" % (other[key], int(ip) & 0xFF)


out = ["# demo copy of %s: addresses moved into 198.19.0.0/16, status every 2 s" % src]
for line in lines:
    bare = line.strip()
    if not bare or bare[0] in "#;":
        out.append(line)
        continue
    word = bare.split()[0]
    if word in ("log", "log-append", "daemon", "syslog", "local"):
        out.append("# (demo) " + line)
        continue
    if word == "server":
        out.append("server 198.19.0.0 255.255.255.0")
        continue
    if word == "status":
        parts = bare.split()
        out.append("status %s 2" % parts[1])
        continue
    out.append(ip_re.sub(lambda m: move(m.group(1)), line))
open(dst, "w").write("\n".join(out))
EOF

# The PKI files go beside the config under the names it uses.
conf=$work/server/server.conf
file_of() { awk -v d="$1" '$1 == d { print $2; exit }' "$conf"; }
place() { # place DIRECTIVE SOURCE
    local name
    name=$(file_of "$1")
    [ -n "$name" ] || return 0
    case "$name" in /*) die "the config names an absolute path for $1 ($name): use a relative one" ;; esac
    cp "$2" "$work/server/$name"
}
place ca "$work/pki/ca.crt"
place cert "$work/pki/server.crt"
place key "$work/pki/server.key"
place tls-crypt "$work/pki/ta.key"
place tls-auth "$work/pki/tls-auth.key"
port=$(file_of port)
port=${port:-1194}
status_file=$(file_of status)
wrap=
grep -q '^tls-crypt ' "$conf" && wrap="tls-crypt ta.key"
grep -q '^tls-auth ' "$conf" && wrap="tls-auth ta.key 1"

say "Creating namespaces $ns_srv (198.18.0.1) and $ns_cli (198.18.0.2)"
ip netns add "$ns_srv"
ip netns add "$ns_cli"
ip -n "$ns_srv" link set lo up
ip -n "$ns_cli" link set lo up
ip -n "$ns_srv" link add eth0 type veth peer name eth0 netns "$ns_cli"
ip -n "$ns_srv" addr add 198.18.0.1/24 dev eth0
ip -n "$ns_cli" addr add 198.18.0.2/24 dev eth0
ip -n "$ns_srv" link set eth0 up
ip -n "$ns_cli" link set eth0 up

# start NS DIR LOG CMD...: background process in NS with DIR as working directory. Without
# --keep it dies with this script (parent-death signal); with --keep it is detached.
start() {
    local ns=$1 dir=$2 logf=$3
    shift 3
    if [ "$keep" = 1 ]; then
        setsid ip netns exec "$ns" sh -c 'cd "$1" && shift && exec "$@"' sh "$dir" "$@" \
            >"$logf" 2>&1 </dev/null &
    else
        setpriv --pdeathsig KILL -- ip netns exec "$ns" sh -c 'cd "$1" && shift && exec "$@"' \
            sh "$dir" "$@" >"$logf" 2>&1 </dev/null &
    fi
    pids+=("$!")
}
wait_for() { # wait_for TIMEOUT_S CMD...
    local deadline=$((SECONDS + $1))
    shift
    until "$@"; do
        [ "$SECONDS" -lt "$deadline" ] || return 1
        sleep 0.2
    done
}

say "Starting $impl with the demo config"
if [ "$impl" = ovpnd ]; then
    start "$ns_srv" "$work/server" "$work/server/server.log" "$ovpnd_bin" --config server.conf
else
    start "$ns_srv" "$work/server" "$work/server/server.log" openvpn --config server.conf
fi
srv_pid=${pids[-1]}
server_ready() {
    kill -0 "$srv_pid" 2>/dev/null || die "the server exited: $(tail -n 5 "$work/server/server.log")"
    ip -n "$ns_srv" -4 addr show | grep -q 'inet 198\.19\.0\.1/' &&
        ip netns exec "$ns_srv" ss -Hlun "sport = :$port" | grep -q .
}
wait_for 20 server_ready || die "the server did not come up within 20 s"

say "Connecting the stock openvpn client"
cp "$work/pki/ca.crt" "$work/pki/client1.crt" "$work/pki/client1.key" "$work/client/"
[ -n "$wrap" ] && cp "$work/server/$(file_of "${wrap%% *}")" "$work/client/ta.key"
cat >"$work/client/client.conf" <<EOF
client
dev tun
remote 198.18.0.1 $port udp4
nobind
remote-cert-tls server
ca ca.crt
cert client1.crt
key client1.key
${wrap}
verb 3
EOF
start "$ns_cli" "$work/client" "$work/client/client.log" openvpn --config client.conf
cli_pid=${pids[-1]}
client_up() {
    kill -0 "$cli_pid" 2>/dev/null || die "the client exited: $(tail -n 5 "$work/client/client.log")"
    grep -q "Initialization Sequence Completed" "$work/client/client.log"
}
wait_for 30 client_up || die "the tunnel did not come up within 30 s"
cli_ip=$(ip -n "$ns_cli" -4 -o addr show | awk '$4 ~ /^198\.19\./ {print $4; exit}')
echo "client tunnel address: $cli_ip"
grep -m1 'PUSH: Received control message' "$work/client/client.log" | cut -c21- || true

say "Pinging the server's tunnel address 198.19.0.1 from the client"
timeout 20 ip netns exec "$ns_cli" ping -c 5 -i 0.2 198.19.0.1

if [ -n "$status_file" ]; then
    say "The server's client list ($status_file)"
    wait_for 10 grep -q client1 "$work/server/$status_file" || echo "(client1 not listed yet)"
    cat "$work/server/$status_file" 2>/dev/null || echo "(no status file)"
fi

if [ "$keep" = 1 ]; then
    cat >"$work/teardown.sh" <<EOF
#!/bin/sh
# stop the demo started by scripts/demo.sh --keep
kill ${pids[*]} 2>/dev/null
sleep 2
kill -9 ${pids[*]} 2>/dev/null
ip netns del $ns_cli 2>/dev/null
ip netns del $ns_srv 2>/dev/null
rm -rf $work
EOF
    cat <<EOF

Demo left running (server pid ${pids[0]}, client pid ${pids[1]}).
  client shell:   sudo ip netns exec $ns_cli bash      (then: ping 198.19.0.1)
  server shell:   sudo ip netns exec $ns_srv bash
  server log:     $work/server/server.log
  client log:     $work/client/client.log
  status file:    $work/server/${status_file:-"(none)"}
  client profile: $work/client/client.conf
  tear down:      sudo sh $work/teardown.sh
EOF
else
    say "Done; cleaning up"
fi
