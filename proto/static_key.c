/* proto/static_key.c: parser for the "OpenVPN Static key V1" text format. */
#include "proto/static_key.h"

#include <stdbool.h>
#include <string.h>

#include <mbedtls/platform_util.h>

#include "proto/errors.h"

/* The marker lines written by openvpn --genkey (src/openvpn/crypto.c, write_key_file()). */
static const char key_begin[] = "-----BEGIN OpenVPN Static key V1-----";
static const char key_end[] = "-----END OpenVPN Static key V1-----";

/* Where the hex digits parsed so far are going. */
struct hex_sink {
    uint8_t *out;
    size_t n_bytes;  /* complete bytes written to out */
    bool has_nibble; /* one digit of the next byte is pending in nibble */
    uint8_t nibble;
};

static bool is_blank(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f';
}

/* 0..15 for a hex digit, -1 otherwise. */
static int hex_value(char ch)
{
    if (ch >= '0' && ch <= '9') {
        return ch - '0';
    }
    if (ch >= 'a' && ch <= 'f') {
        return ch - 'a' + 10;
    }
    if (ch >= 'A' && ch <= 'F') {
        return ch - 'A' + 10;
    }
    return -1;
}

static bool line_is(const char *line, size_t line_len, const char *marker)
{
    size_t marker_len = strlen(marker);

    return line_len == marker_len && memcmp(line, marker, marker_len) == 0;
}

/* Feed one data line (already trimmed, not a comment) into sink. Digits pair up across blanks,
 * as in openvpn's reader. */
static int parse_hex_line(struct hex_sink *sink, const char *line, size_t line_len)
{
    for (size_t i = 0; i < line_len; i++) {
        int v;

        if (is_blank(line[i])) {
            continue;
        }
        v = hex_value(line[i]);
        if (v < 0) {
            return -PE_MALFORMED;
        }
        if (!sink->has_nibble) {
            sink->nibble = (uint8_t)v;
            sink->has_nibble = true;
            continue;
        }
        if (sink->n_bytes == STATIC_KEY_LEN) { /* more than 256 bytes */
            return -PE_MALFORMED;
        }
        sink->out[sink->n_bytes++] = (uint8_t)(sink->nibble << 4 | v);
        sink->has_nibble = false;
    }
    return 0;
}

int static_key_parse(const char *text, size_t text_len, uint8_t key2[STATIC_KEY_LEN])
{
    struct hex_sink sink = {key2, 0, false, 0};
    bool in_key = false, has_end = false;
    size_t pos = 0;
    int err = 0;

    while (pos < text_len && !has_end) {
        const char *line = text + pos;
        const char *nl = memchr(line, '\n', text_len - pos);
        size_t line_len = nl ? (size_t)(nl - line) : text_len - pos;

        pos += line_len + (nl ? 1 : 0);
        while (line_len > 0 && is_blank(line[0])) {
            line++;
            line_len--;
        }
        while (line_len > 0 && is_blank(line[line_len - 1])) {
            line_len--;
        }
        if (!in_key) {
            in_key = line_is(line, line_len, key_begin);
        } else if (line_is(line, line_len, key_end)) {
            has_end = true;
        } else if (line_len > 0 && line[0] != '#') {
            err = parse_hex_line(&sink, line, line_len);
            if (err) {
                break;
            }
        }
    }
    if (!err && (!has_end || sink.has_nibble || sink.n_bytes != STATIC_KEY_LEN)) {
        err = -PE_MALFORMED;
    }
    mbedtls_platform_zeroize(&sink, sizeof(sink)); /* a pending nibble is key material */
    if (err) {
        mbedtls_platform_zeroize(key2, STATIC_KEY_LEN);
    }
    return err;
}

int static_key_format(const uint8_t key2[STATIC_KEY_LEN], char *out, size_t out_cap,
                      size_t *out_len)
{
    static const char head[] = "#\n# 2048 bit OpenVPN static key\n#\n";
    static const char hex[] = "0123456789abcdef";
    size_t pos = 0;

    *out_len = 0;
    if (out_cap < STATIC_KEY_FORMAT_LEN + 1) {
        return -PE_NOSPACE;
    }
    memcpy(out + pos, head, sizeof(head) - 1);
    pos += sizeof(head) - 1;
    memcpy(out + pos, key_begin, sizeof(key_begin) - 1);
    pos += sizeof(key_begin) - 1;
    out[pos++] = '\n';
    for (size_t i = 0; i < STATIC_KEY_LEN; i++) {
        out[pos++] = hex[key2[i] >> 4];
        out[pos++] = hex[key2[i] & 0x0f];
        if (i % 16 == 15) {
            out[pos++] = '\n';
        }
    }
    memcpy(out + pos, key_end, sizeof(key_end) - 1);
    pos += sizeof(key_end) - 1;
    out[pos++] = '\n';
    out[pos] = '\0';
    *out_len = pos;
    return 0;
}
