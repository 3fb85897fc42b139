/* proto/auth_token.c: auth-gen-token session tokens and their key file (openvpn 2.6
 * src/openvpn/auth_token.c for the layout and the checks, crypto.c for the key file). */
#include "proto/auth_token.h"

#include <string.h>

#include <mbedtls/base64.h>
#include <mbedtls/constant_time.h>
#include <mbedtls/md.h>
#include <mbedtls/platform_util.h>

#include "proto/errors.h"

#define B64_DATA_LEN (AUTH_TOKEN_DATA_LEN / 3 * 4) /* 80 */
#define TS_OFF AUTH_TOKEN_SESSION_ID_LEN           /* initial_timestamp */
#define HMAC_OFF (AUTH_TOKEN_SESSION_ID_LEN + 16)  /* after both timestamps */

static void put_be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        p[i] = (uint8_t)(v & 0xff);
        v >>= 8;
    }
}

static uint64_t get_be64(const uint8_t *p)
{
    uint64_t v = 0;

    for (int i = 0; i < 8; i++) {
        v = (v << 8) | p[i];
    }
    return v;
}

/* HMAC-SHA256(secret, username || data[0..HMAC_OFF)) into mac. */
static int token_hmac(const uint8_t secret[AUTH_TOKEN_SECRET_LEN], const char *username,
                      const uint8_t *data, uint8_t mac[AUTH_TOKEN_HMAC_LEN])
{
    mbedtls_md_context_t md;
    int rc;

    mbedtls_md_init(&md);
    rc = mbedtls_md_setup(&md, mbedtls_md_info_from_type(MBEDTLS_MD_SHA256), 1);
    rc = rc ? rc : mbedtls_md_hmac_starts(&md, secret, AUTH_TOKEN_SECRET_LEN);
    rc = rc ? rc : mbedtls_md_hmac_update(&md, (const unsigned char *)username, strlen(username));
    rc = rc ? rc : mbedtls_md_hmac_update(&md, data, HMAC_OFF);
    rc = rc ? rc : mbedtls_md_hmac_finish(&md, mac);
    mbedtls_md_free(&md);
    return rc ? -PE_CRYPTO : 0;
}

bool auth_token_is_token(const char *password)
{
    if (strnlen(password, AUTH_TOKEN_PREFIX_LEN) < AUTH_TOKEN_PREFIX_LEN) {
        return false;
    }
    return mbedtls_ct_memcmp(password, AUTH_TOKEN_PREFIX, AUTH_TOKEN_PREFIX_LEN) == 0;
}

int auth_token_make(const uint8_t secret[AUTH_TOKEN_SECRET_LEN], const char *username,
                    const uint8_t session_id[AUTH_TOKEN_SESSION_ID_LEN], uint64_t initial_s,
                    uint64_t issued_s, char out[AUTH_TOKEN_LEN + 1])
{
    uint8_t data[AUTH_TOKEN_DATA_LEN];
    size_t olen = 0;
    int err;

    memcpy(data, session_id, AUTH_TOKEN_SESSION_ID_LEN);
    put_be64(data + TS_OFF, initial_s);
    put_be64(data + TS_OFF + 8, issued_s);
    err = token_hmac(secret, username, data, data + HMAC_OFF);
    memcpy(out, AUTH_TOKEN_PREFIX, AUTH_TOKEN_PREFIX_LEN);
    if (!err && (mbedtls_base64_encode((unsigned char *)out + AUTH_TOKEN_PREFIX_LEN,
                                       B64_DATA_LEN + 1, &olen, data, sizeof(data)) != 0 ||
                 olen != B64_DATA_LEN)) {
        err = -PE_CRYPTO;
    }
    if (err) {
        out[0] = '\0';
    }
    return err;
}

static bool is_b64_char(char ch)
{
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
           ch == '+' || ch == '/';
}

