/* tests/unit/test_config.c: the OpenVPN-syntax config parser.
 *
 * Expectations come from openvpn 2.6.14 itself: its option parser's rules (options.c) and, for
 * quoting and push texts, what the installed openvpn 2.6.14 binary printed for the same lines
 * at --verb 4 (e.g. `status "my file.log"` -> 'my file.log', `log-append a\ b\\c` -> "a b\c",
 * `tmp-dir "ab"cd` -> two arguments, push texts kept with their inner blanks). The certificate
 * and key files in data/config were made with the openssl and openvpn command-line tools.
 *
 * Every test runs in data/config, so relative names such as ca.crt resolve there.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>
#include <unistd.h>

#include <cmocka.h>
#include <mbedtls/dhm.h>

#include "proto/cert_check.h"
#include "proto/pk_external.h"
#include "server/config/config.h"
#include "server/config/config_internal.h"
#include "server/config/topology.h"

#define DATA_DIR OVPND_SOURCE_DIR "/tests/unit/data/config"
#define SAMPLE_DIR OVPND_SOURCE_DIR "/sample-config"
#define ERR_LEN 512

/* Seven lines that make a complete config; put the line under test first or after it. */
#define BASE                                                                                       \
    "dev tun\n"                                                                                    \
    "topology subnet\n"                                                                            \
    "server 198.19.0.0 255.255.255.0\n"                                                            \
    "ca ca.crt\n"                                                                                  \
    "cert server.crt\n"                                                                            \
    "key server.key\n"                                                                             \
    "keepalive 10 60\n"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long len;

    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    len = ftell(f);
    assert_true(len >= 0);
    rewind(f);
    buf = malloc((size_t)len + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
    buf[len] = '\0';
    fclose(f);
    return buf;
}

static int parse(struct config *cfg, const char *text, char *err)
{
    config_init(cfg);
    return config_parse_string(cfg, "t.conf", text, err, ERR_LEN);
}

static void expect_ok(struct config *cfg, const char *text)
{
    char err[ERR_LEN];
    int rc = parse(cfg, text, err);

    if (rc != 0) {
        fail_msg("unexpected error: %s", err);
    }
}

/* The text of the first `push "..."` line of sample-config/server.conf, read from the file
 * itself, so the sample's route can change without touching the test. */
static const char *sample_push_text(void)
{
    static char text[512];
    char line[512];
    FILE *f = fopen(OVPND_SOURCE_DIR "/sample-config/server.conf", "r");

    assert_non_null(f);
    text[0] = '\0';
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "push \"", 6) == 0) {
            char *end = strchr(line + 6, '"');

            assert_non_null(end);
            *end = '\0';
            snprintf(text, sizeof(text), "%s", line + 6);
            break;
        }
    }
    fclose(f);
    assert_true(text[0] != '\0');
    return text;
}

static void expect_error(const char *text, const char *expected)
{
    struct config cfg;
    char err[ERR_LEN];

    assert_int_equal(parse(&cfg, text, err), -EINVAL);
    assert_string_equal(err, expected);
    config_free(&cfg);
}

/* The error must start with prefix (for messages that go on with a detail). */
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

static bool has_warning(const struct config *cfg, const char *prefix)
{
    for (size_t i = 0; i < cfg->n_warnings; i++) {
        if (strncmp(cfg->warnings[i], prefix, strlen(prefix)) == 0) {
            return true;
        }
    }
    return false;
}

static void expect_warning(const char *text, const char *prefix)
{
    struct config cfg;

    expect_ok(&cfg, text);
    if (!has_warning(&cfg, prefix)) {
        fail_msg("no warning starting with '%s' (%zu warnings)", prefix, cfg.n_warnings);
    }
    config_free(&cfg);
}

/* block-ipv6 on a server (openvpn 2.6 forward.c process_ip_header, multi.c multi_get_queue):
 * without IPv6 in the tunnel it changes nothing (IPv6 is dropped anyway): accepted with a
 * warning; with server-ipv6 it is in force (tests/netns/test_ipv6_tunnel.sh). client-nat:
 * rules in config order (tests/netns/test_client_nat.sh), a bad one an error naming its word. */
static void block_ipv6_and_client_nat(void **state)
{
    struct config cfg;

    (void)state;
    expect_warning("block-ipv6\n" BASE, "t.conf:1: block-ipv6: the tunnel carries no IPv6");
    expect_ok(&cfg, "block-ipv6\n" BASE "server-ipv6 2001:2:0:19::/64\n");
    assert_true(cfg.net.block_ipv6);
    assert_false(has_warning(&cfg, "t.conf:1: block-ipv6"));
    config_free(&cfg);
    expect_ok(&cfg, "client-nat snat 198.19.0.0 255.255.255.0 198.19.9.0\n" BASE
                    "client-nat dnat 198.18.0.0 255.255.0.0 198.19.10.0\n");
    assert_non_null(cfg.net.client_nat);
    assert_int_equal(cfg.net.client_nat->n_rules, 2);
    assert_int_equal(cfg.net.client_nat->rules[0].type, CLIENT_NAT_SNAT);
    assert_int_equal(cfg.net.client_nat->rules[0].alias, 0xC6130900u);
    assert_int_equal(cfg.net.client_nat->rules[1].type, CLIENT_NAT_DNAT);
    assert_int_equal(cfg.net.client_nat->rules[1].netmask, 0xFFFF0000u);
    config_free(&cfg);
    expect_error_prefix("client-nat snat 198.19.0.0 255.255.255.0 fe80::1\n" BASE,
                        "t.conf:1: client-nat: bad alias 'fe80::1'");
}

/* tls-groups takes Mbed TLS's and OpenSSL's curve names; ecdh-curve is ignored with a warning,
 * as openvpn 2.6 does with OpenSSL 3. */
static void tls_groups_and_ecdh_curve(void **state)
{
    struct config cfg;

    (void)state;
    expect_ok(&cfg, "tls-groups X25519:secp256r1:P-384:brainpoolP256r1:x448\n" BASE);
    assert_string_equal(cfg.tls.tls_groups, "X25519:secp256r1:P-384:brainpoolP256r1:x448");
    config_free(&cfg);
    expect_ok(&cfg, BASE);
    assert_null(cfg.tls.tls_groups);
    config_free(&cfg);
    expect_error_prefix("tls-groups X25519:bogus\n" BASE,
                        "t.conf:1: tls-groups: unknown group 'bogus' (names like");
    expect_error_prefix("tls-groups X25519::prime256v1\n" BASE,
                        "t.conf:1: tls-groups: unknown group ''");
    expect_error("tls-groups\n" BASE, "t.conf:1: tls-groups: takes 1 argument, not 0");
    expect_warning("ecdh-curve prime256v1\n" BASE, "t.conf:1: ecdh-curve: ignored:");
}

/* tls-cipher takes Mbed TLS's (IANA-style) and OpenSSL's suite names and skips unknown ones with
 * a warning; tls-ciphersuites (TLS 1.3) is ignored with a warning. */
static void tls_cipher_lists(void **state)
{
    struct config cfg;

    (void)state;
    expect_ok(
        &cfg,
        "tls-cipher TLS-ECDHE-ECDSA-WITH-AES-256-GCM-SHA384:ecdhe-rsa-aes128-gcm-sha256\n" BASE);
    assert_string_equal(cfg.tls.tls_cipher,
                        "TLS-ECDHE-ECDSA-WITH-AES-256-GCM-SHA384:ecdhe-rsa-aes128-gcm-sha256");
    assert_int_equal(cfg.n_warnings, 0);
    config_free(&cfg);
    expect_warning("tls-cipher ECDHE-ECDSA-AES128-GCM-SHA256:HIGH:!aNULL\n" BASE,
                   "t.conf:1: tls-cipher: skipping 'HIGH'");
    expect_error_prefix("tls-cipher HIGH:!aNULL\n" BASE,
                        "t.conf:1: tls-cipher: no cipher suite ovpnd knows in 'HIGH:!aNULL'");
    expect_warning("tls-ciphersuites TLS_AES_256_GCM_SHA384\n" BASE,
                   "t.conf:1: tls-ciphersuites: ignored:");
    expect_ok(&cfg, "tls-cert-profile legacy\n" BASE);
    assert_string_equal(cfg.tls.tls_cert_profile, "legacy");
    config_free(&cfg);
    expect_error("tls-cert-profile strict\n" BASE,
                 "t.conf:1: tls-cert-profile: unknown profile 'strict' (legacy, insecure, "
                 "preferred or suiteb)");
}

static int setup(void **state)
{
    (void)state;
    return chdir(DATA_DIR);
}

/* ---- the samples ---- */

static void sample_configs_parse(void **state)
{
    DIR *d = opendir(SAMPLE_DIR);
    struct dirent *e;
    int n_parsed = 0;

    (void)state;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        char path[PATH_MAX], err[ERR_LEN];
        struct config cfg;
        int rc;

        if (len < 6 || strcmp(e->d_name + len - 5, ".conf") != 0) {
            continue;
        }
        snprintf(path, sizeof(path), "%s/%s", SAMPLE_DIR, e->d_name);
        config_init(&cfg);
        rc = config_parse_file(&cfg, path, err, sizeof(err));
        if (rc != 0) {
            fail_msg("%s: %s", e->d_name, err);
        }
        for (size_t i = 0; i < cfg.n_warnings; i++) {
            fail_msg("%s: unexpected warning %s", e->d_name, cfg.warnings[i]);
        }
        config_free(&cfg);
        n_parsed++;
    }
    closedir(d);
    assert_true(n_parsed >= 1);
}

static void sample_server_conf_values(void **state)
{
    struct config cfg;
    char err[ERR_LEN];

    (void)state;
    config_init(&cfg);
    assert_int_equal(config_parse_file(&cfg, SAMPLE_DIR "/server.conf", err, sizeof(err)), 0);
    assert_string_equal(cfg.source, SAMPLE_DIR "/server.conf");
    assert_int_equal(cfg.net.port, 1194);
    assert_int_equal(cfg.net.proto, CONFIG_PROTO_UDP);
    assert_string_equal(cfg.net.dev, "tun");
    assert_int_equal(cfg.net.topology, CONFIG_TOPOLOGY_SUBNET);
    assert_true(cfg.net.has_server);
    assert_int_equal(cfg.net.server_network, 0x0A080000);
    assert_int_equal(cfg.net.server_netmask, 0xFFFFFF00);
    assert_true(cfg.tls.dh_none);
    assert_int_equal(cfg.tls.tls_wrap_mode, CONFIG_TLS_WRAP_CRYPT);
    assert_string_equal(cfg.tls.tls_wrap_key.origin, "ta.key");
    assert_int_equal(cfg.timers.keepalive_ping_s, 10);
    assert_int_equal(cfg.timers.keepalive_restart_s, 120);
    assert_int_equal(cfg.timers.ping_s, 10);
    assert_int_equal(cfg.timers.ping_restart_s, 240);
    assert_string_equal(cfg.tls.data_ciphers, "AES-256-GCM:AES-128-GCM:CHACHA20-POLY1305");
    assert_int_equal(cfg.net.push.n_items, 1);
    assert_string_equal(cfg.net.push.items[0], sample_push_text());
    assert_string_equal(cfg.status.status_file, "openvpn-status.log");
    assert_int_equal(cfg.proc.verb, 3);
    assert_int_equal(cfg.clients.explicit_exit_notify, 1);
    assert_true(cfg.proc.persist_key);
    assert_true(cfg.proc.persist_tun);
    assert_int_equal(cfg.proc.workers, 0);
    config_free(&cfg);
}

/* ---- values ---- */

static void defaults(void **state)
{
    struct config cfg;

    (void)state;
    expect_ok(&cfg, BASE);
    assert_int_equal(cfg.net.port, 1194);
    assert_int_equal(cfg.net.proto, CONFIG_PROTO_UDP);
    assert_null(cfg.net.local);
    assert_null(cfg.cd_dir);
    assert_int_equal(cfg.net.tun_mtu, 1500);
    assert_int_equal(cfg.net.mssfix, 1492);
    assert_int_equal(cfg.net.mssfix_mode, CONFIG_MSSFIX_MTU);
    assert_int_equal(cfg.tls.tls_wrap_mode, CONFIG_TLS_WRAP_NONE);
    assert_null(cfg.tls.tls_wrap_key.data);
    assert_int_equal(cfg.tls.key_direction, CONFIG_KEY_DIRECTION_NONE);
    assert_string_equal(cfg.tls.auth, "SHA1");
    assert_string_equal(cfg.tls.data_ciphers, "AES-256-GCM:AES-128-GCM:CHACHA20-POLY1305");
    assert_null(cfg.tls.data_ciphers_fallback);
    assert_null(cfg.tls.cipher);
    assert_int_equal(cfg.tls.replay_window, 64);
    assert_int_equal(cfg.tls.replay_time_s, 15);
    assert_false(cfg.tls.no_replay);
    assert_int_equal(cfg.timers.hand_window_s, 60);
    assert_int_equal(cfg.timers.tran_window_s, 3600);
    assert_int_equal(cfg.timers.tls_timeout_s, 2);
    assert_int_equal(cfg.timers.reneg_sec, 3600);
    assert_int_equal(cfg.timers.reneg_sec_min, -1);
    assert_string_equal(cfg.tls.tls_version_min, "1.2");
    assert_null(cfg.tls.tls_version_max);
    assert_int_equal(cfg.tls.verify_client_cert, CONFIG_VERIFY_REQUIRE);
    assert_false(cfg.tls.remote_cert_tls_client);
    assert_int_equal(cfg.clients.max_clients, 1024);
    assert_false(cfg.clients.duplicate_cn);
    assert_int_equal(cfg.clients.explicit_exit_notify, 0);
    assert_int_equal(cfg.proc.workers, 0);
    assert_null(cfg.proc.user);
    assert_null(cfg.proc.group);
    assert_false(cfg.proc.daemonize);
    assert_false(cfg.proc.use_syslog);
    assert_null(cfg.proc.log_file);
    assert_null(cfg.status.status_file);
    assert_int_equal(cfg.status.status_interval_s, 60);
    assert_int_equal(cfg.status.status_version, 1);
    assert_int_equal(cfg.proc.verb, 1);
    assert_int_equal(cfg.proc.mute, 0);
    assert_false(cfg.tls.dh_none);
    assert_int_equal(cfg.net.push.n_items, 0);
    assert_int_equal(cfg.n_warnings, 0);
    config_free(&cfg);
}

/* management and its modifiers, checked as openvpn 2.6 options.c checks them. */
static void management_directives(void **state)
{
    struct config cfg;
    char pw_path[] = "/tmp/ovpnd-test-mgmt-pw-XXXXXX", text[512];
    int fd = mkstemp(pw_path);

    (void)state;
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "top secret\r\nsecond line\n", 25), 25);
    close(fd);
    snprintf(text, sizeof(text),
             "management 127.0.0.1 7505 %s\nmanagement-hold\nmanagement-log-cache 500\n" BASE,
             pw_path);
    expect_ok(&cfg, text);
    assert_string_equal(cfg.mgmt.addr, "127.0.0.1");
    assert_string_equal(cfg.mgmt.port, "7505");
    assert_false(cfg.mgmt.is_unix);
    assert_string_equal(cfg.mgmt.password, "top secret"); /* the first line, without its end */
    assert_true(cfg.mgmt.hold);
    assert_int_equal(cfg.mgmt.log_cache, 500);
    assert_false(has_warning(&cfg, "t.conf: management:"));
    config_free(&cfg);
    unlink(pw_path);

    expect_ok(&cfg, "management /run/ovpnd.sock unix\nmanagement-client-user root\n" BASE);
    assert_true(cfg.mgmt.is_unix);
    assert_null(cfg.mgmt.port);
    assert_null(cfg.mgmt.password);
    assert_string_equal(cfg.mgmt.client_user, "root");
    assert_int_equal(cfg.mgmt.log_cache, 250); /* 2.6's default */
    config_free(&cfg);

    expect_warning("management 127.0.0.1 7505\n" BASE,
                   "t.conf:1: management: a TCP port WITHOUT a password file");
    expect_error("management-hold\n" BASE,
                 "t.conf: management-* directives need a `management` directive");
    expect_error("management 127.0.0.1 7505\nmanagement-client-group adm\n" BASE,
                 "t.conf: management-client-user and management-client-group need `management "
                 "PATH unix`");
    expect_error("management 127.0.0.1 0\n" BASE,
                 "t.conf:1: management: port '0' is out of range (1-65535)");
    expect_error_prefix("management 127.0.0.1 7505 /nonexistent/pw\n" BASE,
                        "t.conf:1: management: cannot read the password file '/nonexistent/pw'");
    expect_error("management-client-auth\n" BASE,
                 "t.conf: management-* directives need a `management` directive");
}

/* management-external-key (2.6 options.c): flags, pkcs1 when none of pkcs1/nopadding; needs
 * `management` and `cert`, and excludes `key`. */
static void management_external_key(void **state)
{
#define BASE_NO_KEY                                                                                \
    "dev tun\ntopology subnet\nserver 198.19.0.0 255.255.255.0\nca ca.crt\ncert server.crt\n"      \
    "keepalive 10 60\n"
    struct config cfg;

    (void)state;
    expect_ok(&cfg, "management /run/m.sock unix\nmanagement-external-key\n" BASE_NO_KEY);
    assert_true(cfg.mgmt.external_key);
    assert_int_equal(cfg.mgmt.external_key_flags, PK_EXT_PKCS1);
    assert_null(cfg.tls.key.data);
    config_free(&cfg);
    expect_ok(&cfg,
              "management /run/m.sock unix\nmanagement-external-key nopadding pss\n" BASE_NO_KEY);
    assert_int_equal(cfg.mgmt.external_key_flags, PK_EXT_NOPADDING | PK_EXT_PSS);
    config_free(&cfg);
    expect_error("management-external-key\n" BASE_NO_KEY,
                 "t.conf: management-* directives need a `management` directive");
    expect_error("management /run/m.sock unix\nmanagement-external-key\n" BASE,
                 "t.conf:8: key: key and management-external-key cannot be used together");
    expect_error("management /run/m.sock unix\nmanagement-external-key sha1\n" BASE_NO_KEY,
                 "t.conf:2: management-external-key: unknown flag 'sha1' (nopadding, pkcs1, pss, "
                 "digest)");
#undef BASE_NO_KEY
}

/* ovpnd's own metrics endpoint: `metrics HOST PORT` with a literal address, and the opt-in
 * per-client series. */
static void metrics_directives(void **state)
{
    struct config cfg;

    (void)state;
    expect_ok(&cfg, BASE);
    assert_null(cfg.metrics.host);
    assert_false(cfg.metrics.per_client);
    config_free(&cfg);

    expect_ok(&cfg, "metrics 127.0.0.1 9176\n" BASE);
    assert_string_equal(cfg.metrics.host, "127.0.0.1");
    assert_int_equal(cfg.metrics.port, 9176);
    assert_false(cfg.metrics.per_client);
    config_free(&cfg);

    expect_ok(&cfg, "metrics ::1 9176\nmetrics-per-client\n" BASE);
    assert_string_equal(cfg.metrics.host, "::1");
    assert_true(cfg.metrics.per_client);
    config_free(&cfg);

    expect_error("metrics localhost 9176\n" BASE,
                 "t.conf:1: metrics: 'localhost' is not an IPv4 or IPv6 address");
    expect_error("metrics 127.0.0.1 0\n" BASE,
                 "t.conf:1: metrics: port '0' is out of range (1-65535)");
    expect_error("metrics 127.0.0.1\n" BASE, "t.conf:1: metrics: takes 2 arguments, not 1");
    expect_error("metrics-per-client\n" BASE,
                 "t.conf: metrics-per-client needs a `metrics` directive");
}

