/* tests/bench/loadgen_client.c: one simulated OpenVPN 2.6 client (see loadgen_client.h). */
#include "tests/bench/loadgen_client.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lz4.h>
#include <mbedtls/platform_util.h>

#include "proto/comp.h"
#include "proto/cursor.h"
#include "proto/errors.h"
#include "proto/key_method.h"
#include "proto/occ.h"
#include "proto/pbuf.h"
#include "proto/push.h"
#include "proto/stream.h"
#include "proto/tls_wrap.h"
#include "tests/bench/loadgen_icmp.h"
#include "tests/bench/loadgen_worker.h"

#define TLS_MTU 1250 /* TLS_MTU_DEFAULT: control packet incl. IPv4 and UDP headers */
#define IPV4_UDP_HDR 28
#define TLS_TIMEOUT_MS 2000 /* --tls-timeout default */
#define WRAP_REPLAY_WINDOW 64
#define DATA_REPLAY_WINDOW 64 /* --replay-window default */
/* The stock client asks for the push itself when none came 1 s after the key exchange, and
 * repeats every 5 s until one arrives (push.c send_push_request). */
#define PUSH_REQUEST_FIRST_MS 1000
#define PUSH_REQUEST_REPEAT_MS 5000
/* How long an EXIT may wait for its acknowledgment: 5 s, plus 4 ms per client of this thread, as
 * every client exits at once and the server acknowledges them one after another. */
#define EXIT_ACK_TIMEOUT_MS 5000
#define EXIT_ACK_MS_PER_CLIENT 4
/* At the end the clients of a worker send their EXITs spread evenly over this time: all in the
 * same second, as many laptops that leave together do, not in one burst of the same
 * millisecond (whose retransmissions would come in bursts of the same millisecond too). */
#define EXIT_SPREAD_MS 1000

/* The spread in ms: EXIT_SPREAD_MS, or OVPND_LOADGEN_EXIT_SPREAD_MS from the environment (0:
 * every client of a thread in the same tick, a burst). */
static uint64_t exit_spread_ms(void)
{
    const char *v = getenv("OVPND_LOADGEN_EXIT_SPREAD_MS");

    return v && *v ? strtoull(v, NULL, 10) : EXIT_SPREAD_MS;
}
#define DATA_BURST_MAX 64   /* echo requests sent at most per timer run when behind */
#define KM2_BUF_LEN 2048    /* our key-method-2 message is about 400 bytes */
#define N_FAILURES_LOGGED 5 /* per worker, unless --verbose */

static const char *const state_names[] = {
    [LOADGEN_CLIENT_IDLE] = "idle",       [LOADGEN_CLIENT_RESET] = "reset",
    [LOADGEN_CLIENT_TLS] = "tls",         [LOADGEN_CLIENT_KEY_METHOD] = "key-method",
    [LOADGEN_CLIENT_PUSH] = "push",       [LOADGEN_CLIENT_CONNECTED] = "connected",
    [LOADGEN_CLIENT_EXITING] = "exiting", [LOADGEN_CLIENT_DONE] = "done",
    [LOADGEN_CLIENT_FAILED] = "failed",   [LOADGEN_CLIENT_RETRY_WAIT] = "connect-retry",
};

const char *loadgen_client_state_name(enum loadgen_client_state s)
{
    return (size_t)s < sizeof(state_names) / sizeof(state_names[0]) ? state_names[s] : "?";
}

void loadgen_client_init(struct loadgen_client *c, struct loadgen_worker *w, size_t index)
{
    memset(c, 0, sizeof(*c));
    c->w = w;
    c->index = index;
    c->state = LOADGEN_CLIENT_IDLE;
}

bool loadgen_client_is_final(const struct loadgen_client *c)
{
    return c->state == LOADGEN_CLIENT_DONE || c->state == LOADGEN_CLIENT_FAILED;
}

bool loadgen_client_is_quiet(const struct loadgen_client *c)
{
    size_t out_len = 0;

    if (c->state != LOADGEN_CLIENT_CONNECTED || loadgen_worker_phase(c->w) >= LOADGEN_PHASE_EXIT ||
        !reliable_all_acked(&c->rel) || reliable_has_acks(&c->rel)) {
        return false;
    }
    (void)tls_session_out_peek(&c->tls, &out_len);
    return out_len == 0;
}

static void wipe_secrets(struct loadgen_client *c)
{
    mbedtls_platform_zeroize(c->pre_master, sizeof(c->pre_master));
    mbedtls_platform_zeroize(c->random1, sizeof(c->random1));
    mbedtls_platform_zeroize(c->random2, sizeof(c->random2));
    mbedtls_platform_zeroize(c->server_random1, sizeof(c->server_random1));
    mbedtls_platform_zeroize(c->server_random2, sizeof(c->server_random2));
}

static void stop_data(struct loadgen_client *c)
{
    if (c->is_data_running) {
        uv_timer_stop(&c->data_timer);
        c->is_data_running = false;
    }
}

static void fail(struct loadgen_client *c, const char *reason, const char *detail)
{
    static _Thread_local unsigned n_logged;

    if (loadgen_client_is_final(c)) {
        return;
    }
    c->fail_reason = reason;
    snprintf(c->fail_detail, sizeof(c->fail_detail), "%s", detail ? detail : "");
    if (c->w->cfg->verbose || n_logged++ < N_FAILURES_LOGGED) {
        fprintf(stderr, "ovpnd-loadgen: client %zu failed in state %s: %s%s%s\n", c->index,
                loadgen_client_state_name(c->state), reason, detail && *detail ? ": " : "",
                detail ? detail : "");
    }
    c->state = LOADGEN_CLIENT_FAILED;
    stop_data(c);
    wipe_secrets(c);
    if (!c->was_connected) {
        loadgen_worker_settled(c->w, false, loadgen_now_ms());
    }
}

/* --half-open: the client stops where it was asked to; it ends FAILED with this reason (counted in
 * the report), without a log line. */
static void stop_half_open(struct loadgen_client *c)
{
    c->fail_reason = "half-open: stopped after the server's reset";
    c->fail_detail[0] = '\0';
    c->state = LOADGEN_CLIENT_FAILED;
    loadgen_worker_settled(c->w, false, loadgen_now_ms());
}

