/* tests/fuzz/fuzz_worker_decide.c: the workers' packet decisions (server/data/worker_decide.h)
 * driven by sequences of datagrams and events against a model, under a coverage-guided fuzzer.
 *
 * A server of 1 to 3 workers, each with a small peer table, and 4 clients. Each client has real
 * data-channel keys (its own side and the server's, from the same key block), so a datagram the
 * harness seals is authentic and one it alters is not. Input: 3 header bytes (n_workers,
 * peers per worker, client-to-client and the cipher: AES-128-GCM, AES-256-GCM,
 * CHACHA20-POLY1305 or AES-128-CBC), then events of 4 bytes, the first naming
 * the event:
 *   0 install client c as peer_id x (if its slot is free and in range, with a first key_id 0)
 *   1 remove client c
 *   2 a new key for client c with key_id k (worker_decide_install_key, as MSG_NEW_KEY), or
 *     with the first byte's high bit its key_id k retired (as MSG_KEY_RETIRE)
 *   3 client c seals a fresh packet with its key k and sends it from address a to worker w
 *   4 an earlier datagram sent again, maybe with one bit flipped, from address a to worker w
 *   5 junk: a P_DATA_V2 header for peer_id x and key_id k with garbage behind it
 *   6 the acceptor answers client c's float question about address a, yes or no
 *   7 the clock moves on by a multiple of 100 ms
 *   8 a TUN packet read by worker w for route r (the routes map tunnel addresses to peer_ids,
 *     kept stale on purpose when a client goes); 9 sets route r to peer_id x
 *
 * Checked, beyond "does not crash": a datagram is accepted (or its source taken for a float)
 * only if the harness sealed exactly those bytes with the key of the client installed under its
 * peer_id, for a key_id whose key the peer holds (not retired), and with a packet_id not accepted
 * before; a fresh in-order datagram of an installed client with its key is never refused; nothing
 * is opened for a key_id without a key; a float is asked about only for such a datagram from
 * another address, at most once a second (every 5 s for a refused address), and the client's
 * address changes only when the acceptor said yes; a hand-over goes to the peer_id's owner and
 * the owner never hands it on; a packet is sent (c2c, TUN) only to the installed peer with that
 * peer_id.
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

#include "proto/cursor.h"
#include "proto/data_crypto.h"
#include "proto/packet.h"
#include "server/data/peer.h"
#include "server/addr/vroute.h"
#include "server/data/worker_decide.h"
#include "tests/fuzz/fuzz_check.h"

#define N_WORKERS_MAX 3
#define LOCAL_MAX 4
#define N_CLIENTS 4
#define N_ADDRS 4
#define N_ROUTES 8
#define N_RECORDS 48
#define N_ACCEPTED 256
#define PLAIN_MAX 64
#define DGRAM_MAX (DATA_V2_HEADER_LEN + DATA_CBC_OVERHEAD_MAX + PLAIN_MAX) /* CBC is the larger */

/* A datagram the harness sent: its bytes and, if sealed by a client, by whom and how. */
struct record {
    uint8_t bytes[DGRAM_MAX];
    size_t len;
    bool is_sealed;
    int client;
    uint32_t peer_id;
    uint8_t key_id;
    uint32_t gen; /* the key's generation, unique within an input */
    uint32_t packet_id;
    size_t plain_len; /* the payload it carries, when sealed */
};

struct client {
    struct peer p; /* the server's side, as the acceptor builds it */
    bool is_installed;
    struct data_key tx[PEER_N_KEY_IDS]; /* the client's own keys by key_id */
    uint32_t tx_gen[PEER_N_KEY_IDS];    /* 0: no key */
    /* The model of the server's keys: two slots, the key_id map, send and pending slot. */
    uint32_t slot_gen[2];
    uint8_t slot_key_id[2];
    int key_map[PEER_N_KEY_IDS]; /* key_id -> slot, or -1 */
    int tx_slot, pending_slot;
    union udp_addr remote;
    /* The model of the float questions. */
    bool has_float_to, is_asked, is_refused;
    union udp_addr float_to;
    uint64_t asked_ms, refused_ms;
};

