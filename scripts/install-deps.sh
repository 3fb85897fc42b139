#!/usr/bin/env bash
# Install what building and testing ovpnd needs, from Debian's apt repositories only.
# Idempotent: prints nothing and changes nothing when everything is already installed.
set -euo pipefail

pkgs=(
    # build
    build-essential cmake pkg-config
    libmbedtls-dev libuv1-dev libbpf-dev liblz4-dev liblzo2-dev uthash-dev libpam0g-dev libssl-dev
    libmicrohttpd-dev libsystemd-dev # the metrics endpoint, sd_notify
    libpkcs11-helper1-dev # pkcs11-providers: the server key on a PKCS#11 token
    libcrypt-dev # the sanitizer build preloads it (see CMakeLists.txt)
    # unit tests and formatting
    libcmocka-dev clang-format-16
    # integration tests, demo, benchmarks: the stock client, PKI, namespaces, traffic
    openvpn openssl iproute2 iputils-ping iperf3 python3 tcpdump util-linux procps coreutils
    python3-cryptography # forge_v2.py, tls_crypt_check.py: tls-crypt packets made and opened by hand
    passwd libpam-modules # the PAM tests make a user and a PAM service (pam_unix, pam_exec)
    easy-rsa # docs/pki.md and tests/netns/test_easyrsa.sh
    softhsm2 opensc # tests/netns/test_pkcs11.sh: a software token, and pkcs11-tool to put a certificate on it
    # packaging: the man page ovpnd(8) (docs/ovpnd.8.scd) and `cpack -G DEB`
    scdoc dpkg-dev
    # test_metrics: a real Prometheus scrapes ovpnd and promtool checks the text (on a machine
    # run by systemd the package also enables Debian's prometheus.service); systemd-analyze
    # verifies contrib/ovpnd@.service
    prometheus curl systemd
)

installed=" $(dpkg-query -W -f='${Package}=${db:Status-Status} ' "${pkgs[@]}" 2>/dev/null || true) "
missing=()
for p in "${pkgs[@]}"; do
    case "$installed" in
    *" $p=installed "*) ;;
    *) missing+=("$p") ;;
    esac
done
[ "${#missing[@]}" -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
sudo=()
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null; then
        sudo=(sudo)
    else
        echo "install-deps: not root and no sudo; install these as root: ${missing[*]}" >&2
        exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends -o Dpkg::Use-Pty=0 "${missing[@]}" >/dev/null
