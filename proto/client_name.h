/* proto/client_name.h: the names a client chooses (its certificate's common name, the username
 * and password of auth-user-pass) made safe to print, compare and write to files, as openvpn
 * 2.6 does before it uses them.
 *
 * openvpn 2.6 (ssl_verify.c verify_cert and verify_user_pass, string_mod with CC_PRINT and
 * CC_CRLF; buffer.c char_class) keeps each byte from 0x20 up except 0x7f, so UTF-8 passes
 * unchanged, and writes '_' in place of every other byte (TAB, CR, LF and the other control
 * characters). Commas, quotes, spaces and backslashes are kept: files that hold these names
 * must quote them (status.h, pool_persist.h).
 *
 * The common name: 2.6 with OpenSSL (Debian's build) refuses a certificate whose CN is longer
 * than 64 bytes (ssl_verify.h TLS_USERNAME_LEN; ssl_verify_openssl.c extract_x509_field_ssl)
 * and cuts a CN at an embedded NUL byte, so "client1<NUL>x" becomes "client1". ovpnd refuses
 * such a CN instead: a C string cannot hold it, and the cut name would be another client's for
 * client-config-dir, the address pool and duplicate-cn. The CN is taken byte for byte as the
 * certificate encodes it (as 2.6 with Mbed TLS does; 2.6 with OpenSSL converts BMPString and
 * UniversalString to UTF-8, whose NUL bytes make ovpnd refuse those).
 *
 * Pure functions; any thread.
 */
#ifndef PROTO_CLIENT_NAME_H
#define PROTO_CLIENT_NAME_H

#include <stddef.h>
#include <stdint.h>

#define CLIENT_NAME_CN_MAX 64 /* bytes of a common name at most, as 2.6's TLS_USERNAME_LEN */

/* Replace, in place, every byte of the NUL-terminated s below 0x20 or equal to 0x7f with '_'.
 * The length does not change. */
void client_name_remap(char *s);

/* The common name from the len bytes of a certificate's CN attribute value (val, as the DER
 * holds it), into cn (cap bytes), NUL-terminated and remapped as client_name_remap does.
 * An empty value gives "" (the caller decides about a certificate without a name). Returns 0,
 * -PE_MALFORMED when val holds a NUL byte, or -PE_NOSPACE when len is above CLIENT_NAME_CN_MAX
 * or does not fit cap; cn is "" on error. */
int client_name_from_cn(const uint8_t *val, size_t len, char *cn, size_t cap);

#endif /* PROTO_CLIENT_NAME_H */
