/* proto/data_crypto.c: the data channel's packets; layout notes in the header, the cipher
 * calls in proto/data_aead.c (AEAD) and proto/data_cbc.c (CBC + HMAC). */
#include "proto/data_crypto.h"

#include <string.h>
#include <strings.h>

#include <mbedtls/platform_util.h>

#include "proto/cursor.h"
#include "proto/errors.h"

/* Opcodes of the data packets (ssl_pkt.h); kept local so this module only needs its header. */
#define OP_DATA_V1 6
#define OP_DATA_V2 9
#define KEY_ID_MAX 7
#define NONCE_LEN (DATA_PACKET_ID_LEN + DATA_IMPLICIT_IV_LEN)
#define KEY2_HALF 128       /* one direction of the key block: cipher slot + HMAC slot */
#define HMAC_SLOT_OFFSET 64 /* the implicit IV lives at the start of the HMAC slot */
_Static_assert(NONCE_LEN == DATA_AEAD_NONCE_LEN, "nonce = packet_id || implicit IV");
_Static_assert(DATA_TAG_LEN == DATA_AEAD_TAG_LEN, "16-byte tags");

/* Chosen by CMake's OVPND_DATA_CRYPTO (compile definition OVPND_DATA_CRYPTO_MBEDTLS). */
#if defined(OVPND_DATA_CRYPTO_MBEDTLS) && OVPND_DATA_CRYPTO_MBEDTLS
#define DEFAULT_BACKEND DATA_AEAD_MBEDTLS
#else
#define DEFAULT_BACKEND DATA_AEAD_OPENSSL
#endif

struct cipher_info {
    enum data_cipher id;
    const char *name;  /* OpenVPN spelling */
    const char *alias; /* another spelling OpenVPN accepts through OpenSSL, or NULL */
    size_t key_len;
    bool is_cbc;
};

static const struct cipher_info ciphers[] = {
    {DATA_CIPHER_AES_128_GCM, "AES-128-GCM", "id-aes128-GCM", 16, false},
    {DATA_CIPHER_AES_192_GCM, "AES-192-GCM", "id-aes192-GCM", 24, false},
    {DATA_CIPHER_AES_256_GCM, "AES-256-GCM", "id-aes256-GCM", 32, false},
    {DATA_CIPHER_CHACHA20_POLY1305, "CHACHA20-POLY1305", NULL, 32, false},
    {DATA_CIPHER_AES_128_CBC, "AES-128-CBC", NULL, 16, true},
    {DATA_CIPHER_AES_192_CBC, "AES-192-CBC", NULL, 24, true},
    {DATA_CIPHER_AES_256_CBC, "AES-256-CBC", NULL, 32, true},
    {DATA_CIPHER_CAMELLIA_128_CBC, "CAMELLIA-128-CBC", NULL, 16, true},
    {DATA_CIPHER_CAMELLIA_192_CBC, "CAMELLIA-192-CBC", NULL, 24, true},
    {DATA_CIPHER_CAMELLIA_256_CBC, "CAMELLIA-256-CBC", NULL, 32, true},
};

static const struct cipher_info *cipher_lookup(enum data_cipher c)
{
    for (size_t i = 0; i < sizeof(ciphers) / sizeof(ciphers[0]); i++) {
        if (ciphers[i].id == c) {
            return &ciphers[i];
        }
    }
    return NULL;
}

int data_cipher_from_name(const char *name, enum data_cipher *out)
{
    if (name == NULL) {
        return -PE_UNSUPPORTED;
    }
    for (size_t i = 0; i < sizeof(ciphers) / sizeof(ciphers[0]); i++) {
        if (strcasecmp(name, ciphers[i].name) == 0 ||
            (ciphers[i].alias != NULL && strcasecmp(name, ciphers[i].alias) == 0)) {
            *out = ciphers[i].id;
            return 0;
        }
    }
    return -PE_UNSUPPORTED;
}

const char *data_cipher_name(enum data_cipher c)
{
    const struct cipher_info *ci = cipher_lookup(c);

    return ci != NULL ? ci->name : "none";
}

