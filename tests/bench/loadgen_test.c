/* tests/bench/loadgen_test.c: unit tests of the load generator's pieces and of the TLS client
 * configuration it adds to proto/tls_session.
 *
 * argv[1] is a directory made by scripts/pki.sh (ca.crt, server.crt/.key, client1.crt/.key), with
 * noeku.crt/.key (signed by the same CA, no extendedKeyUsage) and other/ (a second, unrelated
 * PKI) added; CTest makes a fresh one (tests/bench/CMakeLists.txt). Vectors come from outside this
 * code: RFC 1071, a well-known IPv4 header, a Linux kernel echo reply captured with tcpdump, and
 * the PUSH_REPLY, peer-info and options string captured from openvpn 2.6.14
 * (docs/openvpn-protocol.md sections 4.2, 9.1, 9.4).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <mbedtls/ctr_drbg.h>
#include <mbedtls/sha256.h>
#include <mbedtls/entropy.h>

#include "proto/cert_check.h"
#include "proto/cursor.h"
#include "proto/errors.h"
#include "proto/kdf.h"
#include "proto/tls_session.h"
#include "tests/bench/loadgen_config.h"
#include "tests/bench/loadgen_icmp.h"
#include "tests/bench/loadgen_push.h"

static const char *pki_dir;

/* ---- internet checksum and ICMP ---- */

static void checksum_rfc1071_example(void **state)
{
    /* RFC 1071 section 3: these bytes sum to ddf2, so the checksum is its complement 220d. */
    static const uint8_t bytes[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};

    (void)state;
    assert_int_equal(loadgen_inet_checksum(bytes, sizeof(bytes)), 0x220d);
}

static void checksum_ipv4_header_example(void **state)
{
    /* The textbook IPv4 header example (UDP, length 0x73, DF), with the addresses moved to
     * 198.18.0.1 -> 198.18.0.199; checksum computed by hand per RFC 1071. */
    static const uint8_t hdr[] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                                  0x00, 0x00, 0xc6, 0x12, 0x00, 0x01, 0xc6, 0x12, 0x00, 0xc7};

    (void)state;
    assert_int_equal(loadgen_inet_checksum(hdr, sizeof(hdr)), 0xad8d);
}

/* Echo request and reply captured on Linux (ping -s 24 -p 0011223344556677 127.0.0.1). */
static const uint8_t linux_echo_request[] = {
    0x45, 0x00, 0x00, 0x34, 0xb7, 0xce, 0x40, 0x00, 0x40, 0x01, 0x84, 0xf8, 0x7f,
    0x00, 0x00, 0x01, 0x7f, 0x00, 0x00, 0x01, 0x08, 0x00, 0x63, 0xe5, 0x70, 0x29,
    0x00, 0x01, 0xbf, 0xcb, 0x0c, 0x6b, 0x00, 0x00, 0x00, 0x00, 0x82, 0xa8, 0x08,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77};
static const uint8_t linux_echo_reply[] = {
    0x45, 0x00, 0x00, 0x34, 0xb7, 0xcf, 0x00, 0x00, 0x40, 0x01, 0xc4, 0xf7, 0x7f,
    0x00, 0x00, 0x01, 0x7f, 0x00, 0x00, 0x01, 0x00, 0x00, 0x6b, 0xe5, 0x70, 0x29,
    0x00, 0x01, 0xbf, 0xcb, 0x0c, 0x6b, 0x00, 0x00, 0x00, 0x00, 0x82, 0xa8, 0x08,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77};

static void checksum_matches_linux_capture(void **state)
{
    uint8_t p[sizeof(linux_echo_request)];

    (void)state;
    memcpy(p, linux_echo_request, sizeof(p));
    p[10] = p[11] = 0;
    assert_int_equal(loadgen_inet_checksum(p, 20), 0x84f8);
    p[22] = p[23] = 0;
    assert_int_equal(loadgen_inet_checksum(p + 20, sizeof(p) - 20), 0x63e5);
}

static void echo_reply_from_linux_is_recognised(void **state)
{
    struct loadgen_echo_reply r;

    (void)state;
    assert_true(loadgen_icmp_echo_reply_parse(linux_echo_reply, sizeof(linux_echo_reply), &r));
    assert_int_equal(r.src, 0x7f000001);
    assert_int_equal(r.dst, 0x7f000001);
    assert_int_equal(r.ident, 0x7029);
    assert_int_equal(r.seq, 1);
    assert_true(r.send_stamp == 0xbfcb0c6b00000000ull);
    /* The request is not a reply; a flipped bit breaks a checksum; a cut packet is refused. */
    assert_false(loadgen_icmp_echo_reply_parse(linux_echo_request, sizeof(linux_echo_request), &r));
    {
        uint8_t bad[sizeof(linux_echo_reply)];

        memcpy(bad, linux_echo_reply, sizeof(bad));
        bad[40] ^= 0x01;
        assert_false(loadgen_icmp_echo_reply_parse(bad, sizeof(bad), &r));
        memcpy(bad, linux_echo_reply, sizeof(bad));
        bad[8] ^= 0x01; /* TTL: IPv4 header checksum */
        assert_false(loadgen_icmp_echo_reply_parse(bad, sizeof(bad), &r));
    }
    assert_false(loadgen_icmp_echo_reply_parse(linux_echo_reply, sizeof(linux_echo_reply) - 1, &r));
    assert_false(loadgen_icmp_echo_reply_parse(linux_echo_reply, 10, &r));
}

