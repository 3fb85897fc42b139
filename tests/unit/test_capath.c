/* tests/unit/test_capath.c: server/config/capath.c, the `capath DIR` hash directory: which
 * file names OpenSSL's hash directory lookup opens (by_dir.c: "%08lx.%s%d", counting up from 0
 * until a file cannot be loaded), and what capath_load takes from a directory with good, bad,
 * misnamed and unreachable files, and when capath_signature changes; and that a crl-verify
 * CRL read again keeps the directory's CRLs (proto/tls_session.c).
 *
 * Files: tests/unit/data/config/ca.crt (a CA certificate) and crl.pem (a CRL); the test names
 * copies of them by OpenSSL's hashes in a temporary directory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "server/config/capath.h"

#define DATA OVPND_SOURCE_DIR "/tests/unit/data/config/"

static void names_openssl_opens(void **state)
{
    static const struct {
        const char *name;
        bool is_ok, is_crl;
        uint32_t hash;
        unsigned index;
    } cases[] = {
        {"9d66eef0.0", true, false, 0x9d66eef0, 0},
        {"9d66eef0.r1", true, true, 0x9d66eef0, 1},
        {"00000000.10", true, false, 0, 10},
        {"ffffffff.r123456789", true, true, 0xffffffff, 123456789},
        {"9D66EEF0.0", false, false, 0, 0},  /* OpenSSL writes lower case */
        {"9d66eef0.01", false, false, 0, 0}, /* "%d" writes no leading zero */
        {"9d66eef0.r01", false, false, 0, 0},
        {"9d66eef0.", false, false, 0, 0},
        {"9d66eef0.r", false, false, 0, 0},
        {"9d66eef.0", false, false, 0, 0},
        {"9d66eef00.0", false, false, 0, 0},
        {"9d66eef0.0.pem", false, false, 0, 0},
        {"9d66eef0.x0", false, false, 0, 0},
        {"9d66eef0.-1", false, false, 0, 0},
        {"9d66eef0.1234567890", false, false, 0, 0},
        {"ca.crt", false, false, 0, 0},
        {"", false, false, 0, 0},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct capath_entry e;
        bool ok = capath_name_parse(cases[i].name, &e);

        if (ok != cases[i].is_ok) {
            fail_msg("'%s': %s, expected %s", cases[i].name, ok ? "taken" : "refused",
                     cases[i].is_ok ? "taken" : "refused");
        }
        if (ok) {
            assert_int_equal(e.hash, cases[i].hash);
            assert_int_equal(e.is_crl, cases[i].is_crl);
            assert_int_equal(e.index, cases[i].index);
            assert_string_equal(e.name, cases[i].name);
        }
    }
}