size_t data_cipher_key_len(enum data_cipher c)
{
    const struct cipher_info *ci = cipher_lookup(c);

    return ci != NULL ? ci->key_len : 0;
}

bool data_cipher_is_cbc(enum data_cipher c)
{
    const struct cipher_info *ci = cipher_lookup(c);

    return ci != NULL && ci->is_cbc;
}

static bool all_zero(const uint8_t *p, size_t n)
{
    uint8_t acc = 0;

    for (size_t i = 0; i < n; i++) {
        acc |= p[i];
    }
    return acc == 0;
}

enum data_aead_backend data_crypto_default_backend(void)
{
    return DEFAULT_BACKEND;
}

int data_key_init(struct data_key *k, enum data_cipher c, uint8_t key_id,
                  const uint8_t key_block[256], bool is_server, uint32_t replay_window)
{
    return data_key_init_backend(k, DEFAULT_BACKEND, c, key_id, key_block, is_server,
                                 replay_window);
}

int data_key_init_backend(struct data_key *k, enum data_aead_backend b, enum data_cipher c,
                          uint8_t key_id, const uint8_t key_block[256], bool is_server,
                          uint32_t replay_window)
{
    return data_key_init_auth(k, b, c, DATA_DIGEST_SHA1, key_id, key_block, is_server,
                              replay_window);
}

int data_key_init_auth(struct data_key *k, enum data_aead_backend b, enum data_cipher c,
                       enum data_digest d, uint8_t key_id, const uint8_t key_block[256],
                       bool is_server, uint32_t replay_window)
{
    const struct cipher_info *ci = cipher_lookup(c);
    const uint8_t *tx_half, *rx_half;
    int err;

    memset(k, 0, sizeof(*k));
    if (ci == NULL) {
        return -PE_UNSUPPORTED;
    }
    if (key_id > KEY_ID_MAX) {
        return -PE_MALFORMED;
    }
    /* key[0] = bytes 0..127 is client->server, key[1] = 128..255 server->client (5.1) */
    tx_half = is_server ? key_block + KEY2_HALF : key_block;
    rx_half = is_server ? key_block : key_block + KEY2_HALF;
    if (all_zero(tx_half, ci->key_len) || all_zero(rx_half, ci->key_len)) {
        return -PE_MALFORMED;
    }
    if (ci->is_cbc) {
        /* the HMAC key is the start of the direction's HMAC slot (5.1) */
        err = data_cbc_init(&k->cbc_enc, b, c, d, tx_half, tx_half + HMAC_SLOT_OFFSET, true);
        if (!err) {
            err = data_cbc_init(&k->cbc_dec, b, c, d, rx_half, rx_half + HMAC_SLOT_OFFSET, false);
        }
        k->digest = d;
    } else {
        err = data_aead_init(&k->enc, b, c, tx_half, true);
        if (!err) {
            err = data_aead_init(&k->dec, b, c, rx_half, false);
        }
    }
    if (err) {
        data_key_clear(k);
        return err;
    }
    memcpy(k->tx_implicit_iv, tx_half + HMAC_SLOT_OFFSET, DATA_IMPLICIT_IV_LEN);
    memcpy(k->rx_implicit_iv, rx_half + HMAC_SLOT_OFFSET, DATA_IMPLICIT_IV_LEN);
    packet_id_rx_init(&k->rx, replay_window);
    k->cipher = c;
    k->key_id = key_id;
    return 0;
}

void data_key_clear(struct data_key *k)
{
    data_aead_clear(&k->enc); /* frees and wipes the key schedules */
    data_aead_clear(&k->dec);
    data_cbc_clear(&k->cbc_enc);
    data_cbc_clear(&k->cbc_dec);
    mbedtls_platform_zeroize(k, sizeof(*k));
}

bool data_key_tx_wants_renegotiation(const struct data_key *k)
{
    return k->tx_packet_id >= DATA_TX_ID_RENEGOTIATE;
}

