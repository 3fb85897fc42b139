/* tests/fuzz/fuzz_acceptor_decide.c: the acceptor's packet decisions
 * (server/control/acceptor_decide.h) driven by sequences of datagrams and events against a model,
 * under a coverage-guided fuzzer.
 *
 * Four source addresses and four client session ids; a model session table run the way
 * receive.c acc_handle_datagram runs it (the same lookup, the same decisions, the cookie checked
 * when the decision asks for it), with real cookies (HMAC-SHA256 under a fixed key). Input: 3
 * header bytes (hand-window, max-clients, tls-auth on or off), then events of 4 bytes, the
 * first naming the event:
 *   0 a client reset from address a with session id s, maybe malformed
 *   1 a P_CONTROL_V1 or P_ACK_V1 from address a with session id s echoing an earlier cookie
 *     (possibly one sent to another address or session id), a forged one, or nothing
 *   2 a packet of an existing session, with a wrap packet_id
 *   3 the clock moves on; 4 the server starts or stops stopping
 *   5 a session authenticates as client c, with or without a certificate; 6 a session closes
 *   7 a worker asks whether a session's peer may float to address a
 *   8 a datagram's first look (acceptor_decide_dgram) with 1 to 4 workers
 *
 * Checked, beyond "does not crash": a session is created only for a P_CONTROL_V1/P_ACK_V1 with
 * key_id 0 that echoes the cookie we sent to that very address and session id less than 1.5
 * hand-windows ago, while not stopping and within max-clients; a cookie we sent less than half a
 * hand-window ago is never refused; a client reset is answered only when well formed and stores
 * nothing; no two live sessions ever share address and session id; a packet goes to a session
 * only if it is that session's, and with tls-auth never with a wrap packet_id it accepted
 * before; a float goes ahead only for an authenticated session onto an address no other
 * client's session holds, also when the same client's earlier session is there too (found
 * by this target: the first session at the address decided alone); the same client's sessions
 * there are closed; a P_DATA_V2 is handed to its peer_id's worker.
 *
 * Built as a libFuzzer target by scripts/fuzz.sh (clang); tests/fuzz/replay.c runs the same
 * function over the committed corpus in every ctest run.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/packet.h"
#include "proto/packet_id.h"
#include "server/control/acceptor_decide.h"
#include "tests/fuzz/fuzz_check.h"

#define N_ADDRS 4
#define N_SIDS 4
#define N_SESSIONS 16
#define N_COOKIES 32
#define N_WRAP_IDS 32

struct session {
    bool is_used;
    int addr;
    int sid;
    uint8_t own_sid[SESSION_ID_LEN];
    bool is_authenticated;
    bool has_cert;
    int client; /* who it authenticated as */
    struct packet_id_rx wrap_rx;
    uint32_t wrap_ids[N_WRAP_IDS]; /* the model: wrap packet_ids accepted */
    size_t n_wrap_ids;
    bool is_wrap_full;
};

struct cookie {
    int addr, sid;
    uint8_t value[SESSION_ID_LEN];
    int64_t sent_s;
};

static struct state {
    int hand_window_s;
    size_t max_clients;
    bool is_wrapped, is_stopping;
    int64_t now_s;
    union udp_addr addrs[N_ADDRS];
    uint8_t sids[N_SIDS][SESSION_ID_LEN];
    struct session ses[N_SESSIONS];
    struct cookie cookies[N_COOKIES];
    size_t n_cookies;
} s;

static const uint8_t key[ACCEPTOR_DECIDE_COOKIE_KEY_LEN] = {
    0x5e, 0x11, 0x7a, 0x02, 0x99, 0x31, 0xc4, 0x0d, 0x8b, 0x60, 0x2f, 0xe7, 0x13, 0x4a, 0xb5, 0x76,
    0x0c, 0xd1, 0x38, 0x9e, 0x45, 0xfa, 0x27, 0x6b, 0x82, 0x1f, 0xc9, 0x54, 0x3d, 0xa0, 0xee, 0x07};

static size_t n_sessions(void)
{
    size_t n = 0;

    for (int i = 0; i < N_SESSIONS; i++) {
        n += s.ses[i].is_used;
    }
    return n;
}