static void select_stops_at_the_first_gap(void **state)
{
    static const char *const names[] = {"0000000a.2", "0000000a.0",  "0000000b.1",  "0000000a.r1",
                                        "0000000a.1", "0000000a.r0", "0000000c.r0", "0000000a.4"};
    static const char *const read[] = {"0000000a.0",  "0000000a.1",  "0000000a.2",
                                       "0000000a.r0", "0000000a.r1", "0000000c.r0"};
    struct capath_entry e[8];
    size_t n_read = 0;

    (void)state;
    for (size_t i = 0; i < 8; i++) {
        assert_true(capath_name_parse(names[i], &e[i]));
    }
    assert_int_equal(capath_select(e, 8), 6);
    for (size_t i = 0; i < 8; i++) {
        bool is_listed = false;

        for (size_t j = 0; j < 6; j++) {
            is_listed = is_listed || strcmp(read[j], e[i].name) == 0;
        }
        if (e[i].is_read != is_listed) {
            fail_msg("%s: is_read %d", e[i].name, e[i].is_read);
        }
        n_read += e[i].is_read;
        if (i > 0) { /* sorted by hash, certificates before CRLs, index */
            assert_true(e[i - 1].hash < e[i].hash ||
                        (e[i - 1].hash == e[i].hash && e[i - 1].is_crl <= e[i].is_crl));
        }
    }
    assert_int_equal(n_read, 6);
    assert_int_equal(capath_select(e, 0), 0);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = calloc(1, 1 << 16);
    size_t n;

    assert_non_null(f);
    assert_non_null(buf);
    n = fread(buf, 1, (1 << 16) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static void put(const char *dir, const char *name, const char *text)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* OpenSSL's hash of ca.crt's subject and crl.pem's issuer, as `openssl rehash` names them. */
static void hashes(uint32_t *ca, uint32_t *crl_issuer)
{
    FILE *f = fopen(DATA "ca.crt", "r");
    X509 *x;
    X509_CRL *c;

    assert_non_null(f);
    x = PEM_read_X509(f, NULL, NULL, NULL);
    fclose(f);
    assert_non_null(x);
    *ca = (uint32_t)X509_NAME_hash_ex(X509_get_subject_name(x), NULL, NULL, NULL);
    X509_free(x);
    f = fopen(DATA "crl.pem", "r");
    assert_non_null(f);
    c = PEM_read_X509_CRL(f, NULL, NULL, NULL);
    fclose(f);
    assert_non_null(c);
    *crl_issuer = (uint32_t)X509_NAME_hash_ex(X509_CRL_get_issuer(c), NULL, NULL, NULL);
    X509_CRL_free(c);
}

static void rm_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;

    assert_non_null(d);
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
            assert_int_equal(unlinkat(dirfd(d), de->d_name, 0), 0);
        }
    }
    closedir(d);
    assert_int_equal(rmdir(dir), 0);
}

static void conf_zero(struct tls_server_conf *c)
{
    memset(c, 0, sizeof(*c));
    mbedtls_ssl_config_init(&c->conf);
    mbedtls_x509_crt_init(&c->ca);
    mbedtls_x509_crt_init(&c->cert);
    mbedtls_pk_init(&c->key);
}

static void load_takes_good_files_only(void **state)
{
    char dir[] = "/tmp/test_capath.XXXXXX", name[32], path[512];
    char *ca = slurp(DATA "ca.crt"), *crl = slurp(DATA "crl.pem");
    uint32_t ca_hash, crl_hash;
    struct tls_server_conf c;
    struct capath_stats st;
    uint64_t sig1, sig2, sig3;
    size_t n_ca = 0;

    (void)state;
    hashes(&ca_hash, &crl_hash);
    assert_non_null(mkdtemp(dir));
    snprintf(name, sizeof(name), "%08x.0", ca_hash);
    put(dir, name, ca); /* good */
    snprintf(name, sizeof(name), "%08x.r0", crl_hash);
    put(dir, name, crl); /* good */
    snprintf(name, sizeof(name), "%08x.2", ca_hash);
    put(dir, name, ca); /* after a gap (no .1): not read */
    put(dir, ca_hash == 0xdeadbeef ? "deadbee0.0" : "deadbeef.0", "not a certificate\n");
    put(dir, ca_hash == 0xdeadbeef ? "deadbee0.1" : "deadbeef.1", ca); /* after a bad one */
    put(dir, "0badc0de.r0", ca);                                       /* no CRL in it */
    put(dir, ca_hash == 0x12345678 ? "12345679.0" : "12345678.0", ca); /* misnamed */
    put(dir, "README", "not a hashed name: never opened\n");
    snprintf(path, sizeof(path), "%s/abcdef01.0", dir);
    assert_int_equal(mkfifo(path, 0600), 0); /* must not block the reader */

    assert_int_equal(capath_signature(dir, &sig1), 0);
    assert_int_equal(capath_signature(dir, &sig2), 0);
    assert_true(sig1 == sig2);

    conf_zero(&c);
    assert_int_equal(capath_load(dir, &c, &st), 0);
    assert_int_equal(st.n_files, 2);
    assert_int_equal(st.n_certs, 1);
    assert_int_equal(st.n_crls, 1);
    assert_int_equal(st.n_skipped, 6);
    for (const mbedtls_x509_crt *x = &c.ca; x && x->raw.p; x = x->next) {
        n_ca++;
    }
    assert_int_equal(n_ca, 1);
    assert_true(c.has_crl);
    assert_int_equal(c.n_crl_own, 0);
    tls_server_conf_clear(&c);

    /* a file added (the missing .1 brings .2 in too) changes the signature */
    snprintf(name, sizeof(name), "%08x.1", ca_hash);
    put(dir, name, ca);
    assert_int_equal(capath_signature(dir, &sig3), 0);
    assert_true(sig3 != sig1);
    conf_zero(&c);
    assert_int_equal(capath_load(dir, &c, &st), 0);
    assert_int_equal(st.n_files, 4);
    assert_int_equal(st.n_certs, 3);
    tls_server_conf_clear(&c);

    /* a directory that is gone: an error, nothing added */
    rm_dir(dir);
    assert_int_equal(capath_signature(dir, &sig3), -ENOENT);
    conf_zero(&c);
    assert_int_equal(capath_load(dir, &c, &st), -ENOENT);
    assert_int_equal(c.ca.version, 0);
    assert_false(c.has_crl);
    tls_server_conf_clear(&c);
    free(ca);
    free(crl);
}