static void every_implemented_directive(void **state)
{
    struct config cfg;
    char err[ERR_LEN];
    char *ca = slurp("ca.crt"), *ta = slurp("ta.key");

    (void)state;
    config_init(&cfg);
    if (config_parse_file(&cfg, "full.conf", err, sizeof(err)) != 0) {
        fail_msg("%s", err);
    }
    assert_int_equal(cfg.n_warnings, 0);
    assert_int_equal(cfg.net.port, 1195);
    assert_int_equal(cfg.net.proto, CONFIG_PROTO_UDP4);
    assert_string_equal(cfg.net.local, "198.18.0.1");
    assert_string_equal(cfg.net.dev, "tun7");
    assert_int_equal(cfg.net.server_network, 0xC6130000);
    assert_int_equal(cfg.net.server_netmask, 0xFFFFFC00);
    assert_string_equal(cfg.tls.ca.data, ca);
    assert_string_equal(cfg.tls.ca.origin, "ca.crt");
    assert_int_equal(cfg.tls.ca.len, strlen(ca));
    assert_string_equal(cfg.tls.cert.origin, "server.crt");
    assert_string_equal(cfg.tls.key.origin, "server.key");
    assert_true(cfg.tls.dh_none);
    assert_int_equal(cfg.tls.tls_wrap_mode, CONFIG_TLS_WRAP_AUTH);
    assert_string_equal(cfg.tls.tls_wrap_key.data, ta);
    assert_int_equal(cfg.tls.key_direction, CONFIG_KEY_DIRECTION_INVERSE); /* key-direction wins */
    assert_string_equal(cfg.tls.auth, "SHA256");
    assert_string_equal(cfg.tls.data_ciphers, "CHACHA20-POLY1305:AES-128-GCM");
    assert_string_equal(cfg.tls.data_ciphers_fallback, "AES-256-GCM");
    assert_string_equal(cfg.tls.cipher, "AES-128-GCM");
    assert_int_equal(cfg.net.push.n_items, 2);
    assert_string_equal(cfg.net.push.items[0], "route 198.19.8.0 255.255.255.0");
    assert_string_equal(cfg.net.push.items[1], "dhcp-option DNS 198.19.0.1");
    assert_int_equal(cfg.timers.keepalive_ping_s, 0);
    assert_int_equal(cfg.timers.ping_s, 15);
    assert_int_equal(cfg.timers.ping_restart_s, 90);
    assert_int_equal(cfg.timers.hand_window_s, 30);
    assert_int_equal(cfg.timers.tran_window_s, 600);
    assert_int_equal(cfg.timers.tls_timeout_s, 3);
    assert_int_equal(cfg.timers.reneg_sec, 7200);
    assert_int_equal(cfg.timers.reneg_sec_min, 6000);
    assert_int_equal(cfg.tls.replay_window, 128);
    assert_int_equal(cfg.tls.replay_time_s, 30);
    assert_string_equal(cfg.tls.tls_version_min, "1.1");
    assert_string_equal(cfg.tls.tls_version_max, "1.2");
    assert_int_equal(cfg.tls.verify_client_cert, CONFIG_VERIFY_REQUIRE);
    assert_true(cfg.tls.remote_cert_tls_client);
    assert_int_equal(cfg.net.tun_mtu, 1400);
    assert_int_equal(cfg.net.tun_mtu_occ, 1450);
    assert_int_equal(cfg.net.mssfix, 1300);
    assert_int_equal(cfg.net.mssfix_mode, CONFIG_MSSFIX_MTU);
    assert_int_equal(cfg.clients.max_clients, 50);
    assert_true(cfg.clients.duplicate_cn);
    assert_int_equal(cfg.clients.explicit_exit_notify, 2);
    assert_string_equal(cfg.status.status_file, "status file.log");
    assert_int_equal(cfg.status.status_interval_s, 30);
    assert_int_equal(cfg.status.status_version, 3);
    assert_int_equal(cfg.proc.verb, 4);
    assert_int_equal(cfg.proc.mute, 20);
    assert_string_equal(cfg.proc.log_file, "ovpnd.log"); /* log-append came last */
    assert_true(cfg.proc.log_append);
    assert_true(cfg.proc.suppress_timestamps);
    assert_true(cfg.proc.daemonize);
    assert_true(cfg.proc.use_syslog);
    assert_string_equal(cfg.proc.syslog_name, "ovpnd-test");
    assert_string_equal(cfg.proc.writepid, "/run/ovpnd-test.pid");
    assert_string_equal(cfg.proc.user, "nobody");
    assert_string_equal(cfg.proc.group, "nogroup");
    assert_true(cfg.proc.persist_key);
    assert_true(cfg.proc.persist_tun);
    assert_int_equal(cfg.proc.workers, 3);
    config_free(&cfg);
    free(ca);
    free(ta);
}

static void keepalive_timers(void **state)
{
    struct config cfg;

    (void)state;
    /* helper.c: a server drops a client after twice the restart time. */
    expect_ok(&cfg, BASE "keepalive 5 30\n");
    assert_int_equal(cfg.timers.keepalive_ping_s, 5);
    assert_int_equal(cfg.timers.keepalive_restart_s, 30);
    assert_int_equal(cfg.timers.ping_s, 5);
    assert_int_equal(cfg.timers.ping_restart_s, 60);
    config_free(&cfg);
    expect_error("keepalive 10 15\n" BASE,
                 "t.conf:1: keepalive: the restart timeout (15) must be at least twice the ping "
                 "interval (10); 'keepalive 10 60' is a good choice");
    expect_error("keepalive 0 60\n" BASE, "t.conf:1: keepalive: ping interval '0' is out of "
                                          "range (1-1000000)");
    expect_error(BASE "ping 10\n", "t.conf:8: ping: keepalive conflicts with ping, ping-exit "
                                   "and ping-restart: keepalive alone is enough");
    expect_warning("dev tun\ntopology subnet\nserver 198.19.0.0 255.255.255.0\nca ca.crt\n"
                   "cert server.crt\nkey server.key\n",
                   "t.conf: keepalive is missing from the server config");
}

/* options.c: both take two integers >= 0; connect-freq-initial defaults to 100 per 10 s. */
static void connect_freq_limits(void **state)
{
    struct config cfg;

    (void)state;
    expect_ok(&cfg, BASE);
    assert_int_equal(cfg.clients.connect_freq_max, 0);
    assert_int_equal(cfg.clients.connect_freq_per_s, 0);
    assert_int_equal(cfg.clients.connect_freq_initial_max, 100);
    assert_int_equal(cfg.clients.connect_freq_initial_per_s, 10);
    config_free(&cfg);
    expect_ok(&cfg, BASE "connect-freq 20 10\nconnect-freq-initial 0 5\n");
    assert_int_equal(cfg.clients.connect_freq_max, 20);
    assert_int_equal(cfg.clients.connect_freq_per_s, 10);
    assert_int_equal(cfg.clients.connect_freq_initial_max, 0);
    assert_int_equal(cfg.clients.connect_freq_initial_per_s, 5);
    config_free(&cfg);
    expect_error("connect-freq -1 10\n" BASE, "t.conf:1: connect-freq: count '-1' is out of "
                                              "range (0-2147483647)");
    expect_error("connect-freq-initial 10 x\n" BASE,
                 "t.conf:1: connect-freq-initial: seconds 'x' is not a number");
    expect_error("connect-freq 10\n" BASE, "t.conf:1: connect-freq: takes 2 arguments, not 1");
}

static void mssfix_follows_tun_mtu(void **state)
{
    struct config cfg;

    (void)state;
    /* options_postprocess_mutate_ce: default 1492 only with the default tun MTU. */
    expect_ok(&cfg, BASE "tun-mtu 1400\n");
    assert_int_equal(cfg.net.mssfix, 1400);
    assert_int_equal(cfg.net.mssfix_mode, CONFIG_MSSFIX_FIXED);
    config_free(&cfg);
    expect_ok(&cfg, BASE "mssfix 1450\nmssfix\n");
    assert_int_equal(cfg.net.mssfix, 1492);
    assert_int_equal(cfg.net.mssfix_mode, CONFIG_MSSFIX_MTU);
    config_free(&cfg);
    expect_ok(&cfg, BASE "mssfix 1450\n");
    assert_int_equal(cfg.net.mssfix, 1450);
    assert_int_equal(cfg.net.mssfix_mode, CONFIG_MSSFIX_PAYLOAD);
    config_free(&cfg);
    expect_ok(&cfg, BASE "mssfix 0\n");
    assert_int_equal(cfg.net.mssfix, 0);
    config_free(&cfg);
    expect_ok(&cfg, BASE "mssfix 1200 fixed\n");
    assert_int_equal(cfg.net.mssfix_mode, CONFIG_MSSFIX_FIXED);
    config_free(&cfg);
    expect_error("mssfix 1200 tight\n" BASE, "t.conf:1: mssfix: unknown flag 'tight' (mtu or "
                                             "fixed)");
}

/* link-mtu / udp-mtu: the tun MTU 2.6 derives (each figure is what openvpn 2.6 set on its tun
 * device with the same lines); max-packet-size: control packets and mssfix; proto-force. */
static void old_mtu_options_and_proto_force(void **state)
{
    static const struct {
        const char *lines;
        int tun_mtu;
    } link[] = {
        {"link-mtu 1500\n", 1475},
        {"udp-mtu 1400\n", 1375},
        {"link-mtu 1500\nproto tcp-server\n", 1473},
        {"link-mtu 1500\ncipher AES-256-GCM\n", 1451},
        {"link-mtu 1500\ncipher CHACHA20-POLY1305\n", 1466},
        {"link-mtu 1500\nauth SHA256\n", 1463},
        {"link-mtu 1500\ndata-ciphers AES-128-CBC\ncipher AES-128-CBC\n", 1447},
        {"link-mtu 1500\ndata-ciphers AES-256-CBC\ncipher AES-256-CBC\nauth SHA512\n", 1403},
        {"link-mtu 1500\ndata-ciphers AES-256-GCM:AES-128-CBC\n"
         "data-ciphers-fallback AES-128-CBC\n",
         1447},
    };
    struct config cfg;
    char text[512];

    (void)state;
    for (size_t i = 0; i < sizeof(link) / sizeof(link[0]); i++) {
        snprintf(text, sizeof(text), BASE "%s", link[i].lines);
        expect_ok(&cfg, text);
        assert_int_equal(cfg.net.tun_mtu, link[i].tun_mtu);
        assert_int_equal(cfg.net.mssfix, 0); /* 2.6 derives no mssfix from link-mtu */
        config_free(&cfg);
    }
    expect_ok(&cfg, BASE "link-mtu 1500\nmssfix 1400\n");
    assert_int_equal(cfg.net.mssfix, 1400);
    config_free(&cfg);
    expect_error(BASE "link-mtu 1500\ntun-mtu 1400\n",
                 "t.conf:8: link-mtu: only one of tun-mtu or link-mtu may be defined");
    expect_error(BASE "link-mtu 110\n", "t.conf:8: link-mtu: the tun MTU it leaves (110 - 25 "
                                        "bytes of overhead) must be at least 100");

    expect_ok(&cfg, BASE);
    assert_int_equal(cfg.net.tls_mtu, 1250);
    config_free(&cfg);
    expect_ok(&cfg, BASE "max-packet-size 1300\n");
    assert_int_equal(cfg.net.tls_mtu, 1300);
    assert_int_equal(cfg.net.mssfix, 1300);
    assert_int_equal(cfg.net.mssfix_mode, CONFIG_MSSFIX_MTU);
    assert_int_equal(cfg.net.tun_mtu, 1500);
    config_free(&cfg);
    expect_ok(&cfg, BASE "max-packet-size 3000\n");
    assert_int_equal(cfg.net.tls_mtu, 2048);
    assert_int_equal(cfg.net.mssfix, 3000);
    config_free(&cfg);
    expect_ok(&cfg, BASE "max-packet-size 100\n");
    assert_int_equal(cfg.net.tls_mtu, 512);
    config_free(&cfg);

    expect_ok(&cfg, BASE "proto-force udp6\n");
    assert_int_equal(cfg.net.proto, CONFIG_PROTO_UDP);
    config_free(&cfg);
    expect_ok(&cfg, BASE "proto tcp-server\nproto-force tcp4-server\n");
    config_free(&cfg);
    expect_ok(&cfg, BASE "local 198.18.0.1 1194 udp\nlocal 198.18.0.1 1194 tcp\n"
                         "proto-force tcp-server\n");
    assert_int_equal(cfg.net.n_sockets, 1);
    assert_true(config_proto_is_tcp(cfg.net.proto));
    config_free(&cfg);
    expect_error(BASE "proto-force tcp-server\n", "t.conf:8: proto-force: no usable connection "
                                                  "profiles are present (the server's proto is "
                                                  "udp)");
    expect_error(BASE "proto tcp-server\nproto-force tcp\n",
                 "t.conf:9: proto-force: no usable connection profiles are present ('tcp' is "
                 "not a server protocol; a TCP server is tcp-server)");
    expect_error(BASE "proto-force sctp\n", "t.conf:8: proto-force: bad protocol 'sctp'");
}

/* fragment N [mtu]: at least 68, the flag mtu only, UDP only; mssfix then defaults to
 * `mssfix N mtu` (2.6 options.c "fragment", options_postprocess_verify_ce, mutate_ce). */
static void fragment_directive(void **state)
{
    struct config cfg;

    (void)state;
    expect_ok(&cfg, BASE);
    assert_int_equal(cfg.net.fragment, 0);
    config_free(&cfg);
    expect_ok(&cfg, BASE "fragment 1300\n");
    assert_int_equal(cfg.net.fragment, 1300);
    assert_false(cfg.net.fragment_mtu);
    assert_int_equal(cfg.net.mssfix, 1300);
    assert_int_equal(cfg.net.mssfix_mode, CONFIG_MSSFIX_MTU);
    assert_int_equal(cfg.n_warnings, 0);
    config_free(&cfg);
    expect_ok(&cfg, BASE "fragment 1000 mtu\nmssfix 1000 mtu\n");
    assert_true(cfg.net.fragment_mtu);
    assert_int_equal(cfg.net.mssfix, 1000);
    assert_int_equal(cfg.n_warnings, 0);
    config_free(&cfg);
    /* with link-mtu too, mssfix still follows fragment */
    expect_ok(&cfg, BASE "link-mtu 1500\nfragment 1200\n");
    assert_int_equal(cfg.net.mssfix, 1200);
    config_free(&cfg);
    expect_ok(&cfg, BASE "fragment 68\n");
    config_free(&cfg);
    expect_error(BASE "fragment 67\n", "t.conf:8: fragment: '67' is out of range (68-65535)");
    expect_error_prefix(BASE "fragment 1000 bytes\n", "t.conf:8: fragment: unknown flag 'bytes'");
    expect_error(BASE "proto tcp-server\nfragment 1000\n",
                 "t.conf:9: fragment: can only be used with proto udp");
    expect_warning(BASE "fragment 1000\nmssfix 1400\n",
                   "t.conf:8: if you use mssfix and fragment, you should set fragment (1000) "
                   "larger or equal than mssfix (1400)");
    expect_warning(BASE "fragment 1000 mtu\nmssfix 900\n",
                   "t.conf:8: if you use mssfix and fragment, you should use the \"mtu\" flag");
    expect_warning(BASE "local 198.18.0.1 1194 udp\nlocal 198.18.0.1 1194 tcp\nfragment 1000\n",
                   "t.conf:10: fragment applies to the clients of the UDP socket only");
}

/* compat-mode: the defaults of older releases, as options_set_backwards_compatible_options. */
static void compat_mode_defaults(void **state)
{
    struct config cfg;

    (void)state;
    expect_ok(&cfg, BASE "compat-mode 2.6.0\n");
    assert_string_equal(cfg.tls.tls_version_min, "1.2");
    assert_string_equal(cfg.tls.data_ciphers, CONFIG_DEFAULT_DATA_CIPHERS);
    assert_int_equal(cfg.net.comp.allow, COMP_ALLOW_DEFAULT);
    config_free(&cfg);
    /* 2.5: compression allowed (asym) unless a line says otherwise */
    expect_ok(&cfg, BASE "compat-mode 2.5.9\ncipher AES-256-CBC\n");
    assert_int_equal(cfg.net.comp.allow, COMP_ALLOW_ASYM);
    assert_string_equal(cfg.tls.data_ciphers, CONFIG_DEFAULT_DATA_CIPHERS);
    config_free(&cfg);
    expect_ok(&cfg, BASE "compat-mode 2.5.0\nallow-compression no\n");
    assert_int_equal(cfg.net.comp.allow, COMP_ALLOW_NO);
    config_free(&cfg);
    /* 2.4: `cipher` joins data-ciphers */
    expect_ok(&cfg, BASE "compat-mode 2.4.12\ncipher AES-256-CBC\n");
    assert_string_equal(cfg.tls.data_ciphers, CONFIG_DEFAULT_DATA_CIPHERS ":AES-256-CBC");
    assert_null(cfg.tls.data_ciphers_fallback);
    config_free(&cfg);
    expect_ok(&cfg, BASE "compat-mode 2.4.0\n");
    assert_string_equal(cfg.tls.data_ciphers, CONFIG_DEFAULT_DATA_CIPHERS);
    config_free(&cfg);
    /* 2.3: also the fallback; and BF-CBC, the old default, is refused as by 2.6 with OpenSSL 3 */
    expect_ok(&cfg, BASE "compat-mode 2.3.18\ncipher AES-128-CBC\n");
    assert_string_equal(cfg.tls.data_ciphers, CONFIG_DEFAULT_DATA_CIPHERS ":AES-128-CBC");
    assert_string_equal(cfg.tls.data_ciphers_fallback, "AES-128-CBC");
    assert_string_equal(cfg.tls.tls_version_min, "1.2");
    config_free(&cfg);
    expect_error(BASE "compat-mode 2.3.18\n",
                 "t.conf:8: compat-mode: BF-CBC would join data-ciphers for peers before 2.5, "
                 "and ovpnd does not offer it (the AES and CAMELLIA CBC ciphers and the AEAD "
                 "ciphers are); set 'cipher' to one of them");
    /* 2.3.6 and older: TLS 1.0 unless tls-version-min says */
    expect_ok(&cfg, BASE "compat-mode 2.3.6\ncipher AES-256-CBC\n");
    assert_string_equal(cfg.tls.tls_version_min, "1.0");
    config_free(&cfg);
    expect_ok(&cfg, BASE "compat-mode 2.3.6\ncipher AES-256-CBC\ntls-version-min 1.2\n");
    assert_string_equal(cfg.tls.tls_version_min, "1.2");
    config_free(&cfg);
    expect_error(BASE "compat-mode 2.4\n", "t.conf:8: compat-mode: cannot parse version number "
                                           "'2.4' (for example 2.4.0)");
}

static void duplicates_last_wins(void **state)
{
    struct config cfg;
    char *other = slurp("other.key");

    (void)state;
    expect_ok(&cfg, "port 1000\n" BASE "port 2000\nverb 2\nverb 5\ndev tun3\n"
                    "tls-crypt ta.key\ntls-crypt " DATA_DIR "/ta.key\n"
                    "push \"route 198.19.1.0 255.255.255.0\"\n"
                    "push \"route 198.19.1.0 255.255.255.0\"\n"
                    "log-append a.log\nlog b.log\n");
    assert_int_equal(cfg.net.port, 2000);
    assert_int_equal(cfg.proc.verb, 5);
    assert_string_equal(cfg.net.dev, "tun3");
    assert_string_equal(cfg.tls.tls_wrap_key.origin, DATA_DIR "/ta.key");
    assert_int_equal(cfg.net.push.n_items, 2); /* push adds */
    assert_string_equal(cfg.proc.log_file, "b.log");
    assert_false(cfg.proc.log_append);
    config_free(&cfg);
    /* The last key line decides which file is read: other.key does not match server.crt. */
    expect_ok(&cfg, "key other.key\n" BASE);
    assert_string_not_equal(cfg.tls.key.data, other);
    config_free(&cfg);
    expect_error_prefix(BASE "key other.key\n",
                        "t.conf:8: key: other.key does not match the certificate server.crt");
    free(other);
}

/* Directives openvpn 2.6 accepts in a server config that ovpnd does not implement yet, each with
 * the issue that will bring it. A directive leaves this list when it is implemented or accepted
 * with a warning (the test below fails until it does), so the list only shrinks. */
static const struct {
    const char *name, *why;
} known_gaps[] = {
    /* 2.6 never starts with them: its server mode refuses the management answer it waits for */
    {"management-query-proxy", "refused: 2.6 waits at start-up for an answer it cannot take"},
    {"management-query-remote", "refused: 2.6 waits at start-up for an answer it cannot take"},
};

static bool is_known_gap(const char *name)
{
    for (size_t i = 0; i < sizeof(known_gaps) / sizeof(known_gaps[0]); i++) {
        if (strcmp(known_gaps[i].name, name) == 0) {
            return true;
        }
    }
    return false;
}

/* What the "ovpnd" column of sample-config/README.md's directive table must start with. */
static const char *readme_kind(const struct config_directive *d)
{
    switch (d->kind) {
    case CONFIG_KIND_SET:
        return "implemented";
    case CONFIG_KIND_IGNORE:
        return "accepted";
    case CONFIG_KIND_TODO:
        return (d->flags & CONFIG_F_GLOBAL) ? "not yet" : "client-config-dir only";
    case CONFIG_KIND_CLIENT:
        return "refused: client option";
    default:
        return "refused";
    }
}

/* sample-config/README.md's directive table: one row per row of ovpnd's directive table, the
 * ovpnd column saying what the code does, and every directive with "yes" in the "2.6 accepts"
 * column (openvpn 2.6.14 starts a server config with it) implemented or accepted with a
 * warning, unless it is a known gap (above). */