/* The table lookups of session.c over the model table. */
static struct session *find_sid(int addr, const uint8_t sid[SESSION_ID_LEN])
{
    for (int i = 0; i < N_SESSIONS; i++) {
        struct session *x = &s.ses[i];

        if (x->is_used && acceptor_decide_session_is(&s.addrs[x->addr], s.sids[x->sid], false,
                                                     &s.addrs[addr], sid)) {
            return x;
        }
    }
    return NULL;
}

static struct session *find_addr(int addr, const struct session * not )
{
    for (int i = 0; i < N_SESSIONS; i++) {
        if (s.ses[i].is_used && &s.ses[i] != not &&s.ses[i].addr == addr) {
            return &s.ses[i];
        }
    }
    return NULL;
}

static bool wrap_seen(const struct session *x, uint32_t id)
{
    for (size_t i = 0; i < x->n_wrap_ids; i++) {
        if (x->wrap_ids[i] == id) {
            return true;
        }
    }
    return false;
}

static bool wrap_newest(const struct session *x, uint32_t id)
{
    for (size_t i = 0; i < x->n_wrap_ids; i++) {
        if (x->wrap_ids[i] >= id) {
            return false;
        }
    }
    return id != 0 && !x->is_wrap_full;
}

static void wrap_accept(struct session *x, uint32_t id)
{
    packet_id_rx_commit(&x->wrap_rx, id);
    if (x->n_wrap_ids < N_WRAP_IDS) {
        x->wrap_ids[x->n_wrap_ids++] = id;
    } else {
        x->is_wrap_full = true;
    }
}

/* The cookie sent to (addr, sid) most recently, or NULL; with is_exact, the one whose value
 * is `value`. */
static const struct cookie *cookie_sent(int addr, int sid, const uint8_t *value)
{
    for (size_t i = s.n_cookies; i-- > 0;) {
        const struct cookie *c = &s.cookies[i];

        if (c->addr == addr && c->sid == sid &&
            (!value || memcmp(c->value, value, SESSION_ID_LEN) == 0)) {
            return c;
        }
    }
    return NULL;
}

static void check_table(void)
{
    for (int i = 0; i < N_SESSIONS; i++) {
        for (int j = i + 1; j < N_SESSIONS; j++) {
            CHECK(!(s.ses[i].is_used && s.ses[j].is_used && s.ses[i].addr == s.ses[j].addr &&
                    s.ses[i].sid == s.ses[j].sid));
        }
    }
}

/* A parsed control packet pkt from address a (client session id index sid_ix, or -1 for one
 * outside the four) with wrap packet_id wrap_id: what receive.c acc_handle_datagram does. */