/* The 60 data bytes of token into data. 0 or -PE_MALFORMED. */
static int decode_data(const char *token, uint8_t data[AUTH_TOKEN_DATA_LEN])
{
    const char *b64 = token + AUTH_TOKEN_PREFIX_LEN;
    size_t olen = 0;

    if (!auth_token_is_token(token) || strnlen(b64, B64_DATA_LEN + 1) != B64_DATA_LEN) {
        return -PE_MALFORMED;
    }
    for (size_t i = 0; i < B64_DATA_LEN; i++) {
        if (!is_b64_char(b64[i])) {
            return -PE_MALFORMED;
        }
    }
    if (mbedtls_base64_decode(data, AUTH_TOKEN_DATA_LEN, &olen, (const unsigned char *)b64,
                              B64_DATA_LEN) != 0 ||
        olen != AUTH_TOKEN_DATA_LEN) {
        return -PE_MALFORMED;
    }
    return 0;
}

static void fill_info(const uint8_t *data, struct auth_token_info *info)
{
    memcpy(info->session_id, data, AUTH_TOKEN_SESSION_ID_LEN);
    info->initial_s = get_be64(data + TS_OFF);
    info->issued_s = get_be64(data + TS_OFF + 8);
}

int auth_token_decode(const char *token, struct auth_token_info *info)
{
    uint8_t data[AUTH_TOKEN_DATA_LEN];
    int err = decode_data(token, data);

    if (!err) {
        fill_info(data, info);
    }
    return err;
}

static bool hmac_matches(const uint8_t secret[AUTH_TOKEN_SECRET_LEN], const char *username,
                         const uint8_t *data)
{
    uint8_t mac[AUTH_TOKEN_HMAC_LEN];
    bool ok = token_hmac(secret, username, data, mac) == 0 &&
              mbedtls_ct_memcmp(mac, data + HMAC_OFF, AUTH_TOKEN_HMAC_LEN) == 0;

    mbedtls_platform_zeroize(mac, sizeof(mac));
    return ok;
}

unsigned auth_token_verify(const uint8_t secret[AUTH_TOKEN_SECRET_LEN], const char *username,
                           const char *token, uint64_t now_s, uint64_t renewal_s,
                           uint64_t lifetime_s, struct auth_token_info *info)
{
    uint8_t data[AUTH_TOKEN_DATA_LEN];
    struct auth_token_info ti;
    unsigned flags;

    if (decode_data(token, data) != 0) {
        return 0;
    }
    if (hmac_matches(secret, username, data)) {
        flags = AUTH_TOKEN_HMAC_OK;
    } else if (hmac_matches(secret, "", data)) {
        flags = AUTH_TOKEN_HMAC_OK | AUTH_TOKEN_VALID_EMPTYUSER;
    } else {
        return 0;
    }
    fill_info(data, &ti);
    /* Renewed in time: now in [issued, issued + 2 * renewal), written without overflow. */
    if (now_s < ti.issued_s || now_s - ti.issued_s >= 2 * renewal_s) {
        flags |= AUTH_TOKEN_EXPIRED;
    }
    if (ti.issued_s < ti.initial_s) {
        flags |= AUTH_TOKEN_EXPIRED; /* 2.6: "Broken/unsynchronised clock?" */
    }
    if (lifetime_s > 0 && now_s > ti.initial_s && now_s - ti.initial_s > lifetime_s) {
        flags |= AUTH_TOKEN_EXPIRED;
    }
    if (info) {
        *info = ti;
    }
    return flags;
}

bool auth_token_same_session(const char *a, const char *b)
{
    const size_t n = AUTH_TOKEN_PREFIX_LEN + AUTH_TOKEN_SESSION_ID_B64_LEN;

    if (strnlen(a, n) < n || strnlen(b, n) < n) {
        return false;
    }
    return mbedtls_ct_memcmp(a, b, n) == 0;
}