void loadgen_client_abandon(struct loadgen_client *c)
{
    if (c->state == LOADGEN_CLIENT_IDLE) {
        fail(c, "not started", NULL);
    }
}

/* ---- sending ---- */

static void on_tcp_written(uv_write_t *req, int status)
{
    (void)status;
    free(req);
}

/* --proto tcp: the packet with its 2-byte length (proto/stream.h); what the kernel does not
 * take at once goes out later, in order, from a copy (uv_write). */
static void send_stream(struct loadgen_client *c, uint8_t *buf, size_t len)
{
    uint8_t hdr[STREAM_LEN_HDR];
    uv_buf_t b[2];
    size_t done = 0, left;
    uv_write_t *req;
    uv_buf_t rest;
    int ret;

    if (!c->is_tcp_connected || stream_put_len(hdr, len)) {
        c->st.send_errors++;
        return;
    }
    b[0] = uv_buf_init((char *)hdr, STREAM_LEN_HDR);
    b[1] = uv_buf_init((char *)buf, (unsigned)len);
    ret = uv_try_write((uv_stream_t *)&c->tcp, b, 2);
    if (ret >= 0) {
        done = (size_t)ret;
    } else if (ret != UV_EAGAIN) {
        c->st.send_errors++;
        return;
    }
    left = STREAM_LEN_HDR + len - done;
    if (left == 0) {
        return;
    }
    req = malloc(sizeof(*req) + left);
    if (!req) {
        c->st.send_errors++; /* the stream is broken now: the server closes it */
        return;
    }
    for (size_t i = done; i < STREAM_LEN_HDR + len; i++) {
        ((uint8_t *)(req + 1))[i - done] = i < STREAM_LEN_HDR ? hdr[i] : buf[i - STREAM_LEN_HDR];
    }
    rest = uv_buf_init((char *)(req + 1), (unsigned)left);
    if (uv_write(req, (uv_stream_t *)&c->tcp, &rest, 1, on_tcp_written) != 0) {
        free(req);
        c->st.send_errors++;
    }
}

static void send_datagram(struct loadgen_client *c, uint8_t *buf, size_t len)
{
    uv_buf_t b = uv_buf_init((char *)buf, (unsigned)len);
    int ret;

    if (c->w->cfg->is_tcp) {
        send_stream(c, buf, len);
        return;
    }
    ret = uv_udp_try_send(&c->udp, &b, 1, NULL);
    if (ret < 0) {
        c->st.send_errors++;
    }
}

static int send_control(struct loadgen_client *c, uint8_t opcode, const struct control_acks *acks,
                        uint32_t message_id, const uint8_t *payload, size_t payload_len)
{
    struct loadgen_worker *w = c->w;
    struct control_packet pkt;
    size_t plain_len, wire_len;
    int err;

    memset(&pkt, 0, sizeof(pkt));
    pkt.opcode = opcode;
    pkt.key_id = 0;
    memcpy(pkt.session_id, c->own_sid, SESSION_ID_LEN);
    pkt.acks = *acks;
    if (acks->n_acks > 0) {
        memcpy(pkt.acks.remote_session_id, c->peer_sid, SESSION_ID_LEN);
    }
    pkt.has_message_id = opcode != P_ACK_V1;
    pkt.message_id = message_id;
    pkt.payload = payload;
    pkt.payload_len = payload_len;
    err = control_packet_write(&pkt, w->ctl_plain, sizeof(w->ctl_plain), &plain_len);
    err = err ? err
              : tls_wrap_seal(&w->wrap, c->wrap_tx_id++, c->wrap_tx_time, w->ctl_plain, plain_len,
                              w->ctl_wire, sizeof(w->ctl_wire), &wire_len);
    if (err) {
        c->st.send_errors++;
        return err;
    }
    send_datagram(c, w->ctl_wire, wire_len);
    return 0;
}

static size_t max_chunk(const struct loadgen_client *c)
{
    return TLS_MTU - IPV4_UDP_HDR - tls_wrap_overhead(&c->w->wrap) -
           control_packet_header_len(CONTROL_SEND_ACK_MAX, true);
}

/* Move pending TLS output into reliable packets; send what is due and the pending ACKs. */
static void flush(struct loadgen_client *c, uint64_t now)
{
    struct control_acks acks;
    struct reliable_out *o;

    for (;;) {
        size_t out_len, n;
        const uint8_t *out = tls_session_out_peek(&c->tls, &out_len);

        if (!out_len || !reliable_can_send(&c->rel)) {
            break;
        }
        n = out_len < max_chunk(c) ? out_len : max_chunk(c);
        if (reliable_queue(&c->rel, P_CONTROL_V1, out, n, now, NULL)) {
            break;
        }
        tls_session_out_consume(&c->tls, n);
    }
    while ((o = reliable_next_due(&c->rel, now)) != NULL) {
        if (o->timeout_ms > c->rel.initial_timeout_ms) {
            c->st.retransmits++;
        }
        c->st.resets_sent += o->opcode == P_CONTROL_HARD_RESET_CLIENT_V2;
        /* No ACKs before the server's session id is known: there is nothing to ACK yet. */
        reliable_take_acks(&c->rel, &acks, c->has_peer_sid ? CONTROL_SEND_ACK_MAX : 0);
        send_control(c, o->opcode, &acks, o->message_id, o->payload, o->payload_len);
        reliable_sent(&c->rel, o, now);
    }
    while (c->has_peer_sid && reliable_has_acks(&c->rel)) {
        reliable_take_acks(&c->rel, &acks, CONTROL_MAX_ACKS);
        send_control(c, P_ACK_V1, &acks, 0, NULL, 0);
    }
}

/* One control-channel message: the text and its NUL in one TLS record (section 8.1). */
static int send_message(struct loadgen_client *c, const char *text)
{
    return tls_session_write(&c->tls, (const uint8_t *)text, strlen(text) + 1);
}

static void send_push_request(struct loadgen_client *c, uint64_t now)
{
    if (send_message(c, "PUSH_REQUEST")) {
        fail(c, "cannot write PUSH_REQUEST", NULL);
        return;
    }
    c->push_request_ms = now;
    c->st.push_requests++;
}

