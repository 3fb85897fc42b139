/* proto/cert_name.c: see cert_name.h. */
#include "proto/cert_name.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <mbedtls/asn1.h>
#include <mbedtls/oid.h>
#include <openssl/objects.h>

#include "proto/client_name.h"
#include "proto/errors.h"

int cert_name_field_parse(const char *arg, struct cert_name_field *out, bool *is_upcased,
                          const char **why)
{
    size_t len = strlen(arg);
    bool has_upper = false;

    memset(out, 0, sizeof(*out));
    *is_upcased = false;
    if (len == 0 || len >= sizeof(out->name)) {
        *why = len == 0 ? "an empty field name" : "a field name longer than 63 bytes";
        return -PE_MALFORMED;
    }
    memcpy(out->name, arg, len + 1);
    if (strncmp(arg, "ext:", 4) == 0) {
        int nid = OBJ_txt2nid(arg + 4);

        if (nid == NID_subject_alt_name) {
            out->kind = CERT_NAME_EXT_SAN;
        } else if (nid == NID_issuer_alt_name) {
            out->kind = CERT_NAME_EXT_IAN;
        } else {
            *why = "only the extensions ext:subjectAltName and ext:issuerAltName are supported";
            return -PE_MALFORMED;
        }
        return 0;
    }
    for (size_t i = 0; i < len; i++) {
        has_upper = has_upper || isupper((unsigned char)arg[i]);
    }
    if (!has_upper) {
        for (size_t i = 0; i < len; i++) {
            out->name[i] = (char)toupper((unsigned char)out->name[i]);
        }
        *is_upcased = true;
    }
    if (strcmp(out->name, "serialNumber") == 0) {
        out->kind = CERT_NAME_SERIAL;
        return 0;
    }
    out->kind = CERT_NAME_SUBJECT;
    ASN1_OBJECT *obj = OBJ_txt2obj(out->name, 0);

    if (obj != NULL) {
        const unsigned char *der = OBJ_get0_data(obj);
        size_t der_len = OBJ_length(obj);

        if (der != NULL && der_len > 0 && der_len <= sizeof(out->oid)) {
            memcpy(out->oid, der, der_len);
            out->oid_len = der_len;
        }
        ASN1_OBJECT_free(obj);
    }
    return 0;
}

