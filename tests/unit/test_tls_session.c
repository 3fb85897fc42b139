/* tests/unit/test_tls_session.c: an established TLS session gives its record buffers back while
 * it is idle (tls_session_release_buffers, proto/tls_session.c), and every record after that
 * still decrypts and verifies: the incoming record counter kept in the buffer survives, the
 * outgoing one too, in both directions, with records from a few bytes to the largest a TLS
 * record holds, released between every one of them. The peer certificate is given back on
 * request too (tls_session_release_peer_cert). Handshakes run in memory between a
 * tls_server_conf and a tls_client_conf, on the certificates of tests/unit/data/pk/ (see
 * test_pk_libcrypto.c).
 */
#include "tls_pair.h"

/* Configurations for server and client certificates named kind ("ec" or "rsa"), and a finished
 * handshake between them. */
static void connect_ends(struct tls_pair *e, const char *kind)
{
    char name[32];

    memset(e, 0, sizeof(*e));
    snprintf(name, sizeof(name), "server-%s", kind);
    tls_pair_conf_named(&e->srv, true, name);
    snprintf(name, sizeof(name), "client-%s", kind);
    tls_pair_conf_named(&e->cli, false, name);
    tls_pair_run(e);
    tls_pair_assert_connected(e);
}

static bool holds_buffers(const struct tls_session *s)
{
    return s->ssl.in_buf != NULL || s->ssl.out_buf != NULL;
}

/* len bytes (a pattern that differs with seed) from one end to the other, read back whole. */
static void send_message(struct tls_session *from, struct tls_session *to, size_t len,
                         unsigned seed)
{
    static uint8_t msg[16384], got[16384];
    size_t have = 0;

    assert_true(len <= sizeof(msg));
    for (size_t i = 0; i < len; i++) {
        msg[i] = (uint8_t)(i * 131u + seed);
    }
    assert_int_equal(tls_session_write(from, msg, len), 0);
    tls_pair_pass(from, to);
    while (have < len) {
        size_t n = 0;

        assert_int_equal(tls_session_read(to, got + have, sizeof(got) - have, &n), 0);
        assert_true(n > 0);
        have += n;
    }
    assert_memory_equal(got, msg, len);
}

/* Records of every size class, released before each one and after, both ways. */
static void records_after_release(const char *kind)
{
    static const size_t sizes[] = {1, 37, 1000, 4000, 5000, 9000, 16384, 200, 16000, 3};
    struct tls_pair e;

    connect_ends(&e, kind);
    tls_session_release_buffers(&e.s);
    tls_session_release_buffers(&e.c);
    assert_false(holds_buffers(&e.s));
    assert_false(holds_buffers(&e.c));
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        send_message(&e.c, &e.s, sizes[i], (unsigned)i); /* a control message in */
        tls_session_release_buffers(&e.s);
        tls_session_release_buffers(&e.c);
        assert_false(holds_buffers(&e.s));
        send_message(&e.s, &e.c, sizes[sizes[i] == 1 ? 6 : i], (unsigned)i + 100); /* and out */
        tls_session_release_buffers(&e.s);
        tls_session_release_buffers(&e.c);
        assert_false(holds_buffers(&e.s));
        assert_false(holds_buffers(&e.c));
    }
    /* several records in a row on buffers taken back once */
    for (unsigned i = 0; i < 5; i++) {
        send_message(&e.s, &e.c, 2000 + i, i);
    }
    tls_session_release_buffers(&e.s);
    for (unsigned i = 0; i < 5; i++) {
        send_message(&e.c, &e.s, 3000 + i, i);
        send_message(&e.s, &e.c, 100 + i, i);
    }
    tls_pair_clear(&e);
}

static void ec_records_after_release(void **state)
{
    (void)state;
    records_after_release("ec");
}

static void rsa_records_after_release(void **state)
{
    (void)state;
    records_after_release("rsa");
}

/* tls_buf_hooks that keep the blocks given back and hand them out again, checking that each
 * one comes back all zero (nothing of a record left for the next session that takes it). */