static struct state {
    int n_workers;
    size_t max_local;
    bool is_c2c;
    enum data_cipher cipher;
    struct peer *by_local[N_WORKERS_MAX][LOCAL_MAX];
    struct client c[N_CLIENTS];
    union udp_addr addrs[N_ADDRS];
    uint32_t routes[N_ROUTES];
    struct record rec[N_RECORDS];
    size_t n_rec;
    struct {
        uint32_t gen, packet_id;
    } accepted[N_ACCEPTED];
    size_t n_accepted;
    bool is_model_full;
    uint32_t next_gen;
    uint64_t now_ms;
} s;

static struct worker_decide_table table(int w)
{
    return (struct worker_decide_table){.index = w,
                                        .n_workers = s.n_workers,
                                        .by_local = s.by_local[w],
                                        .max_local_peers = s.max_local};
}

static void key_block(uint32_t gen, uint8_t out[256])
{
    for (int i = 0; i < 256; i++) {
        out[i] = (uint8_t)(gen * 131u + (uint32_t)i * 7u + 1u);
    }
}

/* The installed client with this peer_id, or -1 (the model's lookup). */
static int installed_client(uint32_t peer_id)
{
    for (int i = 0; i < N_CLIENTS; i++) {
        if (s.c[i].is_installed && s.c[i].p.peer_id == peer_id) {
            return i;
        }
    }
    return -1;
}

static bool was_accepted(uint32_t gen, uint32_t packet_id)
{
    for (size_t i = 0; i < s.n_accepted; i++) {
        if (s.accepted[i].gen == gen && s.accepted[i].packet_id == packet_id) {
            return true;
        }
    }
    return false;
}

static bool is_newest(uint32_t gen, uint32_t packet_id)
{
    for (size_t i = 0; i < s.n_accepted; i++) {
        if (s.accepted[i].gen == gen && s.accepted[i].packet_id >= packet_id) {
            return false;
        }
    }
    return true;
}

/* Give client i's server side a key with key_id and a new generation, and the client the same
 * key; as MSG_NEW_KEY does unless is_first (then as the acceptor's first key). */
static void new_key(int i, uint8_t key_id, bool is_first)
{
    struct client *c = &s.c[i];
    uint8_t block[256];
    struct data_key nk;
    uint32_t gen = ++s.next_gen;
    int slot;

    key_block(gen, block);
    memset(&nk, 0, sizeof(nk));
    CHECK(data_key_init(&nk, s.cipher, key_id, block, true, 64) == 0);
    data_key_clear(&c->tx[key_id]);
    CHECK(data_key_init(&c->tx[key_id], s.cipher, key_id, block, false, 64) == 0);
    c->tx_gen[key_id] = gen;
    if (is_first) {
        c->p.key_store[0] = nk;
        c->p.keys[key_id] = &c->p.key_store[0];
        c->p.tx_key = &c->p.key_store[0];
        c->slot_gen[0] = gen;
        c->slot_key_id[0] = key_id;
        c->key_map[key_id] = 0;
        c->tx_slot = 0;
        return;
    }
    worker_decide_install_key(&c->p, &nk, s.now_ms);
    slot = c->tx_slot == 0 ? 1 : 0;
    if (c->slot_gen[slot] && c->key_map[c->slot_key_id[slot]] == slot) {
        c->key_map[c->slot_key_id[slot]] = -1;
    }
    c->slot_gen[slot] = gen;
    c->slot_key_id[slot] = key_id;
    c->key_map[key_id] = slot;
    if (c->tx_slot < 0) { /* the send key was retired: the new one sends at once */
        c->tx_slot = slot;
    } else {
        c->pending_slot = slot;
    }
}

