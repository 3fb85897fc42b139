"""Count the control packets of a capture that the tls-crypt static key file opens, per key_id
class: prints 'K0_TOTAL K0_OPEN KN_TOTAL KN_OPEN' (KN: key_id > 0). With dyn-tls-crypt the
renegotiations' packets (key_id > 0) must not open with the file's key.
Usage: tls_crypt_check.py PCAP KEYFILE SERVER_PORT LIB_DIR"""
import hashlib
import hmac
import sys

sys.path.insert(0, sys.argv[4])
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes  # noqa: E402
from pcap_udp import udp_datagrams  # noqa: E402


def read_key(path):
    hexes = []
    inside = False
    for line in open(path):
        line = line.strip()
        if line.startswith("-----BEGIN"):
            inside = True
        elif line.startswith("-----END"):
            inside = False
        elif inside:
            hexes.append(line)
    return bytes.fromhex("".join(hexes))


def opens(pkt, cipher_key, hmac_key):
    """tls-crypt: 17-byte header in clear, HMAC-SHA256 tag over header + plaintext, the rest
    AES-256-CTR with the tag's first 16 bytes as IV."""
    if len(pkt) < 17 + 32:
        return False
    head, tag, ct = pkt[:17], pkt[17:49], pkt[49:]
    dec = Cipher(algorithms.AES(cipher_key), modes.CTR(tag[:16])).decryptor()
    plain = dec.update(ct) + dec.finalize()
    return hmac.compare_digest(hmac.new(hmac_key, head + plain, hashlib.sha256).digest(), tag)


key = read_key(sys.argv[2])
port = int(sys.argv[3])
# key direction as a tls-crypt server: it sends with the first 128 bytes, the client the second.
srv = (key[0:32], key[64:96])
cli = (key[128:160], key[192:224])
counts = [0, 0, 0, 0]
for sport, dport, payload in udp_datagrams(sys.argv[1]):
    if not payload or payload[0] >> 3 in (6, 9):  # data packets
        continue
    k = srv if sport == port else cli
    i = 0 if payload[0] & 7 == 0 else 2
    counts[i] += 1
    counts[i + 1] += opens(payload, *k)
print(*counts)