static void readme_directive_table(void **state)
{
    char *text = slurp(SAMPLE_DIR "/README.md"), *line, *save = NULL;
    size_t n_rows = 0, n_yes = 0, n_gaps_seen = 0;

    (void)state;
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char name[64], ovpnd[128], v26[200];
        const struct config_directive *d;

        if (strncmp(line, "| `", 3) != 0) {
            continue;
        }
        if (sscanf(line, "| `%63[^`]` | %127[^|]| %199[^|]|", name, ovpnd, v26) != 3) {
            fail_msg("README table row not understood: %s", line);
        }
        n_rows++;
        d = config_directive_find(name);
        if (d == NULL) {
            fail_msg("README table: '%s' is not in ovpnd's directive table", name);
        }
        if (strncmp(ovpnd, readme_kind(d), strlen(readme_kind(d))) != 0) {
            fail_msg("README table: '%s' says '%s', but ovpnd's table makes it '%s'", name, ovpnd,
                     readme_kind(d));
        }
        if (strncmp(v26, "yes", 3) != 0) {
            if (is_known_gap(name)) {
                fail_msg("README table: known gap '%s' is not accepted by 2.6", name);
            }
            continue;
        }
        n_yes++;
        if (d->kind == CONFIG_KIND_SET || d->kind == CONFIG_KIND_IGNORE) {
            if (is_known_gap(name)) {
                fail_msg("'%s' is accepted now: take it off the known gaps", name);
            }
            continue;
        }
        if (!is_known_gap(name)) {
            fail_msg("openvpn 2.6 accepts '%s' in a server config, ovpnd refuses it (%s)", name,
                     ovpnd);
        }
        n_gaps_seen++;
    }
    assert_int_equal(n_gaps_seen, sizeof(known_gaps) / sizeof(known_gaps[0]));
    assert_int_equal(n_rows, config_directive_count());
    assert_true(n_yes > 200);
    free(text);
}

/* Every directive name in openvpn 2.6.14's option parser (src/openvpn/options.c, add_option),
 * except the Windows-only ones a Linux openvpn does not know either, has a row: none of them
 * may fall through to "unknown directive". */
static void every_openvpn_directive_is_known(void **state)
{
    static const char *const names[] = {
        "allow-compression",
        "allow-pull-fqdn",
        "allow-recursive-routing",
        "askpass",
        "auth",
        "auth-gen-token",
        "auth-gen-token-secret",
        "auth-nocache",
        "auth-retry",
        "auth-token",
        "auth-token-user",
        "auth-user-pass",
        "auth-user-pass-optional",
        "auth-user-pass-verify",
        "bcast-buffers",
        "bind",
        "bind-dev",
        "block-ipv6",
        "ca",
        "capath",
        "ccd-exclusive",
        "cd",
        "cert",
        "chroot",
        "cipher",
        "client",
        "client-cert-not-required",
        "client-config-dir",
        "client-connect",
        "client-crresponse",
        "client-disconnect",
        "client-nat",
        "comp-lzo",
        "comp-noadapt",
        "compat-mode",
        "compat-names",
        "compress",
        "config",
        "connect-freq",
        "connect-freq-initial",
        "connect-retry",
        "connect-retry-max",
        "connect-timeout",
        "connection",
        "crl-verify",
        "daemon",
        "data-ciphers",
        "data-ciphers-fallback",
        "dev",
        "dev-node",
        "dev-type",
        "dh",
        "dhcp-option",
        "disable",
        "disable-dco",
        "disable-occ",
        "dns",
        "down",
        "down-pre",
        "duplicate-cn",
        "ecdh-curve",
        "echo",
        "engine",
        "errors-to-stderr",
        "explicit-exit-notify",
        "extra-certs",
        "fast-io",
        "float",
        "force-tls-key-material-export",
        "fragment",
        "genkey",
        "gremlin",
        "group",
        "hand-window",
        "hash-size",
        "help",
        "http-proxy",
        "http-proxy-option",
        "http-proxy-override",
        "http-proxy-retry",
        "http-proxy-timeout",
        "http-proxy-user-pass",
        "ifconfig",
        "ifconfig-ipv6",
        "ifconfig-ipv6-pool",
        "ifconfig-ipv6-push",
        "ifconfig-noexec",
        "ifconfig-nowarn",
        "ifconfig-pool",
        "ifconfig-pool-persist",
        "ifconfig-push",
        "ifconfig-push-constraint",
        "ignore-unknown-option",
        "inactive",
        "ipchange",
        "iproute",
        "iroute",
        "iroute-ipv6",
        "keepalive",
        "key",
        "key-derivation",
        "key-direction",
        "keying-material-exporter",
        "learn-address",
        "link-mtu",
        "lladdr",
        "local",
        "log",
        "log-append",
        "lport",
        "machine-readable-output",
        "management",
        "management-client",
        "management-client-auth",
        "management-client-group",
        "management-client-user",
        "management-external-cert",
        "management-external-key",
        "management-forget-disconnect",
        "management-hold",
        "management-log-cache",
        "management-query-passwords",
        "management-query-proxy",
        "management-query-remote",
        "management-signal",
        "management-up-down",
        "mark",
        "max-clients",
        "max-packet-size",
        "max-routes",
        "max-routes-per-client",
        "memstats",
        "mktun",
        "mlock",
        "mode",
        "mssfix",
        "mtu-disc",
        "mtu-dynamic",
        "mtu-test",
        "multihome",
        "mute",
        "mute-replay-warnings",
        "ncp-ciphers",
        "nice",
        "no-name-remapping",
        "no-replay",
        "nobind",
        "ns-cert-type",
        "opt-verify",
        "parameter",
        "passtos",
        "peer-fingerprint",
        "peer-id",
        "persist-key",
        "persist-local-ip",
        "persist-remote-ip",
        "persist-tun",
        "ping",
        "ping-exit",
        "ping-restart",
        "ping-timer-rem",
        "pkcs11-cert-private",
        "pkcs11-id",
        "pkcs11-id-management",
        "pkcs11-pin-cache",
        "pkcs11-private-mode",
        "pkcs11-protected-authentication",
        "pkcs11-providers",
        "pkcs12",
        "plugin",
        "port",
        "port-share",
        "preresolve",
        "prng",
        "proto",
        "proto-force",
        "protocol-flags",
        "providers",
        "pull",
        "pull-filter",
        "push",
        "push-continuation",
        "push-peer-info",
        "push-remove",
        "push-reset",
        "rcvbuf",
        "redirect-gateway",
        "redirect-private",
        "remap-usr1",
        "remote",
        "remote-cert-eku",
        "remote-cert-ku",
        "remote-cert-tls",
        "remote-random",
        "remote-random-hostname",
        "reneg-bytes",
        "reneg-pkts",
        "reneg-sec",
        "replay-persist",
        "replay-window",
        "resolv-retry",
        "rmtun",
        "route",
        "route-delay",
        "route-gateway",
        "route-ipv6",
        "route-ipv6-gateway",
        "route-metric",
        "route-noexec",
        "route-nopull",
        "route-pre-down",
        "route-up",
        "rport",
        "script-security",
        "secret",
        "server",
        "server-bridge",
        "server-ipv6",
        "server-poll-timeout",
        "session-timeout",
        "setcon",
        "setenv",
        "setenv-safe",
        "shaper",
        "show-ciphers",
        "show-curves",
        "show-digests",
        "show-engines",
        "show-gateway",
        "show-groups",
        "show-net",
        "show-net-up",
        "show-pkcs11-ids",
        "show-tls",
        "show-valid-subnets",
        "single-session",
        "sndbuf",
        "socket-flags",
        "socks-proxy",
        "socks-proxy-retry",
        "stale-routes-check",
        "static-challenge",
        "status",
        "status-version",
        "suppress-timestamps",
        "syslog",
        "tcp-nodelay",
        "tcp-queue-limit",
        "test-crypto",
        "tls-auth",
        "tls-cert-profile",
        "tls-cipher",
        "tls-ciphersuites",
        "tls-client",
        "tls-crypt",
        "tls-crypt-v2",
        "tls-crypt-v2-verify",
        "tls-exit",
        "tls-export-cert",
        "tls-groups",
        "tls-server",
        "tls-timeout",
        "tls-verify",
        "tls-version-max",
        "tls-version-min",
        "tmp-dir",
        "topology",
        "tran-window",
        "tun-ipv6",
        "tun-mtu",
        "tun-mtu-extra",
        "tun-mtu-max",
        "txqueuelen",
        "udp-mtu",
        "up",
        "up-delay",
        "up-restart",
        "use-prediction-resistance",
        "user",
        "verb",
        "verify-client-cert",
        "verify-hash",
        "verify-x509-name",
        "version",
        "vlan-accept",
        "vlan-pvid",
        "vlan-tagging",
        "writepid",
        "x509-track",
        "x509-username-field",
    };

    /* and the names openvpn 2.7 (release/2.7 options.c) adds to them */
    static const char *const names_27[] = {
        "allow-deprecated-insecure-static-crypto",
        "dns-updown",
        "override-username",
        "route-table",
        "tls-crypt-v2-max-age",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(names_27) / sizeof(names_27[0]); i++) {
        assert_non_null(config_directive_find(names_27[i]));
    }
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const struct config_directive *d = config_directive_find(names[i]);

        if (d == NULL) {
            fail_msg("'%s' is not in the directive table", names[i]);
        }
        assert_string_equal(d->name, names[i]);
        assert_true(d->min_args <= d->max_args);
        assert_true(d->kind != CONFIG_KIND_SET || d->handler != NULL);
    }
    assert_null(config_directive_find("frobnicate"));
}

/* ---- syntax ---- */

static void split(const char *line, int expected_argc, const char *const *expected)
{
    char scratch[1024], why[256], *argv[CONFIG_MAX_ARGS];
    int argc = -1;

    assert_true(strlen(line) + CONFIG_MAX_ARGS <= sizeof(scratch));
    assert_int_equal(config_split_line(line, strlen(line), scratch, argv, &argc, why, sizeof(why)),
                     0);
    assert_int_equal(argc, expected_argc);
    for (int i = 0; i < argc; i++) {
        assert_string_equal(argv[i], expected[i]);
    }
}

static void split_fails(const char *line, const char *why_prefix)
{
    char scratch[1024], why[256] = "", *argv[CONFIG_MAX_ARGS];
    int argc;

    assert_int_equal(config_split_line(line, strlen(line), scratch, argv, &argc, why, sizeof(why)),
                     -EINVAL);
    assert_true(strncmp(why, why_prefix, strlen(why_prefix)) == 0);
}

static void quoting_and_comments(void **state)
{
    char line[400];

    (void)state;
    split("status \"my file.log\"", 2, (const char *const[]){"status", "my file.log"});
    split("writepid 'c:\\dir\\pid'", 2, (const char *const[]){"writepid", "c:\\dir\\pid"});
    split("log-append a\\ b\\\\c", 2, (const char *const[]){"log-append", "a b\\c"});
    split("x \"x\\\"y\" 7", 3, (const char *const[]){"x", "x\"y", "7"});
    split("tmp-dir \"ab\"cd", 3, (const char *const[]){"tmp-dir", "ab", "cd"});
    split("x \"\" ''", 3, (const char *const[]){"x", "", ""});
    split("  \tport   1194  # trailing", 2, (const char *const[]){"port", "1194"});
    split("port 1194 ; trailing", 2, (const char *const[]){"port", "1194"});
    split("port 11#94", 2, (const char *const[]){"port", "11#94"});
    split("# whole line", 0, NULL);
    split("; whole line", 0, NULL);
    split("\\# still a comment", 0, NULL);
    split("   ", 0, NULL);
    split("a\r", 1, (const char *const[]){"a"});
    split_fails("x \"open", "no closing quotation (\")");
    split_fails("x 'open", "no closing single quotation (')");
    split_fails("x c:\\dir", "bad backslash");
    split_fails("x a\\", "a backslash ends the line");
    split_fails("a b c d e f g h i j k l m n o p q", "too many words on one line (16 max)");
    split("a b c d e f g h i j k l m n o p", 16,
          (const char *const[]){"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m",
                                "n", "o", "p"});
    memset(line, 'w', 256);
    line[256] = '\0';
    split(line, 1, (const char *const[]){line});
    line[256] = 'w';
    line[257] = '\0';
    split_fails(line, "a word is too long (256 characters max)");
    /* The same rules through the parser, with the file and line in the message. */
    expect_error(BASE "status \"open\n", "t.conf:8: status: no closing quotation (\")");
    expect_error(BASE "  --push \"route 198.19.70.0 255.255.255.0\n",
                 "t.conf:8: push: no closing quotation (\")");
    expect_error_prefix("ca c:\\x\n" BASE, "t.conf:1: ca: bad backslash ('\\') usage");
}

static void dashes_bom_and_blank_lines(void **state)
{
    struct config cfg;

    (void)state;
    expect_ok(&cfg, "\xEF\xBB\xBF--port 1201\r\n\r\n\n" BASE "--verb 3\n");
    assert_int_equal(cfg.net.port, 1201);
    assert_int_equal(cfg.proc.verb, 3);
    config_free(&cfg);
    expect_error("-- 1\n" BASE, "t.conf:1: --: unknown directive");
}

/* ---- inline blocks ---- */

static void inline_blocks(void **state)
{
    struct config cfg;
    char err[ERR_LEN];
    char *ca = slurp("ca.crt"), *cert = slurp("server.crt"), *key = slurp("server.key");
    char *ta = slurp("ta.key"), *dh = slurp("dh.pem");

    (void)state;
    config_init(&cfg);
    if (config_parse_file(&cfg, "inline.conf", err, sizeof(err)) != 0) {
        fail_msg("%s", err);
    }
    assert_string_equal(cfg.tls.ca.data, ca);
    assert_string_equal(cfg.tls.ca.origin, "inline.conf:6 (inline)");
    assert_string_equal(cfg.tls.cert.data, cert);
    assert_string_equal(cfg.tls.cert.origin, "inline.conf:19 (inline)");
    assert_string_equal(cfg.tls.key.data, key);
    assert_string_equal(cfg.tls.tls_wrap_key.data, ta);
    assert_string_equal(cfg.tls.tls_wrap_key.origin, "inline.conf:50 (inline)");
    assert_int_equal(cfg.tls.tls_wrap_mode, CONFIG_TLS_WRAP_AUTH);
    assert_int_equal(cfg.tls.key_direction, CONFIG_KEY_DIRECTION_NORMAL);
    assert_int_equal(cfg.net.port, 1195); /* the line after the last block is still read */
    assert_false(cfg.tls.dh_none);
    assert_string_equal(cfg.tls.dh.data, dh); /* the DHE suites' group, as in 2.6 */
    assert_string_equal(cfg.tls.dh.origin, "inline.conf:39 (inline)");
    config_free(&cfg);

    /* Lines after a block keep their numbers. */
    expect_error(BASE "<dh>\nsome\ntext\n</dh>\nport 0\n",
                 "t.conf:12: port: '0' is not a port number (1-65535)");
    expect_error(BASE "<ca>\nsome\ntext\n", "t.conf:8: ca: no closing </ca> for the inline "
                                            "block");
    expect_error(BASE "<port>\n1194\n</port>\n",
                 "t.conf:8: port: cannot be given as an inline <port> block");
    expect_error(BASE "</ca>\n", "t.conf:8: </ca>: closing tag without an opening one");
    expect_error(BASE "<frob>\nx\n</frob>\nport 0\n", "t.conf:8: frob: unknown directive");
    expect_error_prefix(
        BASE "<tls-crypt-v2>\nx\n</tls-crypt-v2>\n",
        "t.conf:8: tls-crypt-v2: t.conf:8 (inline) is not a tls-crypt-v2 server key");
    /* An inline block whose text is no certificate is reported at its opening line. */
    expect_error_prefix("dev tun\nserver 198.19.0.0 255.255.255.0\n<ca>\nnot a cert\n</ca>\n"
                        "cert server.crt\nkey server.key\n",
                        "t.conf:3: ca: t.conf:3 (inline): no valid certificate");
    free(ca);
    free(cert);
    free(key);
    free(ta);
    free(dh);
}

/* `dh FILE`: the parameters are read and serve the DHE suites; a missing file stops start-up (as
 * in 2.6); the X9.42 form (`openssl dhparam -dsaparam`, which 2.6's OpenSSL reads) becomes PKCS #3
 * with the same group; a file that is neither is dropped with a warning; `dh none` after it drops
 * them. */
static void dh_file(void **state)
{
    struct config cfg;
    char *dh = slurp("dh.pem");

    (void)state;
    expect_ok(&cfg, BASE "dh dh.pem\n");
    assert_false(cfg.tls.dh_none);
    assert_string_equal(cfg.tls.dh.data, dh);
    assert_int_equal(cfg.n_warnings, 0);
    config_free(&cfg);
    expect_ok(&cfg, BASE "dh dh.pem\ndh none\n");
    assert_true(cfg.tls.dh_none);
    assert_null(cfg.tls.dh.data);
    config_free(&cfg);
    expect_error_prefix(BASE "dh dh2048.pem\n", "t.conf:8: dh: cannot read 'dh2048.pem'");
    expect_warning(BASE "dh ca.crt\n", "t.conf:8: dh: ca.crt: ignored: not DH parameters in PKCS "
                                       "#3 (PEM or DER) or X9.42 PEM form");
    expect_ok(&cfg, BASE "dh ca.crt\n");
    assert_null(cfg.tls.dh.data);
    config_free(&cfg);
    /* X9.42: Mbed TLS now parses the file's 2048-bit group, and only from the rewritten text */
    expect_ok(&cfg, BASE "dh dh-x942.pem\n");
    assert_int_equal(cfg.n_warnings, 0);
    assert_non_null(cfg.tls.dh.data);
    assert_non_null(strstr(cfg.tls.dh.data, "-----BEGIN DH PARAMETERS-----"));
    {
        mbedtls_dhm_context dhm;
        char *x942 = slurp("dh-x942.pem");

        mbedtls_dhm_init(&dhm);
        assert_int_not_equal(
            mbedtls_dhm_parse_dhm(&dhm, (const unsigned char *)x942, strlen(x942) + 1), 0);
        assert_int_equal(
            mbedtls_dhm_parse_dhm(&dhm, (const unsigned char *)cfg.tls.dh.data, cfg.tls.dh.len + 1),
            0);
        assert_int_equal(mbedtls_mpi_bitlen(&dhm.P), 2048);
        mbedtls_dhm_free(&dhm);
        free(x942);
    }
    config_free(&cfg);
    free(dh);
}

/* ---- error classes ---- */

static void implemented_with_bad_values(void **state)
{
    (void)state;
    expect_error("port 70000\n" BASE, "t.conf:1: port: '70000' is not a port number (1-65535)");
    expect_error("port 0\n" BASE, "t.conf:1: port: '0' is not a port number (1-65535)");
    expect_error("port http\n" BASE, "t.conf:1: port: 'http' is not a port number (1-65535)");
    expect_error("verb x\n" BASE, "t.conf:1: verb: 'x' is not a number");
    expect_error("max-clients 0\n" BASE, "t.conf:1: max-clients: '0' is out of range "
                                         "(1-16777214)");
    expect_error("server 198.19.0.1 255.255.255.0\n" BASE,
                 "t.conf:1: server: '198.19.0.1' is not the network address of a "
                 "255.255.255.0 subnet");
    expect_error("server 198.19.0.0 255.0.255.0\n" BASE,
                 "t.conf:1: server: '255.0.255.0' is not a valid netmask");
    /* a /30 is a tap server's smallest (2.6 helper.c): with tun it is refused once the device
     * type is known, at the line that set it */
    expect_error(BASE "server 198.19.0.0 255.255.255.252\n",
                 "t.conf:8: server: netmask 255.255.255.252 leaves too few addresses (/29 at "
                 "least: 255.255.255.248)");
    expect_error_prefix("server 198.19.0.0 255.255.255.254\n" BASE,
                        "t.conf:1: server: netmask 255.255.255.254 leaves too few addresses");
    expect_error_prefix("server 198.0.0.0 255.0.0.0\n" BASE,
                        "t.conf:1: server: netmask 255.0.0.0 allows for too many addresses");
    expect_error("server vpn 255.255.255.0\n" BASE,
                 "t.conf:1: server: 'vpn' is not an IPv4 network address");
    expect_error("dev tun/0\n" BASE, "t.conf:1: dev: 'tun/0' is not a valid interface name "
                                     "(1-15 characters, no '/', ':' or blanks)");
    expect_error("key-direction 2\n" BASE, "t.conf:1: key-direction: unknown key direction "
                                           "'2' (0 or 1)");
    expect_error("auth SHA999\n" BASE, "t.conf:1: auth: unknown digest 'SHA999'");
    expect_error("data-ciphers AES-256-GCM:NOPE-128\n" BASE,
                 "t.conf:1: data-ciphers: unknown cipher 'NOPE-128'");
    expect_error("remote-cert-tls server\n" BASE,
                 "t.conf:1: remote-cert-tls: 'server' is a client setting (it checks the "
                 "server's certificate); a server config wants 'remote-cert-tls client'");
    expect_error("tls-version-min 1.3\n" BASE,
                 "t.conf:1: tls-version-min: TLS 1.3 is not available (the TLS library does "
                 "1.2 at most); append 'or-highest' to use the highest available");
    expect_error("tls-version-min 1.2\ntls-version-max 1.1\n" BASE,
                 "t.conf:2: tls-version-max 1.1 is below tls-version-min 1.2");
    expect_error("no-replay\n" BASE,
                 "t.conf:1: no-replay: turning replay protection off is not supported (fatal in "
                 "openvpn 2.6 with AEAD ciphers, deprecated there with CBC ones)");
    expect_error("verify-client-cert none\n" BASE,
                 "t.conf:1: verify-client-cert: 'none' needs auth-user-pass-verify, a plugin "
                 "or management-client-auth to check clients");
    /* options.c (options_postprocess_verify_ce): both need something that checks passwords */
    expect_error("username-as-common-name\n" BASE,
                 "t.conf:1: username-as-common-name: needs auth-user-pass-verify, a plugin or "
                 "management-client-auth (there is no username without them)");
    expect_error("auth-user-pass-optional\n" BASE,
                 "t.conf:1: auth-user-pass-optional: needs auth-user-pass-verify, a plugin or "
                 "management-client-auth (there is no username without them)");
    {
        struct config ok;

        expect_ok(&ok, "management 127.0.0.1 7505\nmanagement-client-auth\n"
                       "username-as-common-name\nauth-user-pass-optional\n" BASE);
        config_free(&ok);
        /* 2.6 counts management-client-auth for verify-client-cert too */
        expect_ok(&ok, "management 127.0.0.1 7505\nmanagement-client-auth\n"
                       "verify-client-cert none\n" BASE);
        config_free(&ok);
    }
    expect_error("tls-auth ta.key\n" BASE "tls-crypt ta.key\n",
                 "t.conf:9: tls-crypt: tls-auth and tls-crypt are mutually exclusive");
    expect_error("auth none\ntls-auth ta.key 0\n" BASE,
                 "t.conf:1: auth: tls-auth needs a digest, not none");
    expect_error("reneg-sec 100 200\n" BASE,
                 "t.conf:1: reneg-sec: the minimum (200) is above the maximum (100)");
    expect_error("tran-window -1\n" BASE,
                 "t.conf:1: tran-window: '-1' is out of range (0-31536000)");
    expect_error_prefix("dev tun\nca ca.crt\ncert server.crt\nkey server.key\n",
                        "t.conf: server is required (e.g. 'server ");
}