/* The acceptor retires key_id of client i (MSG_KEY_RETIRE: its tran-window ran out). */
static void retire_key(int i, uint8_t key_id)
{
    struct client *c = &s.c[i];
    int slot = c->key_map[key_id];

    worker_decide_retire_key(&c->p, key_id);
    if (slot < 0) {
        return;
    }
    c->key_map[key_id] = -1;
    c->slot_gen[slot] = 0;
    if (c->pending_slot == slot) {
        c->pending_slot = -1;
    }
    if (c->tx_slot == slot) {
        c->tx_slot = c->pending_slot;
        c->pending_slot = -1;
    }
}

static void check_keys(const struct client *c)
{
    for (int k = 0; k < PEER_N_KEY_IDS; k++) {
        CHECK((c->p.keys[k] != NULL) == (c->key_map[k] >= 0));
        if (c->p.keys[k]) {
            CHECK(c->p.keys[k] == &c->p.key_store[c->key_map[k]]);
            CHECK(c->p.keys[k]->key_id == k);
        }
    }
    CHECK(c->p.tx_key == (c->tx_slot >= 0 ? &c->p.key_store[c->tx_slot] : NULL));
    CHECK(c->p.pending_tx_key == (c->pending_slot >= 0 ? &c->p.key_store[c->pending_slot] : NULL));
}

/* A packet for peer_id at worker w (c2c or TUN): where it goes must be the model's answer. */
static void deliver(int w, uint32_t peer_id)
{
    struct worker_decide_table t = table(w);
    struct peer *p = NULL;
    int owner = -1, who;

    switch (worker_decide_deliver(&t, peer_id, &owner, &p)) {
    case WORKER_DELIVER_HAND_OVER:
        CHECK(owner == (int)(peer_id % (uint32_t)s.n_workers) && owner != w);
        t = table(owner);
        p = NULL;
        /* The owner never hands it on. */
        CHECK(worker_decide_deliver(&t, peer_id, &owner, &p) != WORKER_DELIVER_HAND_OVER);
        who = installed_client(peer_id);
        CHECK(p == (who >= 0 ? &s.c[who].p : NULL));
        break;
    case WORKER_DELIVER_SEND:
        who = installed_client(peer_id);
        CHECK(who >= 0 && p == &s.c[who].p && p->peer_id == peer_id);
        CHECK(owner == w);
        break;
    case WORKER_DELIVER_NOT_INSTALLED:
        CHECK(installed_client(peer_id) < 0);
        break;
    }
}

/* What the worker does with an accepted plaintext: with client-to-client, a packet for another
 * client goes to it (route chosen by the first plaintext byte). */
static void accepted_plaintext(int w, const struct peer *p, const uint8_t *plain, size_t len)
{
    uint32_t to = s.routes[(len ? plain[0] : 0) % N_ROUTES];
    bool is_multicast = len > 1 && (plain[1] & 1);

    if (worker_decide_c2c(s.is_c2c, is_multicast, to, p->peer_id)) {
        CHECK(s.is_c2c && to != p->peer_id && to != VROUTE_NONE);
        deliver(w, to);
    }
}