static void control(const struct control_packet *pkt, int a, int sid_ix, uint32_t wrap_id)
{
    struct acceptor_control_facts f = {0};
    struct session *x = find_sid(a, pkt->session_id);
    enum acceptor_control v;
    bool is_checked = false;
    int64_t period = ((int64_t)s.hand_window_s + 1) / 2;

    f.pkt = pkt;
    f.session_wrap_rx = x ? &x->wrap_rx : NULL;
    f.is_wrapped = s.is_wrapped;
    f.wrap_id = wrap_id;
    f.is_stopping = s.is_stopping;
    f.has_session_at_addr = find_addr(a, NULL) != NULL;
    f.n_sessions = n_sessions();
    f.max_clients = s.max_clients;
    v = acceptor_decide_control(&f);
    if (v == ACCEPTOR_CONTROL_CHECK_COOKIE) {
        CHECK(!x && pkt->acks.n_acks > 0);
        f.cookie = acceptor_decide_cookie_valid(key, pkt, &s.addrs[a], s.now_s, s.hand_window_s)
                       ? ACCEPTOR_COOKIE_VALID
                       : ACCEPTOR_COOKIE_INVALID;
        is_checked = true;
        v = acceptor_decide_control(&f);
        CHECK(v != ACCEPTOR_CONTROL_CHECK_COOKIE);
    }
    switch (v) {
    case ACCEPTOR_CONTROL_SESSION:
        CHECK(x && x->addr == a && x->sid == sid_ix);
        CHECK(!s.is_wrapped || !wrap_seen(x, wrap_id));
        if (s.is_wrapped) {
            wrap_accept(x, wrap_id);
        }
        break;
    case ACCEPTOR_CONTROL_DROP_REPLAY:
        CHECK(x && s.is_wrapped && !wrap_newest(x, wrap_id));
        break;
    case ACCEPTOR_CONTROL_ANSWER_RESET: {
        struct cookie *c;

        CHECK(!x && !s.is_stopping && pkt->opcode == P_CONTROL_HARD_RESET_CLIENT_V2);
        CHECK(pkt->key_id == 0 && pkt->acks.n_acks == 0 && pkt->message_id == 0 &&
              pkt->payload_len == 0);
        if (sid_ix < 0) {
            break;
        }
        /* As answer_hard_reset: our session id is the cookie; nothing else is kept. */
        c = &s.cookies[s.n_cookies < N_COOKIES ? s.n_cookies++ : (size_t)(s.now_s % N_COOKIES)];
        c->addr = a;
        c->sid = sid_ix;
        c->sent_s = s.now_s;
        acceptor_decide_cookie_sid(key, &s.addrs[a], pkt->session_id,
                                   acceptor_decide_cookie_slot(s.now_s, s.hand_window_s), c->value);
        break;
    }
    case ACCEPTOR_CONTROL_CREATE: {
        const struct cookie *c =
            sid_ix >= 0 ? cookie_sent(a, sid_ix, pkt->acks.remote_session_id) : NULL;
        struct session *n = NULL;

        /* Only with the cookie we sent to this address and session id, not long ago. */
        CHECK(is_checked && !x && !s.is_stopping);
        CHECK(pkt->opcode == P_CONTROL_V1 || pkt->opcode == P_ACK_V1);
        CHECK(pkt->key_id == 0 && pkt->acks.n_acks > 0);
        CHECK(c != NULL);
        CHECK(s.now_s - c->sent_s < 3 * period);
        CHECK(f.has_session_at_addr || n_sessions() < s.max_clients);
        /* As receive.c: a new session replaces the unfinished ones at its address. */
        for (int i = 0; i < N_SESSIONS; i++) {
            if (s.ses[i].is_used && s.ses[i].addr == a && !s.ses[i].is_authenticated) {
                s.ses[i].is_used = false;
            }
        }
        for (int i = 0; i < N_SESSIONS && !n; i++) {
            if (!s.ses[i].is_used) {
                n = &s.ses[i];
            }
        }
        if (!n) {
            break; /* the model's table is full: as if out of memory */
        }
        memset(n, 0, sizeof(*n));
        n->is_used = true;
        n->addr = a;
        n->sid = sid_ix;
        memcpy(n->own_sid, pkt->acks.remote_session_id, SESSION_ID_LEN);
        packet_id_rx_init(&n->wrap_rx, 64);
        wrap_accept(n, wrap_id);
        break;
    }
    case ACCEPTOR_CONTROL_DROP_COOKIE:
        CHECK(!x);
        if (pkt->acks.n_acks > 0 && sid_ix >= 0) {
            const struct cookie *c = cookie_sent(a, sid_ix, pkt->acks.remote_session_id);

            /* A cookie sent within the last half hand-window is good. */
            CHECK(!c || s.now_s - c->sent_s >= period);
        }
        break;
    case ACCEPTOR_CONTROL_DROP_MAX_CLIENTS:
        CHECK(!x && !f.has_session_at_addr && n_sessions() >= s.max_clients);
        break;
    case ACCEPTOR_CONTROL_DROP_BAD_RESET:
        CHECK(!x && (pkt->opcode == P_CONTROL_HARD_RESET_CLIENT_V2 ||
                     (pkt->opcode == P_CONTROL_HARD_RESET_CLIENT_V3 && f.has_wkc)));
        break;
    case ACCEPTOR_CONTROL_DROP_V3_OLD:
        CHECK(!x && pkt->opcode == P_CONTROL_HARD_RESET_CLIENT_V3 && f.has_wkc && !f.is_early_neg);
        break;
    case ACCEPTOR_CONTROL_IGNORE:
        CHECK(!x && s.is_stopping);
        break;
    case ACCEPTOR_CONTROL_DROP_DRAINING: /* the model never drains */
        CHECK(!x && f.is_draining);
        break;
    case ACCEPTOR_CONTROL_DROP_V3:
    case ACCEPTOR_CONTROL_DROP_NO_SESSION:
        CHECK(!x);
        break;
    case ACCEPTOR_CONTROL_CHECK_COOKIE:
        CHECK(false);
        break;
    }
    /* Completeness: the freshest packet of a session goes to it; a cookie just sent works. */
    if (x && (!s.is_wrapped || wrap_newest(x, wrap_id))) {
        CHECK(v == ACCEPTOR_CONTROL_SESSION);
    }
    if (!x && !s.is_stopping && sid_ix >= 0 && pkt->key_id == 0 && pkt->acks.n_acks > 0 &&
        (pkt->opcode == P_CONTROL_V1 || pkt->opcode == P_ACK_V1)) {
        const struct cookie *c = cookie_sent(a, sid_ix, pkt->acks.remote_session_id);

        if (c && s.now_s - c->sent_s < period) {
            CHECK(v == ACCEPTOR_CONTROL_CREATE || v == ACCEPTOR_CONTROL_DROP_MAX_CLIENTS);
        }
    }
    check_table();
}