/* Apply the pushed compression framing (section 7) to payload; the result is in *out. */
static size_t frame(const struct loadgen_client *c, const uint8_t *in, size_t len, uint8_t *out,
                    size_t cap)
{
    switch (c->push.comp) {
    case LOADGEN_COMP_LZO_STUB:
        if (len + 1 > cap) {
            return 0;
        }
        out[0] = 0xFA;
        memcpy(out + 1, in, len);
        return len + 1;
    case LOADGEN_COMP_STUB:
        if (len == 0 || len + 1 > cap) {
            return 0;
        }
        out[0] = 0xFB; /* the first byte moves to the end */
        memcpy(out + 1, in + 1, len - 1);
        out[len] = in[0];
        return len + 1;
    case LOADGEN_COMP_STUB_V2:
        if (len > 0 && in[0] == 0x50) {
            if (len + 2 > cap) {
                return 0;
            }
            out[0] = 0x50;
            out[1] = 0x00;
            memcpy(out + 2, in, len);
            return len + 2;
        }
        break;
    case LOADGEN_COMP_NONE:
        break;
    }
    if (len > cap) {
        return 0;
    }
    memcpy(out, in, len);
    return len;
}

/* Undo the framing of a received payload; false if it is not framed as pushed. */
static bool unframe(const struct loadgen_client *c, uint8_t *p, size_t len, uint8_t **out,
                    size_t *out_len)
{
    switch (c->push.comp) {
    case LOADGEN_COMP_LZO_STUB:
        if (len < 1 || p[0] != 0xFA) {
            return false;
        }
        *out = p + 1;
        *out_len = len - 1;
        return true;
    case LOADGEN_COMP_STUB:
        if (len < 2 || p[0] != 0xFB) {
            return false;
        }
        p[0] = p[len - 1]; /* put the moved byte back in front */
        *out = p;
        *out_len = len - 1;
        return true;
    case LOADGEN_COMP_STUB_V2:
        if (len >= 1 && p[0] == 0x50) {
            if (len < 2 || p[1] != 0x00) {
                return false;
            }
            *out = p + 2;
            *out_len = len - 2;
            return true;
        }
        break;
    case LOADGEN_COMP_NONE:
        break;
    }
    *out = p;
    *out_len = len;
    return true;
}

static int send_data_payload(struct loadgen_client *c, const uint8_t *payload, size_t len,
                             uint64_t now)
{
    struct loadgen_worker *w = c->w;
    size_t framed_len, wire_len;
    int err;

    framed_len = frame(c, payload, len, w->data_framed, sizeof(w->data_framed));
    if (framed_len == 0) {
        c->st.send_errors++;
        return -PE_NOSPACE;
    }
    err = data_key_seal(&c->key, c->push.has_peer_id, c->push.peer_id, w->data_framed, framed_len,
                        w->data_wire, sizeof(w->data_wire), &wire_len);
    if (err) {
        c->st.send_errors++;
        return err;
    }
    send_datagram(c, w->data_wire, wire_len);
    c->last_tx_ms = now;
    return 0;
}

/* --lz4-v2-forge: the next bad compressed payload, in turn (n: a counter), into out (at least
 * 1100 bytes); its length. */
static size_t forge_bad_block(unsigned n, uint8_t *out)
{
    static const uint8_t zeros[60000];
    static const uint8_t far_match[] = {0x50, 0x01, 0x00, 0xFF, 0xFF};
    static const uint8_t unknown[] = {0x50, 0x07, 0x45, 0x00};
    uint8_t text[400];
    int z;

    switch (n % 4) {
    case 0: /* a bomb: about 250 bytes that would decompress to 60000 */
        z = LZ4_compress_default((const char *)zeros, (char *)out + 2, (int)sizeof(zeros), 1000);
        out[0] = 0x50;
        out[1] = 0x01;
        return z > 0 ? (size_t)z + 2 : 0;
    case 1:
        memcpy(out, far_match, sizeof(far_match));
        return sizeof(far_match);
    case 2: /* a valid block cut in half */
        for (size_t i = 0; i < sizeof(text); i++) {
            text[i] = (uint8_t)("abcdefgh"[i % 8] + i / 64);
        }
        z = LZ4_compress_default((const char *)text, (char *)out + 2, (int)sizeof(text), 1000);
        out[0] = 0x50;
        out[1] = 0x01;
        return z > 0 ? (size_t)z / 2 + 2 : 0;
    default:
        memcpy(out, unknown, sizeof(unknown));
        return sizeof(unknown);
    }
}

static void send_echo(struct loadgen_client *c, uint64_t now)
{
    struct loadgen_worker *w = c->w;
    size_t len = loadgen_icmp_echo_build(c->tun_addr, c->gateway, (uint16_t)c->index, ++c->icmp_seq,
                                         uv_hrtime() / 1000u, w->cfg->payload_len,
                                         w->data_plain + COMP_HEADROOM,
                                         sizeof(w->data_plain) - COMP_HEADROOM - COMP_TAILROOM);
    struct pbuf b = pbuf_make(w->data_plain, sizeof(w->data_plain), COMP_HEADROOM, len);

    if (len && w->cfg->lz4v2_forge) {
        /* the bad one first (sent as is: nothing was pushed), then the request compressed */
        struct comp_peer cp = {.framing = COMP_FRAMING_LZ4_V2, .is_compress = true};
        const struct comp_work cw = {w->comp_out, sizeof(w->comp_out), LOADGEN_DATA_BUF_LEN, NULL};
        size_t bad_len = forge_bad_block(c->icmp_seq, w->comp_out); /* comp_out: free now */

        if (bad_len > 0 && send_data_payload(c, w->comp_out, bad_len, now) == 0) {
            c->st.forged++;
        }
        if (comp_compress(&cp, &b, &cw, now) == 0) {
            comp_frame(COMP_FRAMING_LZ4_V2, &b);
        }
    }
    if (len && send_data_payload(c, pbuf_ptr(&b), b.len, now) == 0) {
        c->st.sent++;
    }
}