/* Datagram r (its bytes possibly altered in dgram) from address a reaches worker w. */
static void receive(int w, const struct record *r, const uint8_t *dgram, size_t len, int a)
{
    struct worker_decide_table t = table(w);
    struct worker_rx_out out = {0};
    uint8_t plain[DGRAM_MAX];
    enum worker_rx v;
    bool is_same = r && r->len == len && memcmp(r->bytes, dgram, len) == 0;
    bool is_authentic = false, is_expected = false;
    struct client *c = NULL;
    int who = -1;

    /* The model's verdict on authenticity and freshness. */
    if (len >= DATA_V2_HEADER_LEN && packet_opcode(dgram[0]) == P_DATA_V2) {
        who = installed_client(load_be32(dgram) & DATA_PEER_ID_MAX);
    }
    if (who >= 0 && is_same && r->is_sealed && r->client == who) {
        c = &s.c[who];
        int slot = c->key_map[r->key_id];

        is_authentic = slot >= 0 && c->slot_gen[slot] == r->gen;
        is_expected = is_authentic && !s.is_model_full && is_newest(r->gen, r->packet_id) &&
                      (int)(r->peer_id % (uint32_t)s.n_workers) == w;
    }
    v = worker_decide_rx(&t, dgram, len, &s.addrs[a], plain, sizeof(plain), s.now_ms, &out);
    switch (v) {
    case WORKER_RX_DROP_EMPTY:
        CHECK(len == 0);
        break;
    case WORKER_RX_TO_ACCEPTOR:
        CHECK(len > 0 && packet_opcode(dgram[0]) != P_DATA_V2);
        break;
    case WORKER_RX_DROP_SHORT:
        CHECK(len < DATA_V2_HEADER_LEN);
        break;
    case WORKER_RX_HAND_OVER: {
        uint32_t peer_id = load_be32(dgram) & DATA_PEER_ID_MAX;

        CHECK(out.owner == (int)(peer_id % (uint32_t)s.n_workers) && out.owner != w);
        /* The owner takes it from here and never hands it on. */
        receive(out.owner, r, dgram, len, a);
        return;
    }
    case WORKER_RX_DROP_UNKNOWN_PEER:
        CHECK(installed_client(load_be32(dgram) & DATA_PEER_ID_MAX) < 0);
        break;
    case WORKER_RX_DROP_NO_KEY:
        CHECK(who >= 0 && out.peer == &s.c[who].p);
        CHECK(s.c[who].key_map[packet_key_id(dgram[0])] < 0);
        break;
    case WORKER_RX_DROP_REPLAY:
    case WORKER_RX_DROP_AUTH:
        CHECK(who >= 0 && s.c[who].key_map[packet_key_id(dgram[0])] >= 0);
        break;
    case WORKER_RX_FLOAT:
    case WORKER_RX_ACCEPT:
        /* Only what the installed client sealed with a key the peer holds, never twice. */
        CHECK(is_authentic);
        CHECK(!was_accepted(r->gen, r->packet_id));
        CHECK(out.peer == &c->p && out.k == c->p.keys[r->key_id]);
        CHECK(out.plain_len == r->plain_len);
        if (s.n_accepted < N_ACCEPTED) {
            s.accepted[s.n_accepted].gen = r->gen;
            s.accepted[s.n_accepted++].packet_id = r->packet_id;
        } else {
            s.is_model_full = true; /* freshness no longer known: stop expecting */
        }
        break;
    }
    if (is_expected) {
        CHECK(v == WORKER_RX_FLOAT || v == WORKER_RX_ACCEPT);
    }
    if (v == WORKER_RX_FLOAT) {
        bool want = !(c->is_asked && s.now_ms - c->asked_ms < WORKER_DECIDE_FLOAT_ASK_MS) &&
                    !(c->is_refused && udp_addr_equal(&s.addrs[a], &c->float_to) &&
                      s.now_ms - c->refused_ms < WORKER_DECIDE_FLOAT_RETRY_MS);

        CHECK(!udp_addr_equal(&s.addrs[a], &c->remote));
        CHECK(out.is_float_ask == want);
        if (out.is_float_ask) { /* the worker's pool had a message: asked */
            worker_decide_float_asked(&c->p, &s.addrs[a], s.now_ms);
            c->has_float_to = c->is_asked = true;
            c->is_refused = false;
            c->float_to = s.addrs[a];
            c->asked_ms = s.now_ms;
        }
    }
    if (v == WORKER_RX_ACCEPT) {
        CHECK(udp_addr_equal(&s.addrs[a], &c->remote));
        if (out.k == c->p.pending_tx_key) { /* as worker_rx.c: the client uses the new key */
            c->p.tx_key = out.k;
            c->p.pending_tx_key = NULL;
            c->tx_slot = c->pending_slot;
            c->pending_slot = -1;
        }
        accepted_plaintext(w, &c->p, plain, out.plain_len);
    }
    if (c) {
        CHECK(udp_addr_equal(&c->p.remote, &c->remote));
    }
}

