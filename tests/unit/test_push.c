/* tests/unit/test_push.c: control-channel messages and PUSH_REPLY (sections 8 and 9.4 of
 * docs/openvpn-protocol.md). Expected PUSH_REPLY texts were sent by a stock 2.6.14 server
 * (`server 198.19.0.0 255.255.255.0`, `topology subnet`, `keepalive 10 60`) to a stock 2.6.14
 * client and logged by both; IPv6 text is checked against the C library's inet_ntop. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <cmocka.h>

#include "proto/errors.h"
#include "proto/ncp.h"
#include "proto/peer_info.h"
#include "proto/push.h"

#define MAX_MSGS 16

/* Collects emitted messages. */
struct sink {
    char msgs[MAX_MSGS][PUSH_REPLY_MAX];
    size_t lens[MAX_MSGS];
    size_t n;
    int fail_at; /* return an error on this call (1-based), 0: never */
};

static int collect(void *ctx, const char *msg, size_t len)
{
    struct sink *s = ctx;

    assert_true(s->n < MAX_MSGS);
    assert_int_equal(strlen(msg), len);
    assert_true(len + 1 <= PUSH_REPLY_MAX);
    memcpy(s->msgs[s->n], msg, len + 1);
    s->lens[s->n] = len;
    s->n++;
    if (s->fail_at != 0 && (int)s->n == s->fail_at) {
        return -1234;
    }
    return 0;
}

static const char *const global_push[] = {"route-gateway 198.19.0.1", "topology subnet", "ping 10",
                                          "ping-restart 60"};

static const char client_2614[] =
    "IV_VER=2.6.14\nIV_PLAT=linux\nIV_TCPNL=1\nIV_MTU=1600\nIV_NCP=2\n"
    "IV_CIPHERS=AES-256-GCM:AES-128-GCM:CHACHA20-POLY1305\n"
    "IV_PROTO=990\nIV_LZO_STUB=1\nIV_COMP_STUB=1\nIV_COMP_STUBv2=1\n";

/* What a 2.6-compatible server decides for a client, from its peer-info. */
static void params_for(const char *peer_info, const char *server_ciphers,
                       struct push_client_params *p, char *cipher)
{
    struct peer_info pi;

    assert_int_equal(peer_info_parse(peer_info, strlen(peer_info), &pi), 0);
    memset(p, 0, sizeof(*p));
    p->iv_proto = pi.iv_proto;
    p->ncp = peer_info_supports_ncp(&pi);
    p->has_iv_mtu = pi.has_mtu;
    p->peer_id = 0;
    assert_int_equal(ncp_select(server_ciphers, &pi, NULL, NULL, cipher, NCP_CIPHER_NAME_MAX), 0);
    p->cipher = cipher;
    p->use_ekm = true;
    p->cc_exit = true;
    p->dyn_tls_crypt = true;
    p->tun_mtu = 1500;
    p->ifconfig_local = 0xc6130002;   /* 198.19.0.2 */
    p->ifconfig_netmask = 0xffffff00; /* 255.255.255.0 */
}

/* global list + per-client options -> messages */
static void build_all(const char *const *extra_first, size_t n_extra,
                      const struct push_client_params *p, struct sink *s)
{
    static char opts[16][256];
    const char **all = calloc(n_extra + 4 + 16, sizeof(*all));
    size_t n = 0, n_client;

    assert_non_null(all);
    for (size_t i = 0; i < n_extra; i++) {
        all[n++] = extra_first[i];
    }
    for (size_t i = 0; i < 4; i++) {
        all[n++] = global_push[i];
    }
    assert_int_equal(push_client_options(p, opts, 16, &n_client), 0);
    for (size_t i = 0; i < n_client; i++) {
        all[n++] = opts[i];
    }
    assert_int_equal(push_reply_build(all, n, collect, s), 0);
    free(all);
}

