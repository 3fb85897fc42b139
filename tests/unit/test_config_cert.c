/* tests/unit/test_config_cert.c: the certificate options of server/config/config_cert.c:
 * askpass with an encrypted key, pkcs12, extra-certs, capath, crl-verify DIR dir,
 * x509-username-field, x509-track and tls-export-cert, as openvpn 2.6 takes them (options.c,
 * ssl_openssl.c); management-query-passwords and management-external-cert, whose key password
 * and certificate come later (config_key_unlock, config_cert_set_external).
 *
 * Files: tests/unit/data/config (ca.crt, server.crt, server.key) and tests/unit/data/cert_name:
 * server-enc.key (server.key as PKCS#8 with AES-256-CBC and PBKDF2-HMAC-SHA256, what openssl 3
 * writes and Mbed TLS 2.28 cannot read), askpass.txt (its password "correct horse"),
 * askpass-wrong.txt, server.p12 (key, certificate and CA, the same password, OpenSSL 3's default
 * encryption) and server-nopass.p12 (no password).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "proto/cert_name.h"
#include "server/config/config.h"

#define ERR_LEN 1024
#define CN "../cert_name/"
#define NET                                                                                        \
    "dev tun\n"                                                                                    \
    "topology subnet\n"                                                                            \
    "server 198.19.0.0 255.255.255.0\n"
#define BASE NET "ca ca.crt\ncert server.crt\nkey server.key\n"

static int parse(struct config *cfg, const char *text, char *err)
{
    config_init(cfg);
    return config_parse_string(cfg, "t.conf", text, err, ERR_LEN);
}

static void expect_ok(struct config *cfg, const char *text)
{
    char err[ERR_LEN];

    if (parse(cfg, text, err) != 0) {
        fail_msg("unexpected error: %s", err);
    }
}

static void expect_error_prefix(const char *text, const char *prefix)
{
    struct config cfg;
    char err[ERR_LEN];

    assert_int_equal(parse(&cfg, text, err), -EINVAL);
    if (strncmp(err, prefix, strlen(prefix)) != 0) {
        fail_msg("error '%s' does not start with '%s'", err, prefix);
    }
    config_free(&cfg);
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;

    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) {
        n++;
    }
    return n;
}

static void askpass_decrypts_the_key(void **state)
{
    struct config cfg;

    (void)state;
    expect_ok(&cfg, NET "ca ca.crt\ncert server.crt\nkey " CN "server-enc.key\n"
                        "askpass " CN "askpass.txt\n");
    assert_non_null(strstr(cfg.tls.key.data, "-----BEGIN PRIVATE KEY-----"));
    assert_null(strstr(cfg.tls.key.data, "ENCRYPTED"));
    config_free(&cfg);
    expect_error_prefix(NET "ca ca.crt\ncert server.crt\nkey " CN "server-enc.key\n"
                            "askpass " CN "askpass-wrong.txt\n",
                        "t.conf:6: key: cannot decrypt");
    /* askpass with a key that is not encrypted: nothing to do, as in 2.6 */
    expect_ok(&cfg, BASE "askpass " CN "askpass-wrong.txt\n");
    config_free(&cfg);
}

static void pkcs12_gives_key_cert_and_ca(void **state)
{
    struct config cfg;

    (void)state;
    expect_ok(&cfg, NET "pkcs12 " CN "server.p12\naskpass " CN "askpass.txt\n");
    assert_non_null(strstr(cfg.tls.key.data, "-----BEGIN PRIVATE KEY-----"));
    assert_int_equal(count(cfg.tls.cert.data, "-----BEGIN CERTIFICATE-----"), 1);
    assert_int_equal(count(cfg.tls.ca.data, "-----BEGIN CERTIFICATE-----"), 1);
    config_free(&cfg);
    /* with `ca`, the PKCS#12 file's CA certificates are sent after the server's (2.6) */
    expect_ok(&cfg, NET "ca ca.crt\npkcs12 " CN "server-nopass.p12\n");
    assert_int_equal(count(cfg.tls.cert.data, "-----BEGIN CERTIFICATE-----"), 2);
    config_free(&cfg);
    expect_error_prefix(NET "pkcs12 " CN "server.p12\naskpass " CN "askpass-wrong.txt\n",
                        "t.conf:4: pkcs12: cannot decode");
    expect_error_prefix(NET "cert server.crt\npkcs12 " CN "server-nopass.p12\n",
                        "t.conf:5: pkcs12: cannot be used with cert or key");
    expect_error_prefix(NET "pkcs12 ca.crt\n", "t.conf:4: pkcs12: ca.crt is not a PKCS#12 file");
}