static bool is_same_client(const struct session *x, const struct session *o)
{
    return o->is_authenticated && x->has_cert && o->has_cert && x->client == o->client;
}

static void float_ask(int k, int a)
{
    struct session *x = &s.ses[k];
    bool is_live = x->is_used && x->is_authenticated, is_stranger_there = false;
    size_t n_other = 0, n_same = 0;
    enum acceptor_float v;

    /* As session.c acc_sessions_at: every other live session at the address. */
    for (int i = 0; i < N_SESSIONS && is_live; i++) {
        if (s.ses[i].is_used && &s.ses[i] != x && s.ses[i].addr == a) {
            n_other++;
            n_same += is_same_client(x, &s.ses[i]);
        }
    }
    v = acceptor_decide_float(is_live, n_other, n_same);
    /* Independently: is any other client's session (or an unfinished one) there? */
    for (int i = 0; i < N_SESSIONS; i++) {
        if (s.ses[i].is_used && &s.ses[i] != x && s.ses[i].addr == a &&
            !is_same_client(x, &s.ses[i])) {
            is_stranger_there = true;
        }
    }
    switch (v) {
    case ACCEPTOR_FLOAT_NO:
        CHECK(!is_live || is_stranger_there);
        break;
    case ACCEPTOR_FLOAT_OK_CLOSE_OTHER:
    case ACCEPTOR_FLOAT_OK:
        /* Never onto another client's address; only the same client's sessions are closed. */
        CHECK(is_live && !is_stranger_there);
        CHECK(v == ACCEPTOR_FLOAT_OK_CLOSE_OTHER || !find_addr(a, x));
        for (int i = 0; i < N_SESSIONS; i++) {
            if (s.ses[i].is_used && &s.ses[i] != x && s.ses[i].addr == a) {
                s.ses[i].is_used = false;
            }
        }
        x->addr = a;
        break;
    }
    check_table();
}

static void first_look(const uint8_t ev[4])
{
    uint8_t buf[8] = {ev[1], ev[2], ev[3], 0x42, 1, 2, 3, 4};
    size_t len = ev[0] / 16 % 9;
    int n_workers = 1 + ev[3] % 4, worker = -1;

    switch (acceptor_decide_dgram(buf, len, n_workers, &worker)) {
    case ACCEPTOR_DGRAM_DROP_EMPTY:
        CHECK(len == 0);
        break;
    case ACCEPTOR_DGRAM_HAND_OVER:
        CHECK(len >= 4 && packet_opcode(buf[0]) == P_DATA_V2);
        CHECK(worker >= 0 && worker < n_workers);
        CHECK((uint32_t)worker ==
              ((uint32_t)buf[1] << 16 | (uint32_t)buf[2] << 8 | buf[3]) % (uint32_t)n_workers);
        break;
    case ACCEPTOR_DGRAM_IGNORE:
        CHECK(len < 4 && packet_opcode(buf[0]) == P_DATA_V2);
        break;
    case ACCEPTOR_DGRAM_DATA_V1:
        CHECK(packet_opcode(buf[0]) == P_DATA_V1);
        break;
    case ACCEPTOR_DGRAM_DROP_OPCODE:
        CHECK(!packet_is_control(packet_opcode(buf[0])) && packet_opcode(buf[0]) != P_DATA_V2);
        break;
    case ACCEPTOR_DGRAM_CONTROL:
        CHECK(len > 0 && packet_is_control(packet_opcode(buf[0])));
        break;
    }
}