static void record_add(const struct record *r)
{
    if (s.n_rec < N_RECORDS) {
        s.rec[s.n_rec++] = *r;
    } else {
        s.rec[r->packet_id % N_RECORDS] = *r;
    }
}

static void reset(const uint8_t hdr[3])
{
    static const enum data_cipher ciphers[] = {DATA_CIPHER_AES_128_GCM, DATA_CIPHER_AES_256_GCM,
                                               DATA_CIPHER_CHACHA20_POLY1305,
                                               DATA_CIPHER_AES_128_CBC};

    for (int i = 0; i < N_CLIENTS; i++) {
        for (int k = 0; k < PEER_N_KEY_IDS; k++) {
            data_key_clear(&s.c[i].tx[k]);
        }
        data_key_clear(&s.c[i].p.key_store[0]);
        data_key_clear(&s.c[i].p.key_store[1]);
    }
    memset(&s, 0, sizeof(s));
    s.n_workers = 1 + hdr[0] % N_WORKERS_MAX;
    s.max_local = 1 + hdr[1] % LOCAL_MAX;
    s.is_c2c = hdr[2] & 1;
    s.cipher = ciphers[(hdr[2] >> 1) % 4]; /* CBC with HMAC-SHA1, 2.6's default auth */
    s.now_ms = 1000000;
    for (int a = 0; a < N_ADDRS; a++) {
        struct sockaddr_in *sin = &s.addrs[a].in4;

        sin->sin_family = AF_INET;
        sin->sin_port = htons((uint16_t)(1194 + a));
        sin->sin_addr.s_addr = htonl(0xC6120000u | (uint32_t)(a + 1)); /* 198.18.0.a+1 */
    }
    for (int r = 0; r < N_ROUTES; r++) {
        s.routes[r] = VROUTE_NONE;
    }
    for (int i = 0; i < N_CLIENTS; i++) {
        for (int k = 0; k < PEER_N_KEY_IDS; k++) {
            s.c[i].key_map[k] = -1;
        }
        s.c[i].pending_slot = -1;
    }
}

static void install(int i, uint32_t peer_id)
{
    struct client *c = &s.c[i];
    int w = (int)(peer_id % (uint32_t)s.n_workers);
    size_t local = peer_id / (uint32_t)s.n_workers;

    if (c->is_installed || local >= s.max_local || s.by_local[w][local]) {
        return; /* the acceptor hands out free peer_ids; install_peer refuses one out of range */
    }
    data_key_clear(&c->p.key_store[0]);
    data_key_clear(&c->p.key_store[1]);
    memset(&c->p, 0, sizeof(c->p));
    for (int k = 0; k < PEER_N_KEY_IDS; k++) {
        c->key_map[k] = -1;
    }
    memset(c->slot_gen, 0, sizeof(c->slot_gen));
    c->pending_slot = -1;
    c->p.peer_id = peer_id;
    c->p.worker = w;
    c->p.remote = s.addrs[i % N_ADDRS];
    c->remote = c->p.remote;
    c->has_float_to = c->is_asked = c->is_refused = false;
    new_key(i, 0, true);
    s.by_local[w][local] = &c->p;
    c->is_installed = true;
}

