/* proto/static_key.h: the "OpenVPN Static key V1" text format used by tls-auth and tls-crypt.
 *
 * The file holds a struct key2 of 256 bytes, written as hex between a BEGIN and an END line
 * (openvpn --genkey tls-auth / tls-crypt / secret). Layout of the 256 bytes (OpenVPN
 * src/openvpn/crypto.h, struct key2): key[0].cipher = 0..63, key[0].hmac = 64..127,
 * key[1].cipher = 128..191, key[1].hmac = 192..255. Format from read_key_file() in
 * src/openvpn/crypto.c.
 */
#ifndef PROTO_STATIC_KEY_H
#define PROTO_STATIC_KEY_H

#include <stddef.h>
#include <stdint.h>

#define STATIC_KEY_LEN 256      /* struct key2: two keys of cipher[64] || hmac[64] */
#define STATIC_KEY_HALF_LEN 128 /* one struct key: cipher[64] || hmac[64] */
#define STATIC_KEY_CIPHER_OFF 0 /* offset of the cipher slot inside one key */
#define STATIC_KEY_HMAC_OFF 64  /* offset of the hmac slot inside one key */
#define STATIC_KEY_SLOT_LEN 64  /* bytes in a cipher or hmac slot */

/* Parse the text of an "OpenVPN Static key V1" file, e.g. the contents of a file written by
 * `openvpn --genkey tls-crypt` or the body of an inline <tls-auth> block.
 *
 * text need not be NUL-terminated; exactly text_len bytes are read. Lines end with "\n" or
 * "\r\n". Lines before "-----BEGIN OpenVPN Static key V1-----" and after
 * "-----END OpenVPN Static key V1-----" are ignored, as openvpn does. Between them every line is
 * empty, a '#' comment, or hex digits (either case) with optional blanks; exactly 256 bytes
 * (512 digits) must appear. Leading and trailing blanks on any line are ignored. (openvpn itself
 * rejects comments between the BEGIN and END lines; we accept them.) A file with only one key
 * (128 bytes), which openvpn tolerates for some uses, is rejected.
 *
 * key2 (256 bytes, caller-owned) receives the key on success and is zeroed on failure.
 * Returns 0, or -PE_MALFORMED (no BEGIN or END line, a non-hex character, an odd number of
 * digits, or not exactly 256 bytes). Any thread; no allocation.
 */
int static_key_parse(const char *text, size_t text_len, uint8_t key2[STATIC_KEY_LEN]);

/* Length of the text static_key_format() writes, without its NUL: the three comment lines,
 * BEGIN, 16 lines of 32 hex digits, END. */
#define STATIC_KEY_FORMAT_LEN (34 + 38 + 16 * 33 + 36)

/* Write key2 as the text of an "OpenVPN Static key V1" file, as `openvpn --genkey secret` /
 * tls-auth / tls-crypt writes it (crypto.c write_key_file(): a "2048 bit OpenVPN static key"
 * comment, then 16 bytes as lowercase hex a line). out has out_cap bytes (at least
 * STATIC_KEY_FORMAT_LEN + 1), receives NUL-terminated text, *out_len excludes the NUL.
 * Returns 0 or -PE_NOSPACE. Any thread. */
int static_key_format(const uint8_t key2[STATIC_KEY_LEN], char *out, size_t out_cap,
                      size_t *out_len);

#endif /* PROTO_STATIC_KEY_H */