static void baseline_2614(void **state)
{
    struct push_client_params p;
    char cipher[NCP_CIPHER_NAME_MAX];
    static struct sink s;

    (void)state;
    params_for(client_2614, "AES-256-GCM:AES-128-GCM:CHACHA20-POLY1305", &p, cipher);
    build_all(NULL, 0, &p, &s);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.msgs[0],
                        "PUSH_REPLY,route-gateway 198.19.0.1,topology subnet,ping 10,ping-restart "
                        "60,ifconfig 198.19.0.2 255.255.255.0,peer-id 0,cipher AES-256-GCM,"
                        "protocol-flags cc-exit tls-ekm dyn-tls-crypt,tun-mtu 1500");
}

/* captured: client with data-ciphers CHACHA20-POLY1305:AES-128-GCM (so no IV_NCP) */
static void baseline_2614_other_cipher(void **state)
{
    struct push_client_params p;
    char cipher[NCP_CIPHER_NAME_MAX];
    static struct sink s;

    (void)state;
    params_for("IV_VER=2.6.14\nIV_PLAT=linux\nIV_TCPNL=1\nIV_MTU=1600\n"
               "IV_CIPHERS=CHACHA20-POLY1305:AES-128-GCM\nIV_PROTO=990\n",
               "AES-256-GCM:AES-128-GCM:CHACHA20-POLY1305", &p, cipher);
    build_all(NULL, 0, &p, &s);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.msgs[0],
                        "PUSH_REPLY,route-gateway 198.19.0.1,topology subnet,ping 10,ping-restart "
                        "60,ifconfig 198.19.0.2 255.255.255.0,peer-id 0,cipher AES-128-GCM,"
                        "protocol-flags cc-exit tls-ekm dyn-tls-crypt,tun-mtu 1500");
}

/* 2.6.14 with 150 `push "route 198.19.N.0 255.255.255.0"` lines sent six messages: routes 1-29,
 * 30-58, 59-87, 88-115, 116-143, then 144-150 followed by the rest. */
static void routes_150_split_like_2614(void **state)
{
    static const int first[] = {1, 30, 59, 88, 116, 144, 151};
    static char routes[150][48];
    const char *route_ptrs[150];
    static char want[PUSH_REPLY_MAX];
    struct push_client_params p;
    char cipher[NCP_CIPHER_NAME_MAX];
    static struct sink s;
    int seen[151] = {0};

    (void)state;
    for (int i = 0; i < 150; i++) {
        snprintf(routes[i], sizeof(routes[i]), "route 198.19.%d.0 255.255.255.0", i + 1);
        route_ptrs[i] = routes[i];
    }
    params_for(client_2614, "AES-256-GCM:AES-128-GCM:CHACHA20-POLY1305", &p, cipher);
    build_all(route_ptrs, 150, &p, &s);

    assert_int_equal(s.n, 6);
    for (size_t m = 0; m < 6; m++) {
        size_t len = (size_t)snprintf(want, sizeof(want), "PUSH_REPLY");
        for (int r = first[m]; r < first[m + 1]; r++) {
            len += (size_t)snprintf(want + len, sizeof(want) - len, ",%s", routes[r - 1]);
        }
        if (m < 5) {
            snprintf(want + len, sizeof(want) - len, ",push-continuation 2");
        } else {
            snprintf(want + len, sizeof(want) - len,
                     ",route-gateway 198.19.0.1,topology subnet,ping 10,ping-restart 60,ifconfig "
                     "198.19.0.2 255.255.255.0,peer-id 0,cipher AES-256-GCM,protocol-flags "
                     "cc-exit tls-ekm dyn-tls-crypt,tun-mtu 1500,push-continuation 1");
        }
        assert_string_equal(s.msgs[m], want);
    }
    /* properties a client relies on, independent of the exact split */
    for (size_t m = 0; m < s.n; m++) {
        assert_true(s.lens[m] + 1 <= PUSH_REPLY_MAX);
        assert_memory_equal(s.msgs[m], "PUSH_REPLY,", 11);
        const char *tail = m + 1 < s.n ? ",push-continuation 2" : ",push-continuation 1";
        assert_string_equal(s.msgs[m] + s.lens[m] - strlen(tail), tail);
        char *copy = strdup(s.msgs[m] + 11);
        for (char *tok = strtok(copy, ","); tok != NULL; tok = strtok(NULL, ",")) {
            int a;
            if (sscanf(tok, "route 198.19.%d.0 255.255.255.0", &a) == 1) {
                assert_true(a >= 1 && a <= 150);
                seen[a]++;
            }
        }
        free(copy);
    }
    for (int a = 1; a <= 150; a++) {
        assert_int_equal(seen[a], 1);
    }
}

