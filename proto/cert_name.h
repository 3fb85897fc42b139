/* proto/cert_name.h: the name a client is known by, taken from its certificate as openvpn 2.6's
 * `x509-username-field FIELD...` says, and the certificate attributes `x509-track` exports.
 *
 * Facts from openvpn 2.6 (Debian's build: OpenSSL, with --enable-x509-alt-username):
 * - options.c: each FIELD not starting with "ext:" that has no upper-case letter is upper-cased
 *   ("ou" -> "OU", deprecated but still done); mixed case ("emailAddress") and "ext:..." stay.
 *   "ext:" takes subjectAltName and issuerAltName only; anything else stops start-up.
 * - ssl_verify_openssl.c backend_x509_get_username: a subject FIELD is looked up by OpenSSL's
 *   name for it (short or long name, or a dotted OID: "CN", "commonName", "2.5.4.3"); the
 *   subject's LAST attribute of that type is used, converted to UTF-8, at most 64 bytes
 *   (TLS_USERNAME_LEN). "serialNumber" is the certificate's serial number as "0x" and upper-case
 *   hex digits. "ext:subjectAltName" is the last rfc822Name (e-mail address) of the extension.
 * - ssl_verify.c verify_cert: the values of several FIELDs are joined with '_' (255 bytes at
 *   most); control characters become '_'. A missing field refuses the client certificate.
 *
 * Pure functions; any thread. Certificates are borrowed.
 */
#ifndef PROTO_CERT_NAME_H
#define PROTO_CERT_NAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mbedtls/x509_crt.h>

#define CERT_NAME_FIELDS_MAX 15  /* FIELDs of one x509-username-field line (2.6 MAX_PARMS - 1) */
#define CERT_NAME_FIELD_LEN 64   /* bytes of a FIELD's name, NUL included */
#define CERT_NAME_VALUE_MAX 64   /* bytes of one field's value (2.6 TLS_USERNAME_LEN) */
#define CERT_NAME_JOINED_MAX 255 /* bytes of the joined name (2.6's 256-byte buffer) */

enum cert_name_kind {
    CERT_NAME_SUBJECT = 0, /* an attribute of the subject, by OID */
    CERT_NAME_SERIAL,      /* "serialNumber": the certificate's serial number */
    CERT_NAME_EXT_SAN,     /* "ext:subjectAltName": its last e-mail address */
    CERT_NAME_EXT_IAN,     /* "ext:issuerAltName": the same from the issuer's alternative names */
};

struct cert_name_field {
    char name[CERT_NAME_FIELD_LEN]; /* as 2.6 names it, after upper-casing */
    enum cert_name_kind kind;
    uint8_t oid[32]; /* CERT_NAME_SUBJECT: the attribute's OID (DER contents) */
    size_t oid_len;  /* 0: OpenSSL has no object of that name (every client is refused) */
};

/* One FIELD of x509-username-field (or x509-track's ATTR without its '+') into out.
 * *is_upcased tells that 2.6's upper-casing applied (the caller warns as 2.6 does). Returns 0,
 * or -PE_MALFORMED with why (static) for an empty or too long name or an "ext:" other than
 * subjectAltName / issuerAltName. An unknown subject attribute name is not an error here (2.6
 * accepts it at start-up and refuses each client): out->oid_len is 0 then. */
int cert_name_field_parse(const char *arg, struct cert_name_field *out, bool *is_upcased,
                          const char **why);

/* The value of field f in crt into out (cap bytes, CERT_NAME_VALUE_MAX + 1 hold any value),
 * NUL-terminated, byte for byte (BMPString and UniversalString converted to UTF-8, as OpenSSL
 * does). Returns 0, -PE_STATE when crt has no such attribute (or f->oid_len is 0),
 * -PE_MALFORMED when the value holds a NUL byte (2.6 cuts it there; ovpnd refuses, see
 * proto/client_name.h) or cannot be decoded, -PE_NOSPACE when it is longer than
 * CERT_NAME_VALUE_MAX or than cap - 1. out is "" on error. */
int cert_name_value(const mbedtls_x509_crt *crt, const struct cert_name_field *f, char *out,
                    size_t cap);

/* The client's name from its certificate crt by the n fields f (x509-username-field): their
 * values joined with '_', control characters as '_' (client_name_remap), into out (cap bytes,
 * PEER_CN_MAX = 256 is enough). Returns 0, or the first failing cert_name_value error (or
 * -PE_NOSPACE when the joined name is longer than CERT_NAME_JOINED_MAX) with why (why_len
 * bytes) naming the field, as 2.6 logs "could not extract FIELD from X509 subject string". */
int cert_name_get(const mbedtls_x509_crt *crt, const struct cert_name_field *f, size_t n, char *out,
                  size_t cap, char *why, size_t why_len);

/* One `x509-track [+]ATTR` (2.6 ssl_verify_openssl.c x509_track_add): ATTR is an OpenSSL object
 * name (short or long): a subject attribute, an extension, or SHA1 / SHA256 for the
 * certificate's fingerprint; '+' exports it for every certificate of the chain, not only the
 * client's own. */
struct cert_track {
    char name[CERT_NAME_FIELD_LEN]; /* ATTR without '+', as the variable names it */
    int nid;                        /* OpenSSL's NID for it */
    bool is_full_chain;
};

/* Parse arg into out. Returns 0, or -PE_MALFORMED with why (static) when OpenSSL knows no such
 * object (2.6: "x509_track: no such attribute", which stops start-up). */
int cert_track_parse(const char *arg, struct cert_track *out, const char **why);

#endif /* PROTO_CERT_NAME_H */