/* auth-user-pass-verify and what goes with it (openvpn 2.6 options.c). */
static void auth_directives(void **state)
{
    struct config cfg;

    (void)state;
    expect_ok(&cfg, "script-security 2\nauth-user-pass-verify '/bin/true \"a b\" c' via-file\n"
                    "username-as-common-name\nauth-user-pass-optional\nverify-client-cert none\n"
                    "tmp-dir /tmp\nsetenv FOO bar\nsetenv-safe X 'y z'\nsetenv EMPTY\n" BASE);
    assert_non_null(cfg.auth.auth_user_pass_verify);
    assert_string_equal(cfg.auth.auth_user_pass_verify[0], "/bin/true");
    assert_string_equal(cfg.auth.auth_user_pass_verify[1], "a b");
    assert_string_equal(cfg.auth.auth_user_pass_verify[2], "c");
    assert_null(cfg.auth.auth_user_pass_verify[3]);
    assert_true(cfg.auth.auth_user_pass_verify_via_file);
    assert_true(cfg.auth.username_as_common_name);
    assert_true(cfg.auth.auth_user_pass_optional);
    assert_int_equal(cfg.tls.verify_client_cert, CONFIG_VERIFY_NONE);
    assert_int_equal(cfg.hooks.script_security, 2);
    assert_string_equal(cfg.hooks.tmp_dir, "/tmp");
    assert_int_equal(cfg.hooks.n_setenv, 3);
    assert_string_equal(cfg.hooks.setenv[0], "FOO=bar");
    assert_string_equal(cfg.hooks.setenv[1], "OPENVPN_X=y z");
    assert_string_equal(cfg.hooks.setenv[2], "EMPTY=");
    config_free(&cfg);
    expect_ok(&cfg, "script-security 3\nauth-user-pass-verify /bin/true via-env\n"
                    "verify-client-cert optional\n" BASE);
    assert_false(cfg.auth.auth_user_pass_verify_via_file);
    assert_int_equal(cfg.tls.verify_client_cert, CONFIG_VERIFY_OPTIONAL);
    config_free(&cfg);

    expect_error("auth-user-pass-verify /bin/true via-file\n" BASE,
                 "t.conf:1: auth-user-pass-verify: running a script needs 'script-security 2' "
                 "or higher (it is 1)");
    expect_error("script-security 2\nauth-user-pass-verify /bin/true via-env\n" BASE,
                 "t.conf:2: auth-user-pass-verify: via-env passes the password in the "
                 "environment, which needs 'script-security 3' (or use via-file)");
    expect_error("script-security 2\nauth-user-pass-verify /bin/true\n" BASE,
                 "t.conf:2: auth-user-pass-verify: needs a second argument, 'via-env' or "
                 "'via-file' (as in openvpn 2.6)");
    expect_error("script-security 2\nauth-user-pass-verify /bin/true via-pipe\n" BASE,
                 "t.conf:2: auth-user-pass-verify: second argument must be 'via-env' or "
                 "'via-file', not 'via-pipe'");
    expect_error("script-security 2\nauth-user-pass-verify /nonexistent/check via-file\n" BASE,
                 "t.conf:2: auth-user-pass-verify: cannot execute '/nonexistent/check': No such "
                 "file or directory");
    expect_error("verify-client-cert optional\n" BASE,
                 "t.conf:1: verify-client-cert: 'optional' needs auth-user-pass-verify, a "
                 "plugin or management-client-auth to check clients");
    expect_error_prefix("script-security x\n" BASE, "t.conf:1: script-security: ");
    expect_error_prefix("tmp-dir /nonexistent/dir\n" BASE,
                        "t.conf:1: tmp-dir: cannot use '/nonexistent/dir': ");
    expect_error("setenv A=B c\n" BASE, "t.conf:1: setenv: 'A=B' is not a variable name");

    /* tls-verify, client-connect, client-disconnect, learn-address: a command each, split like
     * auth-user-pass-verify's, script-security 2 and a program that runs. */
    expect_ok(&cfg, "script-security 2\ntls-verify '/bin/true tv'\nclient-connect /bin/true\n"
                    "client-disconnect '/bin/true \"x y\"'\nlearn-address /bin/true\n" BASE);
    assert_string_equal(cfg.hooks.tls_verify[0], "/bin/true");
    assert_string_equal(cfg.hooks.tls_verify[1], "tv");
    assert_null(cfg.hooks.tls_verify[2]);
    assert_string_equal(cfg.hooks.client_connect[0], "/bin/true");
    assert_null(cfg.hooks.client_connect[1]);
    assert_string_equal(cfg.hooks.client_disconnect[1], "x y");
    assert_string_equal(cfg.hooks.learn_address[0], "/bin/true");
    config_free(&cfg);
    expect_error("client-connect /bin/true\n" BASE,
                 "t.conf:1: client-connect: running a script needs 'script-security 2' or higher "
                 "(it is 1)");
    expect_error("script-security 2\nclient-connect /tmp\nlearn-address /tmp\n" BASE,
                 "t.conf:2: client-connect: cannot execute '/tmp': not a regular file");
    expect_error("script-security 2\nlearn-address /nonexistent/learn\n" BASE,
                 "t.conf:2: learn-address: cannot execute '/nonexistent/learn': No such file or "
                 "directory");
    expect_error_prefix("script-security 2\ntls-verify\n" BASE, "t.conf:2: tls-verify: ");

    /* plugin: a bare name is looked up in openvpn's plugin directory, as 2.6 does; a path
     * that does not exist stops start-up. */
    expect_ok(&cfg, BASE "plugin openvpn-plugin-auth-pam.so login\nplugin /bin/true a 'b c'\n"
                         "verify-client-cert optional\n");
    assert_int_equal(cfg.hooks.n_plugins, 2);
    assert_string_equal(cfg.hooks.plugins[0].argv[0], "openvpn-plugin-auth-pam.so");
    assert_string_equal(cfg.hooks.plugins[0].argv[1], "login");
    assert_null(cfg.hooks.plugins[0].argv[2]);
    assert_string_equal(cfg.hooks.plugins[0].path,
                        OVPND_OPENVPN_PLUGIN_DIR "/openvpn-plugin-auth-pam.so");
    assert_string_equal(cfg.hooks.plugins[0].where, "t.conf:8");
    assert_string_equal(cfg.hooks.plugins[1].path, "/bin/true");
    assert_string_equal(cfg.hooks.plugins[1].argv[2], "b c");
    config_free(&cfg);
    /* crl-verify: read and parsed at start-up (crl.pem: a CRL of another throwaway CA, made with
     * `openssl ca -gencrl`; only its form matters here). */
    expect_ok(&cfg, BASE "crl-verify crl.pem\n");
    assert_non_null(cfg.tls.crl.data);
    assert_true(strstr(cfg.tls.crl.data, "BEGIN X509 CRL") != NULL);
    assert_non_null(cfg.tls.crl_file);
    config_free(&cfg);
    expect_error(BASE "crl-verify missing.pem\n",
                 "t.conf:8: crl-verify: cannot read 'missing.pem': No such file or directory");
    expect_error_prefix(BASE "crl-verify ca.crt\n",
                        "t.conf:8: crl-verify: ca.crt is not a CRL in PEM or DER form");
    expect_error_prefix(BASE "crl-verify crl.d dir\n",
                        "t.conf:8: crl-verify: 'crl.d' is not a directory ovpnd can read");
    expect_error("plugin /nonexistent/p.so\n" BASE,
                 "t.conf:1: plugin: cannot load '/nonexistent/p.so': No such file or directory");
}

static void argument_counts(void **state)
{
    (void)state;
    expect_error("port\n" BASE, "t.conf:1: port: takes 1 argument, not 0");
    expect_error("push route 198.19.1.0 255.255.255.0\n" BASE,
                 "t.conf:1: push: takes 1 argument, not 3 (quote an argument that contains "
                 "blanks)");
    expect_error("keepalive 10\n" BASE, "t.conf:1: keepalive: takes 2 arguments, not 1");
    expect_error("server 198.19.0.0\n" BASE, "t.conf:1: server: needs at least 2 arguments");
    expect_error("duplicate-cn yes\n" BASE, "t.conf:1: duplicate-cn: takes 0 arguments, not 1");
    expect_error("replay-window\n" BASE, "t.conf:1: replay-window: needs at least 1 argument");
    expect_error("status a b c\n" BASE, "t.conf:1: status: takes at most 2 arguments, not 3");
    expect_error("sndbuf\n" BASE, "t.conf:1: sndbuf: takes 1 argument, not 0");
}

/* auth-gen-token as openvpn 2.6 options.c reads it; the secret from `openvpn --genkey
 * auth-token` (data/config/auth-token.key), whose HMAC key is bytes 64..95 of the block. */
static void auth_gen_token_directives(void **state)
{
    static const uint8_t key_64_to_67[] = {0x06, 0xe2, 0x1c, 0x42}; /* from base64 -d | xxd */
    struct config cfg;

    (void)state;
    expect_ok(&cfg, BASE "auth-gen-token\n");
    assert_true(cfg.auth.auth_gen_token);
    assert_int_equal(cfg.auth.auth_token_lifetime_s, 0);
    assert_int_equal(cfg.auth.auth_token_renewal_s, 3600); /* reneg-sec */
    assert_false(cfg.auth.auth_token_external_auth);
    assert_false(cfg.auth.has_auth_token_secret);
    config_free(&cfg);
    expect_ok(&cfg, BASE "auth-gen-token 86400 7200 external-auth\n"
                         "auth-gen-token-secret auth-token.key\n");
    assert_int_equal(cfg.auth.auth_token_lifetime_s, 86400);
    assert_int_equal(cfg.auth.auth_token_renewal_s, 7200);
    assert_true(cfg.auth.auth_token_external_auth);
    assert_true(cfg.auth.has_auth_token_secret);
    assert_memory_equal(cfg.auth.auth_token_secret, key_64_to_67, sizeof(key_64_to_67));
    config_free(&cfg);
    expect_ok(&cfg, BASE "auth-gen-token 0 external-auth\n");
    assert_true(cfg.auth.auth_token_external_auth);
    assert_int_equal(cfg.auth.auth_token_renewal_s, 3600);
    config_free(&cfg);

    expect_error(BASE "auth-gen-token 0 0\n",
                 "t.conf:8: auth-gen-token: invalid argument '0' (syntax: auth-gen-token "
                 "[lifetime] [renewal-time] [external-auth]; renewal-time is at least 1)");
    expect_error(BASE "auth-gen-token 10 200 extern\n",
                 "t.conf:8: auth-gen-token: invalid argument 'extern' (syntax: auth-gen-token "
                 "[lifetime] [renewal-time] [external-auth]; renewal-time is at least 1)");
    expect_error_prefix(BASE "auth-gen-token -5\n", "t.conf:8: auth-gen-token: ");
    expect_error(BASE "reneg-sec 0\nauth-gen-token\n",
                 "t.conf:9: auth-gen-token: needs a non-infinite reneg-sec (it is 0)");
    expect_error(BASE "reneg-sec 100\nauth-gen-token\n",
                 "t.conf:9: auth-gen-token: renewal time (100 s, from reneg-sec) needs to be at "
                 "least two times hand-window (60 s), as in openvpn 2.6");
    expect_ok(&cfg, BASE "reneg-sec 10\nhand-window 5\nauth-gen-token\n");
    config_free(&cfg);
    expect_error(BASE "auth-gen-token\nauth-gen-token-secret ta.key\n",
                 "t.conf:9: auth-gen-token-secret: ta.key:4: a PEM block of another kind; "
                 "expected '-----BEGIN OpenVPN auth-token server key-----' (openvpn --genkey "
                 "auth-token)");
    expect_error_prefix(BASE "auth-gen-token\nauth-gen-token-secret missing.key\n",
                        "t.conf:9: auth-gen-token-secret: cannot read ");
    expect_error(BASE "auth-gen-token\n<auth-gen-token-secret>\n"
                      "-----BEGIN OpenVPN auth-token server key-----\nAAAA\n"
                      "-----END OpenVPN auth-token server key-----\n</auth-gen-token-secret>\n",
                 "t.conf:9: auth-gen-token-secret: t.conf:9 (inline):1: the key block is too "
                 "short (openvpn needs 128 bytes)");
    expect_warning(BASE "auth-gen-token-secret auth-token.key\n",
                   "t.conf:8: auth-gen-token-secret: ignored without auth-gen-token");
    expect_warning(BASE "auth-gen-token\n",
                   "t.conf:8: auth-gen-token: no token is ever made without "
                   "auth-user-pass-verify or a plugin");
}

/* `syslog [NAME]` and `daemon [NAME]` as openvpn 2.6 reads them (options.c, error.c
 * open_syslog): the first of them names the program, later ones change nothing; a second
 * `daemon NAME` is remarked on. */
static void syslog_and_daemon(void **state)
{
    struct config cfg;

    (void)state;
    expect_ok(&cfg, BASE "syslog\n");
    assert_true(cfg.proc.use_syslog);
    assert_null(cfg.proc.syslog_name);
    assert_false(cfg.proc.daemonize);
    config_free(&cfg);
    expect_ok(&cfg, BASE "syslog one\ndaemon two\n");
    assert_true(cfg.proc.daemonize);
    assert_string_equal(cfg.proc.syslog_name, "one");
    config_free(&cfg);
    expect_ok(&cfg, BASE "daemon two\nsyslog one\n");
    assert_string_equal(cfg.proc.syslog_name, "two");
    config_free(&cfg);
    expect_ok(&cfg, BASE "daemon\nsyslog one\n"); /* 2.6 opened syslog as "openvpn" */
    assert_true(cfg.proc.use_syslog);
    assert_null(cfg.proc.syslog_name);
    config_free(&cfg);
    expect_ok(&cfg, BASE "log server.log\ndaemon\n"); /* the file wins (main.c) */
    assert_true(cfg.proc.use_syslog);
    assert_string_equal(cfg.proc.log_file, "server.log");
    config_free(&cfg);
    expect_warning(BASE "daemon a\ndaemon b\n",
                   "t.conf:9: daemon: ignoring 'daemon b': a daemon directive came earlier");
    expect_error(BASE "syslog a b\n", "t.conf:8: syslog: takes at most 1 argument, not 2");
}

/* Lines openvpn 2.6 starts with (checked with openvpn 2.6 at --verb 4) that ovpnd once refused:
 * accepted, with a warning where 2.6's behaviour is narrower than the line suggests. */
static void openvpn26_tolerances(void **state)
{
    static const uint8_t odd_net6[16] = {0x20, 0x01, 0x0d, 0xb8, 0xd8, 0x00, 0xf0, 0x01,
                                         0x01, 0x60, 0x00, 0x98, 0,    0,    0,    0};
    struct config cfg;

    (void)state;
    /* tls-crypt has no key direction; 2.6 ignores the extra word. */
    expect_warning(BASE "tls-crypt ta.key 0\n", "t.conf:8: tls-crypt: the key direction '0' is ");
    expect_ok(&cfg, BASE "tls-crypt ta.key 1\n");
    assert_int_equal(cfg.tls.tls_wrap_mode, CONFIG_TLS_WRAP_CRYPT);
    config_free(&cfg);
    /* server-ipv6 with host bits: 2.6 counts from the address as written (server ::1 above it,
     * pool from +0x1000), it does not mask; ovpnd does the same and says so. */
    expect_warning(BASE "server-ipv6 2001:db8:d800:f001:160:98::/64\n",
                   "t.conf:8: server-ipv6: '2001:db8:d800:f001:160:98::/64' has bits set outside "
                   "its /64 prefix");
    expect_ok(&cfg, BASE "server-ipv6 2001:db8:d800:f001:160:98::/64\n");
    assert_memory_equal(cfg.net.server_ipv6_network, odd_net6, 16);
    config_free(&cfg);
    /* script-security above 3 acts as 3 (2.6 compares with >= only). */
    expect_warning("script-security 5\n" BASE, "t.conf:1: script-security: 5 is treated as 3");
    expect_ok(&cfg, "script-security 5\n" BASE);
    assert_int_equal(cfg.hooks.script_security, 3);
    config_free(&cfg);
    /* AES-192-GCM is a data cipher. */
    expect_ok(&cfg,
              BASE "data-ciphers aes-192-gcm:AES-256-GCM\ndata-ciphers-fallback AES-192-GCM\n");
    assert_string_equal(cfg.tls.data_ciphers, "AES-192-GCM:AES-256-GCM");
    assert_string_equal(cfg.tls.data_ciphers_fallback, "AES-192-GCM");
    config_free(&cfg);
    expect_ok(&cfg, BASE "ncp-ciphers AES-192-GCM\n");
    assert_string_equal(cfg.tls.data_ciphers, "AES-192-GCM");
    config_free(&cfg);
    /* 2.7's DEFAULT: the first one, in capitals, stands for the default list (2.6 refuses it) */
    expect_ok(&cfg, BASE "data-ciphers DEFAULT:AES-192-CBC\n");
    assert_string_equal(cfg.tls.data_ciphers,
                        "AES-256-GCM:AES-128-GCM:CHACHA20-POLY1305:AES-192-CBC");
    config_free(&cfg);
    expect_ok(&cfg, BASE "ncp-ciphers AES-128-CBC:DEFAULT\n");
    assert_string_equal(cfg.tls.data_ciphers,
                        "AES-128-CBC:AES-256-GCM:AES-128-GCM:CHACHA20-POLY1305");
    config_free(&cfg);
    expect_error("data-ciphers DEFAULT:DEFAULT\n" BASE,
                 "t.conf:1: data-ciphers: DEFAULT stands for the default ciphers once, in "
                 "capitals (as in openvpn 2.7)");
    expect_error("data-ciphers default\n" BASE,
                 "t.conf:1: data-ciphers: DEFAULT stands for the default ciphers once, in "
                 "capitals (as in openvpn 2.7)");
    /* opt-verify: 2.6 prints a deprecation; ovpnd sends no options string to compare. */
    expect_warning(BASE "opt-verify\n", "t.conf:8: opt-verify: ignored: deprecated");
    /* ping-exit N in a server: a client silent for N seconds is dropped, as ping-restart. */
    expect_ok(&cfg, "dev tun\ntopology subnet\nserver 198.19.0.0 255.255.255.0\nca ca.crt\n"
                    "cert server.crt\nkey server.key\nping 10\nping-exit 45\n");
    assert_int_equal(cfg.timers.ping_restart_s, 45);
    assert_true(cfg.timers.is_ping_exit);
    config_free(&cfg);
    expect_error_prefix(BASE "ping-exit 60\n", "t.conf:8: ping-exit: keepalive conflicts with");
    /* reneg-bytes, reneg-pkts: renegotiate after that much traffic. */
    expect_ok(&cfg, BASE "reneg-bytes 1000000\nreneg-pkts 5000\n");
    assert_int_equal(cfg.timers.reneg_bytes, 1000000);
    assert_int_equal(cfg.timers.reneg_pkts, 5000);
    config_free(&cfg);
    expect_error_prefix(BASE "reneg-bytes lots\n", "t.conf:8: reneg-bytes: ");
    /* replay-persist: 2.6 only loads and saves the file in point-to-point mode. */
    expect_warning(BASE "replay-persist /tmp/replay\n", "t.conf:8: replay-persist: ignored: ");
    /* socket-flags / tcp-nodelay: recorded for TCP; tcp-nodelay also pushes it, as 2.6. */
    expect_warning(BASE "socket-flags TCP_NODELAY\n",
                   "t.conf:8: socket-flags: TCP_NODELAY only applies to TCP");
    expect_ok(&cfg, BASE "socket-flags TCP_NODELAY\n");
    assert_true(cfg.net.tcp_nodelay);
    assert_int_equal(cfg.net.push.n_items, 0);
    config_free(&cfg);
    /* ... and no warning when a TCP socket is configured, whichever line comes first */
    expect_ok(&cfg, BASE "proto tcp-server\nsocket-flags TCP_NODELAY\n");
    assert_true(cfg.net.tcp_nodelay);
    assert_false(has_warning(&cfg, "t.conf:9: socket-flags"));
    config_free(&cfg);
    expect_ok(&cfg, BASE "socket-flags TCP_NODELAY\nproto tcp\n");
    assert_false(has_warning(&cfg, "t.conf:8: socket-flags"));
    config_free(&cfg);
    expect_ok(&cfg, BASE "socket-flags TCP_NODELAY\nlocal 198.18.0.1 1194 udp\n"
                         "local 198.18.0.1 1194 tcp\n");
    assert_false(has_warning(&cfg, "t.conf:8: socket-flags"));
    config_free(&cfg);
    expect_warning(BASE "socket-flags FAST\n",
                   "t.conf:8: socket-flags: unknown socket flag 'FAST'");
    expect_ok(&cfg, BASE "tcp-nodelay\n");
    assert_true(cfg.net.tcp_nodelay);
    assert_int_equal(cfg.net.push.n_items, 1);
    assert_string_equal(cfg.net.push.items[0], "socket-flags TCP_NODELAY");
    config_free(&cfg);
    /* providers: an OpenSSL 3 provider list; ovpnd uses OpenSSL's default provider. */
    expect_warning(BASE "providers legacy default\n", "t.conf:8: providers: ignored: ");
    /* remote-cert-ku / remote-cert-eku: checked on the client certificate. */
    expect_ok(&cfg,
              BASE "remote-cert-ku a0 88\nremote-cert-eku \"TLS Web Client Authentication\"\n");
    assert_true(cfg.tls.has_remote_cert_ku);
    assert_int_equal(cfg.tls.n_remote_cert_ku, 2);
    assert_int_equal(cfg.tls.remote_cert_ku[0], 0xa0);
    assert_int_equal(cfg.tls.remote_cert_ku[1], 0x88);
    assert_string_equal(cfg.tls.remote_cert_eku, "TLS Web Client Authentication");
    config_free(&cfg);
    expect_ok(&cfg, BASE "remote-cert-ku\nremote-cert-eku 1.3.6.1.5.5.7.3.2\n");
    assert_true(cfg.tls.has_remote_cert_ku);
    assert_int_equal(cfg.tls.n_remote_cert_ku, 0);
    config_free(&cfg);
    expect_error_prefix(BASE "remote-cert-ku zz\n", "t.conf:8: remote-cert-ku: 'zz' is not");
}

