/* proto/tls_crypt_v2.c: tls-crypt-v2 key files and wrapped client keys (see tls_crypt_v2.h). */
#include "proto/tls_crypt_v2.h"

#include <string.h>

#include <mbedtls/base64.h>
#include <mbedtls/constant_time.h>
#include <mbedtls/md.h>
#include <mbedtls/platform_util.h>

#include "proto/cursor.h"
#include "proto/errors.h"
#include "proto/tls_wrap.h"

#define AES_BLOCK_LEN 16
#define PEM_LINE 64

static const char *find_str(const char *hay, size_t hay_len, const char *needle)
{
    size_t n = strlen(needle);

    for (size_t i = 0; n <= hay_len && i <= hay_len - n; i++) {
        if (memcmp(hay + i, needle, n) == 0) {
            return hay + i;
        }
    }
    return NULL;
}

int tls_crypt_v2_pem_decode(const char *name, const char *text, size_t text_len, uint8_t *out,
                            size_t out_cap, size_t *out_len)
{
    char begin[96], end[96];
    unsigned char b64[2 * (TLS_CRYPT_V2_CLIENT_KEY_LEN + TLS_CRYPT_V2_MAX_WKC_LEN)];
    const char *b, *e;
    size_t n = 0, olen = 0;
    int rc;

    *out_len = 0;
    if (strlen(name) > 64) {
        return -PE_MALFORMED;
    }
    strcpy(begin, "-----BEGIN ");
    strcat(begin, name);
    strcat(begin, "-----");
    strcpy(end, "-----END ");
    strcat(end, name);
    strcat(end, "-----");
    b = find_str(text, text_len, begin);
    if (!b) {
        return -PE_MALFORMED;
    }
    b += strlen(begin);
    e = find_str(b, text_len - (size_t)(b - text), end);
    if (!e) {
        return -PE_MALFORMED;
    }
    for (const char *p = b; p < e; p++) {
        if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') {
            continue;
        }
        if (n >= sizeof(b64)) {
            return -PE_MALFORMED;
        }
        b64[n++] = (unsigned char)*p;
    }
    if (n == 0) {
        return -PE_MALFORMED;
    }
    rc = mbedtls_base64_decode(out, out_cap, &olen, b64, n);
    if (rc == MBEDTLS_ERR_BASE64_BUFFER_TOO_SMALL) {
        return -PE_NOSPACE;
    }
    if (rc != 0) {
        mbedtls_platform_zeroize(out, out_cap);
        return -PE_MALFORMED;
    }
    mbedtls_platform_zeroize(b64, sizeof(b64));
    *out_len = olen;
    return 0;
}

/* out[pos..] = prefix || name || "-----\n" (room checked by the caller); the new end. */
static size_t put_line(char *out, size_t pos, const char *prefix, const char *name)
{
    const char *parts[] = {prefix, name, "-----\n"};

    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen(parts[i]);

        memcpy(out + pos, parts[i], n);
        pos += n;
    }
    return pos;
}

int tls_crypt_v2_pem_encode(const char *name, const uint8_t *data, size_t len, char *out,
                            size_t out_cap, size_t *out_len)
{
    unsigned char b64[2 * (TLS_CRYPT_V2_CLIENT_KEY_LEN + TLS_CRYPT_V2_MAX_WKC_LEN)];
    size_t b64_len = 0, pos = 0, need;
    int rc = mbedtls_base64_encode(b64, sizeof(b64), &b64_len, data, len);

    *out_len = 0;
    if (rc != 0) {
        return -PE_NOSPACE;
    }
    /* BEGIN and END lines (each 16 + name + newline) and one newline per started line */
    need = 2 * (16 + strlen(name) + 1) + b64_len + (b64_len + PEM_LINE - 1) / PEM_LINE + 1;
    if (need > out_cap) {
        mbedtls_platform_zeroize(b64, sizeof(b64));
        return -PE_NOSPACE;
    }
    pos = put_line(out, pos, "-----BEGIN ", name);
    for (size_t i = 0; i < b64_len; i += PEM_LINE) {
        size_t n = b64_len - i < PEM_LINE ? b64_len - i : PEM_LINE;

        memcpy(out + pos, b64 + i, n);
        pos += n;
        out[pos++] = '\n';
    }
    pos = put_line(out, pos, "-----END ", name);
    out[pos] = '\0';
    mbedtls_platform_zeroize(b64, sizeof(b64));
    *out_len = pos;
    return 0;
}

void tls_crypt_v2_server_key_init(struct tls_crypt_v2_server_key *key,
                                  const uint8_t raw[TLS_CRYPT_V2_SERVER_KEY_LEN])
{
    memcpy(key->cipher_key, raw + STATIC_KEY_CIPHER_OFF, sizeof(key->cipher_key));
    memcpy(key->hmac_key, raw + STATIC_KEY_HMAC_OFF, sizeof(key->hmac_key));
}