/* The split rule at its edge: an option is added while message + option < 940. */
static void split_boundary(void **state)
{
    static char big[3][256], edge[256];
    const char *opts[4];
    static struct sink s;

    (void)state;
    for (int i = 0; i < 3; i++) {
        memset(big[i], 'a' + i, 255);
        big[i][255] = '\0';
        opts[i] = big[i];
    }
    opts[3] = edge;
    /* "PUSH_REPLY" + 3 x ",<255>" = 778 bytes; 778 + 161 = 939 < 940 still fits */
    memset(edge, 'z', 161);
    edge[161] = '\0';
    memset(&s, 0, sizeof(s));
    assert_int_equal(push_reply_build(opts, 4, collect, &s), 0);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.lens[0], 778 + 162);
    /* one more byte and it starts a new message */
    memset(edge, 'z', 162);
    edge[162] = '\0';
    memset(&s, 0, sizeof(s));
    assert_int_equal(push_reply_build(opts, 4, collect, &s), 0);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.lens[0], 778 + strlen(",push-continuation 2"));
    assert_int_equal(s.lens[1], 10 + 163 + strlen(",push-continuation 1"));
}

static void bad_options_rejected_before_emitting(void **state)
{
    static char too_long[300];
    const char *bad[] = {"route 198.19.1.0 255.255.255.0,route 198.19.2.0",
                         "",
                         NULL,
                         too_long,
                         "dhcp-option DNS 198.19.0.1\n",
                         "x\x7f"};
    static struct sink s;

    (void)state;
    memset(too_long, 'r', 256);
    too_long[256] = '\0';
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *opts[3] = {"ping 10", bad[i], "ping-restart 60"};
        memset(&s, 0, sizeof(s));
        assert_int_equal(push_reply_build(opts, 3, collect, &s), -PE_MALFORMED);
        assert_int_equal(s.n, 0);
    }
    too_long[255] = '\0'; /* 255 characters is allowed */
    const char *ok[1] = {too_long};
    memset(&s, 0, sizeof(s));
    assert_int_equal(push_reply_build(ok, 1, collect, &s), 0);
    assert_int_equal(s.n, 1);
}

static void empty_and_emit_errors(void **state)
{
    static char opt[200];
    const char *opts[10];
    static struct sink s;

    (void)state;
    memset(&s, 0, sizeof(s));
    assert_int_equal(push_reply_build(NULL, 0, collect, &s), 0);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.msgs[0], "PUSH_REPLY,");

    memset(opt, 'o', 199);
    for (int i = 0; i < 10; i++) {
        opts[i] = opt;
    }
    memset(&s, 0, sizeof(s));
    s.fail_at = 2;
    assert_int_equal(push_reply_build(opts, 10, collect, &s), -1234);
    assert_int_equal(s.n, 2);
}