int auth_token_session_id_text(const char *token, char out[AUTH_TOKEN_SESSION_ID_B64_LEN + 1])
{
    const size_t n = AUTH_TOKEN_PREFIX_LEN + AUTH_TOKEN_SESSION_ID_B64_LEN;

    out[0] = '\0';
    if (strnlen(token, n) < n) {
        return -PE_MALFORMED;
    }
    memcpy(out, token + AUTH_TOKEN_PREFIX_LEN, AUTH_TOKEN_SESSION_ID_B64_LEN);
    out[AUTH_TOKEN_SESSION_ID_B64_LEN] = '\0';
    return 0;
}

const char *auth_token_session_state(bool has_token, unsigned flags)
{
    if (!has_token) {
        return "Initial";
    }
    if (!(flags & AUTH_TOKEN_HMAC_OK)) {
        return "Invalid";
    }
    switch (flags & (AUTH_TOKEN_VALID_EMPTYUSER | AUTH_TOKEN_EXPIRED)) {
    case 0:
        return "Authenticated";
    case AUTH_TOKEN_EXPIRED:
        return "Expired";
    case AUTH_TOKEN_VALID_EMPTYUSER:
        return "AuthenticatedEmptyUser";
    default:
        return "ExpiredEmptyUser";
    }
}

/* ---- the key file ---- */

#define PEM_LINE 64 /* base64 characters per line, as OpenSSL's PEM writer */

/* Append len bytes of p to out (cap bytes, *n used). False when it does not fit with a NUL. */
static bool put(char *out, size_t cap, size_t *n, const char *p, size_t len)
{
    if (*n + len + 1 > cap) {
        return false;
    }
    memcpy(out + *n, p, len);
    *n += len;
    out[*n] = '\0';
    return true;
}

int auth_token_key_write(const uint8_t data[AUTH_TOKEN_KEY_DATA_LEN], char *out, size_t cap,
                         size_t *out_len)
{
    static const char begin[] = "-----BEGIN " AUTH_TOKEN_PEM_NAME "-----\n";
    static const char end[] = "-----END " AUTH_TOKEN_PEM_NAME "-----\n";
    char b64[AUTH_TOKEN_KEY_DATA_LEN / 3 * 4 + 8];
    size_t b64_len = 0, n = 0;
    bool ok;

    *out_len = 0;
    if (mbedtls_base64_encode((unsigned char *)b64, sizeof(b64), &b64_len, data,
                              AUTH_TOKEN_KEY_DATA_LEN) != 0) {
        return -PE_NOSPACE;
    }
    ok = put(out, cap, &n, begin, sizeof(begin) - 1);
    for (size_t i = 0; ok && i < b64_len; i += PEM_LINE) {
        size_t take = b64_len - i < PEM_LINE ? b64_len - i : PEM_LINE;

        ok = put(out, cap, &n, b64 + i, take) && put(out, cap, &n, "\n", 1);
    }
    ok = ok && put(out, cap, &n, end, sizeof(end) - 1);
    mbedtls_platform_zeroize(b64, sizeof(b64));
    if (!ok) {
        mbedtls_platform_zeroize(out, cap);
        return -PE_NOSPACE;
    }
    *out_len = n;
    return 0;
}

#define KEY_B64_MAX 4096 /* base64 characters kept from the block; 2.6 writes 172 */

static const char pem_begin[] = "-----BEGIN ";
static const char pem_end[] = "-----END ";
static const char pem_tail[] = "-----";

/* The line [p, p+len) without its trailing blanks and "\r". */
static size_t trim_len(const char *p, size_t len)
{
    while (len > 0 && (p[len - 1] == '\r' || p[len - 1] == ' ' || p[len - 1] == '\t')) {
        len--;
    }
    return len;
}