/* Append code point cp as UTF-8 to out[*o..cap); false when it does not fit or is NUL. */
static bool put_utf8(uint32_t cp, char *out, size_t cap, size_t *o)
{
    uint8_t b[4];
    size_t n;

    if (cp == 0 || cp > 0x10FFFF) {
        return false;
    }
    if (cp < 0x80) {
        b[0] = (uint8_t)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (uint8_t)(0xC0 | (cp >> 6));
        b[1] = (uint8_t)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (uint8_t)(0xE0 | (cp >> 12));
        b[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (uint8_t)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (uint8_t)(0xF0 | (cp >> 18));
        b[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (uint8_t)(0x80 | (cp & 0x3F));
        n = 4;
    }
    if (*o + n >= cap) {
        return false;
    }
    memcpy(out + *o, b, n);
    *o += n;
    return true;
}

/* A directory string (tag, val) as UTF-8 into out (cap bytes); the limits of cert_name_value. */
static int string_to_utf8(int tag, const uint8_t *val, size_t len, char *out, size_t cap)
{
    size_t width = tag == MBEDTLS_ASN1_BMP_STRING         ? 2
                   : tag == MBEDTLS_ASN1_UNIVERSAL_STRING ? 4
                                                          : 1;
    size_t o = 0;

    out[0] = '\0';
    if (len % width != 0) {
        return -PE_MALFORMED;
    }
    if (width == 1) {
        if (memchr(val, 0, len) != NULL) {
            return -PE_MALFORMED;
        }
        if (len > CERT_NAME_VALUE_MAX || len >= cap) {
            return -PE_NOSPACE;
        }
        memcpy(out, val, len);
        out[len] = '\0';
        return 0;
    }
    for (size_t i = 0; i < len; i += width) {
        uint32_t cp = 0;

        for (size_t k = 0; k < width; k++) {
            cp = (cp << 8) | val[i + k];
        }
        if (cp == 0) {
            out[0] = '\0';
            return -PE_MALFORMED;
        }
        if (!put_utf8(cp, out, cap < CERT_NAME_VALUE_MAX + 1 ? cap : CERT_NAME_VALUE_MAX + 1, &o)) {
            out[0] = '\0';
            return cp > 0x10FFFF ? -PE_MALFORMED : -PE_NOSPACE;
        }
    }
    out[o] = '\0';
    return 0;
}

/* "0x" and the serial number's upper-case hex digits, without leading zero bytes (OpenSSL's
 * ASN1_INTEGER holds none). */
static int serial_hex(const mbedtls_x509_crt *crt, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    const uint8_t *p = crt->serial.p;
    size_t len = crt->serial.len, o = 2;

    while (len > 1 && p[0] == 0) {
        p++;
        len--;
    }
    if (2 + 2 * len + 1 > cap || 2 + 2 * len > CERT_NAME_VALUE_MAX) {
        return -PE_NOSPACE;
    }
    out[0] = '0';
    out[1] = 'x';
    for (size_t i = 0; i < len; i++) {
        out[o++] = hex[p[i] >> 4];
        out[o++] = hex[p[i] & 15];
    }
    out[o] = '\0';
    return 0;
}

/* The last rfc822Name ([1] IA5String) of the GeneralNames in the extension whose OID is oid. */
static int alt_name_email(const mbedtls_x509_crt *crt, const char *oid, size_t oid_len, char *out,
                          size_t cap)
{
    unsigned char *p = crt->v3_ext.p, *end = p + crt->v3_ext.len, *ext_end;
    size_t len;
    int ret = -PE_STATE;

    if (p == NULL ||
        mbedtls_asn1_get_tag(&p, end, &len, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE)) {
        return -PE_STATE;
    }
    end = p + len;
    for (; p < end; p = ext_end) {
        if (mbedtls_asn1_get_tag(&p, end, &len, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE)) {
            return -PE_MALFORMED;
        }
        ext_end = p + len;
        if (mbedtls_asn1_get_tag(&p, ext_end, &len, MBEDTLS_ASN1_OID)) {
            return -PE_MALFORMED;
        }
        if (len != oid_len || memcmp(p, oid, len) != 0) {
            continue;
        }
        p += len;
        if (p < ext_end && *p == MBEDTLS_ASN1_BOOLEAN) { /* critical */
            if (mbedtls_asn1_get_tag(&p, ext_end, &len, MBEDTLS_ASN1_BOOLEAN)) {
                return -PE_MALFORMED;
            }
            p += len;
        }
        if (mbedtls_asn1_get_tag(&p, ext_end, &len, MBEDTLS_ASN1_OCTET_STRING) ||
            mbedtls_asn1_get_tag(&p, ext_end, &len,
                                 MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE)) {
            return -PE_MALFORMED;
        }
        unsigned char *names_end = p + len;

        while (p < names_end) {
            int tag = *p++;

            if (mbedtls_asn1_get_len(&p, names_end, &len)) {
                return -PE_MALFORMED;
            }
            if (tag == (MBEDTLS_ASN1_CONTEXT_SPECIFIC | 1)) { /* rfc822Name */
                char email[CERT_NAME_VALUE_MAX + 1];
                int err = string_to_utf8(MBEDTLS_ASN1_IA5_STRING, p, len, email, sizeof(email));

                if (err == 0 && strlen(email) < cap) {
                    strcpy(out, email);
                    ret = 0;
                } else if (ret != 0) {
                    ret = err ? err : -PE_NOSPACE;
                }
            }
            p += len;
        }
        return ret;
    }
    return -PE_STATE;
}

int cert_name_value(const mbedtls_x509_crt *crt, const struct cert_name_field *f, char *out,
                    size_t cap)
{
    const mbedtls_x509_name *last = NULL;
    int err;

    if (cap == 0) {
        return -PE_NOSPACE;
    }
    out[0] = '\0';
    switch (f->kind) {
    case CERT_NAME_SERIAL:
        return serial_hex(crt, out, cap);
    case CERT_NAME_EXT_SAN:
        err = alt_name_email(crt, MBEDTLS_OID_SUBJECT_ALT_NAME,
                             MBEDTLS_OID_SIZE(MBEDTLS_OID_SUBJECT_ALT_NAME), out, cap);
        break;
    case CERT_NAME_EXT_IAN:
        err = alt_name_email(crt, MBEDTLS_OID_ISSUER_ALT_NAME,
                             MBEDTLS_OID_SIZE(MBEDTLS_OID_ISSUER_ALT_NAME), out, cap);
        break;
    default:
        for (const mbedtls_x509_name *n = &crt->subject; n != NULL && f->oid_len > 0; n = n->next) {
            if (n->oid.p != NULL && n->oid.len == f->oid_len &&
                memcmp(n->oid.p, f->oid, f->oid_len) == 0) {
                last = n;
            }
        }
        err =
            last ? string_to_utf8(last->val.tag, last->val.p, last->val.len, out, cap) : -PE_STATE;
        break;
    }
    if (err) {
        out[0] = '\0';
    }
    return err;
}

int cert_name_get(const mbedtls_x509_crt *crt, const struct cert_name_field *f, size_t n, char *out,
                  size_t cap, char *why, size_t why_len)
{
    char value[CERT_NAME_VALUE_MAX + 1];
    size_t o = 0;

    if (cap == 0) {
        return -PE_NOSPACE;
    }
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        int err = cert_name_value(crt, &f[i], value, sizeof(value));
        size_t len = strlen(value);

        if (err == 0 && (o + (i ? 1 : 0) + len > CERT_NAME_JOINED_MAX || o + 1 + len >= cap)) {
            err = -PE_NOSPACE;
        }
        if (err) {
            snprintf(why, why_len,
                     "x509-username-field: could not extract %s from the client "
                     "certificate: %s",
                     f[i].name,
                     f[i].kind == CERT_NAME_SUBJECT && f[i].oid_len == 0
                         ? "no such X.509 attribute name"
                     : err == -PE_STATE   ? "it has none"
                     : err == -PE_NOSPACE ? "longer than 64 bytes (255 joined)"
                                          : "a NUL byte or a bad encoding in it");
            out[0] = '\0';
            return err;
        }
        if (i > 0) {
            out[o++] = '_';
        }
        memcpy(out + o, value, len + 1);
        o += len;
    }
    client_name_remap(out);
    return 0;
}

int cert_track_parse(const char *arg, struct cert_track *out, const char **why)
{
    memset(out, 0, sizeof(*out));
    if (arg[0] == '+') {
        out->is_full_chain = true;
        arg++;
    }
    if (arg[0] == '\0' || strlen(arg) >= sizeof(out->name)) {
        *why = "an empty or too long attribute name";
        return -PE_MALFORMED;
    }
    strcpy(out->name, arg);
    out->nid = OBJ_txt2nid(arg);
    if (out->nid == NID_undef) {
        *why = "no such attribute (OpenSSL's names: CN, emailAddress, SHA256, subjectAltName, ...)";
        return -PE_MALFORMED;
    }
    return 0;
}