static void client_options_variants(void **state)
{
    char opts[16][256];
    size_t n;
    struct push_client_params p;
    char cipher[NCP_CIPHER_NAME_MAX];

    (void)state;
    params_for(client_2614, "AES-256-GCM", &p, cipher);
    /* ovpnd before dynamic tls-crypt exists */
    p.dyn_tls_crypt = false;
    assert_int_equal(push_client_options(&p, opts, 16, &n), 0);
    assert_int_equal(n, 5);
    assert_string_equal(opts[3], "protocol-flags cc-exit tls-ekm");
    assert_true(push_uses_ekm(&p) && push_uses_cc_exit(&p) && push_uses_peer_id(&p));
    assert_false(push_uses_dyn_tls_crypt(&p));

    /* EKM client without cc-exit: key-derivation, then dyn-tls-crypt in protocol-flags */
    p.iv_proto = IV_PROTO_DATA_V2 | IV_PROTO_TLS_KEY_EXPORT | IV_PROTO_DYN_TLS_CRYPT;
    p.dyn_tls_crypt = true;
    p.has_iv_mtu = false;
    assert_int_equal(push_client_options(&p, opts, 16, &n), 0);
    assert_int_equal(n, 5);
    assert_string_equal(opts[1], "peer-id 0");
    assert_string_equal(opts[2], "cipher AES-256-GCM");
    assert_string_equal(opts[3], "key-derivation tls-ekm");
    assert_string_equal(opts[4], "protocol-flags dyn-tls-crypt");

    /* server without EKM: cc-exit alone, keys from the PRF */
    p.iv_proto = 990;
    p.use_ekm = false;
    p.dyn_tls_crypt = false;
    assert_int_equal(push_client_options(&p, opts, 16, &n), 0);
    assert_string_equal(opts[n - 1], "protocol-flags cc-exit");
    assert_false(push_uses_ekm(&p));

    /* server without cc-exit but with EKM: the older word */
    p.use_ekm = true;
    p.cc_exit = false;
    assert_int_equal(push_client_options(&p, opts, 16, &n), 0);
    assert_string_equal(opts[n - 1], "key-derivation tls-ekm");

    /* an old client (no IV_PROTO, no NCP): only ifconfig; net30 style remote end */
    memset(&p, 0, sizeof(p));
    p.cipher = "AES-256-CBC";
    p.use_ekm = p.cc_exit = p.dyn_tls_crypt = true;
    p.tun_mtu = 1500;
    p.ifconfig_local = 0xc6130006;   /* 198.19.0.6 */
    p.ifconfig_netmask = 0xc6130005; /* 198.19.0.5 */
    assert_int_equal(push_client_options(&p, opts, 16, &n), 0);
    assert_int_equal(n, 1);
    assert_string_equal(opts[0], "ifconfig 198.19.0.6 198.19.0.5");

    /* auth-token after peer-id, before cipher */
    params_for(client_2614, "AES-256-GCM", &p, cipher);
    p.peer_id = 0xfffffe;
    p.auth_token = "SESS_ID_AT_abc";
    assert_int_equal(push_client_options(&p, opts, 16, &n), 0);
    assert_string_equal(opts[1], "peer-id 16777214");
    assert_string_equal(opts[2], "auth-token SESS_ID_AT_abc");
    assert_string_equal(opts[3], "cipher AES-256-GCM");
    /* override-username (2.7): auth-token-user right after auth-token, only with a token */
    p.auth_token_user = "YWxpY2U="; /* base64 of "alice" */
    assert_int_equal(push_client_options(&p, opts, 16, &n), 0);
    assert_string_equal(opts[2], "auth-token SESS_ID_AT_abc");
    assert_string_equal(opts[3], "auth-token-user YWxpY2U=");
    assert_string_equal(opts[4], "cipher AES-256-GCM");
    p.auth_token = NULL;
    assert_int_equal(push_client_options(&p, opts, 16, &n), 0);
    assert_string_equal(opts[2], "cipher AES-256-GCM");
    p.auth_token = "SESS_ID_AT_abc";
    p.auth_token_user = NULL;

    /* errors */
    assert_int_equal(push_client_options(&p, opts, 3, &n), -PE_NOSPACE);
    p.auth_token = "a,b";
    assert_int_equal(push_client_options(&p, opts, 16, &n), -PE_MALFORMED);
    p.auth_token = NULL;
    p.peer_id = 0xffffff;
    assert_int_equal(push_client_options(&p, opts, 16, &n), -PE_MALFORMED);
}