bool data_key_usage_limit_reached(const struct data_key *k)
{
    if (k->enc.ctx == NULL || k->cipher == DATA_CIPHER_CHACHA20_POLY1305) {
        return false;
    }
    return k->tx_blocks + k->tx_packet_id > DATA_AEAD_USAGE_LIMIT ||
           k->rx_blocks + k->rx.highest > DATA_AEAD_USAGE_LIMIT;
}

static void write_header(const struct data_key *k, bool v2, uint32_t peer_id, uint8_t *out)
{
    if (v2) {
        store_be32(out, (uint32_t)(OP_DATA_V2 << 3 | k->key_id) << 24 | peer_id);
    } else {
        out[0] = (uint8_t)(OP_DATA_V1 << 3 | k->key_id);
    }
}

/* data_key_seal() with a CBC cipher: header || HMAC || IV || CBC(packet_id || plain). */
static int cbc_seal(struct data_key *k, bool v2, uint32_t peer_id, const uint8_t *plain,
                    size_t plain_len, uint8_t *out, size_t out_cap, size_t *out_len)
{
    size_t hdr_len = v2 ? DATA_V2_HEADER_LEN : DATA_V1_HEADER_LEN, n = 0;
    int err;

    if (v2 && peer_id > DATA_PEER_ID_MAX) {
        return -PE_MALFORMED;
    }
    if (out_cap < hdr_len || plain_len > out_cap - hdr_len ||
        data_cbc_sealed_len(&k->cbc_enc, plain_len) > out_cap - hdr_len) {
        return -PE_NOSPACE;
    }
    if (k->tx_packet_id == UINT32_MAX) {
        return -PE_STATE; /* as for AEAD: short packet ids do not roll over */
    }
    k->tx_packet_id++;
    write_header(k, v2, peer_id, out);
    err = data_cbc_seal(&k->cbc_enc, k->tx_packet_id, plain, plain_len, out + hdr_len,
                        out_cap - hdr_len, &n);
    if (err) {
        return err;
    }
    *out_len = hdr_len + n;
    return 0;
}

static void make_nonce(uint8_t nonce[NONCE_LEN], const uint8_t *packet_id, const uint8_t *iv)
{
    memcpy(nonce, packet_id, DATA_PACKET_ID_LEN);
    memcpy(nonce + DATA_PACKET_ID_LEN, iv, DATA_IMPLICIT_IV_LEN);
}

int data_key_seal(struct data_key *k, bool v2, uint32_t peer_id, const uint8_t *plain,
                  size_t plain_len, uint8_t *out, size_t out_cap, size_t *out_len)
{
    size_t hdr_len = v2 ? DATA_V2_HEADER_LEN : DATA_V1_HEADER_LEN;
    uint8_t nonce[NONCE_LEN];
    uint8_t *pid, *tag, *ct;
    int err;

    *out_len = 0;
    if (k->cbc_enc.ctx != NULL) {
        return cbc_seal(k, v2, peer_id, plain, plain_len, out, out_cap, out_len);
    }
    if (k->enc.ctx == NULL) {
        return -PE_STATE;
    }
    if (v2 && peer_id > DATA_PEER_ID_MAX) {
        return -PE_MALFORMED;
    }
    if (out_cap < hdr_len + DATA_AEAD_OVERHEAD ||
        plain_len > out_cap - hdr_len - DATA_AEAD_OVERHEAD || plain_len > DATA_AEAD_TEXT_MAX) {
        return -PE_NOSPACE;
    }
    if (k->tx_packet_id == UINT32_MAX) {
        return -PE_STATE; /* 2.6: no packet id roll-over with short ids; a new key is needed */
    }
    k->tx_packet_id++;

    write_header(k, v2, peer_id, out);
    pid = out + hdr_len;
    tag = pid + DATA_PACKET_ID_LEN;
    ct = tag + DATA_TAG_LEN;
    store_be32(pid, k->tx_packet_id);
    make_nonce(nonce, pid, k->tx_implicit_iv);

    err = data_aead_seal(&k->enc, nonce, v2 ? out : pid,
                         v2 ? DATA_V2_HEADER_LEN + DATA_PACKET_ID_LEN : DATA_PACKET_ID_LEN, plain,
                         plain_len, ct, tag);
    if (err) {
        return err;
    }
    k->tx_blocks += (plain_len + 15) / 16;
    *out_len = hdr_len + DATA_AEAD_OVERHEAD + plain_len;
    return 0;
}