static void on_data_timer(uv_timer_t *t)
{
    struct loadgen_client *c = t->data;
    double pps = c->w->cfg->data_pps;
    uint64_t now = loadgen_now_ms(), due;

    if (c->state != LOADGEN_CLIENT_CONNECTED || loadgen_worker_phase(c->w) >= LOADGEN_PHASE_DRAIN) {
        stop_data(c);
        return;
    }
    due = (uint64_t)((double)(now - c->data_start_ms) * pps / 1000.0) + 1;
    if (due > c->data_sent_in_run + DATA_BURST_MAX) {
        c->data_sent_in_run = due - DATA_BURST_MAX; /* fell behind: do not try to catch up */
    }
    while (c->data_sent_in_run < due) {
        c->data_sent_in_run++;
        send_echo(c, now);
    }
}

static void start_data(struct loadgen_client *c, uint64_t now)
{
    double pps = c->w->cfg->data_pps;
    uint64_t interval_ms;

    if (pps <= 0 || loadgen_worker_phase(c->w) >= LOADGEN_PHASE_DRAIN) {
        return;
    }
    interval_ms = (uint64_t)(1000.0 / pps);
    c->data_start_ms = now;
    c->data_sent_in_run = 0;
    if (uv_timer_start(&c->data_timer, on_data_timer, 0, interval_ms ? interval_ms : 1) == 0) {
        c->is_data_running = true;
    }
}

/* ---- the key exchange ---- */

static void send_key_method2(struct loadgen_client *c)
{
    struct loadgen_worker *w = c->w;
    struct key_method2 *km = calloc(1, sizeof(*km));
    uint8_t buf[KM2_BUF_LEN];
    size_t len = 0;
    int err = -PE_NOSPACE;

    if (!km) {
        fail(c, "out of memory", NULL);
        return;
    }
    if (mbedtls_ctr_drbg_random(&w->drbg, c->pre_master, sizeof(c->pre_master)) ||
        mbedtls_ctr_drbg_random(&w->drbg, c->random1, sizeof(c->random1)) ||
        mbedtls_ctr_drbg_random(&w->drbg, c->random2, sizeof(c->random2))) {
        err = -PE_CRYPTO;
    } else {
        km->has_pre_master = true;
        memcpy(km->pre_master, c->pre_master, sizeof(km->pre_master));
        memcpy(km->random1, c->random1, sizeof(km->random1));
        memcpy(km->random2, c->random2, sizeof(km->random2));
        snprintf(km->options, sizeof(km->options), "%s", w->options_string);
        snprintf(km->peer_info, sizeof(km->peer_info), "%s", w->peer_info);
        snprintf(km->username, sizeof(km->username), "%s",
                 w->cfg->username ? w->cfg->username : "");
        snprintf(km->password, sizeof(km->password), "%s",
                 w->cfg->password ? w->cfg->password : "");
        err = key_method2_write(km, true, buf, sizeof(buf), &len);
        err = err ? err : tls_session_write(&c->tls, buf, len);
    }
    key_method2_wipe(km);
    free(km);
    mbedtls_platform_zeroize(buf, sizeof(buf));
    if (err) {
        fail(c, "cannot write the key-method 2 message", proto_strerror(err));
        return;
    }
    c->state = LOADGEN_CLIENT_KEY_METHOD;
}

static void handle_key_method2(struct loadgen_client *c, const uint8_t *msg, size_t len,
                               uint64_t now)
{
    struct key_method2 *km = calloc(1, sizeof(*km));
    int err;

    if (!km) {
        fail(c, "out of memory", NULL);
        return;
    }
    err = key_method2_parse(msg, len, false, km);
    if (!err) {
        memcpy(c->server_random1, km->random1, sizeof(c->server_random1));
        memcpy(c->server_random2, km->random2, sizeof(c->server_random2));
    }
    key_method2_wipe(km);
    free(km);
    if (err) {
        fail(c, "bad key-method 2 message from the server", proto_strerror(err));
        return;
    }
    c->state = LOADGEN_CLIENT_PUSH;
    c->km_done_ms = now;
    loadgen_push_init(&c->push);
    if (c->w->cfg->no_request_push) {
        send_push_request(c, now);
    }
}

/* The whole PUSH_REPLY is in: derive the data keys (section 5) and start the data channel. */
static void connect_data(struct loadgen_client *c, uint64_t now)
{
    const char *cipher_name = c->push.cipher[0] ? c->push.cipher : c->w->cfg->cipher;
    uint8_t block[KEY_BLOCK_LEN];
    enum data_cipher cipher;
    int err;

    if (!cipher_name) {
        fail(c, "the server pushed no cipher and --cipher is not set", NULL);
        return;
    }
    if (data_cipher_from_name(cipher_name, &cipher)) {
        fail(c, "unsupported data cipher", cipher_name);
        return;
    }
    if (!c->push.has_ifconfig || !loadgen_push_gateway(&c->push)) {
        fail(c, "PUSH_REPLY without ifconfig or route-gateway", NULL);
        return;
    }
    if (c->push.tls_ekm) {
        err = tls_session_export(&c->tls, KDF_EKM_LABEL_DATAKEYS, block, sizeof(block));
    } else {
        err = kdf_openvpn_prf(c->pre_master, c->random1, c->server_random1, c->random2,
                              c->server_random2, c->own_sid, c->peer_sid, block);
    }
    err = err ? err : data_key_init(&c->key, cipher, 0, block, false, DATA_REPLAY_WINDOW);
    mbedtls_platform_zeroize(block, sizeof(block));
    wipe_secrets(c);
    if (err) {
        fail(c, "data channel key setup failed", proto_strerror(err));
        return;
    }
    c->tun_addr = c->push.ifconfig_local;
    c->gateway = loadgen_push_gateway(&c->push);
    c->state = LOADGEN_CLIENT_CONNECTED;
    c->connected_ms = now;
    c->last_rx_ms = now;
    c->last_tx_ms = now;
    if (!c->was_connected) { /* a --reconnect settled at its first connect */
        c->was_connected = true;
        loadgen_worker_settled(c->w, true, now);
    }
    start_data(c, now);
}