static void reset(const uint8_t hdr[3])
{
    memset(&s, 0, sizeof(s));
    s.hand_window_s = 1 + hdr[0] % 120;
    s.max_clients = 1 + hdr[1] % 6;
    s.is_wrapped = hdr[2] & 1;
    s.now_s = 1700000000;
    for (int a = 0; a < N_ADDRS; a++) {
        struct sockaddr_in *sin = &s.addrs[a].in4;

        sin->sin_family = AF_INET;
        sin->sin_port = htons((uint16_t)(1194 + a % 2));
        sin->sin_addr.s_addr = htonl(0xC6120000u | (uint32_t)(a / 2 + 1)); /* 198.18.0.x */
    }
    for (int i = 0; i < N_SIDS; i++) {
        memset(s.sids[i], 0xA0 + i, SESSION_ID_LEN);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3) {
        return 0;
    }
    reset(data);
    data += 3;
    size -= 3;
    for (; size >= 4; data += 4, size -= 4) {
        struct control_packet pkt;
        int a = data[1] % N_ADDRS, sid_ix = (data[1] >> 2) % N_SIDS;
        uint32_t wrap_id = data[2] | (uint32_t)(data[3] & 0x0F) << 8;

        memset(&pkt, 0, sizeof(pkt));
        memcpy(pkt.session_id, s.sids[sid_ix], SESSION_ID_LEN);
        switch (data[0] % 9) {
        case 0: /* a client reset; bits of data[2] make it malformed */
            pkt.opcode = P_CONTROL_HARD_RESET_CLIENT_V2;
            pkt.has_message_id = true;
            if (data[2] & 0x80) {
                pkt.key_id = data[2] & 7;
                pkt.message_id = (data[2] >> 3) & 1;
                pkt.payload_len = (data[2] >> 4) & 1;
                pkt.acks.n_acks = (data[2] >> 5) & 1;
            }
            if (data[3] & 0x80) {
                pkt.opcode = P_CONTROL_HARD_RESET_CLIENT_V3;
            }
            control(&pkt, a, sid_ix, wrap_id);
            break;
        case 1: { /* the third packet of the handshake, echoing a cookie or not */
            const struct cookie *c = s.n_cookies ? &s.cookies[data[2] % s.n_cookies] : NULL;

            pkt.opcode = data[3] & 1 ? P_ACK_V1 : P_CONTROL_V1;
            pkt.has_message_id = pkt.opcode == P_CONTROL_V1;
            pkt.message_id = pkt.has_message_id;
            pkt.key_id = data[3] & 0x40 ? (data[3] >> 1) & 7 : 0;
            pkt.acks.n_acks = data[3] & 0x20 ? 0 : 1;
            if (c && !(data[3] & 0x10)) {
                memcpy(pkt.acks.remote_session_id, c->value, SESSION_ID_LEN);
            } else { /* forged */
                memset(pkt.acks.remote_session_id, data[2], SESSION_ID_LEN);
            }
            if (data[3] & 0x80 && c) { /* from the cookie's own address and session id */
                a = c->addr;
                sid_ix = c->sid;
                memcpy(pkt.session_id, s.sids[sid_ix], SESSION_ID_LEN);
            }
            control(&pkt, a, sid_ix, wrap_id);
            break;
        }
        case 2: { /* a packet of session k (its address and id), or a stranger's copy */
            struct session *x = &s.ses[data[1] % N_SESSIONS];

            if (!x->is_used) {
                break;
            }
            pkt.opcode = P_CONTROL_V1;
            pkt.has_message_id = true;
            pkt.message_id = data[3] >> 4;
            memcpy(pkt.session_id, s.sids[x->sid], SESSION_ID_LEN);
            a = data[3] & 0x80 ? (x->addr + 1) % N_ADDRS : x->addr;
            control(&pkt, a, x->sid, wrap_id);
            break;
        }
        case 3:
            s.now_s += data[2];
            break;
        case 4:
            s.is_stopping = data[2] & 1;
            break;
        case 5: {
            struct session *x = &s.ses[data[1] % N_SESSIONS];

            if (x->is_used && !x->is_authenticated) {
                x->is_authenticated = true;
                x->client = data[2] % 3;
                x->has_cert = data[3] & 1;
            }
            break;
        }
        case 6:
            s.ses[data[1] % N_SESSIONS].is_used = false;
            break;
        case 7:
            float_ask(data[1] % N_SESSIONS, data[2] % N_ADDRS);
            break;
        case 8:
            first_look(data);
            break;
        }
    }
    return 0;
}
