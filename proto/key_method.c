/* proto/key_method.c: read and write the key-method-2 message. */
#include "proto/key_method.h"

#include <string.h>

#include <mbedtls/platform_util.h>

#include "proto/cursor.h"
#include "proto/errors.h"

#define KEY_METHOD_2 2
#define KEY_METHOD_MASK 0x0f /* the high nibble is reserved for flags (ssl.h) */
#define STRING_LEN_MAX 0xffff

/* What to do with a string longer than its field. */
enum overflow { OVERFLOW_ERROR, OVERFLOW_FLAG, OVERFLOW_CUT_LINES };

/* Read one u16-length string into dst (cap bytes incl. NUL). *flag is set when an over-long
 * string was skipped (OVERFLOW_FLAG) or cut (OVERFLOW_CUT_LINES). */
static int read_string(struct cursor *c, char *dst, size_t cap, enum overflow mode, bool *flag)
{
    uint16_t n;
    int err = cur_be16(c, &n);

    dst[0] = '\0';
    if (err) {
        return err;
    }
    if (n == 0) {
        return 0; /* absent */
    }
    if (n > c->left) {
        return -PE_SHORT;
    }
    if (c->p[n - 1] != 0) {
        return -PE_MALFORMED;
    }
    size_t used = strnlen((const char *)c->p, n); /* up to the first NUL */
    if (n > cap) {
        if (mode == OVERFLOW_ERROR) {
            return -PE_MALFORMED;
        }
        *flag = true;
        if (mode == OVERFLOW_FLAG) {
            return cur_skip(c, n);
        }
        if (used > cap - 1) {
            /* keep whole lines only: cut after the last '\n' that fits */
            used = cap - 1;
            while (used > 0 && c->p[used - 1] != '\n') {
                used--;
            }
        }
    }
    memcpy(dst, c->p, used);
    dst[used] = '\0';
    return cur_skip(c, n);
}

static int parse(struct cursor *c, bool from_client, struct key_method2 *out)
{
    uint8_t method;
    bool ignored = false;
    int err = cur_skip(c, 4); /* legacy u32, ignored by 2.6 */

    if (!err) {
        err = cur_u8(c, &method);
    }
    if (err) {
        return err;
    }
    if ((method & KEY_METHOD_MASK) != KEY_METHOD_2) {
        return -PE_MALFORMED;
    }
    if (from_client) {
        err = cur_read(c, out->pre_master, sizeof(out->pre_master));
        out->has_pre_master = err == 0;
    }
    if (!err) {
        err = cur_read(c, out->random1, sizeof(out->random1));
    }
    if (!err) {
        err = cur_read(c, out->random2, sizeof(out->random2));
    }
    if (!err) {
        err = read_string(c, out->options, sizeof(out->options), OVERFLOW_ERROR, &ignored);
    }
    if (!err) {
        err = read_string(c, out->username, sizeof(out->username), OVERFLOW_FLAG,
                          &out->username_too_long);
    }
    if (!err) {
        err = read_string(c, out->password, sizeof(out->password), OVERFLOW_FLAG,
                          &out->password_too_long);
    }
    if (!err) {
        err = read_string(c, out->peer_info, sizeof(out->peer_info), OVERFLOW_CUT_LINES,
                          &out->peer_info_truncated);
    }
    return err;
}

int key_method2_parse(const uint8_t *msg, size_t len, bool from_client, struct key_method2 *out)
{
    struct cursor c = cur_make(msg, len);
    int err;

    memset(out, 0, sizeof(*out));
    err = parse(&c, from_client, out);
    if (err) {
        key_method2_wipe(out);
    }
    return err;
}

/* Write a field: "" as 00 00 when allow_empty (2.6 write_empty_string), otherwise the string
 * with its NUL. field_cap bounds the scan of the caller's array; max_len is the largest allowed
 * length incl. NUL. */
static int write_string(struct wbuf *w, const char *s, size_t field_cap, size_t max_len,
                        bool allow_empty)
{
    size_t n = strnlen(s, field_cap);

    if (n == field_cap || n + 1 > max_len) {
        return -PE_MALFORMED;
    }
    if (n == 0 && allow_empty) {
        return wbuf_be16(w, 0);
    }
    int err = wbuf_be16(w, (uint16_t)(n + 1));
    return err ? err : wbuf_put(w, s, n + 1);
}

int key_method2_write(const struct key_method2 *km, bool from_client, uint8_t *out, size_t cap,
                      size_t *out_len)
{
    struct wbuf w = wbuf_make(out, cap);
    int err = wbuf_be32(&w, 0);

    if (!err) {
        err = wbuf_u8(&w, KEY_METHOD_2);
    }
    if (!err && from_client) {
        err = wbuf_put(&w, km->pre_master, sizeof(km->pre_master));
    }
    if (!err) {
        err = wbuf_put(&w, km->random1, sizeof(km->random1));
    }
    if (!err) {
        err = wbuf_put(&w, km->random2, sizeof(km->random2));
    }
    if (!err) {
        err = write_string(&w, km->options, sizeof(km->options), KEY_METHOD2_OPTIONS_MAX, false);
    }
    if (!err) {
        err = write_string(&w, km->username, sizeof(km->username), KEY_METHOD2_USERPASS_MAX, true);
    }
    if (!err) {
        err = write_string(&w, km->password, sizeof(km->password), KEY_METHOD2_USERPASS_MAX, true);
    }
    if (!err) {
        err = write_string(&w, km->peer_info, sizeof(km->peer_info), STRING_LEN_MAX, true);
    }
    if (err) {
        mbedtls_platform_zeroize(out, w.len); /* the partial copy may hold secrets */
        return err;
    }
    *out_len = w.len;
    return 0;
}

void key_method2_wipe(struct key_method2 *km)
{
    mbedtls_platform_zeroize(km, sizeof(*km));
}