static void handle_message(struct loadgen_client *c, const char *msg, size_t len, uint64_t now)
{
    int err;

    switch (control_msg_classify(msg, len)) {
    case CONTROL_MSG_PUSH_REPLY:
        c->st.push_replies++;
        if (c->state != LOADGEN_CLIENT_PUSH) {
            return; /* a second reply, e.g. to a PUSH_REQUEST that crossed the first */
        }
        err = loadgen_push_apply(&c->push, msg);
        if (err) {
            fail(c,
                 err == -2 ? "server pushed compression settings that are not allowed"
                           : "bad PUSH_REPLY",
                 msg);
            return;
        }
        if (c->push.is_complete) {
            connect_data(c, now);
        }
        break;
    case CONTROL_MSG_AUTH_FAILED:
        fail(c, "AUTH_FAILED", msg);
        break;
    case CONTROL_MSG_RESTART:
        if (c->state < LOADGEN_CLIENT_EXITING) {
            fail(c, "server sent RESTART", msg);
        }
        break;
    case CONTROL_MSG_HALT:
        if (c->state < LOADGEN_CLIENT_EXITING) {
            fail(c, "server sent HALT", msg);
        }
        break;
    default:
        break; /* AUTH_PENDING, INFO, ...: nothing to do for a load generator */
    }
}

static void handle_messages(struct loadgen_client *c, const uint8_t *buf, size_t len, uint64_t now)
{
    char msg[CONTROL_MSG_MAX];

    for (size_t off = 0; off < len && !loadgen_client_is_final(c);) {
        size_t consumed = 0, mlen = 0;
        int err = control_msg_next(buf + off, len - off, &consumed, msg, sizeof(msg), &mlen);

        off += consumed ? consumed : len - off;
        if (!err) {
            handle_message(c, msg, mlen, now);
        }
    }
}

/* Run the TLS handshake with what arrived, then read application data. */
static void drive_tls(struct loadgen_client *c, uint64_t now)
{
    struct loadgen_worker *w = c->w;
    char err[200] = "";
    int ret;

    if (c->state == LOADGEN_CLIENT_TLS) {
        ret = tls_session_handshake(&c->tls, err, sizeof(err));
        if (ret == -PE_WANT_IO) {
            return;
        }
        if (ret) {
            fail(c, "TLS handshake failed", err);
            return;
        }
        send_key_method2(c);
    }
    if (c->state < LOADGEN_CLIENT_KEY_METHOD || loadgen_client_is_final(c)) {
        return;
    }
    for (;;) {
        size_t n;

        if (tls_session_read(&c->tls, w->app_buf, LOADGEN_APP_BUF_LEN, &n)) {
            if (c->state < LOADGEN_CLIENT_EXITING) {
                fail(c, "TLS session closed by the server", NULL);
            }
            return;
        }
        if (n == 0) {
            return;
        }
        if (c->state == LOADGEN_CLIENT_KEY_METHOD) {
            handle_key_method2(c, w->app_buf, n, now);
        } else {
            handle_messages(c, w->app_buf, n, now);
        }
        if (loadgen_client_is_final(c)) {
            return;
        }
    }
}

/* ---- receiving ---- */

static void handle_data(struct loadgen_client *c, const uint8_t *buf, size_t len, uint64_t now)
{
    struct loadgen_worker *w = c->w;
    struct loadgen_echo_reply r;
    uint8_t *p;
    size_t plain_len, plen, reply_len;
    enum occ_type occ;

    if (c->state != LOADGEN_CLIENT_CONNECTED && c->state != LOADGEN_CLIENT_EXITING) {
        c->st.early_data++; /* no keys yet: the server may send before our push is complete */
        return;
    }
    if (data_key_open(&c->key, buf, len, w->data_plain, sizeof(w->data_plain), &plain_len) ||
        !unframe(c, w->data_plain, plain_len, &p, &plen)) {
        c->st.drops++;
        return;
    }
    if (w->cfg->lz4v2_forge) { /* what a "compress lz4-v2" client accepts, compressed or not */
        struct pbuf b = pbuf_make(p, plen, 0, plen);

        if (comp_unframe(COMP_FRAMING_LZ4_V2, &b, w->comp_out, sizeof(w->comp_out))) {
            c->st.drops++;
            return;
        }
        if (b.data == w->comp_out) {
            c->st.decompressed++;
        }
        p = pbuf_ptr(&b);
        plen = b.len;
    }
    c->last_rx_ms = now;
    if (occ_is_ping(p, plen)) {
        c->st.pings_rx++;
        return;
    }
    if (occ_parse(p, plen, &occ) == 0) {
        return; /* OCC from the server: nothing a client must answer in TLS mode */
    }
    if (loadgen_icmp_echo_reply_parse(p, plen, &r) && r.dst == c->tun_addr && r.src == c->gateway &&
        r.ident == (uint16_t)c->index) {
        uint64_t now_us = uv_hrtime() / 1000u;

        c->st.echoed++;
        if (loadgen_worker_phase(w) == LOADGEN_PHASE_STEADY) {
            c->st.echoed_steady++;
        }
        if (r.send_stamp && r.send_stamp <= now_us) {
            c->st.rtt_sum_us += now_us - r.send_stamp;
        }
        return;
    }
    reply_len = loadgen_icmp_echo_answer(p, plen, c->tun_addr);
    if (reply_len > 0) { /* another client's ping (client-to-client), answered like a host */
        if (send_data_payload(c, p, reply_len, now) == 0) {
            c->st.echo_answers++;
        }
        return;
    }
    c->st.other_rx++; /* e.g. IPv6 multicast the server's tun sends to every client */
}