static void send_sealed(int i, uint8_t key_id, int w, int a, uint8_t len_byte)
{
    struct client *c = &s.c[i];
    uint8_t plain[PLAIN_MAX];
    struct record r;

    if (!c->tx_gen[key_id]) {
        return;
    }
    memset(&r, 0, sizeof(r));
    for (size_t j = 0; j < sizeof(plain); j++) {
        plain[j] = (uint8_t)(len_byte + j * 3);
    }
    r.is_sealed = true;
    r.client = i;
    r.peer_id = c->p.peer_id;
    r.key_id = key_id;
    r.gen = c->tx_gen[key_id];
    r.plain_len = len_byte % (PLAIN_MAX + 1);
    CHECK(data_key_seal(&c->tx[key_id], true, r.peer_id, plain, r.plain_len, r.bytes,
                        sizeof(r.bytes), &r.len) == 0);
    r.packet_id = c->tx[key_id].tx_packet_id;
    record_add(&r);
    receive(w, &r, r.bytes, r.len, a);
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
        int i = data[1] % N_CLIENTS, w = data[3] % s.n_workers, a = (data[3] >> 2) % N_ADDRS;
        uint8_t key_id = data[2] % PEER_N_KEY_IDS;
        uint32_t x = data[2] % (uint32_t)(s.n_workers * LOCAL_MAX + 2);

        switch (data[0] % 10) {
        case 0:
            install(i, x);
            break;
        case 1:
            if (s.c[i].is_installed) {
                s.by_local[s.c[i].p.worker][s.c[i].p.peer_id / (uint32_t)s.n_workers] = NULL;
                s.c[i].is_installed = false;
            }
            break;
        case 2:
            if (s.c[i].is_installed && data[0] < 128) {
                new_key(i, key_id, false);
            } else if (s.c[i].is_installed) {
                retire_key(i, key_id);
            }
            break;
        case 3:
            send_sealed(i, (data[0] / 10) % PEER_N_KEY_IDS, w, a, data[2]);
            break;
        case 4:
            if (s.n_rec) {
                struct record r = s.rec[data[1] % s.n_rec];
                uint8_t bytes[DGRAM_MAX];

                memcpy(bytes, r.bytes, r.len);
                if (data[0] >= 128 && r.len) {
                    bytes[data[2] % r.len] ^= (uint8_t)(1u << (data[0] & 7));
                }
                receive(w, &r, bytes, r.len, a);
            }
            break;
        case 5: {
            uint8_t junk[DGRAM_MAX];
            size_t len = data[2] % sizeof(junk);

            for (size_t j = 0; j < len; j++) {
                junk[j] = (uint8_t)(data[1] * 17 + j);
            }
            if (len >= 4) {
                store_be32(junk, (uint32_t)(P_DATA_V2 << 3 | (data[0] / 10) % 8) << 24 |
                                     data[1] % (uint32_t)(s.n_workers * LOCAL_MAX + 2));
            }
            receive(w, NULL, junk, len, a);
            break;
        }
        case 6:
            if (s.c[i].is_installed) { /* the worker only reads answers for its own peers */
                struct client *c = &s.c[i];
                bool is_ok = data[2] & 1;
                union udp_addr old;
                bool is_moved =
                    worker_decide_float_answer(&c->p, &s.addrs[a], is_ok, s.now_ms, &old);

                CHECK(!is_moved || (is_ok && udp_addr_equal(&old, &c->remote)));
                if (is_ok) {
                    c->remote = s.addrs[a];
                }
                if (c->has_float_to && udp_addr_equal(&s.addrs[a], &c->float_to)) {
                    c->is_asked = false;
                    c->is_refused = !is_ok;
                    c->refused_ms = s.now_ms;
                }
                CHECK(udp_addr_equal(&c->p.remote, &c->remote));
            }
            break;
        case 7:
            s.now_ms += (uint64_t)data[2] * 100;
            break;
        case 8:
            if (s.routes[data[2] % N_ROUTES] != VROUTE_NONE) {
                deliver(w, s.routes[data[2] % N_ROUTES]);
            }
            break;
        case 9:
            s.routes[data[1] % N_ROUTES] = data[2] == 255 ? VROUTE_NONE : x;
            break;
        }
        for (int j = 0; j < N_CLIENTS; j++) {
            if (s.c[j].is_installed) {
                check_keys(&s.c[j]);
            }
        }
    }
    return 0;
}
