/* tests/unit/test_drain.c: draining (`ovpnd-drain on`, for taking a node of a cluster out of
 * service): a new client's hard reset and the cookie echo that would create its session are not
 * answered (server/control/acceptor_decide.h), the packets of existing sessions still go to them,
 * and the metrics endpoint's /health says 503 "draining" (server/ops/metrics.h metrics_health)
 * with ovpnd_draining 1. The server run is in tests/netns/test_metrics.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "server/control/acceptor_decide.h"
#include "server/ops/metrics.h"

static struct control_packet reset_packet(void)
{
    struct control_packet pkt;

    memset(&pkt, 0, sizeof(pkt));
    pkt.opcode = P_CONTROL_HARD_RESET_CLIENT_V2;
    pkt.has_message_id = true;
    memset(pkt.session_id, 0x11, sizeof(pkt.session_id));
    return pkt;
}

static void reset_not_answered(void **state)
{
    struct control_packet pkt = reset_packet();
    struct acceptor_control_facts f = {.pkt = &pkt, .max_clients = 10};

    (void)state;
    assert_int_equal(acceptor_decide_control(&f), ACCEPTOR_CONTROL_ANSWER_RESET);
    f.is_draining = true;
    assert_int_equal(acceptor_decide_control(&f), ACCEPTOR_CONTROL_DROP_DRAINING);
    /* a client that restarts from an address that has a session is new as well */
    f.has_session_at_addr = true;
    assert_int_equal(acceptor_decide_control(&f), ACCEPTOR_CONTROL_DROP_DRAINING);
    /* stopping wins: nothing at all */
    f.is_stopping = true;
    assert_int_equal(acceptor_decide_control(&f), ACCEPTOR_CONTROL_IGNORE);
}

static void cookie_echo_not_created(void **state)
{
    struct control_packet pkt = reset_packet();
    struct acceptor_control_facts f = {.pkt = &pkt, .max_clients = 10};

    (void)state;
    pkt.opcode = P_CONTROL_V1;
    pkt.acks.n_acks = 1;
    f.cookie = ACCEPTOR_COOKIE_VALID;
    assert_int_equal(acceptor_decide_control(&f), ACCEPTOR_CONTROL_CREATE);
    f.is_draining = true;
    assert_int_equal(acceptor_decide_control(&f), ACCEPTOR_CONTROL_DROP_DRAINING);
    /* junk still costs no HMAC while draining */
    f.cookie = ACCEPTOR_COOKIE_UNCHECKED;
    assert_int_equal(acceptor_decide_control(&f), ACCEPTOR_CONTROL_CHECK_COOKIE);
}

static void sessions_go_on(void **state)
{
    struct control_packet pkt = reset_packet();
    struct packet_id_rx rx;
    struct acceptor_control_facts f = {.pkt = &pkt, .max_clients = 10, .is_draining = true};

    (void)state;
    packet_id_rx_init(&rx, 64);
    f.session_wrap_rx = &rx; /* a packet of an existing session: renegotiations included */
    pkt.opcode = P_CONTROL_SOFT_RESET_V1;
    pkt.key_id = 1;
    assert_int_equal(acceptor_decide_control(&f), ACCEPTOR_CONTROL_SESSION);
    pkt.opcode = P_CONTROL_V1;
    assert_int_equal(acceptor_decide_control(&f), ACCEPTOR_CONTROL_SESSION);
}

static void health_answers(void **state)
{
    struct metrics_snapshot snap;
    const char *body = NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *out;

    (void)state;
    memset(&snap, 0, sizeof(snap));
    assert_int_equal(metrics_health(&snap, &body), METRICS_HTTP_UNAVAILABLE);
    assert_string_equal(body, "not ready\n"); /* management-hold not released yet */
    snap.is_ready = true;
    assert_int_equal(metrics_health(&snap, &body), METRICS_HTTP_OK);
    assert_string_equal(body, "serving\n");
    snap.is_draining = true;
    assert_int_equal(metrics_health(&snap, &body), METRICS_HTTP_UNAVAILABLE);
    assert_string_equal(body, "draining\n");

    out = open_memstream(&text, &len);
    assert_non_null(out);
    assert_int_equal(metrics_render(out, &snap, NULL, 0, false, 1700000000), 0);
    assert_int_equal(fclose(out), 0);
    assert_non_null(strstr(text, "\n# TYPE ovpnd_draining gauge\novpnd_draining 1\n"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reset_not_answered),
        cmocka_unit_test(cookie_echo_not_created),
        cmocka_unit_test(sessions_go_on),
        cmocka_unit_test(health_answers),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