static void handle_control(struct loadgen_client *c, const uint8_t *buf, size_t len, uint64_t now)
{
    struct loadgen_worker *w = c->w;
    struct control_packet pkt;
    uint32_t wrap_id, wrap_time;
    size_t plain_len;
    uint8_t *payload, *to_free;
    size_t payload_len;

    if (tls_wrap_open(&w->wrap, buf, len, w->ctl_plain, sizeof(w->ctl_plain), &plain_len, &wrap_id,
                      &wrap_time) ||
        control_packet_parse(w->ctl_plain, plain_len, &pkt)) {
        c->st.drops++;
        return;
    }
    if (c->has_peer_sid ? memcmp(pkt.session_id, c->peer_sid, SESSION_ID_LEN) != 0
                        : pkt.opcode != P_CONTROL_HARD_RESET_SERVER_V2) {
        c->st.drops++; /* another session, or not the server's reset we wait for */
        return;
    }
    if (w->wrap.mode != TLS_WRAP_NONE) {
        if (packet_id_rx_check(&c->wrap_rx, wrap_id)) {
            c->st.drops++;
            return;
        }
        packet_id_rx_commit(&c->wrap_rx, wrap_id);
    }
    if (pkt.acks.n_acks > 0) {
        if (memcmp(pkt.acks.remote_session_id, c->own_sid, SESSION_ID_LEN) != 0) {
            c->st.drops++;
            return;
        }
        reliable_process_acks(&c->rel, &pkt.acks, now);
    }
    if (!c->has_peer_sid) {
        memcpy(c->peer_sid, pkt.session_id, SESSION_ID_LEN);
        c->has_peer_sid = true;
    }
    c->last_rx_ms = now;
    if (w->cfg->half_open == LOADGEN_HALF_OPEN_RESET) {
        stop_half_open(c); /* the server's reset stays unanswered */
        return;
    }
    if (pkt.key_id != 0) {
        c->st.soft_resets_ignored++; /* renegotiation is not implemented */
        return;
    }
    if (pkt.has_message_id) {
        reliable_receive(&c->rel, pkt.message_id, pkt.payload, pkt.payload_len);
    }
    while (reliable_pop(&c->rel, &payload, &payload_len, &to_free)) {
        if (c->state == LOADGEN_CLIENT_RESET) {
            /* Message 0 is the server's hard reset; its payload could only hold early-negotiation
             * TLVs, which matter for tls-crypt-v2 alone. TLS starts now. */
            c->state = LOADGEN_CLIENT_TLS;
        } else if (payload_len > 0 && c->state < LOADGEN_CLIENT_DONE &&
                   tls_session_feed(&c->tls, payload, payload_len)) {
            fail(c, "too much unread TLS data", NULL);
        }
        free(to_free);
    }
    if (w->cfg->half_open == LOADGEN_HALF_OPEN_ACK && c->state == LOADGEN_CLIENT_TLS) {
        flush(c, now); /* the ACK of the server's reset, then silence: no ClientHello */
        stop_half_open(c);
        return;
    }
    if (!loadgen_client_is_final(c)) {
        drive_tls(c, now);
    }
    if (!loadgen_client_is_final(c)) {
        flush(c, now);
    }
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    struct loadgen_client *c = h->data;

    (void)suggested;
    buf->base = (char *)c->w->rx_buf;
    buf->len = sizeof(c->w->rx_buf);
}

static void handle_packet(struct loadgen_client *c, const uint8_t *p, ssize_t nread)
{
    uint8_t op;

    if (nread == 0 || loadgen_client_is_final(c)) {
        return;
    }
    if (c->state == LOADGEN_CLIENT_RETRY_WAIT) {
        c->st.drops++; /* the abandoned session's: no session until connect-retry ends */
        return;
    }
    op = packet_opcode(p[0]);
    if (op == P_DATA_V2 || op == P_DATA_V1) {
        handle_data(c, p, (size_t)nread, loadgen_now_ms());
    } else if (packet_is_control(op) && op != P_CONTROL_HARD_RESET_CLIENT_V1 &&
               op != P_CONTROL_HARD_RESET_CLIENT_V2 && op != P_CONTROL_HARD_RESET_CLIENT_V3 &&
               op != P_CONTROL_WKC_V1) {
        handle_control(c, p, (size_t)nread, loadgen_now_ms());
        loadgen_worker_wake(c->w, c); /* an ACK or a reply to send, a retransmission to time */
    } else {
        c->st.drops++; /* a client drops client resets and unknown opcodes */
    }
}

static void on_recv(uv_udp_t *h, ssize_t nread, const uv_buf_t *buf, const struct sockaddr *addr,
                    unsigned flags)
{
    struct loadgen_client *c = h->data;

    (void)addr;
    (void)flags;
    if (nread < 0) {
        c->st.send_errors++; /* e.g. ECONNREFUSED: nobody listens on the server port */
        return;
    }
    handle_packet(c, (const uint8_t *)buf->base, nread);
}

#define TCP_RX_MAX 4096 /* largest packet taken from the server over TCP */

/* --proto tcp: bytes from the server's stream, cut into packets (proto/stream.h). */
static void on_tcp_read(uv_stream_t *h, ssize_t nread, const uv_buf_t *buf)
{
    struct loadgen_client *c = h->data;
    const uint8_t *p = (const uint8_t *)buf->base;
    size_t n = nread > 0 ? (size_t)nread : 0, off = 0;

    if (nread < 0) {
        if (c->state == LOADGEN_CLIENT_EXITING) {
            c->state = LOADGEN_CLIENT_DONE; /* the server ends the session on our EXIT */
        } else if (!loadgen_client_is_final(c)) {
            fail(c, "the server closed the TCP connection", uv_strerror((int)nread));
        }
        uv_read_stop(h);
        return;
    }
    while (off < n && !loadgen_client_is_final(c)) {
        const uint8_t *pkt;
        size_t pkt_len, used, take;
        int err;

        if (c->tcp_rx_len > 0) { /* complete the packet that started in an earlier read */
            size_t need = STREAM_LEN_HDR;

            if (c->tcp_rx_len >= STREAM_LEN_HDR) {
                need += (size_t)c->tcp_rx[0] << 8 | c->tcp_rx[1];
            }
            take = need - c->tcp_rx_len < n - off ? need - c->tcp_rx_len : n - off;
            if (need > STREAM_LEN_HDR + TCP_RX_MAX) {
                fail(c, "bad packet length from the server", NULL);
                return;
            }
            memcpy(c->tcp_rx + c->tcp_rx_len, p + off, take);
            c->tcp_rx_len += take;
            off += take;
            err = stream_next(c->tcp_rx, c->tcp_rx_len, TCP_RX_MAX, &pkt, &pkt_len, &used);
            if (err == -PE_SHORT) {
                continue;
            }
            c->tcp_rx_len = 0;
            if (err) {
                fail(c, "bad packet length from the server", NULL);
                return;
            }
            handle_packet(c, pkt, (ssize_t)pkt_len);
            continue;
        }
        err = stream_next(p + off, n - off, TCP_RX_MAX, &pkt, &pkt_len, &used);
        if (err == -PE_SHORT) {
            c->tcp_rx_len = n - off; /* below STREAM_LEN_HDR + TCP_RX_MAX */
            memcpy(c->tcp_rx, p + off, c->tcp_rx_len);
            return;
        }
        if (err) {
            fail(c, "bad packet length from the server", NULL);
            return;
        }
        handle_packet(c, pkt, (ssize_t)pkt_len);
        off += used;
    }
}