static void ignored_with_warning(void **state)
{
    struct config cfg;

    (void)state;
    expect_warning("sndbuf 393216\n" BASE, "t.conf:1: sndbuf: ignored: ");
    expect_warning(BASE "comp-lzo no\n",
                   "t.conf:8: comp-lzo: clients configured with compression get");
    expect_warning(BASE "compress\n",
                   "t.conf:8: compress: clients configured with compression get");
    expect_warning(BASE "compress stub-v2\n",
                   "t.conf:8: compress: clients configured with compression get");
    expect_warning(BASE "compress migrate\n",
                   "t.conf:8: compress: clients configured with compression get");
    expect_warning(BASE "mute-replay-warnings\n", "t.conf:8: mute-replay-warnings: ignored: ");
    expect_warning(BASE "ping-timer-rem\nfast-io\ntxqueuelen 1000\ntun-mtu-extra 32\n",
                   "t.conf:11: tun-mtu-extra: ignored: ");
    /* Silent ones: always true for ovpnd, or the default behaviour. */
    expect_ok(&cfg, BASE "persist-key\npersist-tun\ndisable-dco\nbind\nallow-compression no\n");
    assert_int_equal(cfg.n_warnings, 0);
    config_free(&cfg);
    /* Without topology: net30, openvpn 2.6's default, and a note saying so. */
    expect_warning("dev tun\nserver 198.19.0.0 255.255.255.0\nca ca.crt\ncert server.crt\n"
                   "key server.key\nkeepalive 10 60\n",
                   "t.conf: topology is not set: net30, the default of openvpn 2.6");
    expect_ok(&cfg, "dev tun\nserver 198.19.0.0 255.255.255.0\nca ca.crt\ncert server.crt\n"
                    "key server.key\nkeepalive 10 60\n");
    assert_int_equal(cfg.net.topology, CONFIG_TOPOLOGY_NET30);
    config_free(&cfg);
    /* `ifconfig LOCAL REMOTE` in net30 form needs no topology line, as in 2.6. */
    expect_ok(&cfg, "dev tun\nmode server\ntls-server\nifconfig 198.19.0.1 198.19.0.2\n"
                    "ifconfig-pool 198.19.0.4 198.19.0.251\nroute 198.19.0.0 255.255.255.0\n"
                    "ca ca.crt\ncert server.crt\nkey server.key\nkeepalive 10 60\n");
    assert_int_equal(cfg.net.topology, CONFIG_TOPOLOGY_NET30);
    config_free(&cfg);
    expect_ok(&cfg, BASE);
    assert_int_equal(cfg.net.topology, CONFIG_TOPOLOGY_SUBNET);
    assert_false(has_warning(&cfg, "t.conf: topology is not set"));
    config_free(&cfg);
}

/* The plan of a parsed config (topology.h), for the expansion tests. */
static void plan_of(const struct config *cfg, struct topology_plan *plan)
{
    const char *directive = NULL;
    char why[400];

    if (topology_plan_make(cfg, plan, &directive, why, sizeof(why)) != 0) {
        fail_msg("%s: %s", directive, why);
    }
}

/* dev tap (2.6 helper.c helper_client_server, options.c): what `server` and `server-bridge`
 * expand to, which device names are tap, and what 2.6 refuses. */
static void tap_configs(void **state)
{
    struct topology_plan plan;
    struct config cfg;

#define TAP_TAIL                                                                                   \
    "ca ca.crt\n"                                                                                  \
    "cert server.crt\n"                                                                            \
    "key server.key\n"                                                                             \
    "keepalive 10 60\n"
    (void)state;
    /* server with tap: as topology subnet, whatever topology says, and no topology pushed */
    expect_ok(&cfg, "dev tap\ntopology net30\nserver 198.19.7.0 255.255.255.0\n" TAP_TAIL);
    assert_true(cfg.net.is_tap);
    assert_false(has_warning(&cfg, "t.conf: topology is not set"));
    plan_of(&cfg, &plan);
    assert_int_equal(plan.topology, CONFIG_TOPOLOGY_SUBNET);
    assert_int_equal(plan.local, 0xC6130701u);          /* NET+1 */
    assert_int_equal(plan.remote_netmask, 0xFFFFFF00u); /* its netmask */
    assert_true(plan.has_pool);
    assert_int_equal(plan.pool.start, 0xC6130702u); /* NET+2 .. broadcast-1 */
    assert_int_equal(plan.pool.end, 0xC61307FEu);
    assert_int_equal(plan.push_netmask, 0xFFFFFF00u); /* pushed: ifconfig ADDRESS NETMASK */
    assert_int_equal(plan.n_push, 1);
    assert_string_equal(plan.push[0], "route-gateway 198.19.7.1");
    assert_true(plan.has_constraint);
    config_free(&cfg);
    /* without topology: no note about net30, which a tap server does not use */
    expect_ok(&cfg, "dev tap0\nserver 198.19.7.0 255.255.255.0\n" TAP_TAIL);
    assert_true(cfg.net.is_tap);
    assert_false(has_warning(&cfg, "t.conf: topology is not set"));
    config_free(&cfg);
    /* dev-type decides over the name, whichever line comes first (2.6 dev_type_enum) */
    expect_ok(&cfg, "dev-type tap\ndev vpn0\nserver 198.19.7.0 255.255.255.0\n" TAP_TAIL);
    assert_true(cfg.net.is_tap);
    config_free(&cfg);
    expect_ok(&cfg, "dev tapvpn\ndev-type tun\ntopology subnet\n"
                    "server 198.19.7.0 255.255.255.0\n" TAP_TAIL);
    assert_false(cfg.net.is_tap);
    config_free(&cfg);
    /* a /29 is fine with tap too, a /31 not */
    expect_ok(&cfg, "dev tap\nserver 198.19.7.0 255.255.255.248\n" TAP_TAIL);
    plan_of(&cfg, &plan);
    assert_int_equal(plan.pool.start, 0xC6130702u);
    assert_int_equal(plan.pool.end, 0xC6130706u);
    config_free(&cfg);
    expect_error_prefix("dev tap\nserver 198.19.7.0 255.255.255.254\n" TAP_TAIL,
                        "t.conf:2: server: netmask 255.255.255.254 leaves too few addresses");
    /* server-bridge GW MASK START END: the pool, route-gateway GW, no address for the device */
    expect_ok(
        &cfg,
        "dev tap\nserver-bridge 198.19.7.1 255.255.255.0 198.19.7.100 198.19.7.110\n" TAP_TAIL);
    plan_of(&cfg, &plan);
    assert_int_equal(plan.local, 0);
    assert_true(plan.has_pool);
    assert_int_equal(plan.pool.start, 0xC6130764u);
    assert_int_equal(plan.pool.end, 0xC613076Eu);
    assert_int_equal(plan.push_netmask, 0xFFFFFF00u);
    assert_int_equal(plan.n_push, 1);
    assert_string_equal(plan.push[0], "route-gateway 198.19.7.1");
    assert_false(plan.has_constraint);
    config_free(&cfg);
    /* what 2.6 refuses */
    expect_error("dev tap\nserver 198.19.7.0 255.255.255.0\n"
                 "server-bridge 198.19.7.1 255.255.255.0 198.19.7.100 198.19.7.110\n" TAP_TAIL,
                 "t.conf:3: server-bridge: server and server-bridge cannot be used together");
    expect_error(
        "dev tun\nserver-bridge 198.19.7.1 255.255.255.0 198.19.7.100 198.19.7.110\n" TAP_TAIL,
        "t.conf:2: server-bridge: only makes sense with dev tap");
    expect_error(
        "dev tap\nserver-bridge 198.19.7.1 255.255.255.0 198.19.8.100 198.19.8.110\n" TAP_TAIL,
        "t.conf:2: server-bridge: IP addresses 198.19.7.1 and 198.19.8.100 are not in "
        "the same 255.255.255.0 subnet");
    expect_error(
        "dev tap\nserver-bridge 198.19.7.1 255.255.255.0 198.19.7.110 198.19.7.100\n" TAP_TAIL,
        "t.conf:2: server-bridge: start IP [198.19.7.110] is greater than end IP "
        "[198.19.7.100]");
    expect_error("dev tap\nserver-bridge 198.19.7.1 255.255.255.0\n" TAP_TAIL,
                 "t.conf:2: server-bridge: takes GATEWAY NETMASK POOL-START POOL-END, 'nogw', "
                 "or nothing");
    expect_error("dev tap\nserver-bridge 198.19.7.1 255.255.255.0 198.19.7.100 198.19.7.110\n"
                 "ifconfig-pool 198.19.7.120 198.19.7.130\n" TAP_TAIL,
                 "t.conf:3: ifconfig-pool: server-bridge already defines an ifconfig-pool, so "
                 "you can't also specify one explicitly");
    expect_error("dev tun\nlladdr 02:00:5e:00:01:02\ntopology subnet\n"
                 "server 198.19.7.0 255.255.255.0\n" TAP_TAIL,
                 "t.conf:2: lladdr: can only be used with dev tap");
    expect_error("dev tap\nlladdr 02:00:5e:00:01\nserver 198.19.7.0 255.255.255.0\n" TAP_TAIL,
                 "t.conf:2: lladdr: lladdr parm '02:00:5e:00:01' must be a MAC address");
    expect_ok(&cfg,
              "dev tap\nlladdr 02:00:5e:00:01:02\nserver 198.19.7.0 255.255.255.0\n" TAP_TAIL);
    assert_true(cfg.net.has_lladdr);
    assert_int_equal(cfg.net.lladdr[5], 2);
    config_free(&cfg);
    /* the long form of a bridge (2.6 starts it): `mode server` + `tls-server` with dev tap and
     * neither server, server-bridge nor ifconfig; the device is left as opened, clients get
     * ifconfig-pool's addresses with its netmask, or none without it, and nothing is pushed */
    expect_ok(&cfg, "dev tap\nmode server\ntls-server\n"
                    "ifconfig-pool 198.19.7.10 198.19.7.100 255.255.255.0\n" TAP_TAIL);
    plan_of(&cfg, &plan);
    assert_int_equal(plan.local, 0);
    assert_true(plan.has_pool);
    assert_int_equal(plan.pool.start, 0xC613070Au);
    assert_int_equal(plan.pool.end, 0xC6130764u);
    assert_int_equal(plan.push_netmask, 0xFFFFFF00u);
    assert_int_equal(plan.n_push, 0);
    config_free(&cfg);
    expect_ok(&cfg, "dev tap\nmode server\ntls-server\n" TAP_TAIL);
    plan_of(&cfg, &plan);
    assert_int_equal(plan.local, 0);
    assert_false(plan.has_pool);
    assert_int_equal(plan.n_push, 0);
    config_free(&cfg);
    /* server-bridge without arguments: no pool, route-gateway dhcp pushed (the clients ask
     * the bridged LAN's DHCP server); with nogw nothing is pushed */
    expect_ok(&cfg, "dev tap\nserver-bridge\n" TAP_TAIL);
    plan_of(&cfg, &plan);
    assert_false(plan.has_pool);
    assert_int_equal(plan.local, 0);
    assert_int_equal(plan.n_push, 1);
    assert_string_equal(plan.push[0], "route-gateway dhcp");
    config_free(&cfg);
    expect_ok(&cfg, "dev tap\nserver-bridge nogw\n" TAP_TAIL);
    plan_of(&cfg, &plan);
    assert_false(plan.has_pool);
    assert_int_equal(plan.n_push, 0);
    config_free(&cfg);
    expect_error("dev tap\nserver-bridge\nifconfig-pool 198.19.7.120 198.19.7.130\n" TAP_TAIL,
                 "t.conf:3: ifconfig-pool: server-bridge already defines an ifconfig-pool, so "
                 "you can't also specify one explicitly");
    expect_error("dev tap\nserver-bridge nogw x\n" TAP_TAIL,
                 "t.conf:2: server-bridge: takes GATEWAY NETMASK POOL-START POOL-END, 'nogw', "
                 "or nothing");
#undef TAP_TAIL
}

/* vlan-tagging, vlan-accept, vlan-pvid (2.6 options.c add_option and
 * options_postprocess_verify_ce): only with dev tap, VIDs 1..4094, defaults all and 1, and
 * vlan-accept / vlan-pvid other than their defaults only with vlan-tagging. */
static void vlan_tagging_configs(void **state)
{
    struct config cfg;

#define VLAN_TAIL                                                                                  \
    "server 198.19.7.0 255.255.255.0\n"                                                            \
    "ca ca.crt\n"                                                                                  \
    "cert server.crt\n"                                                                            \
    "key server.key\n"                                                                             \
    "keepalive 10 60\n"
    (void)state;
    expect_ok(&cfg, "dev tap\n" VLAN_TAIL);
    assert_false(cfg.net.vlan_tagging);
    assert_int_equal(cfg.net.vlan_accept, VLAN_ACCEPT_ALL);
    assert_int_equal(cfg.net.vlan_pvid, 1);
    config_free(&cfg);
    expect_ok(&cfg, "dev tap\nvlan-tagging\n" VLAN_TAIL);
    assert_true(cfg.net.vlan_tagging);
    assert_int_equal(cfg.net.vlan_accept, VLAN_ACCEPT_ALL);
    assert_int_equal(cfg.net.vlan_pvid, 1);
    config_free(&cfg);
    expect_ok(&cfg, "dev tap\nvlan-tagging\nvlan-accept tagged\nvlan-pvid 4094\n" VLAN_TAIL);
    assert_int_equal(cfg.net.vlan_accept, VLAN_ACCEPT_TAGGED);
    assert_int_equal(cfg.net.vlan_pvid, 4094);
    config_free(&cfg);
    expect_ok(&cfg, "dev tap\nvlan-tagging\nvlan-accept untagged\nvlan-pvid 1\n" VLAN_TAIL);
    assert_int_equal(cfg.net.vlan_accept, VLAN_ACCEPT_UNTAGGED);
    config_free(&cfg);
    /* the defaults written out need no vlan-tagging (2.6 compares with the defaults) */
    expect_ok(&cfg, "dev tap\nvlan-accept all\nvlan-pvid 1\n" VLAN_TAIL);
    assert_false(cfg.net.vlan_tagging);
    config_free(&cfg);

    expect_error("dev tun\nvlan-tagging\ntopology subnet\n" VLAN_TAIL,
                 "t.conf:2: vlan-tagging: must be used with dev tap");
    expect_error("dev tap\nvlan-accept tagged\n" VLAN_TAIL,
                 "t.conf:2: vlan-accept: requires vlan-tagging");
    expect_error("dev tap\nvlan-pvid 10\n" VLAN_TAIL, "t.conf:2: vlan-pvid: requires vlan-tagging");
    expect_error("dev tap\nvlan-tagging\nvlan-pvid 0\n" VLAN_TAIL,
                 "t.conf:3: vlan-pvid: VLAN id '0' is out of range (1-4094)");
    expect_error("dev tap\nvlan-tagging\nvlan-pvid 4095\n" VLAN_TAIL,
                 "t.conf:3: vlan-pvid: VLAN id '4095' is out of range (1-4094)");
    expect_error("dev tap\nvlan-tagging\nvlan-pvid ten\n" VLAN_TAIL,
                 "t.conf:3: vlan-pvid: VLAN id 'ten' is not a number");
    expect_error("dev tap\nvlan-tagging\nvlan-accept some\n" VLAN_TAIL,
                 "t.conf:3: vlan-accept: 'some' must be 'tagged', 'untagged' or 'all'");
#undef VLAN_TAIL
}

/* Pools and topologies: what openvpn 2.6 refuses (options.c, helper.c, pool.c) and ovpnd's own
 * refusals, each with its line. */