static void ifconfig_ipv6_matches_inet_ntop(void **state)
{
    static const char *const addrs[] = {"2001:db8::1000",
                                        "::",
                                        "::1",
                                        "1::",
                                        "2001:db8:0:0:1:0:0:1",
                                        "2001:0:0:1:0:0:0:1",
                                        "2001:db8:1:2:3:4:5:6",
                                        "fe80::1:0:0:0",
                                        "::ffff:198.19.0.1",
                                        "::198.19.0.1",
                                        "0:0:0:0:0:1:0:0",
                                        "2001:db8::ffff:c613:1"};
    char opts[4][256];
    char want[256], a_txt[INET6_ADDRSTRLEN], r_txt[INET6_ADDRSTRLEN];
    size_t n;

    (void)state;
    for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
        struct push_client_params p;
        memset(&p, 0, sizeof(p));
        p.has_ifconfig_ipv6 = true;
        assert_int_equal(inet_pton(AF_INET6, addrs[i], p.ifconfig_ipv6_local), 1);
        assert_int_equal(inet_pton(AF_INET6, "2001:db8::1", p.ifconfig_ipv6_remote), 1);
        p.ifconfig_ipv6_netbits = 64;
        p.ifconfig_local = 0xc6130002;
        p.ifconfig_netmask = 0xffffff00;
        assert_int_equal(push_client_options(&p, opts, 4, &n), 0);
        assert_int_equal(n, 2);
        inet_ntop(AF_INET6, p.ifconfig_ipv6_local, a_txt, sizeof(a_txt));
        inet_ntop(AF_INET6, p.ifconfig_ipv6_remote, r_txt, sizeof(r_txt));
        snprintf(want, sizeof(want), "ifconfig-ipv6 %s/64 %s", a_txt, r_txt);
        assert_string_equal(opts[0], want);
        assert_string_equal(opts[1], "ifconfig 198.19.0.2 255.255.255.0");
    }
}

static void classify(void **state)
{
    static const struct {
        const char *msg;
        size_t len; /* 0: strlen */
        enum control_msg want;
    } cases[] = {
        {"PUSH_REQUEST", 0, CONTROL_MSG_PUSH_REQUEST},
        {"PUSH_REQUEST\0", 13, CONTROL_MSG_PUSH_REQUEST},
        {"PUSH_REQUEST\r\n", 0, CONTROL_MSG_PUSH_REQUEST},
        {"PUSH_REPLY,ping 10", 0, CONTROL_MSG_PUSH_REPLY},
        {"PUSH_UPDATE,ping 10", 0, CONTROL_MSG_UNKNOWN},
        {"push_request", 0, CONTROL_MSG_UNKNOWN},
        {"EXIT", 0, CONTROL_MSG_EXIT},
        {"EXITING", 0, CONTROL_MSG_EXIT},
        {"CR_RESPONSE,dGVzdA==", 0, CONTROL_MSG_CR_RESPONSE},
        {"AUTH_FAILED,x", 0, CONTROL_MSG_AUTH_FAILED},
        {"AUTH_PENDING,timeout 60", 0, CONTROL_MSG_AUTH_PENDING},
        {"INFO_PRE,WEB_AUTH::https://x", 0, CONTROL_MSG_INFO_PRE},
        {"INFO,hello", 0, CONTROL_MSG_INFO},
        {"RESTART,[N]", 0, CONTROL_MSG_RESTART},
        {"HALT", 0, CONTROL_MSG_HALT},
        {"", 0, CONTROL_MSG_UNKNOWN},
        {"ACC,x", 0, CONTROL_MSG_UNKNOWN},
        {"PUSH_REQUEST\x01", 0, CONTROL_MSG_INVALID},
        {"PUSH\nREQUEST", 0, CONTROL_MSG_INVALID},
        {"EXIT\0garbage\x01", 13, CONTROL_MSG_EXIT},
        {"PUSH_REQ", 0, CONTROL_MSG_UNKNOWN},
        {"INFO,caf\xc3\xa9", 0, CONTROL_MSG_INFO},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t len = cases[i].len ? cases[i].len : strlen(cases[i].msg);
        enum control_msg got = control_msg_classify(cases[i].msg, len);
        if (got != cases[i].want) {
            fail_msg("case %zu '%s': got %d want %d", i, cases[i].msg, got, cases[i].want);
        }
    }
}