static void on_tcp_connected(uv_connect_t *req, int status)
{
    struct loadgen_client *c = req->data;

    if (status < 0 || loadgen_client_is_final(c)) {
        if (!loadgen_client_is_final(c)) {
            fail(c, "cannot connect to the server over TCP", uv_strerror(status));
        }
        return;
    }
    c->is_tcp_connected = true;
    if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_tcp_read) != 0) {
        fail(c, "cannot read the TCP connection", NULL);
        return;
    }
    flush(c, loadgen_now_ms()); /* the hard reset, queued at the start */
}

/* Open the client's socket: UDP, or a TCP connection under way. 0 or -1 after fail(). */
static int open_socket(struct loadgen_client *c, const struct sockaddr_in *local)
{
    struct loadgen_worker *w = c->w;
    const struct loadgen_config *cfg = w->cfg;
    int err;

    if (cfg->is_tcp) {
        c->tcp_rx = malloc(STREAM_LEN_HDR + TCP_RX_MAX);
        err = c->tcp_rx ? uv_tcp_init(&w->loop, &c->tcp) : UV_ENOMEM;
        if (err) {
            fail(c, "cannot create a TCP socket", uv_strerror(err));
            return -1;
        }
        c->tcp.data = c;
        c->connect_req.data = c;
        c->has_socket = true;
        w->n_open_handles++;
        (void)uv_tcp_nodelay(&c->tcp, 1);
        err = local->sin_addr.s_addr ? uv_tcp_bind(&c->tcp, (const struct sockaddr *)local, 0) : 0;
        err = err ? err
                  : uv_tcp_connect(&c->connect_req, &c->tcp, (const struct sockaddr *)&cfg->server,
                                   on_tcp_connected);
        if (err) {
            fail(c, "cannot bind or connect the TCP socket", uv_strerror(err));
            return -1;
        }
        return 0;
    }
    err = uv_udp_init(&w->loop, &c->udp);
    if (err) {
        fail(c, "cannot create a UDP socket", uv_strerror(err));
        return -1;
    }
    c->udp.data = c;
    c->has_socket = true;
    w->n_open_handles++;
    err = uv_udp_bind(&c->udp, (const struct sockaddr *)local, 0);
    err = err ? err : uv_udp_connect(&c->udp, (const struct sockaddr *)&cfg->server);
    err = err ? err : uv_udp_recv_start(&c->udp, on_alloc, on_recv);
    if (err) {
        fail(c, "cannot bind or connect the UDP socket", uv_strerror(err));
        return -1;
    }
    return 0;
}

/* ---- life cycle ---- */

static void begin_attempt(struct loadgen_client *c, uint64_t now);

static void on_handle_closed(uv_handle_t *h)
{
    struct loadgen_client *c = h->data;

    loadgen_worker_handle_closed(c->w);
}

void loadgen_client_start(struct loadgen_client *c, uint64_t now)
{
    struct loadgen_worker *w = c->w;
    const struct loadgen_config *cfg = w->cfg;
    struct sockaddr_in local;
    int err;

    c->state = LOADGEN_CLIENT_RESET;
    c->start_ms = now;
    c->last_rx_ms = now;
    memset(&local, 0, sizeof(local));
    local.sin_family = AF_INET;
    if (cfg->bind_first) {
        uint32_t n_addrs = cfg->bind_last - cfg->bind_first + 1;

        local.sin_addr.s_addr = htonl(cfg->bind_first + (uint32_t)(c->index % n_addrs));
    }
    if (open_socket(c, &local)) {
        return;
    }
    err = uv_timer_init(&w->loop, &c->data_timer);
    if (err) {
        fail(c, "cannot create a timer", uv_strerror(err));
        return;
    }
    c->data_timer.data = c;
    c->has_timer = true;
    w->n_open_handles++;
    begin_attempt(c, now);
}

/* A new session on the client's socket: a fresh session id, wrap packet_id and time, TLS
 * session and reliability layer, and the hard reset queued (sent now over UDP). */
static void begin_attempt(struct loadgen_client *c, uint64_t now)
{
    struct loadgen_worker *w = c->w;
    const struct loadgen_config *cfg = w->cfg;

    c->state = LOADGEN_CLIENT_RESET;
    c->attempt_ms = now;
    c->has_peer_sid = false;
    do {
        if (mbedtls_ctr_drbg_random(&w->drbg, c->own_sid, sizeof(c->own_sid))) {
            fail(c, "random generator failed", NULL);
            return;
        }
    } while (session_id_is_zero(c->own_sid));
    c->wrap_tx_id = 1;
    c->wrap_tx_time = (uint32_t)time(NULL);
    packet_id_rx_init(&c->wrap_rx, WRAP_REPLAY_WINDOW);
    reliable_init(&c->rel, 0, 0, TLS_TIMEOUT_MS);
    if (tls_session_init(&c->tls, &w->tls)) {
        fail(c, "cannot set up a TLS session", NULL);
        return;
    }
    c->has_tls = true;
    /* P_CONTROL_HARD_RESET_CLIENT_V2, message 0, no payload (section 3.5 step 1). */
    if (reliable_queue(&c->rel, P_CONTROL_HARD_RESET_CLIENT_V2, NULL, 0, now, NULL)) {
        fail(c, "out of memory", NULL);
        return;
    }
    if (!cfg->is_tcp) {
        flush(c, now); /* over TCP once connected (on_tcp_connected) */
    }
}

/* --retry: the session did not connect within the hand-window. As a 2.6 client (ssl.c: "TLS key
 * negotiation failed to occur within hand-window", then a SIGUSR1 restart; init.c
 * socket_restart_pause): drop it, wait connect-retry (1 s; from the 5th failed attempt in a row
 * doubled for each, at most 300 s), then start a new session. */