static void pool_directives(void **state)
{
    struct config cfg;

#define NOSERVER                                                                                   \
    "dev tun\n"                                                                                    \
    "ca ca.crt\n"                                                                                  \
    "cert server.crt\n"                                                                            \
    "key server.key\n"                                                                             \
    "keepalive 10 60\n"
    (void)state;
    expect_ok(&cfg, "topology net30\n" NOSERVER "server 198.19.0.0 255.255.255.0\n");
    assert_int_equal(cfg.net.topology, CONFIG_TOPOLOGY_NET30);
    config_free(&cfg);
    expect_ok(&cfg, "topology p2p\n" NOSERVER "server 198.19.0.0 255.255.255.0\n");
    assert_int_equal(cfg.net.topology, CONFIG_TOPOLOGY_P2P);
    config_free(&cfg);
    expect_ok(&cfg, "topology subnet\n" NOSERVER "server 198.19.0.0 255.255.255.0 nopool\n"
                    "ifconfig-pool 198.19.0.100 198.19.0.199\nifconfig-pool-persist ipp.txt 0\n"
                    "ifconfig-push-constraint 198.19.0.0 255.255.255.0\n");
    assert_true(cfg.net.server_nopool);
    assert_int_equal(cfg.net.ifconfig_pool_start, 0xC6130064u);
    assert_int_equal(cfg.net.ifconfig_pool_end, 0xC61300C7u);
    assert_string_equal(cfg.net.ifconfig_pool_persist, "ipp.txt");
    assert_int_equal(cfg.net.ifconfig_pool_persist_s, 0);
    assert_true(cfg.net.has_ifconfig_push_constraint);
    config_free(&cfg);
    expect_ok(&cfg, "topology subnet\n" NOSERVER "ifconfig 198.19.0.1 255.255.255.0\n"
                    "ifconfig-pool 198.19.0.2 198.19.0.99\nifconfig-ipv6 2001:2::1/64 2001:2::2\n"
                    "ifconfig-ipv6-pool 2001:2::100/64\nmode server\ntls-server\n");
    assert_true(cfg.net.has_ifconfig_ipv6_pool);
    assert_int_equal(cfg.net.ifconfig_ipv6_pool_bits, 64);
    assert_int_equal(cfg.net.ifconfig_pool_persist_s, 600);
    config_free(&cfg);
    expect_error(BASE "ifconfig-pool 198.19.0.100 198.19.0.199\n",
                 "t.conf:8: ifconfig-pool: server already defines an ifconfig-pool, so you "
                 "can't also specify one explicitly (add 'nopool' to the server line to use "
                 "your own)");
    expect_error(BASE "ifconfig-pool 198.19.0.100 198.19.0.99\n",
                 "t.conf:8: ifconfig-pool: start IP [198.19.0.100] is greater than end IP "
                 "[198.19.0.99]");
    expect_error(BASE "ifconfig-pool 198.19.0.100 198.19.300.99\n",
                 "t.conf:8: ifconfig-pool: '198.19.300.99' is not an IPv4 address");
    expect_error("topology subnet\n" NOSERVER "server 198.19.0.0 255.255.255.0 nopool\n"
                 "ifconfig-pool 198.19.0.100 198.19.1.99\n",
                 "t.conf:8: ifconfig-pool: the pool 198.19.0.100 - 198.19.1.99 is not inside the "
                 "tun subnet 198.19.0.0/24 (network and broadcast addresses excluded)");
    expect_error("topology net30\n" NOSERVER "server 198.19.0.0 255.255.255.248\n",
                 "t.conf:7: server: IPv4 pool size is too small (1), must be at least 2");
    expect_error(BASE "server 198.19.0.0 255.255.255.0 pool\n",
                 "t.conf:8: server: 'pool' is not a flag of server (only 'nopool')");
    expect_error(BASE "server-ipv6 2001:2::/64\nifconfig-ipv6-pool 2001:2::100/64\n",
                 "t.conf:9: ifconfig-ipv6-pool: server-ipv6 already defines an "
                 "ifconfig-ipv6-pool, so you can't also specify one explicitly (use "
                 "ifconfig-ipv6 instead of server-ipv6)");
    expect_error(BASE "ifconfig-ipv6-pool 2001:2::100/64\n",
                 "t.conf:8: ifconfig-ipv6-pool: needs ifconfig-ipv6 (the server's own IPv6 "
                 "address)");
    expect_error(BASE "ifconfig-ipv6-pool 2001:2::100/48\n",
                 "t.conf:8: ifconfig-ipv6-pool: network must be between /64 and /124 (not /48)");
    expect_error(BASE "ifconfig 198.19.0.1 255.255.255.0\n",
                 "t.conf:8: ifconfig: server already sets the tun device's address");
    expect_error(BASE "topology ring\n",
                 "t.conf:8: topology: unknown topology 'ring' (net30, p2p or subnet)");
    expect_error(BASE "ifconfig-push-constraint 198.19.0.0 255.255.0.300\n",
                 "t.conf:8: ifconfig-push-constraint: '255.255.0.300' is not an IPv4 netmask");
    expect_error("topology subnet\n" NOSERVER "server 198.19.0.0 255.255.255.0 nopool\n"
                 "ifconfig-pool-persist ipp.txt\n",
                 "t.conf:8: ifconfig-pool-persist: must be used with a pool (server, "
                 "ifconfig-pool or ifconfig-ipv6-pool)");
    expect_warning(BASE "duplicate-cn\nifconfig-pool-persist ipp.txt\n",
                   "t.conf:9: ifconfig-pool-persist: does not work with duplicate-cn");
#undef NOSERVER
}

static void not_implemented(void **state)
{
    static const char *const lines[] = {
        "data-ciphers AES-256-GCM:AES-256-CFB",
        "data-ciphers-fallback BF-CBC",
        "data-ciphers none",
        "mode p2p",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
        char text[512], prefix[128];
        size_t name_len = strcspn(lines[i], " ");

        snprintf(text, sizeof(text), "%s\n%s", lines[i], BASE);
        snprintf(prefix, sizeof(prefix), "t.conf:1: %.*s: not implemented yet in ovpnd",
                 (int)name_len, lines[i]);
        expect_error_prefix(text, prefix);
    }
    /* dev is checked once dev-type is known. */
    expect_error("dev null\n" BASE "dev null\n",
                 "t.conf:9: dev: not implemented yet in ovpnd (null devices; use tun)");
    expect_error("dev vpn0\n" BASE "dev vpn0\n",
                 "t.conf:9: dev: cannot tell the device type of 'vpn0': add 'dev-type tun'");
    /* Directives that only belong in a client-config-dir file. */
    expect_error("push-reset\n" BASE, "t.conf:1: push-reset: only allowed in a "
                                      "client-config-dir file or in what a client-connect script "
                                      "or plugin returns, as in openvpn");
    expect_error_prefix("iroute 198.19.8.0 255.255.255.0\n" BASE,
                        "t.conf:1: iroute: only allowed in a client-config-dir file");
    expect_error_prefix(BASE "key encrypted.key\naskpass missing.txt\n",
                        "t.conf:9: askpass: cannot read 'missing.txt'");
    expect_error_prefix("tls-crypt v2server.key\n" BASE,
                        "t.conf:1: tls-crypt: v2server.key is a tls-crypt-v2 key");
}

/* tls-crypt-v2 SERVER-KEY (file or inline), its verify script and max-age; refusals. */
static void tls_crypt_v2(void **state)
{
    struct config cfg;
    char *key = slurp("v2server.key");
    char text[4096];

    (void)state;
    expect_ok(&cfg, BASE "tls-crypt-v2 v2server.key force-cookie\ntls-crypt-v2-max-age 30\n"
                         "tls-crypt-v2-verify /bin/true\nscript-security 2\n");
    assert_true(cfg.tls.has_tls_crypt_v2);
    assert_int_equal(cfg.tls.tls_wrap_mode, CONFIG_TLS_WRAP_NONE);
    assert_int_equal(cfg.tls.tls_crypt_v2_max_age_days, 30);
    assert_non_null(cfg.hooks.tls_crypt_v2_verify);
    assert_string_equal(cfg.hooks.tls_crypt_v2_verify[0], "/bin/true");
    config_free(&cfg);
    snprintf(text, sizeof(text), BASE "<tls-crypt-v2>\n%s</tls-crypt-v2>\n", key);
    expect_ok(&cfg, text);
    assert_true(cfg.tls.has_tls_crypt_v2);
    assert_non_null(strstr(cfg.tls.tls_crypt_v2_key.data, "BEGIN OpenVPN tls-crypt-v2 server key"));
    config_free(&cfg);
    /* beside tls-crypt or tls-auth (2.6: a server takes both kinds of clients, e.g. while its
     * profiles move to tls-crypt-v2); tls-auth and tls-crypt stay exclusive */
    expect_ok(&cfg, BASE "tls-crypt-v2 v2server.key\ntls-crypt ta.key\n");
    assert_true(cfg.tls.has_tls_crypt_v2);
    assert_int_equal(cfg.tls.tls_wrap_mode, CONFIG_TLS_WRAP_CRYPT);
    assert_non_null(strstr(cfg.tls.tls_wrap_key.data, "BEGIN OpenVPN Static key V1"));
    config_free(&cfg);
    expect_ok(&cfg, BASE "tls-auth ta.key 0\ntls-crypt-v2 v2server.key\n");
    assert_true(cfg.tls.has_tls_crypt_v2);
    assert_int_equal(cfg.tls.tls_wrap_mode, CONFIG_TLS_WRAP_AUTH);
    config_free(&cfg);
    expect_error_prefix(BASE "tls-crypt-v2 v2server.key\ntls-crypt v2server.key\n",
                        "t.conf:9: tls-crypt: v2server.key is a tls-crypt-v2 key; give it with "
                        "tls-crypt-v2");
    expect_error_prefix(BASE "tls-crypt-v2 ta.key\n",
                        "t.conf:8: tls-crypt-v2: ta.key is not a tls-crypt-v2 server key");
    expect_error_prefix(BASE "tls-crypt-v2 v2server.key bogus\n",
                        "t.conf:8: tls-crypt-v2: unsupported tls-crypt-v2 argument");
    expect_error_prefix(BASE "tls-crypt-v2-max-age 0\n",
                        "t.conf:8: tls-crypt-v2-max-age: tls-crypt-v2-max-age must be a number");
    free(key);
}

static void client_directives(void **state)
{
    static const char *const lines[] = {
        "client",     "remote vpn.example 1194", "nobind",        "pull",
        "tls-client", "redirect-gateway def1",   "auth-user-pass"};

    (void)state;
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
        char text[512], prefix[128];
        size_t name_len = strcspn(lines[i], " ");

        snprintf(text, sizeof(text), "%s%s\n", BASE, lines[i]);
        snprintf(prefix, sizeof(prefix),
                 "t.conf:8: %.*s: is a client directive, not valid in a server config",
                 (int)name_len, lines[i]);
        expect_error_prefix(text, prefix);
    }
    /* client options openvpn 2.6 takes in a server config, where they do nothing */
    expect_warning(BASE "resolv-retry infinite\n",
                   "t.conf:8: resolv-retry: ignored: a client option, without effect in a server");
    expect_warning(BASE "dhcp-option DNS 198.19.0.1\n",
                   "t.conf:8: dhcp-option: ignored: a client option, without effect in a server "
                   "(as in openvpn 2.6); it is not sent to clients: write push");
    expect_error("proto tcp-client\n" BASE,
                 "t.conf:1: proto: 'tcp-client' is a client setting, not valid in a server "
                 "config");
}

static void unknown_directives(void **state)
{
    (void)state;
    expect_error("frobnicate 1\n" BASE, "t.conf:1: frobnicate: unknown directive");
    expect_error(BASE "Port 1194\n", "t.conf:8: Port: unknown directive");
    expect_warning("setenv opt frobnicate 1\n" BASE,
                   "t.conf:1: frobnicate: unknown directive, ignored (setenv opt)");
    expect_warning("ignore-unknown-option frob --blah\nfrob\nblah 2\n" BASE,
                   "t.conf:3: blah: unknown directive, ignored (ignore-unknown-option)");
    expect_warning("setenv FORWARD_COMPATIBLE 1\nfrob 1\n" BASE,
                   "t.conf:2: frob: unknown directive, ignored (setenv FORWARD_COMPATIBLE 1)");
    /* setenv opt still runs known directives, with their checks. */
    expect_error("setenv opt port 0\n" BASE, "t.conf:1: port: '0' is not a port number (1-65535)");
    expect_error("client-cert-not-required\n" BASE,
                 "t.conf:1: client-cert-not-required: removed in openvpn 2.5; "
                 "'verify-client-cert none' replaces it");
}

static void push_texts(void **state)
{
    struct config cfg;
    char text[600], word[300];

    (void)state;
    /* Kept as written, inner blanks included (openvpn 2.6.14 --verb 4 shows the same). */
    expect_ok(&cfg, BASE "push \"route   198.19.1.0    255.255.255.0\"\n"
                         "push 'dhcp-option  DNS 198.19.0.1'\n"
                         "push \"setenv-safe X 'a b'\"\n");
    assert_int_equal(cfg.net.push.n_items, 3);
    assert_string_equal(cfg.net.push.items[0], "route   198.19.1.0    255.255.255.0");
    assert_string_equal(cfg.net.push.items[1], "dhcp-option  DNS 198.19.0.1");
    assert_string_equal(cfg.net.push.items[2], "setenv-safe X 'a b'");
    config_free(&cfg);
    expect_error(BASE "push \"route 198.19.1.0 255.255.255.0,route 198.19.2.0\"\n",
                 "t.conf:8: push: a pushed option cannot contain a comma (','): 'route "
                 "198.19.1.0 255.255.255.0,route 198.19.2.0'");
    expect_error(BASE "push \"\"\n", "t.conf:8: push: the pushed option is empty");
    expect_error(BASE "push \"  # nothing\"\n", "t.conf:8: push: the pushed option is empty");
    expect_error(BASE "push \"setenv-safe X 'a\"\n",
                 "t.conf:8: push: clients could not read the pushed option: no closing single "
                 "quotation (')");
    /* 255 characters is the limit: the client reads each option into 256 bytes. */
    memset(word, 'x', 250);
    word[250] = '\0';
    snprintf(text, sizeof(text), "%spush \"echo %s\"\n", BASE, word); /* 5 + 250 = 255 */
    expect_ok(&cfg, text);
    assert_int_equal(strlen(cfg.net.push.items[0]), 255);
    config_free(&cfg);
    snprintf(text, sizeof(text), "%spush \"echo x%s\"\n", BASE, word);
    expect_error(text, "t.conf:8: push: the pushed option is 256 characters long (255 max)");
}

static void status_and_replay_ranges(void **state)
{
    struct config cfg;

    (void)state;
    for (int v = 1; v <= 3; v++) {
        char text[256];

        snprintf(text, sizeof(text), "status-version %d\n" BASE, v);
        expect_ok(&cfg, text);
        assert_int_equal(cfg.status.status_version, v);
        config_free(&cfg);
    }
    expect_error("status-version 0\n" BASE, "t.conf:1: status-version: '0' is out of range "
                                            "(1-3)");
    expect_error("status-version 4\n" BASE, "t.conf:1: status-version: '4' is out of range "
                                            "(1-3)");
    expect_error("status s.log -1\n" BASE, "t.conf:1: status: update interval '-1' is out of "
                                           "range (0-86400)");
    /* packet_id.h: window 0..65536, time 0..600. */
    expect_ok(&cfg, "replay-window 65536 600\n" BASE);
    assert_int_equal(cfg.tls.replay_window, 65536);
    assert_int_equal(cfg.tls.replay_time_s, 600);
    config_free(&cfg);
    expect_ok(&cfg, "replay-window 0 0\n" BASE);
    assert_int_equal(cfg.tls.replay_window, 0);
    assert_int_equal(cfg.tls.replay_time_s, 0);
    config_free(&cfg);
    expect_ok(&cfg, "replay-window 256\n" BASE);
    assert_int_equal(cfg.tls.replay_window, 256);
    assert_int_equal(cfg.tls.replay_time_s, 15);
    config_free(&cfg);
    expect_error("replay-window 65537\n" BASE, "t.conf:1: replay-window: window size '65537' is "
                                               "out of range (0-65536)");
    expect_error("replay-window -1\n" BASE, "t.conf:1: replay-window: window size '-1' is out "
                                            "of range (0-65536)");
    expect_error("replay-window 64 601\n" BASE, "t.conf:1: replay-window: time window '601' is "
                                                "out of range (0-600)");
}

static void ciphers(void **state)
{
    struct config cfg;

    (void)state;
    expect_ok(&cfg, "data-ciphers aes-128-gcm:?BF-CBC:?NOPE:AES-256-GCM\n" BASE);
    assert_string_equal(cfg.tls.data_ciphers, "AES-128-GCM:AES-256-GCM");
    assert_true(has_warning(&cfg, "t.conf:1: data-ciphers: optional cipher 'BF-CBC' dropped"));
    assert_true(has_warning(&cfg, "t.conf:1: data-ciphers: unknown optional cipher 'NOPE'"));
    config_free(&cfg);
    expect_ok(&cfg, "ncp-ciphers CHACHA20-POLY1305\n" BASE);
    assert_string_equal(cfg.tls.data_ciphers, "CHACHA20-POLY1305");
    config_free(&cfg);
    /* options_postprocess_cipher: a server ignores a --cipher missing from data-ciphers. */
    expect_ok(&cfg, "cipher AES-256-CBC\n" BASE);
    assert_string_equal(cfg.tls.cipher, "AES-256-CBC");
    assert_true(has_warning(&cfg, "t.conf:1: cipher: 'AES-256-CBC' is not in data-ciphers"));
    config_free(&cfg);
    expect_ok(&cfg, "cipher aes-256-gcm\n" BASE);
    assert_string_equal(cfg.tls.cipher, "AES-256-GCM");
    assert_int_equal(cfg.n_warnings, 0);
    config_free(&cfg);
    expect_error("data-ciphers ?NOPE\n" BASE,
                 "t.conf:1: data-ciphers: no usable cipher in '?NOPE'");
    expect_error("cipher NOPE-1\n" BASE, "t.conf:1: cipher: unknown cipher 'NOPE-1'");
    expect_ok(&cfg, "tls-version-min 1.3 or-highest\n" BASE);
    assert_string_equal(cfg.tls.tls_version_min, "1.2");
    config_free(&cfg);
}

/* The CBC data channel: AES and CAMELLIA CBC ciphers in data-ciphers and data-ciphers-fallback,
 * with the HMAC of auth; auth none with them, 64-bit block ciphers and CFB/OFB are refused with
 * the reason. */
static void cbc_ciphers(void **state)
{
    struct config cfg;

    (void)state;
    expect_ok(&cfg, "data-ciphers AES-256-GCM:aes-256-cbc:Camellia-128-CBC\nauth sha512\n" BASE);
    assert_string_equal(cfg.tls.data_ciphers, "AES-256-GCM:AES-256-CBC:CAMELLIA-128-CBC");
    assert_string_equal(cfg.tls.auth, "SHA512");
    assert_int_equal(cfg.n_warnings, 0);
    config_free(&cfg);
    expect_ok(&cfg, "data-ciphers-fallback AES-128-CBC\n" BASE);
    assert_string_equal(cfg.tls.data_ciphers_fallback, "AES-128-CBC");
    assert_string_equal(cfg.tls.auth, "SHA1"); /* 2.6's default */
    config_free(&cfg);
    /* with cipher in data-ciphers, no warning any more */
    expect_ok(&cfg, "cipher AES-256-CBC\ndata-ciphers AES-256-GCM:AES-256-CBC\n" BASE);
    assert_int_equal(cfg.n_warnings, 0);
    config_free(&cfg);
    expect_error("auth none\ndata-ciphers AES-256-GCM:AES-192-CBC\n" BASE,
                 "t.conf:1: auth: auth none with the CBC cipher AES-192-CBC (no integrity "
                 "protection) is not supported by ovpnd; use a digest such as SHA256");
    expect_error("data-ciphers-fallback AES-128-CBC\nauth none\n" BASE,
                 "t.conf:2: auth: auth none with the CBC cipher AES-128-CBC (no integrity "
                 "protection) is not supported by ovpnd; use a digest such as SHA256");
    expect_ok(&cfg, "auth none\n" BASE); /* AEAD only: auth is not used */
    config_free(&cfg);
    expect_error_prefix("data-ciphers AES-256-GCM:BF-CBC\n" BASE,
                        "t.conf:1: data-ciphers: not implemented yet in ovpnd (cipher BF-CBC: a "
                        "64-bit block cipher (SWEET32");
    expect_error_prefix("data-ciphers-fallback DES-EDE3-CBC\n" BASE,
                        "t.conf:1: data-ciphers-fallback: not implemented yet in ovpnd (cipher "
                        "DES-EDE3-CBC: a 64-bit block cipher");
    expect_error_prefix("data-ciphers AES-256-CFB\n" BASE,
                        "t.conf:1: data-ciphers: not implemented yet in ovpnd (cipher "
                        "AES-256-CFB: CFB and OFB modes");
    expect_error_prefix("data-ciphers ARIA-128-CBC\n" BASE,
                        "t.conf:1: data-ciphers: not implemented yet in ovpnd (cipher "
                        "ARIA-128-CBC: Mbed TLS 2.28");
}

/* ---- files ---- */

static void required_and_missing_files(void **state)
{
    (void)state;
    expect_error("server 198.19.0.0 255.255.255.0\nca ca.crt\ncert server.crt\nkey server.key\n",
                 "t.conf: dev is required (e.g. 'dev tun')");
    expect_error("dev tun\nserver 198.19.0.0 255.255.255.0\ncert server.crt\nkey server.key\n",
                 "t.conf: ca is required (or capath, or peer-fingerprint)");
    expect_error("dev tun\nserver 198.19.0.0 255.255.255.0\nca ca.crt\nkey server.key\n",
                 "t.conf: cert is required");
    expect_error("dev tun\nserver 198.19.0.0 255.255.255.0\nca ca.crt\ncert server.crt\n",
                 "t.conf:4: cert: the certificate needs its private key: add 'key FILE' (or "
                 "<key>...</key>)");
    expect_error("ca missing.crt\n" BASE "ca nowhere.crt\n",
                 "t.conf:9: ca: cannot read 'nowhere.crt': No such file or directory");
    expect_error(BASE "tls-crypt missing.key\n",
                 "t.conf:8: tls-crypt: cannot read 'missing.key': No such file or directory");
    expect_error(BASE "tls-auth ca.crt\n",
                 "t.conf:8: tls-auth: ca.crt is not an OpenVPN static key (openvpn --genkey "
                 "tls-auth)");
    expect_error_prefix(BASE "cert ca.crt\n", "t.conf:6: key: server.key does not match");
    expect_error_prefix(BASE "ca " DATA_DIR "\n",
                        "t.conf:8: ca: cannot read '" DATA_DIR "': Is a directory");
}

/* ---- peer-fingerprint ---- */

#define FP_A                                                                                       \
    "AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:"   \
    "67:89"
#define FP_B                                                                                       \
    "00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff:00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:"   \
    "ee:ff"
/* BASE without its ca line */
#define BASE_NO_CA                                                                                 \
    "dev tun\n"                                                                                    \
    "topology subnet\n"                                                                            \
    "server 198.19.0.0 255.255.255.0\n"                                                            \
    "cert server.crt\n"                                                                            \
    "key server.key\n"                                                                             \
    "keepalive 10 60\n"

/* Lines and blocks add up (2.6 appends every list); the block skips blanks, indentation and
 * '#'/';' comment lines; hex digits in either case. Without ca the list stands in for it. */
