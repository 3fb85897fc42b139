#!/usr/bin/env bash
# `--genkey --secret FILE`, the old syntax many guides still use (openvpn 2.6 accepts it with a
# deprecation warning), with the server program (OVPN_SERVER_IMPL):
#  - `--genkey --secret FILE` and `--secret FILE --genkey` exit 0, warn that the syntax is
#    deprecated, and write a static key (mode 0600) in the format `--genkey secret FILE`
#    writes: same header, footer and comment lines, 16 lines of 32 hex digits, new random
#    bytes each time;
#  - openvpn 2.6 takes the file as a static key (`openvpn --test-crypto --secret FILE`);
#  - `--genkey secret --secret FILE` writes the key too; a file given to both, or another key
#    type with --secret, is refused and nothing is written.
# No network: the namespaces of lib.sh are not used.
set -euo pipefail
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"
ovt_init genkey_secret

if [ "$OVPN_SERVER_IMPL" = ovpnd ]; then gen=$OVPND; else gen=openvpn; fi
d=$OVT_DIR
shape() { # the file with each line of 32 hex digits replaced by HEX
    sed 's/^[0-9a-f]\{32\}$/HEX/' "$1"
}

"$gen" --genkey secret "$d/new.key" >"$d/new.out" 2>&1 || fail "--genkey secret FILE failed: $(cat "$d/new.out")"
[ "$(grep -c '^[0-9a-f]\{32\}$' "$d/new.key")" = 16 ] || fail "--genkey secret wrote no 16 lines of hex"

n=0
for args in "--genkey --secret $d/old1.key" "--secret $d/old2.key --genkey" \
    "--genkey secret --secret $d/old3.key"; do
    n=$((n + 1))
    key=$d/old$n.key
    # shellcheck disable=SC2086 # (the words are meant to split)
    "$gen" $args >"$d/old$n.out" 2>&1 || fail "'$args' failed: $(cat "$d/old$n.out")"
    [ -f "$key" ] || fail "'$args' wrote no $key"
    [ "$(shape "$key")" = "$(shape "$d/new.key")" ] ||
        fail "'$args' wrote a file not shaped as --genkey secret's: $(cat "$key")"
    [ "$(stat -c %a "$key")" = 600 ] || fail "'$args': mode $(stat -c %a "$key"), not 600"
    cmp -s "$key" "$d/new.key" && fail "'$args' wrote the same bytes as another key"
    ovt_log "'$args': static key written, 16 hex lines"
done
grep -qi "deprecated" "$d/old1.out" ||
    fail "--genkey --secret does not warn that the syntax is deprecated: $(cat "$d/old1.out")"
ovt_log "warning: $(grep -i deprecated "$d/old1.out" | head -n 1)"
openvpn --test-crypto --secret "$d/old1.key" --cipher AES-256-CBC --verb 0 >"$d/crypto.out" 2>&1 ||
    fail "openvpn 2.6 does not take the key as a static key: $(cat "$d/crypto.out")"

if "$gen" --genkey secret "$d/both.key" --secret "$d/both2.key" >"$d/both.out" 2>&1; then
    fail "a file given to both --genkey and --secret was accepted"
fi
if "$gen" --genkey tls-crypt-v2-server --secret "$d/v2.key" >"$d/v2.out" 2>&1; then
    fail "--genkey tls-crypt-v2-server --secret FILE was accepted"
fi
for f in both.key both2.key v2.key; do
    [ -e "$d/$f" ] && fail "a refused command wrote $f"
done
ovt_log "PASS"
