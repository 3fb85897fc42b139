/* tests/unit/test_cert_name.c: x509-username-field names (proto/cert_name.c).
 *
 * Certificates in tests/unit/data/cert_name/ (made with openssl, kept as files):
 *   full.crt   subject C=US, O=Org, OU=Sales, OU=Staff, CN=first cn, CN=last cn,
 *              emailAddress=alice@example.com; serial 0x00C0FFEE01; subjectAltName
 *              email:first@example.com, DNS:host.example.com, email:alt@example.com;
 *              issuerAltName email:ca@example.com
 *   plain.crt  subject CN=plain, no extensions
 *   bmp.crt    subject CN="café" as a BMPString
 * The expected values are what `openssl x509 -noout -subject -serial -ext subjectAltName` prints,
 * which is what openvpn 2.6 (OpenSSL build) takes: the last attribute of a type, the serial
 * number in upper-case hex after "0x", the last e-mail address of the extension.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "proto/cert_name.h"
#include "proto/errors.h"

static void load(const char *name, mbedtls_x509_crt *crt)
{
    char path[512];

    snprintf(path, sizeof(path), "%s/tests/unit/data/cert_name/%s", OVPND_SOURCE_DIR, name);
    mbedtls_x509_crt_init(crt);
    assert_int_equal(mbedtls_x509_crt_parse_file(crt, path), 0);
}

static void field(const char *arg, struct cert_name_field *f, bool want_upcased)
{
    const char *why = NULL;
    bool is_upcased;

    assert_int_equal(cert_name_field_parse(arg, f, &is_upcased, &why), 0);
    assert_int_equal(is_upcased, want_upcased);
}

static void value_is(const mbedtls_x509_crt *crt, const char *arg, const char *want)
{
    struct cert_name_field f;
    char out[CERT_NAME_VALUE_MAX + 1];
    const char *why;
    bool is_upcased;

    assert_int_equal(cert_name_field_parse(arg, &f, &is_upcased, &why), 0);
    assert_int_equal(cert_name_value(crt, &f, out, sizeof(out)), 0);
    assert_string_equal(out, want);
}

static void field_names_as_2_6_takes_them(void **state)
{
    struct cert_name_field f;
    const char *why = NULL;
    bool is_upcased;

    (void)state;
    field("ou", &f, true); /* all lower case: upper-cased (2.6's deprecated help) */
    assert_string_equal(f.name, "OU");
    field("emailAddress", &f, false); /* mixed case stays */
    assert_string_equal(f.name, "emailAddress");
    assert_int_equal(f.kind, CERT_NAME_SUBJECT);
    field("emailaddress", &f, true); /* becomes EMAILADDRESS, which OpenSSL does not know */
    assert_string_equal(f.name, "EMAILADDRESS");
    assert_int_equal(f.oid_len, 0);
    field("serialNumber", &f, false);
    assert_int_equal(f.kind, CERT_NAME_SERIAL);
    field("ext:subjectAltName", &f, false);
    assert_int_equal(f.kind, CERT_NAME_EXT_SAN);
    field("ext:issuerAltName", &f, false);
    assert_int_equal(f.kind, CERT_NAME_EXT_IAN);
    assert_int_equal(cert_name_field_parse("ext:keyUsage", &f, &is_upcased, &why), -PE_MALFORMED);
    assert_non_null(strstr(why, "subjectAltName"));
    assert_int_equal(cert_name_field_parse("", &f, &is_upcased, &why), -PE_MALFORMED);
}

static void values_from_the_subject(void **state)
{
    mbedtls_x509_crt crt;

    (void)state;
    load("full.crt", &crt);
    value_is(&crt, "CN", "last cn"); /* the last CN, as OpenSSL's lookup gives it */
    value_is(&crt, "commonName", "last cn");
    value_is(&crt, "2.5.4.3", "last cn");
    value_is(&crt, "cn", "last cn");
    value_is(&crt, "OU", "Staff");
    value_is(&crt, "O", "Org");
    value_is(&crt, "emailAddress", "alice@example.com");
    value_is(&crt, "serialNumber", "0xC0FFEE01");
    value_is(&crt, "ext:subjectAltName", "alt@example.com");
    value_is(&crt, "ext:issuerAltName", "ca@example.com");
    mbedtls_x509_crt_free(&crt);
    load("bmp.crt", &crt);
    value_is(&crt, "CN", "caf\xc3\xa9");
    mbedtls_x509_crt_free(&crt);
}

static void missing_fields_refuse(void **state)
{
    struct cert_name_field f[2];
    mbedtls_x509_crt crt;
    char out[256], why[300];

    (void)state;
    load("plain.crt", &crt);
    field("emailAddress", &f[0], false);
    assert_int_equal(cert_name_get(&crt, f, 1, out, sizeof(out), why, sizeof(why)), -PE_STATE);
    assert_string_equal(out, "");
    assert_non_null(strstr(why, "could not extract emailAddress"));
    field("ext:subjectAltName", &f[0], false);
    assert_int_equal(cert_name_get(&crt, f, 1, out, sizeof(out), why, sizeof(why)), -PE_STATE);
    field("emailaddress", &f[0], true);
    assert_int_equal(cert_name_get(&crt, f, 1, out, sizeof(out), why, sizeof(why)), -PE_STATE);
    assert_non_null(strstr(why, "no such X.509 attribute name"));
    mbedtls_x509_crt_free(&crt);
}

static void several_fields_are_joined(void **state)
{
    struct cert_name_field f[3];
    mbedtls_x509_crt crt;
    char out[256], why[300];

    (void)state;
    load("full.crt", &crt);
    field("CN", &f[0], false);
    field("serialNumber", &f[1], false);
    field("emailAddress", &f[2], false);
    assert_int_equal(cert_name_get(&crt, f, 3, out, sizeof(out), why, sizeof(why)), 0);
    assert_string_equal(out, "last cn_0xC0FFEE01_alice@example.com");
    mbedtls_x509_crt_free(&crt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(field_names_as_2_6_takes_them),
        cmocka_unit_test(values_from_the_subject),
        cmocka_unit_test(missing_fields_refuse),
        cmocka_unit_test(several_fields_are_joined),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