static void split_plaintext(void **state)
{
    static const uint8_t buf[] = "PUSH_REQUEST\0EXIT\r\n\0BAD\x02\0tail-without-nul";
    size_t len = sizeof(buf) - 1, off = 0, consumed, mlen;
    char out[CONTROL_MSG_MAX];

    (void)state;
    assert_int_equal(control_msg_next(buf, len, &consumed, out, sizeof(out), &mlen), 0);
    assert_string_equal(out, "PUSH_REQUEST");
    assert_int_equal(mlen, 12);
    assert_int_equal(consumed, 13);
    off += consumed;
    assert_int_equal(control_msg_next(buf + off, len - off, &consumed, out, sizeof(out), &mlen), 0);
    assert_string_equal(out, "EXIT");
    off += consumed;
    assert_int_equal(control_msg_next(buf + off, len - off, &consumed, out, sizeof(out), &mlen),
                     -PE_MALFORMED);
    assert_int_equal(consumed, 5);
    off += consumed;
    assert_int_equal(control_msg_next(buf + off, len - off, &consumed, out, sizeof(out), &mlen),
                     -PE_SHORT);
    assert_int_equal(off + consumed, len);
    assert_int_equal(control_msg_next(buf, len, &consumed, out, 12, &mlen), -PE_NOSPACE);
    assert_int_equal(consumed, 13);
}

static void assert_clean(const char *msg, size_t len)
{
    assert_int_equal(strlen(msg), len);
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)msg[i];
        assert_true(ch >= 0x20 && ch != 0x7f);
    }
    assert_int_equal(control_msg_classify(msg, len), CONTROL_MSG_AUTH_FAILED);
}