struct kept_blocks {
    void *block[8];
    size_t len[8];
    size_t n, n_given, n_taken;
};

static void *hook_take(void *ctx, size_t len)
{
    struct kept_blocks *k = ctx;

    k->n_taken++;
    for (size_t i = k->n; i-- > 0;) {
        if (k->len[i] == len) {
            void *b = k->block[i];

            k->block[i] = k->block[k->n - 1];
            k->len[i] = k->len[k->n - 1];
            k->n--;
            return b;
        }
    }
    return calloc(1, len);
}

static void hook_give(void *ctx, void *block, size_t len)
{
    struct kept_blocks *k = ctx;
    const uint8_t *b = block;

    k->n_given++;
    assert_true(len == tls_session_buf_len(true) || len == tls_session_buf_len(false));
    for (size_t i = 0; i < len; i++) {
        if (b[i] != 0) {
            print_error("byte %zu of a %zu-byte block given back is not zero\n", i, len);
            fail();
        }
    }
    if (k->n < sizeof(k->block) / sizeof(k->block[0])) {
        k->block[k->n] = block;
        k->len[k->n++] = len;
    } else {
        free(block);
    }
}

/* The server's buffers go through hooks: released buffers (the handshake's, then ones taken
 * back) are given back all zero after records of every size both ways, and the records still
 * pass when the next ones are taken from what was given; the session's end gives its buffers
 * back too. */
static void records_through_hooks(void **state)
{
    static const size_t sizes[] = {1, 5000, 16384, 37, 9000, 200};
    struct kept_blocks k = {0};
    const struct tls_buf_hooks hooks = {hook_take, hook_give, &k};
    struct tls_pair e;

    (void)state;
    connect_ends(&e, "ec");
    e.s.buf_hooks = &hooks;
    tls_session_release_buffers(&e.s);
    assert_int_equal(k.n_given, 2);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        send_message(&e.c, &e.s, sizes[i], (unsigned)i);
        tls_session_release_buffers(&e.s);
        send_message(&e.s, &e.c, sizes[(i + 1) % 6], (unsigned)i + 50);
        tls_session_release_buffers(&e.s);
    }
    assert_int_equal(k.n_taken, 24);
    assert_int_equal(k.n_given, 26);
    send_message(&e.c, &e.s, 3000, 7); /* the session ends holding buffers (taken back) */
    assert_int_equal(k.n_taken, 26);
    tls_pair_clear(&e);
    assert_int_equal(k.n_given, 28);
    while (k.n > 0) {
        free(k.block[--k.n]);
    }
}

/* Data not yet read out of a record (a read into a short buffer) keeps the buffers: releasing
 * them then would lose it. The rest still arrives; then they go. */
static void pending_data_keeps_buffers(void **state)
{
    static uint8_t msg[3000], got[3000];
    struct tls_pair e;
    size_t n = 0, have;

    (void)state;
    connect_ends(&e, "ec");
    for (size_t i = 0; i < sizeof(msg); i++) {
        msg[i] = (uint8_t)(i * 7u);
    }
    assert_int_equal(tls_session_write(&e.c, msg, sizeof(msg)), 0);
    tls_pair_pass(&e.c, &e.s);
    assert_int_equal(tls_session_read(&e.s, got, 100, &n), 0);
    assert_int_equal(n, 100);
    tls_session_release_buffers(&e.s);
    assert_true(holds_buffers(&e.s));
    for (have = n; have < sizeof(msg); have += n) {
        assert_int_equal(tls_session_read(&e.s, got + have, sizeof(got) - have, &n), 0);
        assert_true(n > 0);
    }
    assert_memory_equal(got, msg, sizeof(msg));
    tls_session_release_buffers(&e.s);
    assert_false(holds_buffers(&e.s));
    send_message(&e.s, &e.c, 500, 1);
    tls_pair_clear(&e);
}

/* Ciphertext that arrived but was not read yet stays in the session's own queue, not in the
 * record buffers: releasing them loses nothing, and the record decrypts afterwards. */