static void extra_certs_follow_the_certificate(void **state)
{
    struct config cfg;

    (void)state;
    expect_ok(&cfg, BASE "extra-certs ca.crt\n");
    assert_int_equal(count(cfg.tls.cert.data, "-----BEGIN CERTIFICATE-----"), 2);
    config_free(&cfg);
    expect_error_prefix(BASE "extra-certs server.key\n", "t.conf:7: extra-certs: ");
}

static void capath_and_crl_dir(void **state)
{
    struct config cfg;
    bool has_warning = false;

    (void)state;
    /* capath with ca, and alone (2.6 options.c check_ca_required takes either) */
    expect_ok(&cfg, BASE "capath " CN "\n");
    assert_non_null(cfg.cert.capath);
    assert_non_null(strstr(cfg.cert.capath, "cert_name"));
    assert_non_null(cfg.tls.ca.data);
    config_free(&cfg);
    expect_ok(&cfg, NET "capath .\ncert server.crt\nkey server.key\n");
    assert_non_null(cfg.cert.capath);
    assert_null(cfg.tls.ca.data);
    config_free(&cfg);
    /* 2.6 starts with a capath that is not a directory (only R_OK is checked): a warning */
    expect_ok(&cfg, BASE "capath ca.crt\n");
    for (size_t i = 0; i < cfg.n_warnings; i++) {
        has_warning = has_warning || strstr(cfg.warnings[i], "capath: ") != NULL;
    }
    assert_true(has_warning);
    config_free(&cfg);
    expect_error_prefix(BASE "capath missing.d\n", "t.conf:7: capath: cannot read '");
    expect_error_prefix(NET "capath .\npkcs12 " CN "server-nopass.p12\n",
                        "t.conf:4: capath: cannot be used with pkcs12");
    expect_ok(&cfg, BASE "crl-verify " CN " dir\n");
    assert_non_null(cfg.cert.crl_dir);
    assert_non_null(strstr(cfg.cert.crl_dir, "cert_name"));
    assert_null(cfg.tls.crl.data);
    config_free(&cfg);
    expect_error_prefix(BASE "crl-verify ca.crt dir\n",
                        "t.conf:7: crl-verify: 'ca.crt' is not a directory ovpnd can read: not "
                        "a directory");
    expect_error_prefix(BASE "crl-verify . nodir\n",
                        "t.conf:7: crl-verify: the second argument can only be 'dir'");
}

static void x509_username_field_lines(void **state)
{
    struct config cfg;
    bool has_warning = false;

    (void)state;
    expect_ok(&cfg, BASE "x509-username-field ou emailAddress ext:subjectAltName\n");
    assert_int_equal(cfg.cert.n_username_fields, 3);
    assert_string_equal(cfg.cert.username_fields[0].name, "OU");
    assert_string_equal(cfg.cert.username_fields[1].name, "emailAddress");
    assert_int_equal(cfg.cert.username_fields[2].kind, CERT_NAME_EXT_SAN);
    for (size_t i = 0; i < cfg.n_warnings; i++) {
        has_warning = has_warning || strstr(cfg.warnings[i], "upcased the field name 'ou'");
    }
    assert_true(has_warning);
    config_free(&cfg);
    expect_error_prefix(BASE "x509-username-field ext:keyUsage\n",
                        "t.conf:7: x509-username-field: 'ext:keyUsage': only the extensions");
}

#define MGMT "management /run/m.sock unix\n"

/* management-query-passwords (2.6 misc.c get_user_pass_cr: an askpass FILE first, else the
 * management client): an encrypted key without askpass FILE stays locked until start-up gives
 * config_key_unlock the management client's password. */
static void query_passwords_leaves_the_key_locked(void **state)
{
    struct config cfg;
    char err[ERR_LEN];

    (void)state;
    expect_ok(&cfg, MGMT "management-query-passwords\n" NET "ca ca.crt\ncert server.crt\nkey " CN
                         "server-enc.key\n");
    assert_true(cfg.mgmt.query_passwords);
    assert_true(cfg.tls.is_key_locked);
    assert_non_null(strstr(cfg.tls.key.data, "ENCRYPTED"));
    assert_int_equal(config_key_unlock(&cfg, "wrong horse", err, sizeof(err)), -EACCES);
    assert_true(cfg.tls.is_key_locked);
    assert_int_equal(config_key_unlock(&cfg, "correct horse", err, sizeof(err)), 0);
    assert_false(cfg.tls.is_key_locked);
    assert_non_null(strstr(cfg.tls.key.data, "-----BEGIN PRIVATE KEY-----"));
    config_free(&cfg);
    /* askpass FILE still gives it */
    expect_ok(&cfg, MGMT "management-query-passwords\n" NET "ca ca.crt\ncert server.crt\nkey " CN
                         "server-enc.key\naskpass " CN "askpass.txt\n");
    assert_false(cfg.tls.is_key_locked);
    config_free(&cfg);
    /* a key in clear: nothing to ask */
    expect_ok(&cfg, MGMT "management-query-passwords\n" BASE);
    assert_false(cfg.tls.is_key_locked);
    config_free(&cfg);
    assert_int_equal(
        parse(&cfg, MGMT "management-query-passwords\n" NET "pkcs12 " CN "server.p12\n", err),
        -EINVAL);
    assert_non_null(strstr(err, "t.conf:6: pkcs12: "));
    assert_non_null(strstr(err, "its password cannot come from the management interface"));
    config_free(&cfg);
}