/* Whether line (len chars) is "<marker><AUTH_TOKEN_PEM_NAME>-----". */
static bool is_marker(const char *line, size_t len, const char *marker)
{
    size_t m = strlen(marker), n = sizeof(AUTH_TOKEN_PEM_NAME) - 1, t = sizeof(pem_tail) - 1;

    return len == m + n + t && memcmp(line, marker, m) == 0 &&
           memcmp(line + m, AUTH_TOKEN_PEM_NAME, n) == 0 && memcmp(line + m + n, pem_tail, t) == 0;
}

static int key_fail(uint8_t *secret, size_t *err_line, size_t line, const char **why,
                    const char *text)
{
    mbedtls_platform_zeroize(secret, AUTH_TOKEN_SECRET_LEN);
    *err_line = line;
    *why = text;
    return -PE_MALFORMED;
}

int auth_token_key_parse(const char *text, size_t text_len, uint8_t secret[AUTH_TOKEN_SECRET_LEN],
                         size_t *err_line, const char **why)
{
    char buf[KEY_B64_MAX];
    uint8_t data[KEY_B64_MAX / 4 * 3];
    size_t pos = 0, line_no = 0, begin_line = 0, n_b64 = 0, olen = 0;
    bool is_in_block = false, is_done = false;
    int err = 0;

    while (pos < text_len && !is_done) {
        const char *line = text + pos;
        const char *nl = memchr(line, '\n', text_len - pos);
        size_t raw = nl ? (size_t)(nl - line) : text_len - pos;
        size_t len = trim_len(line, raw);

        pos += raw + (nl ? 1 : 0);
        line_no++;
        if (!is_in_block) {
            if (is_marker(line, len, pem_begin)) {
                is_in_block = true;
                begin_line = line_no;
            } else if (len >= sizeof(pem_begin) - 1 &&
                       memcmp(line, pem_begin, sizeof(pem_begin) - 1) == 0) {
                return key_fail(
                    secret, err_line, line_no, why,
                    "a PEM block of another kind; expected '-----BEGIN " AUTH_TOKEN_PEM_NAME
                    "-----' (openvpn --genkey auth-token)");
            }
            continue;
        }
        if (is_marker(line, len, pem_end)) {
            is_done = true;
            continue;
        }
        if (len >= sizeof(pem_end) - 1 && memcmp(line, pem_end, sizeof(pem_end) - 1) == 0) {
            err =
                key_fail(secret, err_line, line_no, why, "END line does not match the BEGIN line");
            goto out;
        }
        for (size_t i = 0; i < len; i++) {
            if (!is_b64_char(line[i]) && line[i] != '=') {
                err = key_fail(secret, err_line, line_no, why, "not a base64 character");
                goto out;
            }
            if (n_b64 == sizeof(buf)) {
                err = key_fail(secret, err_line, line_no, why, "key block too long");
                goto out;
            }
            buf[n_b64++] = line[i];
        }
    }
    if (!is_in_block) {
        return key_fail(secret, err_line, 0, why,
                        "no '-----BEGIN " AUTH_TOKEN_PEM_NAME
                        "-----' line (not a file from openvpn --genkey auth-token)");
    }
    if (!is_done) {
        err = key_fail(secret, err_line, begin_line, why,
                       "no '-----END " AUTH_TOKEN_PEM_NAME "-----' line after this BEGIN line");
        goto out;
    }
    if (mbedtls_base64_decode(data, sizeof(data), &olen, (const unsigned char *)buf, n_b64) != 0) {
        err = key_fail(secret, err_line, begin_line, why, "the key block is not valid base64");
        goto out;
    }
    if (olen < AUTH_TOKEN_KEY_DATA_LEN) {
        err = key_fail(secret, err_line, begin_line, why,
                       "the key block is too short (openvpn needs 128 bytes)");
        goto out;
    }
    memcpy(secret, data + AUTH_TOKEN_KEY_HMAC_OFF, AUTH_TOKEN_SECRET_LEN);
    *err_line = 0;
    *why = NULL;
out:
    mbedtls_platform_zeroize(buf, sizeof(buf));
    mbedtls_platform_zeroize(data, sizeof(data));
    return err;
}