static void fed_but_unread(void **state)
{
    static const uint8_t msg[] = "PUSH_REQUEST";
    uint8_t got[64];
    struct tls_pair e;
    size_t n = 0;

    (void)state;
    connect_ends(&e, "ec");
    tls_session_release_buffers(&e.s);
    assert_int_equal(tls_session_write(&e.c, msg, sizeof(msg)), 0);
    tls_pair_pass(&e.c, &e.s);
    tls_session_release_buffers(&e.s);
    assert_false(holds_buffers(&e.s));
    assert_int_equal(tls_session_read(&e.s, got, sizeof(got), &n), 0);
    assert_int_equal(n, sizeof(msg));
    assert_memory_equal(got, msg, sizeof(msg));
    tls_pair_clear(&e);
}

/* During the handshake nothing is released (its messages span records and steps). */
static void handshake_keeps_buffers(void **state)
{
    struct tls_server_conf srv, cli;
    struct tls_session s, c;
    char err[256];

    (void)state;
    tls_pair_conf_named(&srv, true, "server-ec");
    tls_pair_conf_named(&cli, false, "client-ec");
    assert_int_equal(tls_session_init(&s, &srv), 0);
    assert_int_equal(tls_session_init(&c, &cli), 0);
    assert_int_equal(tls_session_handshake(&c, err, sizeof(err)), -PE_WANT_IO);
    tls_pair_pass(&c, &s);
    assert_int_equal(tls_session_handshake(&s, err, sizeof(err)), -PE_WANT_IO);
    tls_session_release_buffers(&s);
    tls_session_release_buffers(&c);
    assert_true(holds_buffers(&s));
    assert_true(holds_buffers(&c));
    tls_session_clear(&s);
    tls_session_clear(&c);
    tls_server_conf_clear(&srv);
    tls_server_conf_clear(&cli);
}

/* A session freed while its buffers are released (the common case for an idle client). */
static void clear_after_release(void **state)
{
    struct tls_pair e;

    (void)state;
    connect_ends(&e, "ec");
    send_message(&e.c, &e.s, 700, 9);
    tls_session_release_buffers(&e.s);
    assert_false(holds_buffers(&e.s));
    tls_pair_clear(&e);
}

/* The peer certificate goes when asked, after the handshake only; records still pass. */
static void peer_cert_released(void **state)
{
    struct tls_server_conf srv, cli;
    struct tls_session s, c;
    struct tls_pair e;
    char cn[65], err[256];

    (void)state;
    connect_ends(&e, "rsa");
    assert_non_null(mbedtls_ssl_get_peer_cert(&e.s.ssl));
    assert_int_equal(tls_session_peer_cn(&e.s, cn, sizeof(cn)), 0);
    tls_session_release_peer_cert(&e.s);
    assert_null(mbedtls_ssl_get_peer_cert(&e.s.ssl));
    assert_int_equal(tls_session_peer_cn(&e.s, cn, sizeof(cn)), -PE_STATE);
    tls_session_release_peer_cert(&e.s); /* twice: nothing left to do */
    tls_session_release_buffers(&e.s);
    send_message(&e.c, &e.s, 1200, 3);
    send_message(&e.s, &e.c, 4100, 4);
    tls_pair_clear(&e);

    /* mid-handshake (the server has seen the client's first flight only): kept */
    tls_pair_conf_named(&srv, true, "server-ec");
    tls_pair_conf_named(&cli, false, "client-ec");
    assert_int_equal(tls_session_init(&s, &srv), 0);
    assert_int_equal(tls_session_init(&c, &cli), 0);
    assert_int_equal(tls_session_handshake(&c, err, sizeof(err)), -PE_WANT_IO);
    tls_pair_pass(&c, &s);
    assert_int_equal(tls_session_handshake(&s, err, sizeof(err)), -PE_WANT_IO);
    tls_pair_pass(&s, &c);
    assert_int_equal(tls_session_handshake(&c, err, sizeof(err)), -PE_WANT_IO);
    tls_pair_pass(&c, &s);
    tls_session_release_peer_cert(&c); /* the client has the server's certificate by now */
    assert_non_null(c.ssl.session_negotiate->peer_cert);
    tls_session_clear(&s);
    tls_session_clear(&c);
    tls_server_conf_clear(&srv);
    tls_server_conf_clear(&cli);
}

