/* tests/unit/test_session_table.c: the acceptor's session table (server/control/session.c): a
 * control packet finds the session of its sender's address and port, and with its session id
 * the right one of two sessions there; dead sessions are not found; unlinking keeps the other
 * sessions of a chain; a session's end runs every feature's cleanup in order (close when it
 * starts closing, free before it is freed) and takes it out of the table. Which sessions are the
 * same client (acc_same_client) decides what a new session replaces.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "server/control/acceptor_internal.h"

#define TABLE_SIZE 4 /* small: every chain holds several sessions */

static union udp_addr addr4(const char *ip, uint16_t port)
{
    union udp_addr a;

    memset(&a, 0, sizeof(a));
    a.in4.sin_family = AF_INET;
    a.in4.sin_port = htons(port);
    assert_int_equal(inet_pton(AF_INET, ip, &a.in4.sin_addr), 1);
    return a;
}

static union udp_addr addr6(const char *ip, uint16_t port)
{
    union udp_addr a;

    memset(&a, 0, sizeof(a));
    a.in6.sin6_family = AF_INET6;
    a.in6.sin6_port = htons(port);
    assert_int_equal(inet_pton(AF_INET6, ip, &a.in6.sin6_addr), 1);
    return a;
}

static struct ctl_session *session(const union udp_addr *remote, uint8_t sid_byte)
{
    struct ctl_session *cs = calloc(1, sizeof(*cs));

    assert_non_null(cs);
    cs->remote = *remote;
    memset(cs->peer_sid, sid_byte, SESSION_ID_LEN);
    return cs;
}

static struct acceptor *acceptor(void)
{
    struct acceptor *a = calloc(1, sizeof(*a));

    assert_non_null(a);
    a->sessions.table_size = TABLE_SIZE;
    a->sessions.table = calloc(TABLE_SIZE, sizeof(*a->sessions.table));
    a->sessions.by_cid = calloc(TABLE_SIZE, sizeof(*a->sessions.by_cid)); /* as acceptor_new */
    assert_non_null(a->sessions.table);
    assert_non_null(a->sessions.by_cid);
    assert_int_equal(uv_loop_init(&a->loop), 0);
    return a;
}

static void acceptor_done(struct acceptor *a)
{
    assert_int_equal(uv_loop_close(&a->loop), 0);
    free(a->sessions.table);
    free(a->sessions.by_cid);
    free(a);
}

static void find_by_address_and_session_id(void **state)
{
    struct acceptor *a = acceptor();
    union udp_addr x = addr4("198.18.0.2", 40000), x_port = addr4("198.18.0.2", 40001),
                   y = addr6("2001:db8::2", 40000), none = addr4("198.18.0.9", 40000);
    struct ctl_session *s[8];
    uint8_t sid[SESSION_ID_LEN];

    (void)state;
    s[0] = session(&x, 1);
    s[1] = session(&x_port, 2);
    s[2] = session(&y, 3);
    for (int i = 3; i < 8; i++) { /* fill every chain */
        char ip[32];

        snprintf(ip, sizeof(ip), "198.18.0.%d", 100 + i);
        union udp_addr o = addr4(ip, 1194);

        s[i] = session(&o, (uint8_t)i);
    }
    for (int i = 0; i < 8; i++) {
        acc_table_insert(a, s[i]);
    }
    assert_int_equal(a->sessions.n_sessions, 8);
    assert_ptr_equal(acc_table_find(a, &x, 0), s[0]);
    assert_ptr_equal(acc_table_find(a, &x_port, 0), s[1]); /* another port is another flow */
    assert_ptr_equal(acc_table_find(a, &y, 0), s[2]);
    assert_null(acc_table_find(a, &none, 0));

    /* the same address and port starts a second session: the session id tells them apart,
     * an address lookup finds the newest */
    struct ctl_session *again = session(&x, 9);

    acc_table_insert(a, again);
    assert_ptr_equal(acc_table_find(a, &x, 0), again);
    memset(sid, 1, sizeof(sid));
    assert_ptr_equal(acc_table_find_sid(a, &x, 0, sid), s[0]);
    memset(sid, 9, sizeof(sid));
    assert_ptr_equal(acc_table_find_sid(a, &x, 0, sid), again);
    assert_null(acc_table_find_sid(a, &x_port, 0, sid)); /* the right id from another port */

    /* a dead session is not found any more, neither way */
    again->is_dead = true;
    assert_ptr_equal(acc_table_find(a, &x, 0), s[0]);
    assert_null(acc_table_find_sid(a, &x, 0, sid));

    /* unlinking from the middle of a chain keeps the rest of it */
    acc_table_unlink(a, s[0]);
    assert_int_equal(a->sessions.n_sessions, 8);
    assert_null(acc_table_find(a, &x, 0));
    for (int i = 1; i < 8; i++) {
        assert_ptr_equal(acc_table_find(a, &s[i]->remote, 0), s[i]);
    }
    acc_table_unlink(a, s[0]); /* not in the table: nothing changes */
    assert_int_equal(a->sessions.n_sessions, 8);
    acc_table_unlink(a, again);
    for (int i = 1; i < 8; i++) {
        acc_table_unlink(a, s[i]);
    }
    assert_int_equal(a->sessions.n_sessions, 0);
    for (size_t i = 0; i < TABLE_SIZE; i++) {
        assert_null(a->sessions.table[i]);
    }
    for (int i = 0; i < 8; i++) {
        free(s[i]);
    }
    free(again);
    acceptor_done(a);
}

