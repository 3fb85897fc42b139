/* proto/tls_wrap.c: tls-auth and tls-crypt wrapping of control packets (see tls_wrap.h). */
#include "proto/tls_wrap.h"

#include <string.h>
#include <strings.h>

#include <mbedtls/aes.h>
#include <mbedtls/constant_time.h>
#include <mbedtls/platform_util.h>

#include "proto/cursor.h"
#include "proto/errors.h"

#define AES_BLOCK_LEN 16

/* One piece of an HMAC input that is not contiguous on the wire. */
struct part {
    const uint8_t *p;
    size_t len;
};

/* --auth names accepted for tls-auth. openvpn takes any digest its crypto library knows; these
 * are the ones with a use today (MD5 and friends are left out on purpose). */
static const struct {
    const char *name;
    mbedtls_md_type_t type;
} auth_digests[] = {
    {"SHA1", MBEDTLS_MD_SHA1},     {"SHA224", MBEDTLS_MD_SHA224}, {"SHA256", MBEDTLS_MD_SHA256},
    {"SHA384", MBEDTLS_MD_SHA384}, {"SHA512", MBEDTLS_MD_SHA512},
};

/* mac = HMAC(key, parts[0] || ... || parts[n_parts-1]) with a context private to this call,
 * so concurrent callers share nothing. mac has room for mbedtls_md_get_size(md). */
static int hmac_parts(const mbedtls_md_info_t *md, const uint8_t *key, size_t key_len,
                      const struct part *parts, size_t n_parts, uint8_t *mac)
{
    mbedtls_md_context_t md_ctx;
    int rc;

    mbedtls_md_init(&md_ctx);
    rc = mbedtls_md_setup(&md_ctx, md, 1);
    if (rc == 0) {
        rc = mbedtls_md_hmac_starts(&md_ctx, key, key_len);
    }
    for (size_t i = 0; rc == 0 && i < n_parts; i++) {
        rc = mbedtls_md_hmac_update(&md_ctx, parts[i].p, parts[i].len);
    }
    if (rc == 0) {
        rc = mbedtls_md_hmac_finish(&md_ctx, mac);
    }
    mbedtls_md_free(&md_ctx); /* zeroizes the keyed pads */
    return rc == 0 ? 0 : -PE_CRYPTO;
}

int tls_wrap_aes256_ctr(const uint8_t key[TLS_CRYPT_KEY_LEN], const uint8_t iv[16],
                        const uint8_t *in, uint8_t *out, size_t len)
{
    mbedtls_aes_context aes;
    uint8_t counter[AES_BLOCK_LEN], stream[AES_BLOCK_LEN];
    size_t nc_off = 0;
    int rc;

    memcpy(counter, iv, AES_BLOCK_LEN);
    mbedtls_aes_init(&aes);
    rc = mbedtls_aes_setkey_enc(&aes, key, TLS_CRYPT_KEY_LEN * 8);
    if (rc == 0 && len > 0) {
        rc = mbedtls_aes_crypt_ctr(&aes, len, &nc_off, counter, stream, in, out);
    }
    mbedtls_aes_free(&aes); /* zeroizes the key schedule */
    mbedtls_platform_zeroize(stream, sizeof(stream));
    mbedtls_platform_zeroize(counter, sizeof(counter));
    return rc == 0 ? 0 : -PE_CRYPTO;
}

static const uint8_t *hmac_slot(const uint8_t *key2, int key_index)
{
    return key2 + (size_t)key_index * STATIC_KEY_HALF_LEN + STATIC_KEY_HMAC_OFF;
}

static const uint8_t *cipher_slot(const uint8_t *key2, int key_index)
{
    return key2 + (size_t)key_index * STATIC_KEY_HALF_LEN + STATIC_KEY_CIPHER_OFF;
}