static void echo_request_layout(void **state)
{
    uint8_t p[256];
    size_t len = loadgen_icmp_echo_build(0xC6130002, 0xC6130001, 0x1234, 7, 0x0102030405060708ull,
                                         56, p, sizeof(p));

    (void)state;
    assert_int_equal(len, 84); /* what "ping -s 56" puts on the wire */
    assert_int_equal(p[0], 0x45);
    assert_int_equal(p[2] << 8 | p[3], 84);
    assert_int_equal(p[8], 64);
    assert_int_equal(p[9], 1);
    assert_memory_equal(p + 12, "\xc6\x13\x00\x02\xc6\x13\x00\x01", 8);
    assert_int_equal(loadgen_inet_checksum(p, 20), 0); /* a valid header sums to ffff */
    assert_int_equal(p[20], 8);                        /* echo request */
    assert_int_equal(p[21], 0);
    assert_memory_equal(p + 24, "\x12\x34\x00\x07", 4);
    assert_memory_equal(p + 28, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
    assert_int_equal(loadgen_inet_checksum(p + 20, 64), 0);
    assert_int_equal(loadgen_icmp_echo_build(1, 2, 3, 4, 0, 56, p, 83), 0);
    assert_int_equal(loadgen_icmp_echo_build(1, 2, 3, 4, 0, 1401, p, sizeof(p)), 0);
}

/* The Linux capture's request, addressed to 198.19.0.3 from 198.19.0.2, is answered in place with
 * the reply a host's stack sends: addresses swapped, type 0, valid checksums, same payload. */
static void echo_request_is_answered(void **state)
{
    uint8_t p[sizeof(linux_echo_request)];
    struct loadgen_echo_reply r;

    (void)state;
    memcpy(p, linux_echo_request, sizeof(p));
    store_be32(p + 12, 0xC6130002);
    store_be32(p + 16, 0xC6130003);
    store_be16(p + 10, 0);
    store_be16(p + 10, loadgen_inet_checksum(p, 20));
    assert_int_equal(loadgen_icmp_echo_answer(p, sizeof(p), 0xC6130002), 0); /* not for us */
    assert_int_equal(loadgen_icmp_echo_answer(p, 27, 0xC6130003), 0);        /* cut short */
    assert_int_equal(loadgen_icmp_echo_answer(p, sizeof(p), 0xC6130003), sizeof(p));
    assert_true(loadgen_icmp_echo_reply_parse(p, sizeof(p), &r));
    assert_int_equal(r.src, 0xC6130003);
    assert_int_equal(r.dst, 0xC6130002);
    assert_int_equal(r.ident, 0x7029);
    assert_int_equal(r.seq, 1);
    assert_memory_equal(p + 28, linux_echo_request + 28, sizeof(p) - 28);
    /* A reply is not answered again. */
    assert_int_equal(loadgen_icmp_echo_answer(p, sizeof(p), 0xC6130002), 0);
}

/* ---- PUSH_REPLY ---- */

static void push_reply_captured_from_2_6(void **state)
{
    struct loadgen_push p;

    (void)state;
    loadgen_push_init(&p);
    assert_int_equal(
        loadgen_push_apply(&p, "PUSH_REPLY,route-gateway 198.19.0.1,topology subnet,ping 10,"
                               "ping-restart 60,ifconfig 198.19.0.2 255.255.255.0,peer-id 0,"
                               "cipher AES-256-GCM,protocol-flags cc-exit tls-ekm dyn-tls-crypt,"
                               "tun-mtu 1500"),
        0);
    assert_true(p.is_complete);
    assert_true(p.has_ifconfig);
    assert_int_equal(p.ifconfig_local, 0xC6130002);
    assert_int_equal(p.ifconfig_remote, 0xFFFFFF00);
    assert_int_equal(loadgen_push_gateway(&p), 0xC6130001);
    assert_true(p.has_peer_id);
    assert_int_equal(p.peer_id, 0);
    assert_string_equal(p.cipher, "AES-256-GCM");
    assert_true(p.tls_ekm);
    assert_true(p.cc_exit);
    assert_int_equal(p.ping_s, 10);
    assert_int_equal(p.ping_restart_s, 60);
    assert_int_equal(p.comp, LOADGEN_COMP_NONE);
}

static void push_reply_older_forms(void **state)
{
    struct loadgen_push p;

    (void)state;
    /* No cc-exit: EKM announced with key-derivation (section 9.4); net30 pushes a host route. */
    loadgen_push_init(&p);
    assert_int_equal(loadgen_push_apply(&p, "PUSH_REPLY,route 198.19.8.1,topology net30,ping 10,"
                                            "ping-restart 120,ifconfig 198.19.8.6 198.19.8.5,"
                                            "peer-id 5,cipher AES-128-GCM,key-derivation tls-ekm"),
                     0);
    assert_true(p.tls_ekm);
    assert_false(p.cc_exit);
    assert_int_equal(loadgen_push_gateway(&p), 0xC6130801);
    assert_int_equal(p.peer_id, 5);
    /* Nothing about EKM: the PRF is used. */
    loadgen_push_init(&p);
    assert_int_equal(loadgen_push_apply(&p, "PUSH_REPLY,ifconfig 198.19.8.6 198.19.8.5"), 0);
    assert_false(p.tls_ekm);
    assert_false(p.has_peer_id);
    assert_int_equal(loadgen_push_gateway(&p), 0xC6130805);
}

static void push_reply_continuation(void **state)
{
    struct loadgen_push p;

    (void)state;
    loadgen_push_init(&p);
    assert_int_equal(loadgen_push_apply(&p, "PUSH_REPLY,route-gateway 198.19.0.1,topology subnet,"
                                            "push-continuation 2"),
                     0);
    assert_false(p.is_complete);
    assert_int_equal(loadgen_push_apply(&p, "PUSH_REPLY,ifconfig 198.19.0.9 255.255.255.0,"
                                            "peer-id 3,push-continuation 1"),
                     0);
    assert_true(p.is_complete);
    assert_int_equal(p.ifconfig_local, 0xC6130009);
    assert_int_equal(loadgen_push_gateway(&p), 0xC6130001);
}

static void push_reply_refusals(void **state)
{
    struct loadgen_push p;

    (void)state;
    loadgen_push_init(&p);
    assert_int_equal(loadgen_push_apply(&p, "PUSH_REPLY,compress lz4-v2"), -2);
    loadgen_push_init(&p);
    assert_int_equal(loadgen_push_apply(&p, "PUSH_REPLY,comp-lzo yes"), -2);
    loadgen_push_init(&p);
    assert_int_equal(loadgen_push_apply(&p, "PUSH_REPLY,comp-lzo no"), 0);
    assert_int_equal(p.comp, LOADGEN_COMP_LZO_STUB);
    loadgen_push_init(&p);
    assert_int_equal(loadgen_push_apply(&p, "PUSH_REPLY,compress stub-v2"), 0);
    assert_int_equal(p.comp, LOADGEN_COMP_STUB_V2);
    loadgen_push_init(&p);
    assert_int_equal(loadgen_push_apply(&p, "PUSH_REPLY,peer-id 16777215"), -1);
    loadgen_push_init(&p);
    assert_int_equal(loadgen_push_apply(&p, "PUSH_REPLY,ifconfig 198.19.0.300 255.255.255.0"), -1);
    loadgen_push_init(&p);
    assert_int_equal(loadgen_push_apply(&p, "PUSH_REQUEST"), -1);
    loadgen_push_init(&p);
    assert_int_equal(loadgen_push_apply(&p, "PUSH_REPLY"), 0); /* 2.6 sends this when empty */
    assert_true(p.is_complete);
}

/* ---- what the simulated client says about itself ---- */

static void peer_info_like_2_6_14(void **state)
{
    struct loadgen_config cfg;
    char pi[LOADGEN_PEER_INFO_MAX];

    (void)state;
    memset(&cfg, 0, sizeof(cfg));
    assert_int_equal(loadgen_peer_info(&cfg, pi, sizeof(pi)), 0);
    /* Captured from 2.6.14 with a plain "client" config (section 9.1), in its order. */
    assert_string_equal(pi, "IV_VER=2.6.14\nIV_PLAT=linux\nIV_TCPNL=1\nIV_MTU=1600\nIV_NCP=2\n"
                            "IV_CIPHERS=AES-256-GCM:AES-128-GCM:CHACHA20-POLY1305\n"
                            "IV_PROTO=990\nIV_LZO_STUB=1\nIV_COMP_STUB=1\nIV_COMP_STUBv2=1\n");
    cfg.no_request_push = true;
    cfg.cipher = "AES-128-GCM";
    assert_int_equal(loadgen_peer_info(&cfg, pi, sizeof(pi)), 0);
    assert_non_null(strstr(pi, "\nIV_PROTO=986\n"));
    assert_non_null(strstr(pi, "\nIV_CIPHERS=AES-128-GCM\n"));
    assert_int_equal(loadgen_peer_info(&cfg, pi, 40), -1);
    /* --comp-lzo: no IV_COMP_STUBv2, as from a client before 2.4. */
    cfg.comp_lzo = true;
    assert_int_equal(loadgen_peer_info(&cfg, pi, sizeof(pi)), 0);
    assert_null(strstr(pi, "IV_COMP_STUBv2"));
    assert_non_null(strstr(pi, "\nIV_LZO_STUB=1\nIV_COMP_STUB=1\n"));
}

static void options_string_like_2_6(void **state)
{
    struct loadgen_config cfg;
    char s[256];

    (void)state;
    memset(&cfg, 0, sizeof(cfg));
    cfg.wrap_mode = TLS_WRAP_CRYPT;
    cfg.key_direction = -1;
    assert_int_equal(loadgen_options_string(&cfg, s, sizeof(s)), 0);
    /* docs/openvpn-protocol.md 4.2: what a default 2.6 client sends. */
    assert_string_equal(s, "V4,dev-type tun,link-mtu 1541,tun-mtu 1500,proto UDPv4,auth SHA1,"
                           "keysize 128,key-method 2,tls-client");
    cfg.wrap_mode = TLS_WRAP_AUTH;
    cfg.key_direction = 1;
    assert_int_equal(loadgen_options_string(&cfg, s, sizeof(s)), 0);
    assert_non_null(strstr(s, ",keydir 1,"));
    assert_non_null(strstr(s, ",tls-auth,"));
    /* comp-lzo: announced, and its framing byte counted in link-mtu (2.6 with "comp-lzo"). */
    cfg.wrap_mode = TLS_WRAP_CRYPT;
    cfg.key_direction = -1;
    cfg.comp_lzo = true;
    assert_int_equal(loadgen_options_string(&cfg, s, sizeof(s)), 0);
    assert_string_equal(s, "V4,dev-type tun,link-mtu 1542,tun-mtu 1500,proto UDPv4,comp-lzo,"
                           "auth SHA1,keysize 128,key-method 2,tls-client");
}

static void command_line(void **state)
{
    char ca[512], crt[512], key[512], ta[512], err[256];
    struct loadgen_config cfg;

    (void)state;
    snprintf(ca, sizeof(ca), "%s/ca.crt", pki_dir);
    snprintf(crt, sizeof(crt), "%s/client1.crt", pki_dir);
    snprintf(key, sizeof(key), "%s/client1.key", pki_dir);
    snprintf(ta, sizeof(ta), "%s/tls-auth.key", pki_dir);
    {
        char *argv[] = {"ovpnd-loadgen",
                        "--server",
                        "198.18.0.1:1194",
                        "--clients",
                        "3",
                        "--rate",
                        "10",
                        "--duration",
                        "2",
                        "--ca",
                        ca,
                        "--cert",
                        crt,
                        "--key",
                        key,
                        "--tls-auth",
                        ta,
                        "--key-direction",
                        "1",
                        "--bind-range",
                        "198.18.0.50-53",
                        "--data-rate",
                        "5",
                        NULL};

        assert_int_equal(loadgen_config_parse(&cfg, 23, argv, err, sizeof(err)), 0);
        assert_int_equal(cfg.n_clients, 3);
        assert_int_equal(ntohs(cfg.server.sin_port), 1194);
        assert_int_equal(cfg.wrap_mode, TLS_WRAP_AUTH);
        assert_int_equal(cfg.key_direction, 1);
        assert_int_equal(cfg.bind_first, 0xC6120032);
        assert_int_equal(cfg.bind_last, 0xC6120035);
        assert_true(cfg.data_pps == 5.0);
        assert_int_equal(cfg.ca.data[cfg.ca.len - 1], 0); /* NUL counted, as mbedTLS wants */
        loadgen_config_clear(&cfg);
    }
    {
        char *argv[] = {"ovpnd-loadgen", "--server", "198.18.0.1:1194", "--clients", "3", NULL};

        assert_int_equal(loadgen_config_parse(&cfg, 5, argv, err, sizeof(err)), -1);
        assert_non_null(strstr(err, "required"));
        loadgen_config_clear(&cfg);
    }
    {
        char *argv[] = {"ovpnd-loadgen", "--bind-range", "198.18.0.9-3", NULL};

        assert_int_equal(loadgen_config_parse(&cfg, 3, argv, err, sizeof(err)), -1);
        loadgen_config_clear(&cfg);
    }
}

/* --concurrency, --barrier/--barrier-count and --half-open. */
static void command_line_scale_options(void **state)
{
    char ca[512], crt[512], key[512], ta[512], err[256];
    struct loadgen_config cfg;
    char *argv[] = {"ovpnd-loadgen",
                    "--server",
                    "198.18.0.1:1194",
                    "--clients",
                    "3",
                    "--rate",
                    "0",
                    "--duration",
                    "2",
                    "--ca",
                    ca,
                    "--cert",
                    crt,
                    "--key",
                    key,
                    "--tls-crypt",
                    ta,
                    "--concurrency",
                    "32",
                    "--barrier",
                    "/nonexistent/b",
                    "--barrier-count",
                    "3",
                    "--half-open",
                    "ack",
                    NULL};
    const int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1;

    (void)state;
    snprintf(ca, sizeof(ca), "%s/ca.crt", pki_dir);
    snprintf(crt, sizeof(crt), "%s/client1.crt", pki_dir);
    snprintf(key, sizeof(key), "%s/client1.key", pki_dir);
    snprintf(ta, sizeof(ta), "%s/ta.key", pki_dir);
    assert_int_equal(loadgen_config_parse(&cfg, argc, argv, err, sizeof(err)), 0);
    assert_int_equal(cfg.concurrency, 32);
    assert_string_equal(cfg.barrier_path, "/nonexistent/b");
    assert_int_equal(cfg.barrier_count, 3);
    assert_int_equal(cfg.half_open, LOADGEN_HALF_OPEN_ACK);
    loadgen_config_clear(&cfg);

    argv[argc - 1] = "reset";
    assert_int_equal(loadgen_config_parse(&cfg, argc, argv, err, sizeof(err)), 0);
    assert_int_equal(cfg.half_open, LOADGEN_HALF_OPEN_RESET);
    loadgen_config_clear(&cfg);

    argv[argc - 1] = "tls";
    assert_int_equal(loadgen_config_parse(&cfg, argc, argv, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "--half-open"));
    loadgen_config_clear(&cfg);

    /* A barrier without its count (or the other way round) is refused. */
    assert_int_equal(loadgen_config_parse(&cfg, argc - 4, argv, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "--barrier"));
    loadgen_config_clear(&cfg);
}

/* ---- TLS client configuration (proto/tls_session) ---- */

struct blob {
    uint8_t *p;
    size_t len; /* incl. the NUL */
};

static struct blob load(const char *name)
{
    char path[512];
    struct blob b = {NULL, 0};
    FILE *f;
    long n;

    snprintf(path, sizeof(path), "%s/%s", pki_dir, name);
    f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    b.p = calloc(1, (size_t)n + 1);
    assert_non_null(b.p);
    assert_int_equal(fread(b.p, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    b.len = (size_t)n + 1;
    return b;
}

struct tls_pair {
    mbedtls_entropy_context entropy;
    mbedtls_ctr_drbg_context drbg;
    struct tls_server_conf server_conf, client_conf;
    struct tls_session server, client;
};

/* What the server side of a test handshake is given beyond the defaults. */
struct server_opts {
    bool has_no_ca;                    /* built without `ca` */
    const uint8_t (*fingerprints)[32]; /* peer-fingerprint list, n_fingerprints entries */
    size_t n_fingerprints;
    char *errbuf; /* the server's handshake error, errbuf_len bytes; NULL = not wanted */
    size_t errbuf_len;
    int ret; /* out: the server's handshake result */
};

/* Server with server_cert/key (and opts, NULL for the defaults), client with client1; returns
 * the client's handshake result. */
static int handshake_with(struct tls_pair *t, const char *server_cert, const char *server_key,
                          bool require_eku, char *errbuf, size_t errbuf_len,
                          struct server_opts *opts)
{
    struct blob ca = load("ca.crt"), scrt = load(server_cert), skey = load(server_key),
                ccrt = load("client1.crt"), ckey = load("client1.key");
    int cret = -PE_WANT_IO, sret = -PE_WANT_IO;
    bool has_no_ca = opts && opts->has_no_ca;

    memset(t, 0, sizeof(*t));
    mbedtls_entropy_init(&t->entropy);
    mbedtls_ctr_drbg_init(&t->drbg);
    assert_int_equal(mbedtls_ctr_drbg_seed(&t->drbg, mbedtls_entropy_func, &t->entropy, NULL, 0),
                     0);
    assert_int_equal(tls_server_conf_init(&t->server_conf, has_no_ca ? NULL : ca.p, ca.len, scrt.p,
                                          scrt.len, skey.p, skey.len, TLS_VERIFY_CLIENT_REQUIRE,
                                          mbedtls_ctr_drbg_random, &t->drbg, NULL, 0),
                     0);
    if (opts && opts->n_fingerprints > 0) {
        assert_int_equal(tls_server_conf_set_fingerprints(&t->server_conf, opts->fingerprints,
                                                          opts->n_fingerprints),
                         0);
    }
    assert_int_equal(tls_client_conf_init(&t->client_conf, ca.p, ca.len, ccrt.p, ccrt.len, ckey.p,
                                          ckey.len, require_eku, mbedtls_ctr_drbg_random, &t->drbg,
                                          NULL, 0),
                     0);
    assert_int_equal(tls_session_init(&t->server, &t->server_conf), 0);
    assert_int_equal(tls_session_init(&t->client, &t->client_conf), 0);
    for (int round = 0; round < 50 && (cret == -PE_WANT_IO || sret == -PE_WANT_IO); round++) {
        const uint8_t *p;
        size_t n;

        if (cret == -PE_WANT_IO) {
            cret = tls_session_handshake(&t->client, errbuf, errbuf_len);
        }
        p = tls_session_out_peek(&t->client, &n);
        if (n) {
            assert_int_equal(tls_session_feed(&t->server, p, n), 0);
            tls_session_out_consume(&t->client, n);
        }
        if (cret != 0 && cret != -PE_WANT_IO) {
            break;
        }
        if (sret == -PE_WANT_IO) {
            sret = tls_session_handshake(&t->server, opts ? opts->errbuf : NULL,
                                         opts ? opts->errbuf_len : 0);
        }
        p = tls_session_out_peek(&t->server, &n);
        if (n) {
            assert_int_equal(tls_session_feed(&t->client, p, n), 0);
            tls_session_out_consume(&t->server, n);
        }
    }
    free(ca.p);
    free(scrt.p);
    free(skey.p);
    free(ccrt.p);
    free(ckey.p);
    if (opts) {
        opts->ret = sret;
    }
    return cret;
}

static int handshake(struct tls_pair *t, const char *server_cert, const char *server_key,
                     bool require_eku, char *errbuf, size_t errbuf_len)
{
    return handshake_with(t, server_cert, server_key, require_eku, errbuf, errbuf_len, NULL);
}

static void tls_pair_clear(struct tls_pair *t)
{
    tls_session_clear(&t->server);
    tls_session_clear(&t->client);
    tls_server_conf_clear(&t->server_conf);
    tls_server_conf_clear(&t->client_conf);
    mbedtls_ctr_drbg_free(&t->drbg);
    mbedtls_entropy_free(&t->entropy);
}

static void tls_client_and_server_agree_on_ekm(void **state)
{
    static const uint8_t zero[KEY_BLOCK_LEN];
    uint8_t ekm_client[KEY_BLOCK_LEN], ekm_server[KEY_BLOCK_LEN];
    struct tls_pair *t = calloc(1, sizeof(*t));
    char cn[64], err[256] = "";
    uint8_t buf[64];
    size_t n;

    (void)state;
    assert_non_null(t);
    assert_int_equal(handshake(t, "server.crt", "server.key", true, err, sizeof(err)), 0);
    assert_true(t->client.is_handshake_done);
    assert_true(t->server.is_handshake_done);
    assert_int_equal(tls_session_peer_cn(&t->client, cn, sizeof(cn)), 0);
    assert_string_equal(cn, "server");
    assert_int_equal(tls_session_peer_cn(&t->server, cn, sizeof(cn)), 0);
    assert_string_equal(cn, "client1");
    /* Both ends compute the exporter from their own view of the handshake. */
    assert_int_equal(
        tls_session_export(&t->client, KDF_EKM_LABEL_DATAKEYS, ekm_client, sizeof(ekm_client)), 0);
    assert_int_equal(
        tls_session_export(&t->server, KDF_EKM_LABEL_DATAKEYS, ekm_server, sizeof(ekm_server)), 0);
    assert_memory_equal(ekm_client, ekm_server, sizeof(ekm_client));
    assert_memory_not_equal(ekm_client, zero, sizeof(zero));
    /* Application data flows client -> server. */
    assert_int_equal(tls_session_write(&t->client, (const uint8_t *)"PUSH_REQUEST", 13), 0);
    {
        const uint8_t *p = tls_session_out_peek(&t->client, &n);

        assert_int_equal(tls_session_feed(&t->server, p, n), 0);
        tls_session_out_consume(&t->client, n);
    }
    assert_int_equal(tls_session_read(&t->server, buf, sizeof(buf), &n), 0);
    assert_int_equal(n, 13);
    assert_string_equal((const char *)buf, "PUSH_REQUEST");
    tls_pair_clear(t);
    free(t);
}

static void tls_client_refuses_server_without_server_eku(void **state)
{
    struct tls_pair *t = calloc(1, sizeof(*t));
    char err[256] = "";

    (void)state;
    assert_non_null(t);
    /* noeku.crt chains to the CA but has no extendedKeyUsage: openvpn's --remote-cert-tls server
     * refuses it (mbedTLS alone would accept it). */
    assert_int_equal(handshake(t, "noeku.crt", "noeku.key", true, err, sizeof(err)), -PE_TLS);
    assert_non_null(strstr(err, "server certificate verification failed"));
    assert_false(t->client.is_handshake_done);
    tls_pair_clear(t);
    /* Without the check the same certificate is accepted. */
    assert_int_equal(handshake(t, "noeku.crt", "noeku.key", false, err, sizeof(err)), 0);
    tls_pair_clear(t);
    free(t);
}

/* peer-fingerprint (2.6 ssl_verify.c, ssl_verify_mbedtls.c): without a CA a listed client
 * certificate is admitted although nothing vouches for it, an unlisted one is refused with its
 * fingerprint named; with a CA the list is one more condition. */
static void tls_server_peer_fingerprint(void **state)
{
    struct tls_pair *t = calloc(1, sizeof(*t));
    struct blob ccrt = load("client1.crt");
    uint8_t fps[2][32] = {{0x01, 0x02}, {0}};
    char hex[96], serr[512] = "", err[256] = "";
    mbedtls_x509_crt crt;
    struct server_opts opts = {
        .fingerprints = (const uint8_t(*)[32])fps, .errbuf = serr, .errbuf_len = sizeof(serr)};

    (void)state;
    assert_non_null(t);
    mbedtls_x509_crt_init(&crt);
    assert_int_equal(mbedtls_x509_crt_parse(&crt, ccrt.p, ccrt.len), 0);
    assert_int_equal(mbedtls_sha256_ret(crt.raw.p, crt.raw.len, fps[1], 0), 0);
    tls_fingerprint_format(fps[1], hex, sizeof(hex));
    assert_int_equal(strlen(hex), 95);
    assert_int_equal(hex[2], ':');

    /* no CA, client1 listed second: admitted */
    opts.has_no_ca = true;
    opts.n_fingerprints = 2;
    assert_int_equal(handshake_with(t, "server.crt", "server.key", true, err, sizeof(err), &opts),
                     0);
    assert_int_equal(opts.ret, 0);
    assert_memory_equal(t->server.verify_sha256, fps[1], 32);
    assert_false(t->server.is_fingerprint_refused);
    tls_pair_clear(t);
    /* no CA, client1 not listed: refused, the fingerprint and CN named */
    opts.n_fingerprints = 1;
    handshake_with(t, "server.crt", "server.key", true, err, sizeof(err), &opts);
    assert_int_equal(opts.ret, -PE_TLS);
    assert_true(t->server.is_fingerprint_refused);
    assert_non_null(strstr(serr, "not listed in peer-fingerprint"));
    assert_non_null(strstr(serr, hex));
    assert_non_null(strstr(serr, "CN 'client1'"));
    tls_pair_clear(t);
    /* with the CA: listed and chained, admitted; chained but not listed, refused */
    opts.has_no_ca = false;
    opts.n_fingerprints = 2;
    assert_int_equal(handshake_with(t, "server.crt", "server.key", true, err, sizeof(err), &opts),
                     0);
    assert_int_equal(opts.ret, 0);
    tls_pair_clear(t);
    opts.n_fingerprints = 1;
    handshake_with(t, "server.crt", "server.key", true, err, sizeof(err), &opts);
    assert_int_equal(opts.ret, -PE_TLS);
    assert_non_null(strstr(serr, "not listed in peer-fingerprint"));
    tls_pair_clear(t);
    mbedtls_x509_crt_free(&crt);
    free(ccrt.p);
    free(t);
}

/* remote-cert-ku / remote-cert-eku on client1's certificate (key usage digitalSignature,
 * keyEncipherment, keyAgreement = 0xa8; extended key usage clientAuth, scripts/pki.sh) and on
 * noeku.crt (0x88, no extended key usage): 2.6's rules (ssl_verify_mbedtls.c). */
static void remote_cert_ku_eku(void **state)
{
    static const unsigned ku_a0[] = {0xa0}, ku_88[] = {0x88}, ku_04[] = {0x04},
                          ku_04_a0[] = {0x04, 0xa0};
    struct blob ccrt = load("client1.crt"), ncrt = load("noeku.crt");
    mbedtls_x509_crt crt, noeku;
    char why[300];

    (void)state;
    mbedtls_x509_crt_init(&crt);
    mbedtls_x509_crt_init(&noeku);
    assert_int_equal(mbedtls_x509_crt_parse(&crt, ccrt.p, ccrt.len), 0);
    assert_int_equal(mbedtls_x509_crt_parse(&noeku, ncrt.p, ncrt.len), 0);
    assert_int_equal(cert_check_ku(&crt, NULL, 0, why, sizeof(why)), 0);
    assert_int_equal(cert_check_ku(&crt, ku_a0, 1, why, sizeof(why)), 0);
    assert_int_equal(cert_check_ku(&crt, ku_88, 1, why, sizeof(why)), 0);
    assert_int_equal(cert_check_ku(&crt, ku_04_a0, 2, why, sizeof(why)), 0);
    assert_int_equal(cert_check_ku(&crt, ku_04, 1, why, sizeof(why)), -PE_AUTH);
    assert_string_equal(why, "remote-cert-ku: the client certificate's key usage is 00a8, not "
                             "one of 0004");
    assert_int_equal(cert_check_ku(&noeku, ku_a0, 1, why, sizeof(why)), -PE_AUTH);
    assert_int_equal(cert_check_ku(&noeku, ku_88, 1, why, sizeof(why)), 0);
    assert_int_equal(cert_check_eku(&crt, "TLS Web Client Authentication", why, sizeof(why)), 0);
    assert_int_equal(cert_check_eku(&crt, "1.3.6.1.5.5.7.3.2", why, sizeof(why)), 0);
    assert_int_equal(cert_check_eku(&crt, "TLS Web Server Authentication", why, sizeof(why)),
                     -PE_AUTH);
    assert_string_equal(why, "remote-cert-eku: the client certificate lacks extended key usage "
                             "'TLS Web Server Authentication'");
    assert_int_equal(cert_check_eku(&noeku, "TLS Web Client Authentication", why, sizeof(why)),
                     -PE_AUTH);
    assert_string_equal(why, "remote-cert-eku: the client certificate has no extended key usage "
                             "extension");
    assert_int_equal(cert_check_eku(NULL, "1.3.6.1.5.5.7.3.2", why, sizeof(why)), -PE_AUTH);
    assert_int_equal(cert_check_ku(NULL, NULL, 0, why, sizeof(why)), -PE_AUTH);
    mbedtls_x509_crt_free(&crt);
    mbedtls_x509_crt_free(&noeku);
    free(ccrt.p);
    free(ncrt.p);
}

/* verify-x509-name on client1's certificate (subject "CN=client1" from scripts/pki.sh). */
static void x509_name_types(void **state)
{
    struct blob ccrt = load("client1.crt");
    char subject[CERT_CHECK_SUBJECT_MAX], why[600];
    mbedtls_x509_crt crt;

    (void)state;
    mbedtls_x509_crt_init(&crt);
    assert_int_equal(mbedtls_x509_crt_parse(&crt, ccrt.p, ccrt.len), 0);
    assert_int_equal(cert_check_subject(&crt, subject, sizeof(subject)), 0);
    assert_string_equal(subject, "CN=client1");
    assert_int_equal(
        cert_check_x509_name(&crt, "client1", "CN=client1", CERT_CHECK_X509_SUBJECT, why, 600), 0);
    assert_int_equal(
        cert_check_x509_name(&crt, "client1", "client1", CERT_CHECK_X509_SUBJECT, why, 600),
        -PE_AUTH);
    assert_string_equal(why, "verify-x509-name: the certificate's subject 'CN=client1' is not "
                             "'client1'");
    assert_int_equal(
        cert_check_x509_name(&crt, "client1", "client1", CERT_CHECK_X509_NAME, why, 600), 0);
    assert_int_equal(
        cert_check_x509_name(&crt, "client1", "client", CERT_CHECK_X509_NAME, why, 600), -PE_AUTH);
    assert_int_equal(
        cert_check_x509_name(&crt, "client1", "client", CERT_CHECK_X509_NAME_PREFIX, why, 600), 0);
    assert_int_equal(
        cert_check_x509_name(&crt, "client1", "client12", CERT_CHECK_X509_NAME_PREFIX, why, 600),
        -PE_AUTH);
    assert_string_equal(why, "verify-x509-name: the certificate's common name 'client1' does not "
                             "start with 'client12'");
    mbedtls_x509_crt_free(&crt);
    free(ccrt.p);
}

static void tls_client_refuses_unknown_ca(void **state)
{
    struct tls_pair *t = calloc(1, sizeof(*t));
    char err[256] = "";

    (void)state;
    assert_non_null(t);
    /* other.crt is a server certificate from another CA (scripts/pki.sh run twice). */
    assert_int_equal(handshake(t, "other/server.crt", "other/server.key", true, err, sizeof(err)),
                     -PE_TLS);
    assert_non_null(strstr(err, "server certificate verification failed"));
    tls_pair_clear(t);
    free(t);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(checksum_rfc1071_example),
        cmocka_unit_test(checksum_ipv4_header_example),
        cmocka_unit_test(checksum_matches_linux_capture),
        cmocka_unit_test(echo_reply_from_linux_is_recognised),
        cmocka_unit_test(echo_request_layout),
        cmocka_unit_test(echo_request_is_answered),
        cmocka_unit_test(push_reply_captured_from_2_6),
        cmocka_unit_test(push_reply_older_forms),
        cmocka_unit_test(push_reply_continuation),
        cmocka_unit_test(push_reply_refusals),
        cmocka_unit_test(peer_info_like_2_6_14),
        cmocka_unit_test(options_string_like_2_6),
        cmocka_unit_test(command_line),
        cmocka_unit_test(command_line_scale_options),
        cmocka_unit_test(tls_client_and_server_agree_on_ekm),
        cmocka_unit_test(tls_client_refuses_server_without_server_eku),
        cmocka_unit_test(tls_client_refuses_unknown_ca),
        cmocka_unit_test(tls_server_peer_fingerprint),
        cmocka_unit_test(x509_name_types),
        cmocka_unit_test(remote_cert_ku_eku),
    };

    if (argc != 2) {
        fprintf(stderr, "usage: %s PKI_DIR (made by scripts/pki.sh)\n", argv[0]);
        return 2;
    }
    pki_dir = argv[1];
    return cmocka_run_group_tests(tests, NULL, NULL);
}
