/* tests/unit/test_hook_env.c: the environment scripts and plugins get (server/hooks/hook_env.h),
 * with the names and formats of openvpn 2.6. Expected certificate values come from `openssl x509
 * -serial -fingerprint` on the test certificates. */
#include <setjmp.h>
#include <stdarg.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <cmocka.h>

#include "server/hooks/hook_env.h"

#define DATA OVPND_SOURCE_DIR "/tests/unit/data/config/"

static void expect_var(const struct script_env *env, const char *name, const char *value)
{
    const char *got = hook_env_get(env, name);

    if (got == NULL) {
        fail_msg("%s is not set", name);
    }
    assert_string_equal(got, value);
}

static void peer_info_filter(void **state)
{
    struct script_env env = {0};

    (void)state;
    /* IV_ and UV_ lines with plain names only (2.6 output_peer_info_env). */
    assert_int_equal(hook_env_peer_info(&env, "IV_VER=2.6.14\nIV_PLAT=linux\nIV_BAD-NAME=1\n"
                                              "UV_GROUP=ops\nOTHER=x\nIV_GUI_VER=OpenVPN_GUI_11"),
                     0);
    assert_int_equal(env.n, 4);
    expect_var(&env, "IV_VER", "2.6.14");
    expect_var(&env, "IV_PLAT", "linux");
    expect_var(&env, "UV_GROUP", "ops");
    expect_var(&env, "IV_GUI_VER", "OpenVPN_GUI_11");
    assert_null(hook_env_get(&env, "OTHER"));
    script_env_clear(&env);
}

static void client_ipv4_and_ipv6(void **state)
{
    struct script_env env = {0};
    struct hook_client c;

    (void)state;
    memset(&c, 0, sizeof(c));
    c.common_name = "laptop1";
    c.username = "alice";
    c.remote.in4.sin_family = AF_INET;
    c.remote.in4.sin_port = htons(40000);
    inet_pton(AF_INET, "198.18.0.7", &c.remote.in4.sin_addr);
    c.vaddr = 0xc6130042; /* 198.19.0.66 */
    c.vaddr_netmask = 0xffffff00;
    c.has_ipv6 = true;
    inet_pton(AF_INET6, "2001:2::1000", c.vaddr6);
    inet_pton(AF_INET6, "2001:2::1", c.remote_addr6);
    c.vaddr6_bits = 64;
    c.connected_since = 1700000000;
    assert_int_equal(hook_env_client(&env, &c), 0);
    expect_var(&env, "common_name", "laptop1");
    expect_var(&env, "username", "alice");
    expect_var(&env, "trusted_ip", "198.18.0.7");
    expect_var(&env, "trusted_port", "40000");
    expect_var(&env, "untrusted_ip", "198.18.0.7");
    expect_var(&env, "untrusted_port", "40000");
    expect_var(&env, "ifconfig_pool_remote_ip", "198.19.0.66");
    expect_var(&env, "ifconfig_pool_netmask", "255.255.255.0");
    expect_var(&env, "ifconfig_pool_remote_ip6", "2001:2::1000");
    expect_var(&env, "ifconfig_pool_local_ip6", "2001:2::1");
    expect_var(&env, "ifconfig_pool_ip6_netbits", "64");
    expect_var(&env, "time_unix", "1700000000");
    assert_non_null(hook_env_get(&env, "time_ascii"));
    assert_int_equal(strlen(hook_env_get(&env, "time_ascii")), 19); /* "2023-11-14 22:13:20" */
    assert_null(hook_env_get(&env, "trusted_ip6"));
    script_env_clear(&env);

    /* An IPv6 client: trusted_ip6 (socket.c setenv_link_socket_actual); no username without a
     * password check; no IPv6 pool variables without server-ipv6. */
    memset(&c.remote, 0, sizeof(c.remote));
    c.remote.in6.sin6_family = AF_INET6;
    c.remote.in6.sin6_port = htons(1195);
    inet_pton(AF_INET6, "2001:2:0:1::5", &c.remote.in6.sin6_addr);
    c.username = NULL;
    c.has_ipv6 = false;
    assert_int_equal(hook_env_client(&env, &c), 0);
    expect_var(&env, "trusted_ip6", "2001:2:0:1::5");
    expect_var(&env, "trusted_port", "1195");
    assert_null(hook_env_get(&env, "trusted_ip"));
    assert_null(hook_env_get(&env, "username"));
    assert_null(hook_env_get(&env, "ifconfig_pool_remote_ip6"));
    script_env_clear(&env);

    /* An IPv4 client on a dual-stack socket arrives v4-mapped and is named as IPv4. */
    inet_pton(AF_INET6, "::ffff:198.18.0.9", &c.remote.in6.sin6_addr);
    assert_int_equal(hook_env_addr(&env, "untrusted", &c.remote), 0);
    expect_var(&env, "untrusted_ip", "198.18.0.9");
    script_env_clear(&env);
}