static void peer_fingerprint_lists(void **state)
{
    static const uint8_t a[32] = {0xab, 0xcd, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                                  0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23, 0x45,
                                  0x67, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89};
    static const uint8_t b[32] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa,
                                  0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55,
                                  0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
    struct config cfg;

    (void)state;
    expect_ok(&cfg, BASE_NO_CA "peer-fingerprint " FP_A "\n<peer-fingerprint>\n# clients\n\n  " FP_B
                               "  \n; old laptop\n" FP_A "\n</peer-fingerprint>\n");
    assert_null(cfg.tls.ca.data);
    assert_int_equal(cfg.tls.n_peer_fingerprints, 3);
    assert_memory_equal(cfg.tls.peer_fingerprints[0], a, 32);
    assert_memory_equal(cfg.tls.peer_fingerprints[1], b, 32);
    assert_memory_equal(cfg.tls.peer_fingerprints[2], a, 32);
    config_free(&cfg);
    /* with ca as well: both are kept (the fingerprint is checked on top of the chain) */
    expect_ok(&cfg, BASE "peer-fingerprint " FP_B "\n");
    assert_non_null(cfg.tls.ca.data);
    assert_int_equal(cfg.tls.n_peer_fingerprints, 1);
    assert_memory_equal(cfg.tls.peer_fingerprints[0], b, 32);
    config_free(&cfg);
    /* an empty block adds nothing, and then ca is required again */
    expect_error(BASE_NO_CA "<peer-fingerprint>\n# none yet\n</peer-fingerprint>\n",
                 "t.conf: ca is required (or capath, or peer-fingerprint)");
}

static void peer_fingerprint_errors(void **state)
{
    (void)state;
    expect_error(BASE "peer-fingerprint AB:CD\n",
                 "t.conf:8: peer-fingerprint: 'AB:CD': fewer than 32 bytes (a SHA-256 "
                 "fingerprint has 32)");
    expect_error(BASE "peer-fingerprint " FP_A ":00\n",
                 "t.conf:8: peer-fingerprint: '" FP_A ":00': more than 32 bytes (a SHA-256 "
                 "fingerprint has 32)");
    expect_error(BASE "peer-fingerprint " FP_A ":\n",
                 "t.conf:8: peer-fingerprint: '" FP_A ":': not of the form AB:CD:... (it ends "
                 "with ':')");
    expect_error(BASE "peer-fingerprint ABCD:EF\n",
                 "t.conf:8: peer-fingerprint: 'ABCD:EF': not of the form AB:CD:... (pairs of hex "
                 "digits separated by ':')");
    expect_error(BASE "peer-fingerprint GG:" FP_A "\n",
                 "t.conf:8: peer-fingerprint: 'GG:" FP_A "': not of the form AB:CD:... (pairs "
                 "of hex digits separated by ':')");
    /* SHA-1 (20 bytes) is verify-hash's, not peer-fingerprint's */
    expect_error_prefix(BASE "peer-fingerprint "
                             "AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01\n",
                        "t.conf:8: peer-fingerprint: 'AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:"
                        "67:89:AB:CD:EF:01': fewer than 32 bytes");
    /* in a block: the block's line is named, the file:line is the directive's */
    expect_error_prefix(BASE "<peer-fingerprint>\n" FP_A "\n# x\nnot-hex\n</peer-fingerprint>\n",
                        "t.conf:8: peer-fingerprint: line 3 of the block: 'not-hex': not of the "
                        "form");
    expect_error("dev tun\nserver 198.19.0.0 255.255.255.0\ncert server.crt\nkey server.key\n",
                 "t.conf: ca is required (or capath, or peer-fingerprint)");
}

/* verify-hash HASH [SHA1|SHA256] (2.6: SHA-1 on a line without an algorithm, SHA-256 in a
 * block without one; lines add up; exclusive with peer-fingerprint) and ns-cert-type. */
static void verify_hash_and_ns_cert_type(void **state)
{
    static const char sha1[] = "AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01";
    struct config cfg;
    char text[1024];

    (void)state;
    snprintf(text, sizeof(text), BASE "verify-hash %s\nverify-hash %s SHA1\n", sha1, sha1);
    expect_ok(&cfg, text);
    assert_int_equal(cfg.tls.n_verify_hashes, 2);
    assert_int_equal(cfg.tls.verify_hash_len, 20);
    assert_int_equal(cfg.tls.verify_hashes[0][0], 0xab);
    assert_int_equal(cfg.tls.verify_hashes[1][19], 0x01);
    config_free(&cfg);
    expect_ok(&cfg, BASE "<verify-hash>\n# the CA\n" FP_B "\n</verify-hash>\n");
    assert_int_equal(cfg.tls.n_verify_hashes, 1);
    assert_int_equal(cfg.tls.verify_hash_len, 32);
    assert_int_equal(cfg.tls.verify_hashes[0][31], 0xff);
    config_free(&cfg);
    expect_ok(&cfg, BASE "verify-hash " FP_A " SHA256\n");
    assert_int_equal(cfg.tls.verify_hash_len, 32);
    config_free(&cfg);
    expect_error_prefix(BASE "verify-hash " FP_A "\n",
                        "t.conf:8: verify-hash: '" FP_A "': more than 20 bytes");
    expect_error_prefix(BASE "verify-hash " FP_A " MD5\n",
                        "t.conf:8: verify-hash: invalid or unsupported hashing algorithm: MD5");
    expect_error_prefix(BASE "peer-fingerprint " FP_A "\nverify-hash " FP_A " SHA256\n",
                        "t.conf:9: verify-hash: verify-hash and peer-fingerprint are mutually");
    expect_error_prefix(
        BASE "verify-hash " FP_A " SHA256\npeer-fingerprint " FP_A "\n",
        "t.conf:9: peer-fingerprint: verify-hash and peer-fingerprint are mutually");
    expect_ok(&cfg, BASE "ns-cert-type client\n");
    assert_int_equal(cfg.tls.ns_cert_type, CONFIG_NS_CERT_TYPE_CLIENT);
    config_free(&cfg);
    expect_ok(&cfg, BASE "ns-cert-type server\n");
    assert_int_equal(cfg.tls.ns_cert_type, CONFIG_NS_CERT_TYPE_SERVER);
    config_free(&cfg);
    expect_error_prefix(BASE "ns-cert-type both\n",
                        "t.conf:8: ns-cert-type: --ns-cert-type must be 'client' or 'server'");
}

/* mark N and bind-dev DEV (2.6 socket.c): kept for the sockets; bad values named. */
static void mark_and_bind_dev(void **state)
{
    struct config cfg;

    (void)state;
    expect_ok(&cfg, BASE "mark 42\nbind-dev vrf-blue\n");
    assert_int_equal(cfg.net.mark, 42);
    assert_string_equal(cfg.net.bind_dev, "vrf-blue");
    config_free(&cfg);
    expect_error_prefix(BASE "mark -1\n", "t.conf:8: mark: ");
    expect_error_prefix(BASE "mark x\n", "t.conf:8: mark: ");
    expect_error_prefix(BASE "bind-dev a-name-longer-than-15\n",
                        "t.conf:8: bind-dev: 'a-name-longer-than-15' is not a device name");
}

/* txqueuelen N, nice N, remap-usr1 SIGHUP|SIGTERM (2.6 options.c): stored without a warning;
 * a negative txqueuelen reads as 0 (2.6 positive_atoi) with a warning; words that are not
 * numbers, and remap-usr1 values other than the two, are refused at FILE:LINE. */
static void txqueuelen_nice_remap_usr1(void **state)
{
    struct config cfg;

    (void)state;
    expect_ok(&cfg, BASE "txqueuelen 77\nnice 5\nremap-usr1 SIGTERM\n");
    assert_int_equal(cfg.net.txqueuelen, 77);
    assert_int_equal(cfg.proc.nice, 5);
    assert_int_equal(cfg.proc.remap_usr1, SIGTERM);
    assert_int_equal(cfg.n_warnings, 0);
    config_free(&cfg);
    expect_ok(&cfg, BASE "nice -10\nremap-usr1 SIGHUP\n");
    assert_int_equal(cfg.proc.nice, -10);
    assert_int_equal(cfg.proc.remap_usr1, SIGHUP);
    assert_int_equal(cfg.net.txqueuelen, 0);
    config_free(&cfg);
    expect_ok(&cfg, BASE);
    assert_int_equal(cfg.proc.nice, 0);
    assert_int_equal(cfg.proc.remap_usr1, 0);
    config_free(&cfg);
    expect_warning(BASE "txqueuelen -5\n", "t.conf:8: txqueuelen: -5 is read as 0");
    expect_ok(&cfg, BASE "txqueuelen -5\n");
    assert_int_equal(cfg.net.txqueuelen, 0);
    config_free(&cfg);
    expect_error_prefix(BASE "txqueuelen many\n", "t.conf:8: txqueuelen: ");
    expect_error_prefix(BASE "nice low\n", "t.conf:8: nice: ");
    expect_error_prefix(BASE "remap-usr1 SIGUSR2\n",
                        "t.conf:8: remap-usr1: --remap-usr1 parm must be 'SIGHUP' or 'SIGTERM'");
    expect_error_prefix(BASE "remap-usr1 sighup\n",
                        "t.conf:8: remap-usr1: --remap-usr1 parm must be 'SIGHUP' or 'SIGTERM'");
}

/* verify-x509-name NAME [subject|name|name-prefix]: subject by default, as 2.6. */
static void verify_x509_name_types(void **state)
{
    struct config cfg;

    (void)state;
    expect_ok(&cfg, BASE "verify-x509-name \"C=US, O=Org, CN=vpn client\"\n");
    assert_string_equal(cfg.tls.verify_x509_name, "C=US, O=Org, CN=vpn client");
    assert_int_equal(cfg.tls.verify_x509_type, CERT_CHECK_X509_SUBJECT);
    config_free(&cfg);
    expect_ok(&cfg, BASE "verify-x509-name client1 name\n");
    assert_string_equal(cfg.tls.verify_x509_name, "client1");
    assert_int_equal(cfg.tls.verify_x509_type, CERT_CHECK_X509_NAME);
    config_free(&cfg);
    expect_ok(&cfg, BASE "verify-x509-name client name-prefix\n");
    assert_int_equal(cfg.tls.verify_x509_type, CERT_CHECK_X509_NAME_PREFIX);
    config_free(&cfg);
    expect_ok(&cfg, BASE "verify-x509-name CN=x subject\n");
    assert_int_equal(cfg.tls.verify_x509_type, CERT_CHECK_X509_SUBJECT);
    config_free(&cfg);
    expect_error(BASE "verify-x509-name client1 cn\n",
                 "t.conf:8: verify-x509-name: unknown X.509 name type 'cn' (subject, name or "
                 "name-prefix)");
    expect_error(BASE "verify-x509-name \"\"\n", "t.conf:8: verify-x509-name: the name is empty");
    expect_error_prefix(BASE "verify-x509-name a name extra\n", "t.conf:8: verify-x509-name: ");
}

static void parse_file_errors(void **state)
{
    struct config cfg;
    char err[ERR_LEN];

    (void)state;
    config_init(&cfg);
    assert_int_equal(config_parse_file(&cfg, "no-such.conf", err, sizeof(err)), -EINVAL);
    assert_string_equal(err, "no-such.conf: cannot read the config file: No such file or "
                             "directory");
    config_free(&cfg);
    /* A NULL error buffer is allowed. */
    config_init(&cfg);
    assert_int_equal(config_parse_string(&cfg, "t.conf", "bogus\n", NULL, 0), -EINVAL);
    config_free(&cfg);
    config_free(NULL);
}

/* Every refused line is reported in one run, each with its file and line, so a config can be
 * fixed in one pass; the error buffer keeps the first. Checks of the whole config come once
 * every line was accepted, and they too are all reported. */
static void all_errors_at_once(void **state)
{
    struct config cfg;
    char err[ERR_LEN], text[4096] = "";

    (void)state;
    config_init(&cfg);
    assert_int_equal(config_parse_string(&cfg, "t.conf",
                                         "port 70000\n" BASE "frobnicate\nverb x\n"
                                         "proto udp\nsecret s.key\ntls-timeout -1\n",
                                         err, sizeof(err)),
                     -EINVAL);
    assert_string_equal(err, "t.conf:1: port: '70000' is not a port number (1-65535)");
    assert_int_equal(cfg.n_errors, 5);
    assert_string_equal(cfg.errors[0], err);
    assert_string_equal(cfg.errors[1], "t.conf:9: frobnicate: unknown directive");
    assert_string_equal(cfg.errors[2], "t.conf:10: verb: 'x' is not a number");
    assert_string_equal(cfg.errors[3], "t.conf:12: secret: static-key mode is not supported: "
                                       "ovpnd needs TLS (ca, cert, key)");
    assert_true(strncmp(cfg.errors[4], "t.conf:13: tls-timeout: ", 24) == 0);
    assert_int_equal(cfg.n_errors_dropped, 0);
    config_free(&cfg);
    /* At most CONFIG_MAX_ERRORS are kept; the rest are counted. */
    for (int i = 0; i < CONFIG_MAX_ERRORS + 5; i++) {
        strcat(text, "frobnicate\n");
    }
    config_init(&cfg);
    assert_int_equal(config_parse_string(&cfg, "t.conf", text, err, sizeof(err)), -EINVAL);
    assert_int_equal(cfg.n_errors, CONFIG_MAX_ERRORS);
    /* the five lines over the limit, and the whole-config check (no `dev`) that runs after
     * them */
    assert_int_equal(cfg.n_errors_dropped, 6);
    config_free(&cfg);
    /* Whole-config checks: a bad certificate file and a bad combination, both reported. */
    config_init(&cfg);
    assert_int_equal(config_parse_string(&cfg, "t.conf",
                                         "dev tun\ntopology subnet\nserver 198.19.0.0 "
                                         "255.255.255.0\nca ca.crt\ncert server.crt\n"
                                         "key /nonexistent/server.key\nkeepalive 10 60\n"
                                         "ccd-exclusive\n",
                                         err, sizeof(err)),
                     -EINVAL);
    assert_int_equal(cfg.n_errors, 2);
    assert_string_equal(cfg.errors[0], "t.conf:8: ccd-exclusive: needs client-config-dir");
    assert_true(strncmp(cfg.errors[1], "t.conf:6: key: cannot read", 26) == 0);
    config_free(&cfg);
    /* Every file that cannot be read is named, not only the first. */
    config_init(&cfg);
    assert_int_equal(config_parse_string(&cfg, "t.conf",
                                         "dev tun\ntopology subnet\nserver 198.19.0.0 "
                                         "255.255.255.0\nca /nonexistent/ca.crt\n"
                                         "cert /nonexistent/server.crt\nkey server.key\n"
                                         "tls-crypt /nonexistent/ta.key\n",
                                         err, sizeof(err)),
                     -EINVAL);
    assert_int_equal(cfg.n_errors, 3);
    assert_true(strncmp(cfg.errors[0], "t.conf:4: ca: cannot read", 25) == 0);
    assert_true(strncmp(cfg.errors[1], "t.conf:5: cert: cannot read", 27) == 0);
    assert_true(strncmp(cfg.errors[2], "t.conf:7: tls-crypt: cannot read", 32) == 0);
    config_free(&cfg);
    /* The whole-config checks run after lines with errors too: a typo and a `dev null`. */
    config_init(&cfg);
    assert_int_equal(
        config_parse_string(&cfg, "t.conf", "pusj x\n" BASE "dev null\n", err, sizeof(err)),
        -EINVAL);
    assert_int_equal(cfg.n_errors, 2);
    assert_string_equal(cfg.errors[0], "t.conf:1: pusj: unknown directive");
    assert_true(strncmp(cfg.errors[1], "t.conf:9: dev: not implemented", 30) == 0);
    config_free(&cfg);
}

/* A refused line is reported once: the whole-config checks do not add "NAME is required" for a
 * directive whose line was refused (a typo in the netmask of `server` used to bring "server is
 * required" too). */
static void no_cascade_after_refused_line(void **state)
{
    static const struct {
        const char *text;
        const char *error;
    } cases[] = {
        {"dev tun\ntopology subnet\nserver 198.19.0.0 255.255.255.300\nca ca.crt\n"
         "cert server.crt\nkey server.key\n",
         "t.conf:3: server: '255.255.255.300' is not an IPv4 netmask"},
        {"dev tun\ntopology subnet\nifconfig 198.19.0.1\nifconfig-pool 198.19.0.2 "
         "198.19.0.9\nca ca.crt\ncert server.crt\nkey server.key\n",
         "t.conf:3: ifconfig: takes 2 arguments, not 1"},
        {"dev tun\ntopology subnet\nserver 198.19.0.0 255.255.255.0\nca\ncert server.crt\n"
         "key server.key\n",
         "t.conf:4: ca: takes 1 argument, not 0"},
        {"dev tun\ntopology subnet\nserver 198.19.0.0 255.255.255.0\nca ca.crt\n"
         "cert server.crt\nkey\n",
         "t.conf:6: key: takes 1 argument, not 0"},
        {"dev tun tun0\ntopology subnet\nserver 198.19.0.0 255.255.255.0\nca ca.crt\n"
         "cert server.crt\nkey server.key\n",
         "t.conf:1: dev: takes 1 argument, not 2 (quote an argument that contains blanks)"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct config cfg;
        char err[ERR_LEN];

        config_init(&cfg);
        assert_int_equal(config_parse_string(&cfg, "t.conf", cases[i].text, err, sizeof(err)),
                         -EINVAL);
        assert_int_equal(cfg.n_errors, 1);
        assert_string_equal(cfg.errors[0], cases[i].error);
        config_free(&cfg);
    }
    /* A directive that is missing, not refused, is still named. */
    {
        struct config cfg;
        char err[ERR_LEN];

        config_init(&cfg);
        assert_int_equal(config_parse_string(&cfg, "t.conf",
                                             "dev tun\ntopology subnet\nca ca.crt\n"
                                             "cert server.crt\nkey server.key\nverb x\n",
                                             err, sizeof(err)),
                         -EINVAL);
        assert_int_equal(cfg.n_errors, 2);
        assert_string_equal(cfg.errors[0], "t.conf:6: verb: 'x' is not a number");
        assert_true(strncmp(cfg.errors[1], "t.conf: server is required", 26) == 0);
        config_free(&cfg);
    }
}

static void includes(void **state)
{
    struct config cfg;
    char err[ERR_LEN];

    (void)state;
    config_init(&cfg);
    if (config_parse_file(&cfg, "inc-main.conf", err, sizeof(err)) != 0) {
        fail_msg("%s", err);
    }
    assert_int_equal(cfg.net.port, 1196); /* the line after the include wins over the include's */
    assert_string_equal(cfg.tls.ca.origin, "ca.crt");
    config_free(&cfg);
    expect_error("dev tun\nconfig inc-bad.inc\n", "inc-bad.inc:6: bogus-directive: unknown "
                                                  "directive");
    expect_error("config nothere.conf\n",
                 "t.conf:1: config: cannot read 'nothere.conf': No such file or directory");
    expect_error_prefix("config loop.conf\n",
                        "loop.conf:2: config: config files nested more than 10 deep");
}

static void cd_directory(void **state)
{
    struct config cfg;
    char err[ERR_LEN], real[PATH_MAX], origin[PATH_MAX + 16];

    (void)state;
    assert_non_null(realpath(DATA_DIR, real));
    /* Relative names are read from the last cd, wherever the process runs; a cd after the
     * file lines still counts (openvpn reads the files after parsing). */
    assert_int_equal(chdir("/"), 0);
    config_init(&cfg);
    assert_int_equal(config_parse_string(&cfg, "t.conf", BASE "cd " DATA_DIR "\n", err, ERR_LEN),
                     0);
    assert_string_equal(cfg.cd_dir, real);
    snprintf(origin, sizeof(origin), "%s/ca.crt", real);
    assert_string_equal(cfg.tls.ca.origin, origin);
    config_free(&cfg);
    /* cd relative to an earlier cd */
    config_init(&cfg);
    assert_int_equal(config_parse_string(&cfg, "t.conf",
                                         "cd " OVPND_SOURCE_DIR "/tests\ncd unit/data/config\n"
                                         "config inc-part.inc\ndev tun\n",
                                         err, ERR_LEN),
                     0);
    assert_string_equal(cfg.cd_dir, real);
    assert_int_equal(cfg.net.port, 1197);
    config_free(&cfg);
    expect_error("cd /nonexistent-ovpnd-dir\n" BASE,
                 "t.conf:1: cd: cannot use '/nonexistent-ovpnd-dir': No such file or directory");
    expect_error("cd " DATA_DIR "/ca.crt\n" BASE, "t.conf:1: cd: '" DATA_DIR "/ca.crt' is not a "
                                                  "directory");
    assert_int_equal(chdir(DATA_DIR), 0);
}

/* chroot DIR: client-config-dir, crl-verify and tmp-dir name paths inside the jail (2.6
 * options.c check_file_access_chroot), checked there. */
static void chroot_paths(void **state)
{
    char jail[] = "/tmp/ovpnd-jail-XXXXXX", path[PATH_MAX], text[1024];
    struct config cfg;

    (void)state;
    assert_non_null(mkdtemp(jail));
    snprintf(path, sizeof(path), "%s/ccd", jail);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof(path), "%s/tmp", jail);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(text, sizeof(text), BASE "chroot %s\nclient-config-dir ccd\n", jail);
    expect_ok(&cfg, text);
    assert_string_equal(cfg.proc.chroot_dir, jail);
    assert_string_equal(cfg.net.client_config_dir, "/ccd"); /* relative: from the jail's root */
    assert_string_equal(cfg.hooks.tmp_dir, "/tmp");         /* the default, inside the jail */
    config_free(&cfg);
    /* a chroot line after the paths counts too (2.6 checks once all lines are read) */
    snprintf(text, sizeof(text), BASE "client-config-dir /ccd\ntmp-dir tmp\nchroot %s\n", jail);
    expect_ok(&cfg, text);
    assert_string_equal(cfg.net.client_config_dir, "/ccd");
    assert_string_equal(cfg.hooks.tmp_dir, "/tmp");
    config_free(&cfg);
    /* the directory must be inside the jail, not outside */
    snprintf(text, sizeof(text), BASE "chroot %s\nclient-config-dir " DATA_DIR "\n", jail);
    snprintf(path, sizeof(path),
             "t.conf:9: client-config-dir: cannot use '" DATA_DIR
             "' (inside the chroot directory): No such file or directory");
    expect_error(text, path);
    expect_error(BASE "chroot /nonexistent-ovpnd-jail\n",
                 "t.conf:8: chroot: cannot use '/nonexistent-ovpnd-jail': No such file or "
                 "directory");
    snprintf(path, sizeof(path), "%s/ccd", jail);
    rmdir(path);
    snprintf(path, sizeof(path), "%s/tmp", jail);
    rmdir(path);
    /* without the jail's /tmp, as 2.6: tmp-dir's default is checked inside it */
    snprintf(text, sizeof(text), BASE "chroot %s\n", jail);
    snprintf(path, sizeof(path),
             "t.conf:8: tmp-dir: cannot use '/tmp' (inside the chroot directory): No such file or "
             "directory");
    expect_error(text, path);
    rmdir(jail);
}

