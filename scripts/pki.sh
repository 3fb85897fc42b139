#!/usr/bin/env bash
# Make a throwaway PKI for tests and demos, with openssl and the openvpn binary only.
#
# usage: scripts/pki.sh [--rsa] [--clients N] [--odd-names] DIR
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
# and with --odd-names (needs python3 too) client certificates whose CNs a server must not
# write or compare raw:
#   nl.crt nl.key               CN "nl<TAB>line<LF>client2,198.19.0.9," (control characters)
#   quote.crt quote.key         CN '"quoted" first' (a double quote at the start)
#   nul.crt nul.key             CN "client1<NUL>evil" (an embedded NUL byte: `openssl req -subj`
#                               cannot write one, so the DER is edited and signed again)
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
odd_names=0
while [ $# -gt 0 ]; do
    case "$1" in
    --rsa) key_type=rsa ;;
    --odd-names) odd_names=1 ;;
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

tools="openssl openvpn"
[ "$odd_names" = 0 ] || tools="$tools python3"
for tool in $tools; do
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

# resign_with_nul NAME CN: the '#' of CN (NAME.crt's subject CN) becomes a NUL byte and the CA
# signs the edited TBSCertificate again; the length stays, only the signature changes.
resign_with_nul() {
    openssl x509 -in "$1.crt" -outform DER -out "$1.der"
    python3 - "$1.der" ca.key "$2" <<'PY'
import subprocess
import sys


def header(d, i):  # (header length, content length) of the DER element at d[i]
    n = d[i + 1]
    if n < 0x80:
        return 2, n
    k = n & 0x7F
    return 2 + k, int.from_bytes(d[i + 2:i + 2 + k], "big")


def element(tag, body):
    n = len(body)
    if n < 0x80:
        return bytes([tag, n]) + body
    b = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(b)]) + b + body


path, ca_key, cn = sys.argv[1], sys.argv[2], sys.argv[3].encode()
cert = open(path, "rb").read()
# Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signatureValue BIT STRING }
i, _ = header(cert, 0)
h, n = header(cert, i)
tbs = cert[i:i + h + n]
h2, n2 = header(cert, i + h + n)
alg = cert[i + h + n:i + h + n + h2 + n2]
if tbs.count(cn) != 1 or cn.count(b"#") != 1:
    sys.exit("resign_with_nul: the CN must occur once in the certificate and hold one '#'")
tbs = tbs.replace(cn, cn.replace(b"#", b"\0"))
sig = subprocess.run(["openssl", "dgst", "-sha256", "-sign", ca_key], input=tbs,
                     stdout=subprocess.PIPE, check=True).stdout
with open(path, "wb") as f:
    f.write(element(0x30, tbs + alg + element(0x03, b"\0" + sig)))
PY
    openssl x509 -inform DER -in "$1.der" -out "$1.crt"
    rm -f "$1.der"
    openssl verify -CAfile ca.crt "$1.crt" >/dev/null
}

if [ "$odd_names" = 1 ]; then
    issue nl client $'nl\tline\nclient2,198.19.0.9,'
    issue quote client '"quoted" first'
    issue nul client 'client1#evil'
    resign_with_nul nul 'client1#evil'
fi

: >index.txt
echo 01 >crlnumber
gencrl
openvpn --genkey tls-crypt ta.key >/dev/null
openvpn --genkey tls-auth tls-auth.key >/dev/null
rm -f ext.cnf ca.srl
chmod 600 ./*.key
chmod 644 ./*.crt odd.cn