/* The variables every script gets, as 2.6's global environment has them. */
static void global_variables(void **state)
{
    struct script_env env = {0};
    struct hook_server s;
    struct config cfg;
    char *setenv_lines[] = {"FOO=bar"};

    (void)state;
    config_init(&cfg);
    cfg.config_file = "server.conf";
    cfg.hooks.setenv = setenv_lines;
    cfg.hooks.n_setenv = 1;
    memset(&s, 0, sizeof(s));
    s.dev = "tun0";
    s.tun_mtu = 1500;
    s.local = 0xc6130001;
    s.remote_netmask = 0xffffff00;
    s.has_ipv6 = true;
    inet_pton(AF_INET6, "2001:2::1", s.local6);
    s.ipv6_bits = 64;
    s.port = 1194;
    s.start_time = 1700000000;
    s.pid = 4242;
    assert_int_equal(hook_env_global(&env, &cfg, &s), 0);
    expect_var(&env, "FOO", "bar");
    expect_var(&env, "config", "server.conf");
    expect_var(&env, "verb", "1");
    expect_var(&env, "daemon", "0");
    expect_var(&env, "daemon_log_redirect", "0");
    expect_var(&env, "daemon_start_time", "1700000000");
    expect_var(&env, "daemon_pid", "4242");
    expect_var(&env, "proto_1", "udp");
    expect_var(&env, "local_port_1", "1194");
    expect_var(&env, "remote_port_1", "1194");
    expect_var(&env, "dev", "tun0");
    expect_var(&env, "dev_type", "tun");
    expect_var(&env, "tun_mtu", "1500");
    expect_var(&env, "ifconfig_local", "198.19.0.1");
    expect_var(&env, "ifconfig_netmask", "255.255.255.0");
    expect_var(&env, "ifconfig_ipv6_local", "2001:2::1");
    expect_var(&env, "ifconfig_ipv6_netbits", "64");
    expect_var(&env, "redirect_gateway", "0");
    expect_var(&env, "script_context", "init");
    assert_null(hook_env_get(&env, "local_1"));
    assert_null(hook_env_get(&env, "ifconfig_remote"));
    script_env_clear(&env);
    /* topology net30/p2p: the peer, as ifconfig_remote */
    s.is_p2p = true;
    s.remote_netmask = 0xc6130002;
    assert_int_equal(hook_env_global(&env, &cfg, &s), 0);
    expect_var(&env, "ifconfig_remote", "198.19.0.2");
    assert_null(hook_env_get(&env, "ifconfig_netmask"));
    script_env_clear(&env);
    cfg.config_file = NULL;
    cfg.hooks.setenv = NULL;
    cfg.hooks.n_setenv = 0;
    config_free(&cfg);
}

static void disconnect_counters(void **state)
{
    struct script_env env = {0};

    (void)state;
    assert_int_equal(hook_env_disconnect(&env, 12345678901ULL, 42, 3600), 0);
    expect_var(&env, "bytes_received", "12345678901");
    expect_var(&env, "bytes_sent", "42");
    expect_var(&env, "time_duration", "3600");
    script_env_clear(&env);
}

static void certificate_chain(void **state)
{
    const mbedtls_x509_crt *chain[HOOK_CERT_DEPTH_MAX];
    mbedtls_x509_crt leaf, ca;
    struct script_env env = {0};
    char subject[HOOK_SUBJECT_MAX];

    (void)state;
    mbedtls_x509_crt_init(&leaf);
    mbedtls_x509_crt_init(&ca);
    assert_int_equal(mbedtls_x509_crt_parse_file(&leaf, DATA "server.crt"), 0);
    assert_int_equal(mbedtls_x509_crt_parse_file(&ca, DATA "ca.crt"), 0);

    /* The leaf, then its issuer from the trusted list; the self-signed CA ends the chain. */
    assert_int_equal(hook_cert_chain(&leaf, &ca, chain, HOOK_CERT_DEPTH_MAX), 2);
    assert_ptr_equal(chain[0], &leaf);
    assert_ptr_equal(chain[1], &ca);
    /* No issuer known: the leaf alone. */
    assert_int_equal(hook_cert_chain(&leaf, NULL, chain, HOOK_CERT_DEPTH_MAX), 1);
    assert_int_equal(hook_cert_chain(NULL, &ca, chain, HOOK_CERT_DEPTH_MAX), 0);

    assert_int_equal(hook_cert_subject(&leaf, subject, sizeof(subject)), 0);
    assert_string_equal(subject, "CN=ovpnd-test-server");
    assert_int_equal(hook_env_cert(&env, 1, &ca), 0);
    assert_int_equal(hook_env_cert(&env, 0, &leaf), 0);
    expect_var(&env, "X509_0_CN", "ovpnd-test-server");
    expect_var(&env, "X509_1_CN", "ovpnd-test-ca");
    expect_var(&env, "tls_id_0", "CN=ovpnd-test-server");
    expect_var(&env, "tls_id_1", "CN=ovpnd-test-ca");
    expect_var(&env, "tls_serial_0", "271156874491342565837064241380429741789454502778");
    expect_var(&env, "tls_serial_hex_0",
               "2F:7F:18:43:60:C4:CE:D8:84:A2:A9:40:41:9B:76:6A:86:A3:8B:7A");
    expect_var(&env, "tls_serial_1", "205593455275205465176454381364205829659683048750");
    expect_var(&env, "tls_digest_0", "01:0e:f2:0c:77:4c:a4:40:6d:a2:da:11:7c:f2:87:98:1e:38:75:4e");
    expect_var(&env, "tls_digest_sha256_0",
               "ba:00:3c:b9:e4:55:e0:4d:64:00:a6:e0:bb:4e:89:f9:a9:3f:2f:45:78:a7:6b:61:53:45:5b:"
               "67:aa:85:49:90");
    /* A repeated field gets _1 (setenv_str_incr): the same certificate twice at one depth. */
    assert_int_equal(hook_env_cert(&env, 0, &leaf), 0);
    expect_var(&env, "X509_0_CN_1", "ovpnd-test-server");
    script_env_clear(&env);
    mbedtls_x509_crt_free(&leaf);
    mbedtls_x509_crt_free(&ca);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(peer_info_filter),  cmocka_unit_test(client_ipv4_and_ipv6),
        cmocka_unit_test(global_variables),  cmocka_unit_test(disconnect_counters),
        cmocka_unit_test(certificate_chain),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