/* Opcode and key_id of a data packet: its header length, or an error. */
static int data_header_len(const struct data_key *k, const uint8_t *in, size_t in_len,
                           size_t *hdr_len)
{
    uint8_t op;

    if (in_len < 1) {
        return -PE_SHORT;
    }
    op = (uint8_t)(in[0] >> 3);
    if (op == OP_DATA_V2) {
        *hdr_len = DATA_V2_HEADER_LEN;
    } else if (op == OP_DATA_V1) {
        *hdr_len = DATA_V1_HEADER_LEN;
    } else {
        return -PE_MALFORMED;
    }
    if ((in[0] & KEY_ID_MAX) != k->key_id) {
        return -PE_MALFORMED;
    }
    if (k->cbc_dec.ctx != NULL) {
        return in_len < *hdr_len + 1 ? -PE_SHORT : 0; /* data_cbc_open() checks the rest */
    }
    return in_len < *hdr_len + DATA_AEAD_OVERHEAD ? -PE_SHORT : 0;
}

/* data_key_open() with a CBC cipher: HMAC, decrypt, then the replay window. */
static int cbc_open(struct data_key *k, const uint8_t *in, size_t in_len, size_t hdr_len,
                    uint8_t *out, size_t out_cap, size_t *out_len)
{
    uint32_t packet_id = 0;
    size_t n = 0;
    int err =
        data_cbc_open(&k->cbc_dec, in + hdr_len, in_len - hdr_len, out, out_cap, &n, &packet_id);

    if (err) {
        return err;
    }
    /* 2.6 openvpn_decrypt_v1: the id is read from the authenticated plaintext, then checked */
    err = packet_id_rx_check(&k->rx, packet_id);
    if (err) {
        mbedtls_platform_zeroize(out, n);
        return err;
    }
    packet_id_rx_commit(&k->rx, packet_id);
    *out_len = n;
    return 0;
}

int data_key_open(struct data_key *k, const uint8_t *in, size_t in_len, uint8_t *out,
                  size_t out_cap, size_t *out_len)
{
    uint8_t nonce[NONCE_LEN];
    const uint8_t *pid, *ct;
    size_t hdr_len = 0, ct_len, aad_len;
    uint32_t packet_id;
    int err;

    *out_len = 0;
    if (k->dec.ctx == NULL && k->cbc_dec.ctx == NULL) {
        return -PE_STATE;
    }
    err = data_header_len(k, in, in_len, &hdr_len);
    if (err) {
        return err;
    }
    if (k->cbc_dec.ctx != NULL) {
        return cbc_open(k, in, in_len, hdr_len, out, out_cap, out_len);
    }
    pid = in + hdr_len;
    ct = pid + DATA_PACKET_ID_LEN + DATA_TAG_LEN;
    ct_len = in_len - hdr_len - DATA_AEAD_OVERHEAD;
    if (ct_len > out_cap || ct_len > DATA_AEAD_TEXT_MAX) {
        return -PE_NOSPACE;
    }
    packet_id = load_be32(pid);
    err = packet_id_rx_check(&k->rx, packet_id);
    if (err) {
        return err;
    }
    make_nonce(nonce, pid, k->rx_implicit_iv);
    aad_len = hdr_len == DATA_V2_HEADER_LEN ? DATA_V2_HEADER_LEN + DATA_PACKET_ID_LEN
                                            : DATA_PACKET_ID_LEN;
    /* on failure data_aead_open() has wiped out: no unauthenticated plaintext leaves */
    err = data_aead_open(&k->dec, nonce, aad_len == DATA_PACKET_ID_LEN ? pid : in, aad_len, ct,
                         ct_len, pid + DATA_PACKET_ID_LEN, out);
    if (err) {
        return err;
    }
    packet_id_rx_commit(&k->rx, packet_id);
    k->rx_blocks += (ct_len + 15) / 16;
    *out_len = ct_len;
    return 0;
}