static void give_up_attempt(struct loadgen_client *c, uint64_t now)
{
    uint64_t delay_s = 1;

    c->n_failed_attempts++;
    if (c->n_failed_attempts > 4) {
        unsigned shift = c->n_failed_attempts - 4 < 15 ? c->n_failed_attempts - 4 : 15;

        delay_s <<= shift;
    }
    if (delay_s > 300) {
        delay_s = 300;
    }
    c->st.restarts++;
    reliable_clear(&c->rel);
    if (c->has_tls) {
        tls_session_clear(&c->tls);
        c->has_tls = false;
    }
    data_key_clear(&c->key);
    wipe_secrets(c);
    loadgen_push_init(&c->push);
    c->km_done_ms = c->push_request_ms = 0;
    c->state = LOADGEN_CLIENT_RETRY_WAIT;
    c->retry_at_ms = now + delay_s * 1000u;
}

static void begin_exit(struct loadgen_client *c, uint64_t now)
{
    uint8_t msg[OCC_STRING_SIZE + 1];
    size_t len;

    stop_data(c);
    if (c->push.cc_exit) {
        /* protocol-flags cc-exit: the EXIT control message, reliable (section 8.2). */
        if (send_message(c, "EXIT")) {
            fail(c, "cannot write EXIT", NULL);
            return;
        }
        c->state = LOADGEN_CLIENT_EXITING;
        c->exit_ms = now;
        flush(c, now);
        return;
    }
    /* Without cc-exit a 2.6 client sends OCC_EXIT on the data channel (section 8.5). */
    if (occ_write(OCC_EXIT, msg, sizeof(msg), &len) || send_data_payload(c, msg, len, now)) {
        fail(c, "cannot send OCC_EXIT", NULL);
        return;
    }
    c->state = LOADGEN_CLIENT_DONE;
    c->exit_ms = now;
}

void loadgen_client_tick(struct loadgen_client *c, uint64_t now)
{
    const struct loadgen_config *cfg = c->w->cfg;

    if (c->state == LOADGEN_CLIENT_IDLE || loadgen_client_is_final(c)) {
        return;
    }
    if ((c->state < LOADGEN_CLIENT_CONNECTED || c->state == LOADGEN_CLIENT_RETRY_WAIT) &&
        loadgen_worker_phase(c->w) >= LOADGEN_PHASE_EXIT) {
        /* Only a stopped run (signal) gets here with clients still connecting. */
        fail(c, "the run was stopped before it connected", loadgen_client_state_name(c->state));
        return;
    }
    if (c->state == LOADGEN_CLIENT_RETRY_WAIT) {
        if (now >= c->retry_at_ms) {
            begin_attempt(c, now);
        }
        return;
    }
    /* hand-window: for the key negotiation (2.6 ssl.c, until S_ACTIVE), then again for the push
     * reply (2.6 push.c: no reply to PUSH_REQUEST within hand-window restarts) */
    if (c->state < LOADGEN_CLIENT_CONNECTED &&
        now - (c->state == LOADGEN_CLIENT_PUSH ? c->km_done_ms : c->attempt_ms) >=
            (uint64_t)cfg->hand_window_s * 1000u) {
        if (cfg->retry) {
            give_up_attempt(c, now);
            return;
        }
        fail(c, "not connected within the hand-window", loadgen_client_state_name(c->state));
        return;
    }
    switch (c->state) {
    case LOADGEN_CLIENT_PUSH:
        if (c->push_request_ms ? now - c->push_request_ms >= PUSH_REQUEST_REPEAT_MS
                               : now - c->km_done_ms >= PUSH_REQUEST_FIRST_MS) {
            send_push_request(c, now);
        }
        break;
    case LOADGEN_CLIENT_CONNECTED:
        if (c->push.ping_restart_s > 0 &&
            now - c->last_rx_ms >= (uint64_t)c->push.ping_restart_s * 1000u) {
            if (cfg->reconnect) { /* as a 2.6 client's SIGUSR1 restart: a new session */
                stop_data(c);
                c->n_failed_attempts = 0;
                give_up_attempt(c, now);
                return;
            }
            fail(c, "ping-restart: nothing heard from the server", NULL);
            return;
        }
        if (loadgen_worker_phase(c->w) >= LOADGEN_PHASE_EXIT) {
            if (!c->w->exit_start_ms) {
                c->w->exit_start_ms = now;
            }
            if (now >= c->w->exit_start_ms + exit_spread_ms() * (uint64_t)(c - c->w->clients) /
                                                 (c->w->n_clients ? c->w->n_clients : 1)) {
                begin_exit(c, now);
            }
            break;
        }
        if (c->push.ping_s > 0 && now - c->last_tx_ms >= (uint64_t)c->push.ping_s * 1000u &&
            send_data_payload(c, occ_ping_magic, sizeof(occ_ping_magic), now) == 0) {
            c->st.pings_tx++;
        }
        break;
    case LOADGEN_CLIENT_EXITING:
        if (reliable_all_acked(&c->rel)) {
            c->state = LOADGEN_CLIENT_DONE;
            c->exit_acked_ms = now;
        } else if (now - c->exit_ms >=
                   EXIT_ACK_TIMEOUT_MS + EXIT_ACK_MS_PER_CLIENT * (uint64_t)c->w->n_clients) {
            fail(c, "EXIT was not acknowledged", NULL);
        }
        break;
    default:
        break;
    }
    if (!loadgen_client_is_final(c)) {
        flush(c, now);
    }
}

void loadgen_client_close(struct loadgen_client *c)
{
    stop_data(c);
    if (c->has_timer) {
        uv_close((uv_handle_t *)&c->data_timer, on_handle_closed);
        c->has_timer = false;
    }
    if (c->has_socket && c->w->cfg->is_tcp) {
        uv_read_stop((uv_stream_t *)&c->tcp);
        uv_close((uv_handle_t *)&c->tcp, on_handle_closed);
        c->has_socket = false;
    } else if (c->has_socket) {
        uv_udp_recv_stop(&c->udp);
        uv_close((uv_handle_t *)&c->udp, on_handle_closed);
        c->has_socket = false;
    }
    free(c->tcp_rx);
    c->tcp_rx = NULL;
    reliable_clear(&c->rel);
    if (c->has_tls) {
        tls_session_clear(&c->tls);
        c->has_tls = false;
    }
    data_key_clear(&c->key);
    wipe_secrets(c);
}