/* The order features' cleanups ran in, as letters. */
static char trace[16];

static void close_a(struct acceptor *a, struct ctl_session *cs)
{
    (void)a;
    assert_int_not_equal(cs->state, CS_CLOSING); /* before the state changes */
    strcat(trace, "A");
}

static void close_b(struct acceptor *a, struct ctl_session *cs)
{
    (void)a;
    (void)cs;
    strcat(trace, "B");
}

static void free_a(struct acceptor *a, struct ctl_session *cs)
{
    /* still alive, already out of the table */
    assert_null(acc_table_find(a, &cs->remote, 0));
    strcat(trace, "a");
}

static void free_c(struct acceptor *a, struct ctl_session *cs)
{
    (void)a;
    (void)cs;
    strcat(trace, "c");
}

static void end_runs_every_cleanup_in_order(void **state)
{
    static const struct acc_cleanup cleanups[] = {
        {close_a, free_a},
        {close_b, NULL},
        {NULL, free_c},
    };
    struct acceptor *a = acceptor();
    union udp_addr x = addr4("198.18.0.2", 40000);
    struct ctl_session *cs = session(&x, 1);

    (void)state;
    a->cleanups = cleanups;
    a->n_cleanups = sizeof(cleanups) / sizeof(cleanups[0]);
    acc_table_insert(a, cs);
    trace[0] = '\0';
    acc_cs_close(a, cs, 5000);
    assert_string_equal(trace, "AB");
    assert_int_equal(cs->state, CS_CLOSING);
    assert_true(cs->close_at_ms >= 5000);
    acc_cs_close(a, cs, 5000); /* closing already: nothing runs twice */
    assert_string_equal(trace, "AB");
    acc_cs_free(a, cs); /* frees cs */
    assert_string_equal(trace, "ABac");
    assert_int_equal(a->sessions.n_sessions, 0);
    acceptor_done(a);
}

static void same_client(void **state)
{
    struct ctl_session x, y;

    (void)state;
    memset(&x, 0, sizeof(x));
    memset(&y, 0, sizeof(y));
    x.client.has_cn = y.client.has_cn = true;
    strcpy(x.client.cn, "alice");
    strcpy(y.client.cn, "alice");
    memset(x.client.cert_sha256, 7, 32);
    memset(y.client.cert_sha256, 7, 32);
    assert_true(acc_same_client(&x, &y));
    y.client.cert_sha256[0] = 8; /* another certificate with the same name: another device */
    assert_false(acc_same_client(&x, &y));
    y.client.cert_sha256[0] = 7;
    strcpy(y.client.cn, "bob");
    assert_false(acc_same_client(&x, &y));
    strcpy(y.client.cn, "alice");
    x.client.username = "alice";
    assert_false(acc_same_client(&x, &y)); /* a username checked on one side only */
    y.client.username = "alice";
    assert_true(acc_same_client(&x, &y));
    y.client.username = "mallory";
    assert_false(acc_same_client(&x, &y));
    /* no certificate and no name: only the same non-empty username */
    memset(&x, 0, sizeof(x));
    memset(&y, 0, sizeof(y));
    assert_false(acc_same_client(&x, &y));
    x.client.username = y.client.username = "carol";
    assert_true(acc_same_client(&x, &y));
    x.client.username = y.client.username = "";
    assert_false(acc_same_client(&x, &y));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(find_by_address_and_session_id),
        cmocka_unit_test(end_runs_every_cleanup_in_order),
        cmocka_unit_test(same_client),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