int tls_crypt_v2_server_key_parse(const char *text, size_t text_len,
                                  struct tls_crypt_v2_server_key *key)
{
    uint8_t raw[TLS_CRYPT_V2_SERVER_KEY_LEN + 4];
    size_t n = 0;
    int err =
        tls_crypt_v2_pem_decode(TLS_CRYPT_V2_SERVER_PEM, text, text_len, raw, sizeof(raw), &n);

    if (err == 0 && n != TLS_CRYPT_V2_SERVER_KEY_LEN) {
        err = -PE_MALFORMED;
    }
    if (err == 0) {
        tls_crypt_v2_server_key_init(key, raw);
    } else {
        tls_crypt_v2_server_key_wipe(key);
        err = -PE_MALFORMED;
    }
    mbedtls_platform_zeroize(raw, sizeof(raw));
    return err;
}

void tls_crypt_v2_server_key_wipe(struct tls_crypt_v2_server_key *key)
{
    mbedtls_platform_zeroize(key, sizeof(*key));
}

int tls_crypt_v2_client_key_parse(const char *text, size_t text_len,
                                  uint8_t kc[TLS_CRYPT_V2_CLIENT_KEY_LEN], uint8_t *wkc,
                                  size_t wkc_cap, size_t *wkc_len)
{
    uint8_t raw[TLS_CRYPT_V2_CLIENT_KEY_LEN + TLS_CRYPT_V2_MAX_WKC_LEN + 4];
    size_t n = 0, w;
    int err =
        tls_crypt_v2_pem_decode(TLS_CRYPT_V2_CLIENT_PEM, text, text_len, raw, sizeof(raw), &n);

    *wkc_len = 0;
    if (err) {
        return err == -PE_NOSPACE ? -PE_MALFORMED : err;
    }
    err = -PE_MALFORMED;
    if (n < TLS_CRYPT_V2_CLIENT_KEY_LEN + TLS_CRYPT_V2_MIN_WKC_LEN ||
        n > TLS_CRYPT_V2_CLIENT_KEY_LEN + TLS_CRYPT_V2_MAX_WKC_LEN) {
        goto out;
    }
    w = n - TLS_CRYPT_V2_CLIENT_KEY_LEN;
    if (load_be16(raw + n - 2) != w) {
        goto out;
    }
    if (w > wkc_cap) {
        err = -PE_NOSPACE;
        goto out;
    }
    memcpy(kc, raw, TLS_CRYPT_V2_CLIENT_KEY_LEN);
    memcpy(wkc, raw + TLS_CRYPT_V2_CLIENT_KEY_LEN, w);
    *wkc_len = w;
    err = 0;
out:
    mbedtls_platform_zeroize(raw, sizeof(raw));
    return err;
}

/* tag = HMAC-SHA256(Ka, len_be16 || kc || metadata) */
static int wkc_tag(const struct tls_crypt_v2_server_key *key, const uint8_t len_be[2],
                   const uint8_t *plain, size_t plain_len, uint8_t tag[TLS_CRYPT_V2_TAG_LEN])
{
    mbedtls_md_context_t md;
    int rc;

    mbedtls_md_init(&md);
    rc = mbedtls_md_setup(&md, mbedtls_md_info_from_type(MBEDTLS_MD_SHA256), 1);
    if (rc == 0) {
        rc = mbedtls_md_hmac_starts(&md, key->hmac_key, sizeof(key->hmac_key));
    }
    if (rc == 0) {
        rc = mbedtls_md_hmac_update(&md, len_be, 2);
    }
    if (rc == 0) {
        rc = mbedtls_md_hmac_update(&md, plain, plain_len);
    }
    if (rc == 0) {
        rc = mbedtls_md_hmac_finish(&md, tag);
    }
    mbedtls_md_free(&md);
    return rc == 0 ? 0 : -PE_CRYPTO;
}

