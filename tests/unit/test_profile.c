/* tests/unit/test_profile.c: `ovpnd profile` (server/config/profile.c): which client options
 * come out of which server config lines. The client-side meanings are openvpn 2.6's
 * (doc/man-sections): a client's key-direction is the inverse of the server's, `auth` names the
 * tls-auth digest, `remote HOST PORT PROTO` takes udp or tcp. Configs use the certificates and
 * keys of data/config (no client certificate: verify-client-cert none with a password check);
 * tests/netns/test_profile.sh connects stock clients on generated profiles.
 */
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

#include "proto/tls_crypt_v2.h"
#include "server/config/profile.h"

#define DATA_DIR OVPND_SOURCE_DIR "/tests/unit/data/config"

static char conf_path[] = "/tmp/ovpnd-test-profile-conf.XXXXXX";
static char out_path[64];
static char text[65536];

/* Write the server config: the common part, then extra (may be ""). */
static void write_conf(const char *extra)
{
    int fd = mkstemp(conf_path);
    FILE *f;

    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    assert_non_null(f);
    fprintf(f,
            "dev tun\ntopology subnet\nserver 198.19.0.0 255.255.255.0\n"
            "ca " DATA_DIR "/ca.crt\ncert " DATA_DIR "/server.crt\nkey " DATA_DIR
            "/server.key\ndh none\nverify-client-cert none\nscript-security 2\n"
            "auth-user-pass-verify /bin/true via-file\n%s\n",
            extra);
    assert_int_equal(fclose(f), 0);
    snprintf(out_path, sizeof(out_path), "%s.ovpn", conf_path);
}

/* Run `ovpnd profile --config CONF --out OUT ARGS...` (args NULL-terminated); the profile's
 * text into `text` when it succeeded. Returns the exit status. */
static int run(const char *first, ...)
{
    char *argv[32] = {"profile", "--config", conf_path, "--out", out_path};
    int argc = 5, rc;
    va_list ap;
    FILE *f;
    size_t n;

    va_start(ap, first);
    for (const char *a = first; a && argc < 31; a = va_arg(ap, const char *)) {
        argv[argc] = strdup(a);
        assert_non_null(argv[argc++]);
    }
    va_end(ap);
    unlink(out_path);
    text[0] = '\0';
    rc = profile_main(argc, argv);
    for (int i = 5; i < argc; i++) {
        free(argv[i]);
    }
    f = fopen(out_path, "r");
    if (f) {
        n = fread(text, 1, sizeof(text) - 1, f);
        text[n] = '\0';
        fclose(f);
    }
    return rc;
}

static bool has_line(const char *line)
{
    size_t len = strlen(line);

    for (const char *p = text; (p = strstr(p, line)) != NULL; p++) {
        if ((p == text || p[-1] == '\n') && p[len] == '\n') {
            return true;
        }
    }
    return false;
}

static int teardown(void **state)
{
    (void)state;
    unlink(conf_path);
    unlink(out_path);
    strcpy(conf_path, "/tmp/ovpnd-test-profile-conf.XXXXXX");
    return 0;
}

/* tls-auth with the server's direction 0: the client gets 1, the digest, the inline key; two
 * sockets (2.7 `local` lines) give a UDP and a TCP remote line, UDP first, and then no
 * explicit-exit-notify (UDP only in 2.6). */