/* route, route-ipv6, server-ipv6, client-config-dir, ccd-exclusive, client-to-client. IPv6
 * test prefixes come from 2001:2::/48 (RFC 5180, the IPv6 benchmarking range). */
static void routing_directives(void **state)
{
    struct config cfg;
    static const uint8_t net6[16] = {0x20, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0x19};

    (void)state;
    /* route-metric: the metric of route / route-ipv6 lines that give none (2.6 route.c) */
    expect_ok(&cfg,
              BASE "route-metric 7\nroute 198.19.8.0 255.255.255.0\n"
                   "route 198.19.9.0 255.255.255.0 vpn_gateway 3\nserver-ipv6 2001:2:0:19::/64\n"
                   "route-ipv6 2001:2:0:20::/64\n");
    assert_int_equal(cfg.net.n_routes, 3);
    assert_int_equal(cfg.net.routes[0].metric, 7);
    assert_int_equal(cfg.net.routes[1].metric, 3);
    assert_int_equal(cfg.net.routes[2].metric, 7);
    config_free(&cfg);
    /* route-gateway / route-ipv6-gateway: the next hop of those routes; through a tun device
     * it changes nothing, so it is accepted with a warning */
    expect_warning(BASE "route-gateway 198.19.0.2\n", "t.conf:8: route-gateway: ");
    expect_warning(BASE "route-ipv6-gateway 2001:2:0:19::2\n", "t.conf:8: route-ipv6-gateway: ");
    expect_error_prefix(BASE "route-gateway nowhere\n",
                        "t.conf:8: route-gateway: 'nowhere' is not a gateway address");
    /* route-noexec: the routes are not added (2.6: left to scripts) */
    expect_ok(&cfg, BASE "route-noexec\nroute 198.19.8.0 255.255.255.0\n");
    assert_true(cfg.net.route_noexec);
    assert_int_equal(cfg.net.n_routes, 1);
    config_free(&cfg);
    /* dev-node: the tun clone device is the only node ovpnd opens */
    expect_ok(&cfg, BASE "dev-node /dev/net/tun\n");
    config_free(&cfg);
    expect_error_prefix(BASE "dev-node /dev/tun3\n",
                        "t.conf:8: dev-node: not implemented yet in ovpnd");
    expect_ok(&cfg, BASE "route 198.19.8.0 255.255.255.0\n"
                         "route 198.19.9.7\n"
                         "route 198.19.10.0 255.255.255.0 vpn_gateway 5\n"
                         "server-ipv6 2001:2:0:19::/64\n"
                         "route-ipv6 2001:2:0:20::/64\n"
                         "client-config-dir " DATA_DIR "\n"
                         "ccd-exclusive\n"
                         "client-to-client\n");
    assert_int_equal(cfg.net.n_routes, 4);
    assert_int_equal(cfg.net.routes[0].family, 4);
    assert_int_equal(cfg.net.routes[0].plen, 24);
    assert_memory_equal(cfg.net.routes[0].addr, "\xc6\x13\x08\x00", 4);
    assert_int_equal(cfg.net.routes[0].metric, -1);
    assert_int_equal(cfg.net.routes[1].plen, 32);
    assert_int_equal(cfg.net.routes[2].metric, 5);
    assert_int_equal(cfg.net.routes[3].family, 6);
    assert_int_equal(cfg.net.routes[3].plen, 64);
    assert_true(cfg.net.has_server_ipv6);
    assert_int_equal(cfg.net.server_ipv6_bits, 64);
    assert_memory_equal(cfg.net.server_ipv6_network, net6, 16);
    assert_string_equal(cfg.net.client_config_dir, DATA_DIR);
    assert_true(cfg.net.ccd_exclusive);
    assert_true(cfg.net.client_to_client);
    config_free(&cfg);

    expect_error(BASE "route 198.19.8.1 255.255.255.0\n",
                 "t.conf:8: route: '198.19.8.1' is not the network address of a 255.255.255.0 "
                 "subnet");
    expect_error(BASE "route 198.19.8.0 255.0.255.0\n",
                 "t.conf:8: route: '255.0.255.0' is not a valid netmask");
    expect_error(BASE "route vpn.example.com\n",
                 "t.conf:8: route: 'vpn.example.com' is not an IPv4 network address (names are "
                 "not resolved)");
    expect_error_prefix(BASE "route 198.19.8.0 255.255.255.0 net_gateway\n",
                        "t.conf:8: route: not implemented yet in ovpnd");
    expect_error(BASE "route 198.19.8.0 255.255.255.0 vpn_gateway 70000\n",
                 "t.conf:8: route: metric '70000' is out of range (0-65535)");
    expect_error(BASE "route-ipv6 2001:2:0:20::/64\n",
                 "t.conf:8: route-ipv6: needs server-ipv6 or ifconfig-ipv6 (the tun device has no "
                 "IPv6 address)");
    expect_error(BASE "server-ipv6 2001:2:0:19::/48\n",
                 "t.conf:8: server-ipv6: the prefix length must be 64 to 124, not 48");
    expect_warning(BASE "server-ipv6 2001:2:0:19::1/64\n",
                   "t.conf:8: server-ipv6: '2001:2:0:19::1/64' has bits set outside its /64 "
                   "prefix");
    expect_error(BASE "server-ipv6 2001:2:0:19::\n",
                 "t.conf:8: server-ipv6: '2001:2:0:19::' is not an IPv6 network/prefix length");
    expect_error(BASE "client-config-dir /nonexistent-ovpnd-ccd\n",
                 "t.conf:8: client-config-dir: cannot use '/nonexistent-ovpnd-ccd': No such file "
                 "or directory");
    expect_error(BASE "ccd-exclusive\n", "t.conf:8: ccd-exclusive: needs client-config-dir");

    /* IPv6 transport: udp6 is dual-stack; udp takes an IPv6 `local`; udp4 refuses one. */
    expect_ok(&cfg, BASE "proto udp6\n");
    assert_int_equal(cfg.net.proto, CONFIG_PROTO_UDP6);
    config_free(&cfg);
    expect_ok(&cfg, BASE "local ::\nproto udp\n");
    assert_int_equal(cfg.net.proto, CONFIG_PROTO_UDP);
    assert_string_equal(cfg.net.local, "::");
    config_free(&cfg);
    expect_error(BASE "local 2001:2::1\nproto udp4\n",
                 "t.conf:8: local: '2001:2::1' is an IPv6 address, but proto is udp4");
    expect_error(BASE "proto udp6\nlocal 198.18.0.1\n",
                 "t.conf:9: local: '198.18.0.1' is an IPv4 address, but proto is udp6");

    /* TCP transport, as 2.6 names it in a server (tcp = tcp-server), and tcp-queue-limit. */
    static const struct {
        const char *line;
        int proto;
    } tcp[] = {{"proto tcp\n", CONFIG_PROTO_TCP},   {"proto tcp-server\n", CONFIG_PROTO_TCP},
               {"proto tcp4\n", CONFIG_PROTO_TCP4}, {"proto tcp4-server\n", CONFIG_PROTO_TCP4},
               {"proto tcp6\n", CONFIG_PROTO_TCP6}, {"proto tcp6-server\n", CONFIG_PROTO_TCP6}};
    for (size_t i = 0; i < sizeof(tcp) / sizeof(tcp[0]); i++) {
        char text[1024];

        snprintf(text, sizeof(text), "%s%s", BASE, tcp[i].line);
        expect_ok(&cfg, text);
        assert_int_equal(cfg.net.proto, tcp[i].proto);
        assert_true(config_proto_is_tcp(cfg.net.proto));
        assert_int_equal(cfg.net.tcp_queue_limit, 64);
        config_free(&cfg);
    }
    expect_ok(&cfg, BASE "proto tcp-server\ntcp-queue-limit 8\n");
    assert_int_equal(cfg.net.tcp_queue_limit, 8);
    config_free(&cfg);
    expect_error(BASE "tcp-queue-limit 0\n",
                 "t.conf:8: tcp-queue-limit: '0' is not a packet count (1-65536)");
    expect_error(BASE "local 2001:2::1\nproto tcp4-server\n",
                 "t.conf:8: local: '2001:2::1' is an IPv6 address, but proto is tcp4-server");

    /* openvpn 2.7's multi-socket `local HOST|* [PORT] [PROTO]`: one line is the one socket, two
     * are one UDP and one TCP socket (the rest of `port` and `proto` fills them in) */
    expect_ok(&cfg, BASE "local 198.18.0.1 443 tcp\n");
    assert_int_equal(cfg.net.proto, CONFIG_PROTO_TCP);
    assert_int_equal(cfg.net.port, 443);
    assert_string_equal(cfg.net.local, "198.18.0.1");
    config_free(&cfg);
    expect_ok(&cfg, BASE "local 198.18.0.1 443 tcp\nlocal * 1194\nport 1195\n");
    assert_int_equal(cfg.net.n_sockets, 2);
    assert_int_equal(cfg.net.sockets[0].proto, CONFIG_PROTO_TCP);
    assert_int_equal(cfg.net.sockets[0].port, 443);
    assert_string_equal(cfg.net.sockets[0].host, "198.18.0.1");
    assert_int_equal(cfg.net.sockets[1].proto, CONFIG_PROTO_UDP);
    assert_int_equal(cfg.net.sockets[1].port, 1194);
    assert_null(cfg.net.sockets[1].host);
    config_free(&cfg);
    expect_error(BASE "local * 1194 udp\nlocal * 1195 udp4\n",
                 "t.conf:9: local: not implemented yet in ovpnd: two UDP sockets (two `local` "
                 "lines must be one UDP and one TCP socket)");
    expect_error_prefix(BASE "local * 1194 udp\nlocal * 1195 tcp\nlocal * 1196 tcp\n",
                        "t.conf:10: local: not implemented yet in ovpnd");
    expect_error(BASE "local * 1194 tcp-client\n",
                 "t.conf:8: local: 'tcp-client' is a client setting, not valid in a server "
                 "config");
    expect_error(BASE "local * 0 udp\n", "t.conf:8: local: '0' is not a port number (1-65535)");
}

/* compress, comp-lzo, comp-noadapt, allow-compression as openvpn 2.6 options.c reads them: its
 * warnings, and its refusals of compression with allow-compression no. */
static void compression_directives(void **state)
{
    struct config cfg;

    (void)state;
    expect_ok(&cfg, BASE);
    assert_int_equal(cfg.net.comp.alg, COMP_FRAMING_NONE);
    assert_int_equal(cfg.net.comp.allow, COMP_ALLOW_DEFAULT);
    config_free(&cfg);
    expect_warning(BASE "compress lz4-v2\n",
                   "t.conf:8: compress: Compression for receiving enabled. Compression has been "
                   "used in the past to break encryption. Sent packets are not compressed unless "
                   "\"allow-compression yes\" is also set.");
    expect_ok(&cfg, BASE "compress lz4\nallow-compression asym\n");
    assert_int_equal(cfg.net.comp.alg, COMP_FRAMING_LZ4);
    assert_int_equal(cfg.net.comp.allow, COMP_ALLOW_ASYM);
    config_free(&cfg);
    expect_warning(BASE "allow-compression yes\ncomp-lzo\n",
                   "t.conf:8: Compression for sending and receiving enabled.");
    expect_ok(&cfg, BASE "allow-compression yes\ncomp-lzo\n");
    assert_int_equal(cfg.net.comp.alg, COMP_FRAMING_LZO);
    assert_int_equal(cfg.net.comp.allow, COMP_ALLOW_YES);
    assert_true(cfg.net.comp.is_adaptive);
    assert_int_equal(cfg.n_warnings, 1); /* no receive-only warning after allow-compression yes */
    config_free(&cfg);
    expect_ok(&cfg, BASE "comp-lzo adaptive\ncomp-noadapt\n");
    assert_false(cfg.net.comp.is_adaptive);
    config_free(&cfg);
    expect_ok(&cfg, BASE "comp-lzo yes\n");
    assert_false(cfg.net.comp.is_adaptive);
    config_free(&cfg);
    expect_ok(&cfg, BASE "compress lzo\n");
    assert_int_equal(cfg.net.comp.alg, COMP_FRAMING_LZO);
    config_free(&cfg);
    expect_ok(&cfg, BASE "allow-compression no\ncompress stub-v2\n");
    assert_int_equal(cfg.net.comp.alg, COMP_FRAMING_STUB_V2);
    config_free(&cfg);
    expect_error(BASE "allow-compression no\ncompress lz4-v2\n",
                 "t.conf:9: compress: compression is not allowed since allow-compression is 'no'");
    expect_error(BASE "comp-lzo yes\nallow-compression no\n",
                 "t.conf:9: allow-compression: 'allow-compression no' conflicts with enabling "
                 "compression");
    expect_error(BASE "allow-compression no\nallow-compression yes\n",
                 "t.conf:9: allow-compression: cannot set allow-compression to 'yes' after 'no'");
    expect_error(BASE "compress snappy\n",
                 "t.conf:8: compress: 'snappy' must be stub, stub-v2, migrate, lzo, lz4 or lz4-v2");
    expect_error(BASE "comp-lzo maybe\n",
                 "t.conf:8: comp-lzo: 'maybe' must be yes, no or adaptive");
    expect_error(BASE "allow-compression sometimes\n",
                 "t.conf:8: allow-compression: 'sometimes' must be no, asym or yes");
}

/* status FILE: as openvpn 2.6 (options.c options_postprocess_filechecks), a directory that does
 * not exist, or an existing file that cannot be written, is an error at start-up (and
 * --test-config); a file in a directory that exists is fine. */
static void status_file_checks(void **state)
{
    struct config cfg;

    (void)state;
    expect_error("status /nonexistent/dir/status.log\n" BASE,
                 "t.conf:1: status: cannot write '/nonexistent/dir/status.log': No such file or "
                 "directory (openvpn 2.6 does not start either)");
    expect_error_prefix("status nodir/s.log 10\n" BASE,
                        "t.conf:1: status: cannot write 'nodir/s.log'");
    expect_ok(&cfg, "status status-test.log\n" BASE);
    assert_string_equal(cfg.status.status_file, "status-test.log");
    config_free(&cfg);
    if (geteuid() != 0) { /* root may write anything */
        FILE *f = fopen("status-ro.log", "w");

        assert_non_null(f);
        fclose(f);
        assert_int_equal(chmod("status-ro.log", 0444), 0);
        expect_error_prefix("status status-ro.log\n" BASE,
                            "t.conf:1: status: cannot write 'status-ro.log': Permission denied");
        unlink("status-ro.log");
    }
}

/* `config FILE` that cannot be read: that error alone, not the whole-config checks its
 * missing lines would fail ("dev is required"). */
static void unreadable_include_alone(void **state)
{
    struct config cfg;
    char err[ERR_LEN];

    (void)state;
    assert_int_equal(parse(&cfg, "config nofile.conf\n", err), -EINVAL);
    assert_int_equal(cfg.n_errors, 1);
    assert_string_equal(err,
                        "t.conf:1: config: cannot read 'nofile.conf': No such file or directory");
    config_free(&cfg);
}

/* A cert line without a key: the error points at the cert line and says what it lacks. */
static void cert_without_key(void **state)
{
    (void)state;
    expect_error("dev tun\ntopology subnet\nserver 198.19.0.0 255.255.255.0\nca ca.crt\n"
                 "cert server.crt\n",
                 "t.conf:5: cert: the certificate needs its private key: add 'key FILE' (or "
                 "<key>...</key>)");
}

/* The directory a log or status file is created in, as the start-up checks take it. */
static void path_dir(void **state)
{
    char a[] = "a/b/status.log", b[] = "/status.log", c[] = "status.log", d[] = "a/";

    (void)state;
    config_path_dir(a);
    config_path_dir(b);
    config_path_dir(c);
    config_path_dir(d);
    assert_string_equal(a, "a/b");
    assert_string_equal(b, "/");
    assert_string_equal(c, ".");
    assert_string_equal(d, "a");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sample_configs_parse),
        cmocka_unit_test(sample_server_conf_values),
        cmocka_unit_test(defaults),
        cmocka_unit_test(every_implemented_directive),
        cmocka_unit_test(readme_directive_table),
        cmocka_unit_test(keepalive_timers),
        cmocka_unit_test(connect_freq_limits),
        cmocka_unit_test(mssfix_follows_tun_mtu),
        cmocka_unit_test(old_mtu_options_and_proto_force),
        cmocka_unit_test(fragment_directive),
        cmocka_unit_test(compat_mode_defaults),
        cmocka_unit_test(duplicates_last_wins),
        cmocka_unit_test(quoting_and_comments),
        cmocka_unit_test(tls_groups_and_ecdh_curve),
        cmocka_unit_test(block_ipv6_and_client_nat),
        cmocka_unit_test(tls_cipher_lists),
        cmocka_unit_test(dashes_bom_and_blank_lines),
        cmocka_unit_test(inline_blocks),
        cmocka_unit_test(dh_file),
        cmocka_unit_test(implemented_with_bad_values),
        cmocka_unit_test(auth_directives),
        cmocka_unit_test(auth_gen_token_directives),
        cmocka_unit_test(argument_counts),
        cmocka_unit_test(ignored_with_warning),
        cmocka_unit_test(syslog_and_daemon),
        cmocka_unit_test(not_implemented),
        cmocka_unit_test(compression_directives),
        cmocka_unit_test(tls_crypt_v2),
        cmocka_unit_test(pool_directives),
        cmocka_unit_test(tap_configs),
        cmocka_unit_test(vlan_tagging_configs),
        cmocka_unit_test(client_directives),
        cmocka_unit_test(unknown_directives),
        cmocka_unit_test(every_openvpn_directive_is_known),
        cmocka_unit_test(push_texts),
        cmocka_unit_test(status_and_replay_ranges),
        cmocka_unit_test(management_directives),
        cmocka_unit_test(management_external_key),
        cmocka_unit_test(metrics_directives),
        cmocka_unit_test(ciphers),
        cmocka_unit_test(cbc_ciphers),
        cmocka_unit_test(required_and_missing_files),
        cmocka_unit_test(peer_fingerprint_lists),
        cmocka_unit_test(peer_fingerprint_errors),
        cmocka_unit_test(verify_hash_and_ns_cert_type),
        cmocka_unit_test(mark_and_bind_dev),
        cmocka_unit_test(txqueuelen_nice_remap_usr1),
        cmocka_unit_test(verify_x509_name_types),
        cmocka_unit_test(parse_file_errors),
        cmocka_unit_test(all_errors_at_once),
        cmocka_unit_test(no_cascade_after_refused_line),
        cmocka_unit_test(includes),
        cmocka_unit_test(cd_directory),
        cmocka_unit_test(path_dir),
        cmocka_unit_test(chroot_paths),
        cmocka_unit_test(routing_directives),
        cmocka_unit_test(openvpn26_tolerances),
        cmocka_unit_test(status_file_checks),
        cmocka_unit_test(unreadable_include_alone),
        cmocka_unit_test(cert_without_key),
    };

    return cmocka_run_group_tests(tests, setup, NULL);
}