int tls_crypt_v2_wrap(const struct tls_crypt_v2_server_key *key,
                      const uint8_t kc[TLS_CRYPT_V2_CLIENT_KEY_LEN], const uint8_t *metadata,
                      size_t md_len, uint8_t *wkc, size_t wkc_cap, size_t *wkc_len)
{
    uint8_t plain[TLS_CRYPT_V2_CLIENT_KEY_LEN + TLS_CRYPT_V2_MAX_METADATA_LEN];
    size_t plain_len = TLS_CRYPT_V2_CLIENT_KEY_LEN + md_len;
    size_t total = TLS_CRYPT_V2_TAG_LEN + plain_len + 2;
    uint8_t len_be[2];
    int err;

    *wkc_len = 0;
    if (md_len == 0 || md_len > TLS_CRYPT_V2_MAX_METADATA_LEN) {
        return -PE_MALFORMED;
    }
    if (total > wkc_cap) {
        return -PE_NOSPACE;
    }
    memcpy(plain, kc, TLS_CRYPT_V2_CLIENT_KEY_LEN);
    memcpy(plain + TLS_CRYPT_V2_CLIENT_KEY_LEN, metadata, md_len);
    store_be16(len_be, (uint16_t)total);
    err = wkc_tag(key, len_be, plain, plain_len, wkc);
    if (err == 0) {
        err =
            tls_wrap_aes256_ctr(key->cipher_key, wkc, plain, wkc + TLS_CRYPT_V2_TAG_LEN, plain_len);
    }
    mbedtls_platform_zeroize(plain, sizeof(plain));
    if (err) {
        mbedtls_platform_zeroize(wkc, total);
        return err;
    }
    memcpy(wkc + total - 2, len_be, 2);
    *wkc_len = total;
    return 0;
}

int tls_crypt_v2_unwrap(const struct tls_crypt_v2_server_key *key, const uint8_t *wkc,
                        size_t wkc_len, uint8_t kc[TLS_CRYPT_V2_CLIENT_KEY_LEN], uint8_t *metadata,
                        size_t md_cap, size_t *md_len)
{
    uint8_t plain[TLS_CRYPT_V2_MAX_WKC_LEN];
    uint8_t tag[TLS_CRYPT_V2_TAG_LEN];
    size_t plain_len;
    int err;

    *md_len = 0;
    if (wkc_len < TLS_CRYPT_V2_MIN_WKC_LEN) {
        return -PE_SHORT;
    }
    if (wkc_len > TLS_CRYPT_V2_MAX_WKC_LEN || load_be16(wkc + wkc_len - 2) != wkc_len) {
        return -PE_MALFORMED;
    }
    plain_len = wkc_len - TLS_CRYPT_V2_TAG_LEN - 2;
    if (plain_len - TLS_CRYPT_V2_CLIENT_KEY_LEN > md_cap) {
        return -PE_NOSPACE;
    }
    err = tls_wrap_aes256_ctr(key->cipher_key, wkc, wkc + TLS_CRYPT_V2_TAG_LEN, plain, plain_len);
    if (err == 0) {
        err = wkc_tag(key, wkc + wkc_len - 2, plain, plain_len, tag);
    }
    if (err == 0 && mbedtls_ct_memcmp(tag, wkc, TLS_CRYPT_V2_TAG_LEN) != 0) {
        err = -PE_AUTH;
    }
    if (err == 0) {
        memcpy(kc, plain, TLS_CRYPT_V2_CLIENT_KEY_LEN);
        *md_len = plain_len - TLS_CRYPT_V2_CLIENT_KEY_LEN;
        memcpy(metadata, plain + TLS_CRYPT_V2_CLIENT_KEY_LEN, *md_len);
    }
    mbedtls_platform_zeroize(plain, sizeof(plain));
    mbedtls_platform_zeroize(tag, sizeof(tag));
    return err;
}

int tls_crypt_v2_locate_wkc(const uint8_t *pkt, size_t pkt_len, size_t *wkc_off)
{
    size_t l;

    *wkc_off = 0;
    if (pkt_len < 3) {
        return -PE_SHORT;
    }
    l = load_be16(pkt + pkt_len - 2);
    if (l < TLS_CRYPT_V2_MIN_WKC_LEN || l > TLS_CRYPT_V2_MAX_WKC_LEN || l >= pkt_len) {
        return -PE_MALFORMED;
    }
    *wkc_off = pkt_len - l;
    return 0;
}

bool tls_crypt_v2_is_early_neg(uint32_t packet_id)
{
    return ((packet_id & 0xff000000u) & TLS_CRYPT_V2_EARLY_NEG_START) ==
           TLS_CRYPT_V2_EARLY_NEG_START;
}

void tls_crypt_v2_early_neg_tlv(uint8_t out[TLS_CRYPT_V2_EARLY_NEG_TLV_LEN])
{
    store_be16(out, 0x0001);     /* TLV_TYPE_EARLY_NEG_FLAGS */
    store_be16(out + 2, 2);      /* its length */
    store_be16(out + 4, 0x0001); /* EARLY_NEG_FLAG_RESEND_WKC */
}

int tls_crypt_v2_metadata_timestamp(const uint8_t *metadata, size_t md_len, int64_t *unix_s)
{
    uint64_t t = 0;

    *unix_s = 0;
    if (md_len < 9 || metadata[0] != TLS_CRYPT_V2_METADATA_TYPE_TIMESTAMP) {
        return -PE_MALFORMED;
    }
    for (int i = 1; i < 9; i++) {
        t = (t << 8) | metadata[i];
    }
    *unix_s = (int64_t)t;
    return 0;
}
