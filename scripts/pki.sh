#!/usr/bin/env bash
# Make a throwaway PKI for tests and demos, with openssl and the openvpn binary only.
#
# usage: scripts/pki.sh [--rsa] [--clients N] DIR
#        scripts/pki.sh --revoke NAME DIR     revoke DIR/NAME.crt and rewrite DIR/crl.pem
#
# DIR gets:
#   ca.crt ca.key               self-signed CA (CN "ovpnd test CA <random>")
#   server.crt server.key       CN "server", extendedKeyUsage serverAuth
#   client1.crt .. clientN.crt  CN "client1".."clientN" (+ .key), extendedKeyUsage clientAuth
#   odd.crt odd.key             client cert whose CN holds a comma and a double quote
#   ta.key                      `openvpn --genkey tls-crypt` key
#   tls-auth.key                `openvpn --genkey tls-auth` key
#   odd.cn                      the exact CN of odd.crt, one line
#   crl.pem                     the CA's CRL (`crl-verify`), empty until --revoke adds to it
#
# Keys are EC P-256 unless --rsa (RSA 2048). N defaults to 4. Nothing here is secret or lasting:
# the keys are for tests only. Running it twice on different DIRs gives two unrelated CAs.
set -euo pipefail

usage() {
    echo "usage: $0 [--rsa] [--clients N] DIR | --revoke NAME DIR" >&2
    exit 2
}

key_type=ec
n_clients=4
dir=
revoke=
while [ $# -gt 0 ]; do
    case "$1" in
    --rsa) key_type=rsa ;;
    --clients)
        [ $# -ge 2 ] || usage
        n_clients=$2
        shift
        ;;
    --revoke)
        [ $# -ge 2 ] || usage
        revoke=$2
        shift
        ;;
    -h | --help) usage ;;
    -*) usage ;;
    *)
        [ -z "$dir" ] || usage
        dir=$1
        ;;
    esac
    shift
done
[ -n "$dir" ] || usage
case "$n_clients" in
'' | *[!0-9]*) usage ;;
esac

for tool in openssl openvpn; do
    command -v "$tool" >/dev/null || {
        echo "$0: $tool not found (run scripts/install-deps.sh)" >&2
        exit 1
    }
done

# The CA's database for `openssl ca`, which makes the CRL.
write_ca_cnf() {
    printf '%s\n' '[ca]' 'default_ca = testca' '[testca]' 'database = index.txt' \
        'crlnumber = crlnumber' 'default_md = sha256' 'default_crl_days = 30' >ca.cnf
}
gencrl() {
    write_ca_cnf
    openssl ca -batch -config ca.cnf -keyfile ca.key -cert ca.crt -gencrl -out crl.pem 2>/dev/null
    rm -f ca.cnf index.txt.old crlnumber.old
    chmod 644 crl.pem
}

if [ -n "$revoke" ]; then
    cd "$dir"
    [ -f "$revoke.crt" ] || {
        echo "$0: no $dir/$revoke.crt to revoke" >&2
        exit 1
    }
    write_ca_cnf
    openssl ca -batch -config ca.cnf -keyfile ca.key -cert ca.crt -revoke "$revoke.crt" 2>/dev/null
    gencrl
    exit 0
fi

mkdir -p "$dir"
cd "$dir"
umask 077

newkey() { # newkey FILE
    if [ "$key_type" = rsa ]; then
        openssl genpkey -quiet -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$1"
    else
        openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"
    fi
}

cat >ext.cnf <<'EOF'
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash

[server]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment, keyAgreement
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid

[client]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment, keyAgreement
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
EOF

# A random tag in the CA name keeps two CAs made by this script distinguishable.
tag=$(openssl rand -hex 4)
newkey ca.key
openssl req -new -x509 -sha256 -days 30 -key ca.key -out ca.crt \
    -subj "/CN=ovpnd test CA $tag" -extensions ca -config ext.cnf

serial=1
issue() { # issue NAME SECTION CN
    local name=$1 section=$2 cn=$3
    newkey "$name.key"
    openssl req -new -sha256 -key "$name.key" -out "$name.csr" -subj "/CN=$cn"
    openssl x509 -req -sha256 -days 30 -in "$name.csr" -CA ca.crt -CAkey ca.key \
        -set_serial "$serial" -extfile ext.cnf -extensions "$section" -out "$name.crt" 2>/dev/null
    serial=$((serial + 1))
    rm -f "$name.csr"
}

issue server server server
for i in $(seq 1 "$n_clients"); do
    issue "client$i" client "client$i"
done
# A CN with a comma and a double quote: it must stay one field in CSV status output.
# In -subj only '/' and '\' are special, so the comma and quote go in as they are.
odd_cn='odd, "quoted" client'
issue odd client "$odd_cn"
printf '%s\n' "$odd_cn" >odd.cn

: >index.txt
echo 01 >crlnumber
gencrl
openvpn --genkey tls-crypt ta.key >/dev/null
openvpn --genkey tls-auth tls-auth.key >/dev/null
rm -f ext.cnf ca.srl
chmod 600 ./*.key
chmod 644 ./*.crt odd.cn