static int init_auth(struct tls_wrap_ctx *ctx, const uint8_t *key2, int key_direction,
                     const char *auth_digest)
{
    int send_key, recv_key;
    size_t i;

    if (!auth_digest) {
        auth_digest = "SHA1"; /* openvpn's --auth default */
    }
    for (i = 0; i < sizeof(auth_digests) / sizeof(auth_digests[0]); i++) {
        if (strcasecmp(auth_digest, auth_digests[i].name) == 0) {
            break;
        }
    }
    if (i == sizeof(auth_digests) / sizeof(auth_digests[0])) {
        return -PE_UNSUPPORTED;
    }
    ctx->md_info = mbedtls_md_info_from_type(auth_digests[i].type);
    if (!ctx->md_info) { /* mbedTLS built without it */
        return -PE_UNSUPPORTED;
    }
    ctx->hmac_len = mbedtls_md_get_size(ctx->md_info);

    /* openvpn crypto.c key_direction_state_init(): NORMAL (0) sends with key[0], receives with
     * key[1]; INVERSE (1) the reverse; BIDIRECTIONAL uses key[0] both ways. */
    switch (key_direction) {
    case -1:
        send_key = recv_key = 0;
        break;
    case 0:
        send_key = 0;
        recv_key = 1;
        break;
    case 1:
        send_key = 1;
        recv_key = 0;
        break;
    default:
        return -PE_MALFORMED;
    }
    memcpy(ctx->send_hmac_key, hmac_slot(key2, send_key), ctx->hmac_len);
    memcpy(ctx->recv_hmac_key, hmac_slot(key2, recv_key), ctx->hmac_len);
    return 0;
}

static int init_crypt(struct tls_wrap_ctx *ctx, const uint8_t *key2, bool is_server)
{
    /* tls_crypt.c tls_crypt_init_key(): the server is KEY_DIRECTION_NORMAL, the client
     * KEY_DIRECTION_INVERSE. */
    int send_key = is_server ? 0 : 1, recv_key = is_server ? 1 : 0;

    ctx->md_info = mbedtls_md_info_from_type(MBEDTLS_MD_SHA256);
    if (!ctx->md_info) {
        return -PE_UNSUPPORTED;
    }
    ctx->hmac_len = TLS_CRYPT_TAG_LEN;
    memcpy(ctx->send_hmac_key, hmac_slot(key2, send_key), TLS_CRYPT_KEY_LEN);
    memcpy(ctx->recv_hmac_key, hmac_slot(key2, recv_key), TLS_CRYPT_KEY_LEN);
    memcpy(ctx->send_cipher_key, cipher_slot(key2, send_key), TLS_CRYPT_KEY_LEN);
    memcpy(ctx->recv_cipher_key, cipher_slot(key2, recv_key), TLS_CRYPT_KEY_LEN);
    return 0;
}

int tls_wrap_crypt_key2(const struct tls_wrap_ctx *ctx, bool is_server,
                        uint8_t key2[STATIC_KEY_LEN])
{
    int send_key = is_server ? 0 : 1, recv_key = is_server ? 1 : 0;

    memset(key2, 0, STATIC_KEY_LEN);
    if (ctx->mode != TLS_WRAP_CRYPT) {
        return -PE_MALFORMED;
    }
    memcpy(key2 + send_key * STATIC_KEY_HALF_LEN + STATIC_KEY_HMAC_OFF, ctx->send_hmac_key,
           TLS_CRYPT_KEY_LEN);
    memcpy(key2 + recv_key * STATIC_KEY_HALF_LEN + STATIC_KEY_HMAC_OFF, ctx->recv_hmac_key,
           TLS_CRYPT_KEY_LEN);
    memcpy(key2 + send_key * STATIC_KEY_HALF_LEN + STATIC_KEY_CIPHER_OFF, ctx->send_cipher_key,
           TLS_CRYPT_KEY_LEN);
    memcpy(key2 + recv_key * STATIC_KEY_HALF_LEN + STATIC_KEY_CIPHER_OFF, ctx->recv_cipher_key,
           TLS_CRYPT_KEY_LEN);
    return 0;
}

int tls_wrap_init_dyn(struct tls_wrap_ctx *ctx, const uint8_t ekm[STATIC_KEY_LEN],
                      const uint8_t *wrap_key2, bool is_server)
{
    uint8_t key2[STATIC_KEY_LEN];
    int err;

    for (size_t i = 0; i < STATIC_KEY_LEN; i++) {
        key2[i] = ekm[i] ^ (wrap_key2 ? wrap_key2[i] : 0);
    }
    err = tls_wrap_init(ctx, TLS_WRAP_CRYPT, key2, -1, NULL, is_server);
    mbedtls_platform_zeroize(key2, sizeof(key2));
    return err;
}

int tls_wrap_init(struct tls_wrap_ctx *ctx, enum tls_wrap_mode mode,
                  const uint8_t key2[STATIC_KEY_LEN], int key_direction, const char *auth_digest,
                  bool is_server)
{
    int err;

    mbedtls_platform_zeroize(ctx, sizeof(*ctx));
    if (mode == TLS_WRAP_NONE) {
        return 0;
    }
    if (!key2) {
        return -PE_MALFORMED;
    }
    if (mode == TLS_WRAP_AUTH) {
        err = init_auth(ctx, key2, key_direction, auth_digest);
    } else if (mode == TLS_WRAP_CRYPT) {
        err = init_crypt(ctx, key2, is_server);
    } else {
        err = -PE_MALFORMED;
    }
    if (err) {
        tls_wrap_wipe(ctx);
        return err;
    }
    ctx->mode = mode;
    return 0;
}