static void auth_failed_messages(void **state)
{
    static char reason[3000], out[2048];
    size_t len;

    (void)state;
    assert_int_equal(push_auth_failed_build(NULL, out, sizeof(out), &len), 0);
    assert_string_equal(out, "AUTH_FAILED");
    assert_int_equal(push_auth_failed_build("", out, sizeof(out), &len), 0);
    assert_string_equal(out, "AUTH_FAILED");
    assert_int_equal(push_auth_failed_build("Data channel cipher negotiation failed (no shared "
                                            "cipher)",
                                            out, sizeof(out), &len),
                     0);
    /* as the 2.6.14 server sent it */
    assert_string_equal(out,
                        "AUTH_FAILED,Data channel cipher negotiation failed (no shared cipher)");
    assert_clean(out, len);
    assert_int_equal(push_auth_failed_build("bad password\r\n", out, sizeof(out), &len), 0);
    assert_string_equal(out, "AUTH_FAILED,bad password");
    assert_int_equal(push_auth_failed_build("a\tb\nc\x1b\x7f \n", out, sizeof(out), &len), 0);
    assert_string_equal(out, "AUTH_FAILED,a b c  ");
    assert_clean(out, len);
    assert_int_equal(push_auth_failed_build("TEMP[backoff 30]:busy", out, sizeof(out), &len), 0);
    assert_string_equal(out, "AUTH_FAILED,TEMP[backoff 30]:busy");

    /* capped at 1023 characters like 2.6, never inside a UTF-8 sequence */
    memset(reason, 'x', sizeof(reason) - 1);
    assert_int_equal(push_auth_failed_build(reason, out, sizeof(out), &len), 0);
    assert_int_equal(len, PUSH_REPLY_MAX - 1);
    assert_clean(out, len);
    /* two-byte sequences at odd and, after one ASCII byte, at even offsets */
    for (size_t i = 1005; i < 1013; i += 2) {
        reason[i] = (char)0xc3;
        reason[i + 1] = (char)0xa9;
    }
    for (size_t i = 1014; i < 1022; i += 2) {
        reason[i] = (char)0xc3;
        reason[i + 1] = (char)0xa9;
    }
    for (size_t cap = 12; cap < 1030; cap++) {
        assert_int_equal(push_auth_failed_build(reason, out, cap, &len), 0);
        assert_true(len < cap);
        assert_true(len <= PUSH_REPLY_MAX - 1);
        assert_clean(out, len);
        unsigned char last = (unsigned char)out[len - 1];
        assert_true(last != 0xc3); /* no dangling lead byte */
        if (last == 0xa9) {
            assert_int_equal((unsigned char)out[len - 2], 0xc3);
        }
    }
    assert_int_equal(push_auth_failed_build("x", out, 11, &len), -PE_NOSPACE);
    assert_int_equal(push_auth_failed_build("x", out, 12, &len), 0);
    assert_string_equal(out, "AUTH_FAILED");
}

static void auth_pending(void **state)
{
    char out[32];
    size_t len;

    (void)state;
    assert_int_equal(push_auth_pending_build(990, 4294967295u, out, sizeof(out), &len), 0);
    assert_string_equal(out, "AUTH_PENDING,timeout 4294967295");
    assert_int_equal(len, strlen(out));
    assert_int_equal(push_auth_pending_build(IV_PROTO_DATA_V2, 60, out, sizeof(out), &len), 0);
    assert_string_equal(out, "AUTH_PENDING");
    assert_int_equal(push_auth_pending_build(990, 60, out, 12, &len), -PE_NOSPACE);
}

static void compress_migrate(void **state)
{
    struct peer_info pi;
    static const char with_comp[] = "V4,dev-type tun,link-mtu 1542,tun-mtu 1500,proto UDPv4,"
                                    "comp-lzo,auth SHA1,keysize 128,key-method 2,tls-client";
    static const char without[] = "V4,dev-type tun,link-mtu 1541,tun-mtu 1500,proto UDPv4,"
                                  "auth SHA1,keysize 128,key-method 2,tls-client";

    (void)state;
    assert_int_equal(peer_info_parse(client_2614, strlen(client_2614), &pi), 0);
    assert_string_equal(push_compress_migrate(&pi, with_comp), "compress stub-v2");
    assert_null(push_compress_migrate(&pi, without));
    assert_int_equal(peer_info_parse("IV_LZO=1\n", 9, &pi), 0);
    assert_string_equal(push_compress_migrate(&pi, with_comp), "comp-lzo no");
    assert_string_equal(push_compress_migrate(NULL, with_comp), "comp-lzo no");
    assert_null(push_compress_migrate(NULL, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(baseline_2614),
        cmocka_unit_test(baseline_2614_other_cipher),
        cmocka_unit_test(routes_150_split_like_2614),
        cmocka_unit_test(split_boundary),
        cmocka_unit_test(bad_options_rejected_before_emitting),
        cmocka_unit_test(empty_and_emit_errors),
        cmocka_unit_test(client_options_variants),
        cmocka_unit_test(ifconfig_ipv6_matches_inet_ntop),
        cmocka_unit_test(classify),
        cmocka_unit_test(split_plaintext),
        cmocka_unit_test(auth_failed_messages),
        cmocka_unit_test(auth_pending),
        cmocka_unit_test(compress_migrate),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