/* A client that offers DHE suites only, against an RSA server (no dh file: Mbed TLS's built-in
 * group), with or without `dh none`; the result of the handshake in e. */
static void dhe_only_client(struct tls_pair *e, bool dh_none)
{
    memset(e, 0, sizeof(*e));
    tls_pair_conf_named(&e->srv, true, "server-rsa");
    if (dh_none) {
        assert_int_equal(tls_server_conf_drop_dhe(&e->srv), 0);
    }
    tls_pair_conf_named(&e->cli, false, "client-rsa");
    assert_int_equal(tls_server_conf_set_ciphers(&e->cli, "TLS-DHE-RSA-WITH-AES-256-GCM-SHA384:"
                                                          "TLS-DHE-RSA-WITH-AES-128-GCM-SHA256"),
                     0);
    tls_pair_run(e);
}

/* openvpn 2.6 with `dh none` gives its TLS library no group and so never negotiates DHE: nor
 * does ovpnd, where Mbed TLS would have used its built-in group. Without `dh none` the same
 * client connects, so the refusal is the directive's doing. */
static void dh_none_refuses_dhe(void **state)
{
    struct tls_pair e;

    (void)state;
    dhe_only_client(&e, false);
    tls_pair_assert_connected(&e);
    tls_pair_clear(&e);

    dhe_only_client(&e, true);
    assert_int_not_equal(e.sret, 0);
    assert_int_not_equal(e.sret, -PE_WANT_IO);
    tls_pair_clear(&e);

    /* and a client offering ECDHE as well still connects with ECDHE */
    memset(&e, 0, sizeof(e));
    tls_pair_conf_named(&e.srv, true, "server-rsa");
    assert_int_equal(tls_server_conf_drop_dhe(&e.srv), 0);
    tls_pair_conf_named(&e.cli, false, "client-rsa");
    tls_pair_run(&e);
    tls_pair_assert_connected(&e);
    assert_non_null(strstr(mbedtls_ssl_get_ciphersuite(&e.s.ssl), "ECDHE"));
    tls_pair_clear(&e);
}

/* dh none with a tls-cipher of DHE suites only leaves nothing to offer: refused. */
static void dh_none_dhe_only_list(void **state)
{
    struct tls_pair e;

    (void)state;
    memset(&e, 0, sizeof(e));
    tls_pair_conf_named(&e.srv, true, "server-rsa");
    assert_int_equal(tls_server_conf_set_ciphers(&e.srv, "TLS-DHE-RSA-WITH-AES-256-GCM-SHA384"), 0);
    assert_int_equal(tls_server_conf_drop_dhe(&e.srv), -PE_MALFORMED);
    assert_int_equal(tls_server_conf_set_ciphers(&e.srv, "TLS-DHE-RSA-WITH-AES-256-GCM-SHA384:"
                                                         "ECDHE-RSA-AES128-GCM-SHA256"),
                     0);
    assert_int_equal(tls_server_conf_drop_dhe(&e.srv), 0);
    assert_int_equal(e.srv.suites_no_dhe[0],
                     mbedtls_ssl_get_ciphersuite_id("TLS-ECDHE-RSA-WITH-AES-128-GCM-SHA256"));
    assert_int_equal(e.srv.suites_no_dhe[1], 0);
    tls_server_conf_clear(&e.srv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ec_records_after_release), cmocka_unit_test(rsa_records_after_release),
        cmocka_unit_test(records_through_hooks),    cmocka_unit_test(pending_data_keeps_buffers),
        cmocka_unit_test(fed_but_unread),           cmocka_unit_test(handshake_keeps_buffers),
        cmocka_unit_test(clear_after_release),      cmocka_unit_test(peer_cert_released),
        cmocka_unit_test(dh_none_refuses_dhe),      cmocka_unit_test(dh_none_dhe_only_list),
    };

    return cmocka_run_group_tests(tests, tls_pair_setup, tls_pair_teardown);
}