void tls_wrap_wipe(struct tls_wrap_ctx *ctx)
{
    mbedtls_platform_zeroize(ctx, sizeof(*ctx));
}

size_t tls_wrap_overhead(const struct tls_wrap_ctx *ctx)
{
    switch (ctx->mode) {
    case TLS_WRAP_AUTH:
        return ctx->hmac_len + TLS_WRAP_REPLAY_LEN;
    case TLS_WRAP_CRYPT:
        return TLS_CRYPT_OVERHEAD;
    case TLS_WRAP_NONE:
    default:
        return 0;
    }
}

/* out = head || HMAC || replay || body, body already in place at out + 9 + H + 8. */
static int seal_auth(const struct tls_wrap_ctx *ctx, const uint8_t *head, const uint8_t *replay,
                     uint8_t *out, size_t body_len)
{
    const uint8_t *body = out + TLS_WRAP_HEAD_LEN + ctx->hmac_len + TLS_WRAP_REPLAY_LEN;
    const struct part parts[] = {
        {replay, TLS_WRAP_REPLAY_LEN}, {head, TLS_WRAP_HEAD_LEN}, {body, body_len}};

    memcpy(out + TLS_WRAP_HEAD_LEN + ctx->hmac_len, replay, TLS_WRAP_REPLAY_LEN);
    return hmac_parts(ctx->md_info, ctx->send_hmac_key, ctx->hmac_len, parts, 3,
                      out + TLS_WRAP_HEAD_LEN);
}

/* out = head || replay || tag || AES-CTR(body), body already in place (as plaintext). */
static int seal_crypt(const struct tls_wrap_ctx *ctx, const uint8_t *head, const uint8_t *replay,
                      uint8_t *out, size_t body_len)
{
    uint8_t *tag = out + TLS_WRAP_HEAD_LEN + TLS_WRAP_REPLAY_LEN;
    uint8_t *body = tag + TLS_CRYPT_TAG_LEN;
    const struct part parts[] = {
        {head, TLS_WRAP_HEAD_LEN}, {replay, TLS_WRAP_REPLAY_LEN}, {body, body_len}};
    int err;

    memcpy(out + TLS_WRAP_HEAD_LEN, replay, TLS_WRAP_REPLAY_LEN);
    err = hmac_parts(ctx->md_info, ctx->send_hmac_key, TLS_CRYPT_KEY_LEN, parts, 3, tag);
    if (err) {
        return err;
    }
    return tls_wrap_aes256_ctr(ctx->send_cipher_key, tag, body, body, body_len);
}

int tls_wrap_seal(const struct tls_wrap_ctx *ctx, uint32_t packet_id, uint32_t net_time,
                  const uint8_t *in, size_t in_len, uint8_t *out, size_t out_cap, size_t *out_len)
{
    size_t overhead = tls_wrap_overhead(ctx), body_len;
    uint8_t head[TLS_WRAP_HEAD_LEN], replay[TLS_WRAP_REPLAY_LEN];
    int err = 0;

    *out_len = 0;
    if (in_len < TLS_WRAP_HEAD_LEN) {
        return -PE_SHORT;
    }
    if (out_cap < overhead || in_len > out_cap - overhead) {
        return -PE_NOSPACE;
    }
    body_len = in_len - TLS_WRAP_HEAD_LEN;
    /* Save the head and move the body first, so out may overlap in. */
    memcpy(head, in, TLS_WRAP_HEAD_LEN);
    memmove(out + TLS_WRAP_HEAD_LEN + overhead, in + TLS_WRAP_HEAD_LEN, body_len);
    memcpy(out, head, TLS_WRAP_HEAD_LEN);
    store_be32(replay, packet_id);
    store_be32(replay + 4, net_time);

    if (ctx->mode == TLS_WRAP_AUTH) {
        err = seal_auth(ctx, head, replay, out, body_len);
    } else if (ctx->mode == TLS_WRAP_CRYPT) {
        err = seal_crypt(ctx, head, replay, out, body_len);
    }
    if (err) {
        mbedtls_platform_zeroize(out, in_len + overhead);
        return err;
    }
    *out_len = in_len + overhead;
    return 0;
}