/* management-external-cert TAG (2.6 options.c): instead of cert, with management-external-key;
 * config_cert_set_external takes PEM certificates only. */
static void external_cert_comes_later(void **state)
{
#define EXT MGMT "management-external-key\nmanagement-external-cert srv\n"
    struct config cfg;
    char err[ERR_LEN], pem[8192];
    FILE *f = fopen("server.crt", "r");
    size_t len = f ? fread(pem, 1, sizeof(pem) - 1, f) : 0;

    (void)state;
    if (f) {
        fclose(f);
    }
    pem[len] = '\0';
    assert_true(len > 0);
    expect_ok(&cfg, EXT NET "ca ca.crt\nextra-certs ca.crt\n");
    assert_string_equal(cfg.mgmt.external_cert, "srv");
    assert_null(cfg.tls.cert.data);
    assert_int_equal(config_cert_set_external(&cfg, "not a certificate", err, sizeof(err)),
                     -EINVAL);
    assert_int_equal(config_cert_set_external(&cfg, "", err, sizeof(err)), -EINVAL);
    assert_null(cfg.tls.cert.data);
    assert_int_equal(config_cert_set_external(&cfg, pem, err, sizeof(err)), 0);
    /* extra-certs after it, as after `cert` */
    assert_int_equal(count(cfg.tls.cert.data, "-----BEGIN CERTIFICATE-----"), 2);
    assert_string_equal(cfg.tls.cert.origin, "management-external-cert srv");
    config_free(&cfg);
    expect_error_prefix(EXT NET "ca ca.crt\ncert server.crt\n",
                        "t.conf:8: cert: --cert and --management-external-cert are mutually "
                        "exclusive");
    expect_error_prefix(MGMT "management-external-cert srv\n" NET "ca ca.crt\nkey server.key\n",
                        "t.conf: --management-external-cert must be used with "
                        "--management-external-key");
#undef EXT
}

/* pkcs11-providers and pkcs11-id instead of cert and key (2.6 options.c
 * options_postprocess_verify_ce, in its words); the certificate comes from the token at start-up
 * (config_cert_set_external). ovpnd refuses a PIN cache that runs out and pkcs11-id-management
 * without the management client to ask (management-query-passwords). */