static size_t n_crls(const mbedtls_x509_crl *c)
{
    size_t n = 0;

    for (; c && c->version != 0; c = c->next) {
        n++;
    }
    return n;
}

/* crl-verify's CRL, read again while the server runs, keeps capath's CRLs behind it. */
static void crl_reload_keeps_capath_crls(void **state)
{
    char *crl = slurp(DATA "crl.pem"), *ca = slurp(DATA "ca.crt");
    char err[200] = "";
    mbedtls_x509_crl dir_crls;
    mbedtls_x509_crt dir_cas;
    struct tls_server_conf c;

    (void)state;
    mbedtls_x509_crl_init(&dir_crls);
    mbedtls_x509_crt_init(&dir_cas);
    assert_int_equal(mbedtls_x509_crl_parse(&dir_crls, (const unsigned char *)crl, strlen(crl) + 1),
                     0);
    assert_int_equal(mbedtls_x509_crt_parse(&dir_cas, (const unsigned char *)ca, strlen(ca) + 1),
                     0);
    conf_zero(&c);
    assert_int_equal(
        tls_server_conf_set_crl(&c, (const uint8_t *)crl, strlen(crl) + 1, err, sizeof(err)), 0);
    assert_int_equal(tls_server_conf_add_trust(&c, &dir_cas, &dir_crls, err, sizeof(err)), 0);
    assert_int_equal(n_crls(&c.crl), 2);
    assert_int_equal(c.n_crl_own, 1);
    assert_non_null(c.ca.raw.p);
    assert_null(c.ca.next);
    assert_int_equal(
        tls_server_conf_set_crl(&c, (const uint8_t *)crl, strlen(crl) + 1, err, sizeof(err)), 0);
    assert_int_equal(n_crls(&c.crl), 2);
    assert_int_equal(c.n_crl_own, 1);
    /* a CRL that does not parse changes nothing */
    assert_int_not_equal(tls_server_conf_set_crl(&c, (const uint8_t *)"junk", 5, err, sizeof(err)),
                         0);
    assert_int_equal(n_crls(&c.crl), 2);
    tls_server_conf_clear(&c);
    mbedtls_x509_crl_free(&dir_crls);
    mbedtls_x509_crt_free(&dir_cas);
    free(crl);
    free(ca);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_openssl_opens),
        cmocka_unit_test(select_stops_at_the_first_gap),
        cmocka_unit_test(load_takes_good_files_only),
        cmocka_unit_test(crl_reload_keeps_capath_crls),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