/* c is positioned after head; out has room for 9 + c->left - H - 8 bytes. */
static int open_auth(const struct tls_wrap_ctx *ctx, const uint8_t *head, struct cursor *c,
                     uint8_t *out, uint32_t *packet_id, uint32_t *net_time)
{
    uint8_t mac[TLS_WRAP_MAX_HMAC_LEN], expect[TLS_WRAP_MAX_HMAC_LEN];
    uint8_t replay[TLS_WRAP_REPLAY_LEN];
    int err = cur_read(c, mac, ctx->hmac_len);

    if (!err) {
        err = cur_read(c, replay, TLS_WRAP_REPLAY_LEN);
    }
    if (!err) {
        const struct part parts[] = {
            {replay, TLS_WRAP_REPLAY_LEN}, {head, TLS_WRAP_HEAD_LEN}, {c->p, c->left}};

        err = hmac_parts(ctx->md_info, ctx->recv_hmac_key, ctx->hmac_len, parts, 3, expect);
    }
    if (!err && mbedtls_ct_memcmp(mac, expect, ctx->hmac_len) != 0) {
        err = -PE_AUTH;
    }
    mbedtls_platform_zeroize(expect, sizeof(expect));
    if (err) {
        return err;
    }
    memcpy(out, head, TLS_WRAP_HEAD_LEN);
    if (c->left > 0) {
        memcpy(out + TLS_WRAP_HEAD_LEN, c->p, c->left);
    }
    *packet_id = load_be32(replay);
    *net_time = load_be32(replay + 4);
    return 0;
}

/* c is positioned after head; out has room for 9 + c->left - 40 bytes. */
static int open_crypt(const struct tls_wrap_ctx *ctx, const uint8_t *head, struct cursor *c,
                      uint8_t *out, uint32_t *packet_id, uint32_t *net_time)
{
    uint8_t tag[TLS_CRYPT_TAG_LEN], expect[TLS_CRYPT_TAG_LEN];
    uint8_t replay[TLS_WRAP_REPLAY_LEN];
    uint8_t *plain = out + TLS_WRAP_HEAD_LEN;
    size_t body_len = 0;
    int err = cur_read(c, replay, TLS_WRAP_REPLAY_LEN);

    if (!err) {
        err = cur_read(c, tag, TLS_CRYPT_TAG_LEN);
    }
    if (!err) {
        body_len = c->left;
        err = tls_wrap_aes256_ctr(ctx->recv_cipher_key, tag, c->p, plain, body_len);
    }
    if (!err) {
        const struct part parts[] = {
            {head, TLS_WRAP_HEAD_LEN}, {replay, TLS_WRAP_REPLAY_LEN}, {plain, body_len}};

        err = hmac_parts(ctx->md_info, ctx->recv_hmac_key, TLS_CRYPT_KEY_LEN, parts, 3, expect);
    }
    if (!err && mbedtls_ct_memcmp(tag, expect, TLS_CRYPT_TAG_LEN) != 0) {
        err = -PE_AUTH;
    }
    mbedtls_platform_zeroize(expect, sizeof(expect));
    if (err) {
        mbedtls_platform_zeroize(plain, body_len); /* never hand out unverified plaintext */
        return err;
    }
    memcpy(out, head, TLS_WRAP_HEAD_LEN);
    *packet_id = load_be32(replay);
    *net_time = load_be32(replay + 4);
    return 0;
}

int tls_wrap_open(const struct tls_wrap_ctx *ctx, const uint8_t *in, size_t in_len, uint8_t *out,
                  size_t out_cap, size_t *out_len, uint32_t *packet_id, uint32_t *net_time)
{
    size_t overhead = tls_wrap_overhead(ctx);
    struct cursor c = cur_make(in, in_len);
    uint8_t head[TLS_WRAP_HEAD_LEN];
    int err;

    *out_len = 0;
    *packet_id = 0;
    *net_time = 0;
    if (in_len < TLS_WRAP_HEAD_LEN + overhead) {
        return -PE_SHORT;
    }
    if (in_len - overhead > out_cap) {
        return -PE_NOSPACE;
    }
    err = cur_read(&c, head, TLS_WRAP_HEAD_LEN);
    if (err) {
        return err;
    }
    if (ctx->mode == TLS_WRAP_AUTH) {
        err = open_auth(ctx, head, &c, out, packet_id, net_time);
    } else if (ctx->mode == TLS_WRAP_CRYPT) {
        err = open_crypt(ctx, head, &c, out, packet_id, net_time);
    } else {
        memcpy(out, in, in_len);
    }
    if (err) {
        return err;
    }
    *out_len = in_len - overhead;
    return 0;
}