static void pkcs11_instead_of_cert_and_key(void **state)
{
#define P11 "pkcs11-providers /usr/lib/a.so /usr/lib/b.so\n"
#define ID "pkcs11-id 'SoftHSM\\x20project/SoftHSM\\x20v2/34af/tok/01'\n"
    struct config cfg;
    char err[ERR_LEN], pem[8192];
    FILE *f = fopen("server.crt", "r");
    size_t len = f ? fread(pem, 1, sizeof(pem) - 1, f) : 0;

    (void)state;
    if (f) {
        fclose(f);
    }
    pem[len] = '\0';
    assert_true(len > 0);
    expect_ok(&cfg,
              NET "ca ca.crt\n" P11 ID "pkcs11-protected-authentication 0 1\n"
                  "pkcs11-private-mode 1 0x10\npkcs11-cert-private 0 7\npkcs11-pin-cache -1\n");
    assert_int_equal(cfg.pkcs11.n_providers, 2);
    assert_string_equal(cfg.pkcs11.providers[1], "/usr/lib/b.so");
    /* single quotes keep the backslashes of the serialized id, as in 2.6 */
    assert_string_equal(cfg.pkcs11.id, "SoftHSM\\x20project/SoftHSM\\x20v2/34af/tok/01");
    assert_false(cfg.pkcs11.protected_auth[0]);
    assert_true(cfg.pkcs11.protected_auth[1]);
    assert_int_equal(cfg.pkcs11.private_mode[0], 1);
    assert_int_equal(cfg.pkcs11.private_mode[1], 0x10);
    assert_true(cfg.pkcs11.cert_private[1]);
    assert_int_equal(cfg.pkcs11.pin_cache_s, -1);
    assert_null(cfg.tls.cert.data);
    assert_null(cfg.tls.key.data);
    assert_int_equal(config_cert_set_external(&cfg, pem, err, sizeof(err)), 0);
    assert_string_equal(cfg.tls.cert.origin, "the certificate of pkcs11-id");
    config_free(&cfg);
    expect_error_prefix(BASE P11 ID, "t.conf:5: cert: Parameter --cert cannot be used when "
                                     "--pkcs11-provider is also specified");
    expect_error_prefix(NET "ca ca.crt\nkey server.key\n" P11 ID,
                        "t.conf:5: key: Parameter --key cannot be used when --pkcs11-provider");
    expect_error_prefix(NET "ca ca.crt\n" P11,
                        "t.conf:5: pkcs11-providers: Parameter --pkcs11-id or "
                        "--pkcs11-id-management should be specified");
    expect_error_prefix(NET "ca ca.crt\n" P11 ID "pkcs11-id-management\n",
                        "t.conf:6: pkcs11-id: Parameter --pkcs11-id cannot be used when "
                        "--pkcs11-id-management is also specified");
    expect_ok(&cfg,
              NET "ca ca.crt\n" P11 "pkcs11-id-management\n" MGMT "management-query-passwords\n");
    assert_true(cfg.pkcs11.id_management);
    assert_null(cfg.pkcs11.id);
    config_free(&cfg);
    expect_error_prefix(NET "ca ca.crt\n" P11 "pkcs11-id-management\n",
                        "t.conf:6: pkcs11-id-management: needs management and "
                        "management-query-passwords");
    expect_error_prefix(NET "ca ca.crt\n" P11 ID "pkcs11-pin-cache 300\n",
                        "t.conf:7: pkcs11-pin-cache: a PIN cache that runs out needs "
                        "management-query-passwords");
    expect_ok(&cfg, NET "ca ca.crt\n" P11 ID "pkcs11-pin-cache 300\n" MGMT
                        "management-query-passwords\n");
    assert_int_equal(cfg.pkcs11.pin_cache_s, 300);
    config_free(&cfg);
    expect_error_prefix(NET "ca ca.crt\n" P11 "pkcs11-private-mode zz\n",
                        "t.conf:6: pkcs11-private-mode: 'zz' is not a hexadecimal mask");
    /* without a provider, 2.6 warns and uses cert and key */
    expect_ok(&cfg, BASE ID);
    {
        size_t n = 0;

        for (size_t i = 0; i < cfg.n_warnings; i++) {
            n += strstr(cfg.warnings[i], "t.conf:7: pkcs11-id: Option pkcs11-id is ignored as no "
                                         "pkcs11-providers") != NULL;
        }
        assert_int_equal(n, 1);
    }
    config_free(&cfg);
#undef P11
#undef ID
}

static void x509_track_and_export_dir(void **state)
{
    struct config cfg;

    (void)state;
    expect_ok(&cfg, BASE "x509-track CN\nx509-track +SHA256\nx509-track subjectAltName\n"
                         "tls-export-cert .\n");
    assert_int_equal(cfg.cert.n_x509_track, 3);
    assert_string_equal(cfg.cert.x509_track[1].name, "SHA256");
    assert_true(cfg.cert.x509_track[1].is_full_chain);
    assert_false(cfg.cert.x509_track[0].is_full_chain);
    assert_non_null(cfg.cert.tls_export_cert_dir);
    config_free(&cfg);
    expect_error_prefix(BASE "x509-track NoSuchThing\n",
                        "t.conf:7: x509-track: 'NoSuchThing': no such attribute");
    expect_error_prefix(BASE "tls-export-cert missing.d\n",
                        "t.conf:7: tls-export-cert: 'missing.d' is not a directory ovpnd can "
                        "write to");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(askpass_decrypts_the_key),
        cmocka_unit_test(pkcs12_gives_key_cert_and_ca),
        cmocka_unit_test(extra_certs_follow_the_certificate),
        cmocka_unit_test(capath_and_crl_dir),
        cmocka_unit_test(x509_username_field_lines),
        cmocka_unit_test(x509_track_and_export_dir),
        cmocka_unit_test(query_passwords_leaves_the_key_locked),
        cmocka_unit_test(external_cert_comes_later),
        cmocka_unit_test(pkcs11_instead_of_cert_and_key),
    };

    if (chdir(OVPND_SOURCE_DIR "/tests/unit/data/config") != 0) {
        return 1;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