static void test_tls_auth_two_sockets(void **state)
{
    struct stat st;

    (void)state;
    write_conf("local 198.18.0.1 443 tcp\nlocal 198.18.0.1 1194 udp\n"
               "tls-auth " DATA_DIR "/ta.key 0\nauth SHA256\ncompress lz4-v2\ntun-mtu 1400\n"
               "data-ciphers CHACHA20-POLY1305:AES-256-GCM");
    assert_int_equal(run("--remote", "vpn.example.com", NULL), 0);
    assert_true(has_line("client"));
    assert_true(has_line("remote vpn.example.com 1194 udp"));
    assert_true(has_line("remote vpn.example.com 443 tcp"));
    assert_true(strstr(text, "1194 udp") < strstr(text, "443 tcp"));
    assert_true(has_line("key-direction 1"));
    assert_true(has_line("auth SHA256"));
    assert_true(has_line("<tls-auth>"));
    assert_true(has_line("-----BEGIN OpenVPN Static key V1-----"));
    assert_true(has_line("compress lz4-v2"));
    assert_true(has_line("tun-mtu 1400"));
    assert_true(has_line("data-ciphers CHACHA20-POLY1305:AES-256-GCM"));
    assert_true(has_line("auth-user-pass"));
    assert_true(has_line("verify-x509-name ovpnd-test-server name"));
    assert_false(has_line("explicit-exit-notify 1"));
    assert_null(strstr(text, "<cert>"));
    assert_null(strstr(text, "PRIVATE KEY"));
    assert_int_equal(stat(out_path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
}

/* key-direction 1 on the server: 0 on the client; none: no key-direction line. A port and
 * protocol on --remote make exactly that line. The server's `fragment` goes into a UDP
 * profile. */
static void test_key_direction(void **state)
{
    (void)state;
    write_conf("tls-auth " DATA_DIR "/ta.key 1");
    assert_int_equal(run("--remote", "198.18.0.1", "8443", "tcp", NULL), 0);
    assert_true(has_line("key-direction 0"));
    assert_true(has_line("remote 198.18.0.1 8443 tcp"));
    assert_null(strstr(text, " udp\n"));
    assert_null(strstr(text, "\nauth SHA")); /* SHA1 is the default on both sides */
    teardown(NULL);
    write_conf("tls-auth " DATA_DIR "/ta.key\nfragment 1300 mtu");
    assert_int_equal(run("--remote", "198.18.0.1", NULL), 0);
    assert_true(has_line("fragment 1300 mtu")); /* not pushed: the client needs the line */
    assert_null(strstr(text, "key-direction"));
    assert_true(has_line("remote 198.18.0.1 1194 udp"));
    assert_true(has_line("explicit-exit-notify 1"));
}

/* A CBC cipher: its HMAC digest (`auth`) goes into the profile beside data-ciphers, with
 * tls-crypt too (2.6 uses `auth` for the CBC data channel as well as for tls-auth). */
static void test_cbc_auth(void **state)
{
    (void)state;
    write_conf("tls-crypt " DATA_DIR "/ta.key\ndata-ciphers AES-256-GCM:AES-256-CBC\nauth SHA256");
    assert_int_equal(run("--remote", "198.18.0.1", NULL), 0);
    assert_true(has_line("data-ciphers AES-256-GCM:AES-256-CBC"));
    assert_true(has_line("auth SHA256"));
    assert_true(has_line("<tls-crypt>"));
}

/* tls-crypt-v2: a new client key that the server key unwraps, with the metadata asked for. */
static void test_tls_crypt_v2(void **state)
{
    FILE *f = fopen(DATA_DIR "/v2server.key", "r");
    char sk_text[4096];
    size_t sk_len;
    struct tls_crypt_v2_server_key sk;
    uint8_t kc[TLS_CRYPT_V2_CLIENT_KEY_LEN], kc2[TLS_CRYPT_V2_CLIENT_KEY_LEN];
    uint8_t wkc[TLS_CRYPT_V2_MAX_WKC_LEN], md[TLS_CRYPT_V2_MAX_METADATA_LEN];
    size_t wkc_len = 0, md_len = 0;
    const char *b, *e;

    (void)state;
    assert_non_null(f);
    sk_len = fread(sk_text, 1, sizeof(sk_text), f);
    fclose(f);
    assert_int_equal(tls_crypt_v2_server_key_parse(sk_text, sk_len, &sk), 0);
    write_conf("tls-crypt-v2 " DATA_DIR "/v2server.key\ntls-crypt " DATA_DIR "/ta.key");
    assert_int_equal(run("--remote", "198.18.0.1", "--tls-crypt-v2-metadata", "bGFwdG9w", NULL),
                     0); /* "laptop" */
    assert_null(strstr(text, "<tls-crypt>"));
    b = strstr(text, "<tls-crypt-v2>\n");
    e = strstr(text, "</tls-crypt-v2>");
    assert_non_null(b);
    assert_non_null(e);
    b += strlen("<tls-crypt-v2>\n");
    assert_int_equal(
        tls_crypt_v2_client_key_parse(b, (size_t)(e - b), kc, wkc, sizeof(wkc), &wkc_len), 0);
    assert_int_equal(tls_crypt_v2_unwrap(&sk, wkc, wkc_len, kc2, md, sizeof(md), &md_len), 0);
    assert_memory_equal(kc, kc2, sizeof(kc));
    assert_int_equal(md_len, 7);
    assert_int_equal(md[0], TLS_CRYPT_V2_METADATA_TYPE_USER);
    assert_memory_equal(md + 1, "laptop", 6);
    /* the shared key instead, when asked */
    assert_int_equal(run("--remote", "198.18.0.1", "--no-tls-crypt-v2", NULL), 0);
    assert_non_null(strstr(text, "<tls-crypt>"));
    assert_null(strstr(text, "<tls-crypt-v2>"));
    tls_crypt_v2_server_key_wipe(&sk);
}

/* Refusals write nothing: no --remote, a host name that would break the line, --cert without
 * --key, a key that is not the certificate's, --no-tls-crypt-v2 without tls-crypt-v2. (A
 * certificate of another CA: tests/netns/test_profile.sh.) */
static void test_refusals(void **state)
{
    (void)state;
    write_conf("tls-crypt " DATA_DIR "/ta.key");
    assert_int_equal(run(NULL), 2);
    assert_int_equal(run("--remote", "a b", NULL), 2);
    assert_int_equal(run("--remote", "198.18.0.1", "--cert", DATA_DIR "/server.crt", NULL), 2);
    assert_int_equal(run("--remote", "198.18.0.1", "--cert", DATA_DIR "/server.crt", "--key",
                         DATA_DIR "/other.key", NULL),
                     1);
    assert_int_equal(access(out_path, F_OK), -1);
    assert_int_equal(run("--remote", "198.18.0.1", "--no-tls-crypt-v2", NULL), 1);
    assert_int_equal(access(out_path, F_OK), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_tls_auth_two_sockets, teardown),
        cmocka_unit_test_teardown(test_key_direction, teardown),
        cmocka_unit_test_teardown(test_cbc_auth, teardown),
        cmocka_unit_test_teardown(test_tls_crypt_v2, teardown),
        cmocka_unit_test_teardown(test_refusals, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
