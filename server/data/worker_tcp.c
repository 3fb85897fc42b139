/* server/data/worker_tcp.c: a worker's TCP clients: the connections its listening socket accepts
 * (the kernel's SO_REUSEPORT group picks the worker, server/data/tcp.h), their reads (large
 * chunks, cut into packets by openvpn's 2-byte length framing, proto/stream.h), their writes
 * (every packet queued for a connection during one callback leaves in one send at its end),
 * and their limits: a connection whose client has not completed its handshake within
 * hand-window is closed, bad framing closes it, and at most tcp-queue-limit packets wait for a
 * client that does not read (the rest are dropped and counted).
 *
 * A data packet read from a connection goes the way of a UDP datagram (wk_handle_datagram, with
 * the connection's address as its source); a control packet goes to the acceptor with the
 * connection's link id, and the acceptor's answers come back as MSG_LINK_SEND. The session's
 * peer-id is picked on this worker (acceptor), so the connection, its session's data channel
 * and its TUN traffic stay on one thread. Worker thread only; the per-packet path takes no lock
 * and allocates nothing (a connection's buffers are allocated when it is accepted and when it
 * is first written to).
 */
#include "server/data/worker_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/errors.h"
#include "proto/packet.h"
#include "proto/stream.h"
#include "server/data/tcp.h"

#define TCP_ACCEPTS_PER_WAKEUP 64
#define TCP_READ_ROUNDS                                                                            \
    4 /* reads of TCP_READ_LEN per wakeup, so one client cannot starve others                      \
       */

struct tcp_conn {
    struct worker *w;
    int fd;
    uv_poll_t poll;
    size_t slot;
    uint64_t link;
    union udp_addr remote;
    struct peer *peer;       /* its session's peer, once installed */
    struct tcp_proxy *proxy; /* port-share: proxied to the port-share server (worker_proxy.c) */
    bool is_checked;         /* port-share: its first bytes were an OpenVPN client's */
    uint64_t accepted_ms;
    bool is_closing;
    bool is_write_wanted; /* polling for UV_WRITABLE: the kernel's send buffer was full */
    bool is_dirty;        /* on w->tcp_dirty */
    uint8_t tos;          /* passtos: the TOS byte last given to the socket (0: the default) */
    struct tcp_conn *dirty_next;
    /* Packets to send, framed: [tx_head, tx_tail) of tx (tx_cap bytes, allocated at the first
     * packet); tx_frame is the start of the first frame not wholly sent, n_queued the frames
     * from there on (bounded by tcp-queue-limit). */
    uint8_t *tx;
    size_t tx_cap, tx_head, tx_tail, tx_frame;
    unsigned n_queued;
    /* The start of a packet whose end has not arrived yet (at most one packet and its header). */
    size_t rx_len;
    uint8_t rx[STREAM_LEN_HDR + TCP_MAX_PACKET];
};

/* Log a line about a connection, rate-limited per worker. */
static void conn_log(struct worker *w, const struct tcp_conn *c, enum log_level lvl,
                     const char *what)
{
    uint32_t n_suppressed = 0;
    char addr[UDP_ADDR_STR_MAX];

    if (!log_enabled(lvl) ||
        !log_ratelimit_allow(&w->rl_tcp, uv_now(&w->loop), 20, 10, &n_suppressed)) {
        return;
    }
    if (n_suppressed) {
        log_msg(LOG_INFO, "worker %d: %u similar TCP messages suppressed", w->index, n_suppressed);
    }
    log_msg(lvl, "worker %d: TCP connection %s%s%s: %s", w->index,
            udp_addr_str(&c->remote, addr, sizeof(addr)), c->peer ? " of peer " : "",
            c->peer ? c->peer->common_name : "", what);
}

static void on_conn_closed(uv_handle_t *h)
{
    struct tcp_conn *c = h->data;

    close(c->fd);
    free(c->tx);
    free(c);
}

static void dirty_unlink(struct worker *w, struct tcp_conn *c)
{
    struct tcp_conn **pp = &w->tcp_dirty;

    while (*pp && *pp != c) {
        pp = &(*pp)->dirty_next;
    }
    if (*pp) {
        *pp = c->dirty_next;
    }
    c->is_dirty = false;
}

/* Stop c's handle and free it once libuv lets go (no message, no session). */
static void conn_release(struct worker *w, struct tcp_conn *c)
{
    if (c->proxy) { /* stopping */
        wk_proxy_free(c->proxy, true);
        c->proxy = NULL;
    }
    w->conns[c->slot] = NULL;
    w->conn_gen[c->slot]++;
    w->n_conns--;
    uv_poll_stop(&c->poll);
    uv_close((uv_handle_t *)&c->poll, on_conn_closed);
}

void wk_tcp_close(struct worker *w, struct tcp_conn *c, enum log_level lvl, const char *why)
{
    struct msg *m;

    if (c->is_closing) {
        return;
    }
    c->is_closing = true;
    conn_log(w, c, lvl, why);
    if (c->proxy) {
        wk_proxy_free(c->proxy, false);
        c->proxy = NULL;
        c->tx_tail = c->tx_head;
    }
    if (c->tx_tail > c->tx_head) { /* what the client was last told (AUTH_FAILED, RESTART) */
        (void)send(c->fd, c->tx + c->tx_head, c->tx_tail - c->tx_head, MSG_DONTWAIT | MSG_NOSIGNAL);
    }
    if (c->is_dirty) {
        dirty_unlink(w, c);
    }
    if (c->peer) {
        struct peer *p = c->peer;

        c->peer = NULL;
        p->conn = NULL;
        wk_forget_peer(w, p, GONE_LINK_CLOSED);
    }
    /* The sessions on it end (an unfinished handshake has no peer here yet). */
    m = msg_new(MSG_LINK_CLOSED, NULL, NULL, 0);
    if (m) {
        m->link = c->link;
        m->from = c->remote;
        mailbox_post(w->env->mb, MAILBOX_ACCEPTOR, m);
    } else {
        log_msg(LOG_ERR, "worker %d: out of memory reporting a closed TCP connection", w->index);
    }
    stat_inc(&w->stats.tcp_closed);
    conn_release(w, c);
}

/* The open connection of link on this worker, or NULL (closed since, or not this worker's). */
static struct tcp_conn *conn_of(const struct worker *w, uint64_t link)
{
    size_t slot = tcp_link_slot(link);
    struct tcp_conn *c;

    if (link == 0 || tcp_link_worker(link) != w->index || slot >= w->n_conn_slots) {
        return NULL;
    }
    c = w->conns[slot];
    return c && c->link == link && !c->is_closing ? c : NULL;
}

/* Write what c has queued, as far as the kernel takes it. */
static void conn_write(struct worker *w, struct tcp_conn *c)
{
    while (c->tx_head < c->tx_tail) {
        ssize_t n =
            send(c->fd, c->tx + c->tx_head, c->tx_tail - c->tx_head, MSG_DONTWAIT | MSG_NOSIGNAL);

        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                wk_tcp_close(w, c, LOG_INFO, strerror(errno));
                return;
            }
            break;
        }
        c->tx_head += (size_t)n;
    }
    /* whole frames sent leave the queue */
    while (c->tx_frame + STREAM_LEN_HDR <= c->tx_head) {
        size_t flen = STREAM_LEN_HDR + ((size_t)c->tx[c->tx_frame] << 8 | c->tx[c->tx_frame + 1]);

        if (c->tx_frame + flen > c->tx_head) {
            break;
        }
        c->tx_frame += flen;
        c->n_queued--;
    }
    if (c->tx_head == c->tx_tail) {
        c->tx_head = c->tx_tail = c->tx_frame = 0;
        c->n_queued = 0;
        if (c->is_write_wanted) {
            c->is_write_wanted = false;
            uv_poll_start(&c->poll, UV_READABLE, wk_tcp_on_conn);
        }
    } else if (!c->is_write_wanted) {
        c->is_write_wanted = true;
        uv_poll_start(&c->poll, UV_READABLE | UV_WRITABLE, wk_tcp_on_conn);
    }
}

void wk_tcp_flush(struct worker *w)
{
    struct tcp_conn *c;

    while ((c = w->tcp_dirty) != NULL) {
        w->tcp_dirty = c->dirty_next;
        c->is_dirty = false;
        if (!c->is_write_wanted) { /* else the kernel's buffer is full: wait for UV_WRITABLE */
            conn_write(w, c);
        }
    }
}

uint8_t *wk_tcp_reserve(struct worker *w, struct tcp_conn *c, size_t *cap)
{
    size_t need = STREAM_LEN_HDR + TCP_MAX_SEND;

    if (c->is_closing) {
        return NULL;
    }
    if (c->n_queued > 0 && !c->is_write_wanted &&
        (c->n_queued >= (unsigned)w->env->cfg->net.tcp_queue_limit ||
         c->tx_tail + need > c->tx_cap)) {
        conn_write(w, c); /* a burst (TUN super-packets): hand the kernel what waits first */
        if (c->is_closing) {
            return NULL;
        }
    }
    if (c->n_queued >= (unsigned)w->env->cfg->net.tcp_queue_limit) {
        stat_inc(&w->stats.drop_tcp_queue); /* tcp-queue-limit: the client does not read */
        return NULL;
    }
    if (!c->tx) {
        /* once per connection: its first packet out */
        c->tx_cap = (size_t)w->env->cfg->net.tcp_queue_limit * need;
        c->tx = malloc(c->tx_cap);
        if (!c->tx) {
            c->tx_cap = 0;
            stat_inc(&w->stats.drop_send);
            return NULL;
        }
    }
    if (c->tx_tail + need > c->tx_cap && c->tx_head > 0) {
        memmove(c->tx, c->tx + c->tx_head, c->tx_tail - c->tx_head);
        c->tx_tail -= c->tx_head;
        c->tx_frame -= c->tx_head;
        c->tx_head = 0;
    }
    if (c->tx_tail + need > c->tx_cap) {
        stat_inc(&w->stats.drop_tcp_queue);
        return NULL;
    }
    *cap = TCP_MAX_SEND;
    return c->tx + c->tx_tail + STREAM_LEN_HDR;
}

void wk_tcp_commit(struct worker *w, struct tcp_conn *c, size_t len)
{
    if (stream_put_len(c->tx + c->tx_tail, len)) {
        return;
    }
    c->tx_tail += STREAM_LEN_HDR + len;
    c->n_queued++;
    if (!c->is_dirty) {
        c->is_dirty = true;
        c->dirty_next = w->tcp_dirty;
        w->tcp_dirty = c;
    }
}

void wk_tcp_set_tos(struct tcp_conn *c, uint8_t tos)
{
    bool is_v6 =
        c->remote.sa.sa_family == AF_INET6 && !IN6_IS_ADDR_V4MAPPED(&c->remote.in6.sin6_addr);
    int value = tos;

    if (c->tos == tos) {
        return;
    }
    /* a refusal changes nothing but the marking, as in 2.6 (not checked there either); the
     * connection is not asked again until the DSCP changes */
    (void)setsockopt(c->fd, is_v6 ? IPPROTO_IPV6 : IPPROTO_IP, is_v6 ? IPV6_TCLASS : IP_TOS, &value,
                     sizeof(value));
    c->tos = tos;
}

void wk_tcp_link_send(struct worker *w, uint64_t link, const uint8_t *pkt, size_t len)
{
    struct tcp_conn *c = conn_of(w, link);
    uint8_t *out;
    size_t cap;

    if (!c || len == 0) {
        return; /* closed meanwhile: the acceptor learns it from MSG_LINK_CLOSED */
    }
    out = wk_tcp_reserve(w, c, &cap);
    if (!out || len > cap) {
        return; /* the reliability layer sends it again */
    }
    memcpy(out, pkt, len);
    wk_tcp_commit(w, c, len);
}

void wk_tcp_link_close(struct worker *w, uint64_t link)
{
    struct tcp_conn *c = conn_of(w, link);

    if (c) {
        wk_tcp_close(w, c, LOG_INFO, "session ended");
    }
}

bool wk_tcp_bind_peer(struct worker *w, struct peer *p)
{
    struct tcp_conn *c = conn_of(w, p->link);

    if (!c || c->peer) {
        return false;
    }
    c->peer = p;
    p->conn = c;
    return true;
}

/* One packet read from c. */
static void conn_packet(struct worker *w, struct tcp_conn *c, const uint8_t *pkt, size_t len)
{
    struct msg *m;

    if (packet_opcode(pkt[0]) == P_DATA_V2) {
        wk_handle_datagram(w, pkt, len, &c->remote);
        return;
    }
    if (packet_opcode(pkt[0]) == P_DATA_V1 && c->peer) {
        /* a client without peer-id: its connection names it */
        wk_handle_data_v1(w, c->peer->peer_id, pkt, len, &c->remote);
        return;
    }
    /* control (or junk): the acceptor judges it, as a datagram on its UDP socket */
    m = msg_pool_take(&w->pool, MSG_PACKET, pkt, len);
    stat_inc(&w->stats.handed_over);
    if (!m) {
        wk_drop(w, &w->stats.drop_handover, &c->remote,
                "hand-over refused: the acceptor is behind");
        return;
    }
    m->from = c->remote;
    m->link = c->link;
    mailbox_post(w->env->mb, MAILBOX_ACCEPTOR, m);
}

void wk_tcp_proxy_done(struct worker *w, struct tcp_conn *c)
{
    wk_tcp_close(w, c, LOG_INFO, "port-share connection ended");
}

const union udp_addr *wk_tcp_conn_remote(const struct tcp_conn *c)
{
    return &c->remote;
}

/* port-share: c's first bytes (buf, len) are not an OpenVPN client's: proxy it. */
static void conn_share(struct worker *w, struct tcp_conn *c, const uint8_t *buf, size_t len)
{
    c->proxy = wk_proxy_new(w, c, &c->poll, c->fd, buf, len);
    if (!c->proxy) {
        wk_tcp_close(w, c, LOG_WARN, "port-share: cannot reach the port-share server: closing");
        return;
    }
    stat_inc(&w->stats.tcp_port_share);
    conn_log(w, c, LOG_INFO, "not an OpenVPN client: proxied to the port-share server");
}

/* Read what c's client sent, in chunks of up to TCP_READ_LEN bytes, and handle each packet. */
static void conn_read(struct worker *w, struct tcp_conn *c)
{
    for (int round = 0; round < TCP_READ_ROUNDS && !c->is_closing; round++) {
        uint8_t *buf = w->tcp_rx;
        size_t have = c->rx_len, off = 0;
        ssize_t n;

        memcpy(buf, c->rx, have);
        n = recv(c->fd, buf + have, TCP_READ_LEN, MSG_DONTWAIT);
        if (n == 0) {
            wk_tcp_close(w, c, LOG_INFO, "closed by the client");
            return;
        }
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                wk_tcp_close(w, c, LOG_INFO, strerror(errno));
            }
            return;
        }
        have += (size_t)n;
        stat_add(&w->stats.tcp_bytes_in, (uint64_t)n);
        if (w->env->port_share && !c->is_checked) {
            int is_openvpn = stream_is_openvpn_start(buf, have);

            if (is_openvpn < 0) { /* fewer than 3 bytes: wait for more */
                c->rx_len = have;
                memcpy(c->rx, buf, have);
                return;
            }
            if (is_openvpn == 0) {
                conn_share(w, c, buf, have);
                return;
            }
            c->is_checked = true;
        }
        while (!c->is_closing) {
            const uint8_t *pkt;
            size_t pkt_len, used;
            int err = stream_next(buf + off, have - off, TCP_MAX_PACKET, &pkt, &pkt_len, &used);

            if (err == -PE_SHORT) {
                break;
            }
            if (err) {
                /* 2.6: "Bad encapsulated packet length from peer", and a restart */
                stat_inc(&w->stats.drop_tcp_framing);
                wk_tcp_close(w, c, LOG_WARN,
                             "bad packet length in the TCP stream (0, or more than the "
                             "largest packet): closing");
                return;
            }
            conn_packet(w, c, pkt, pkt_len);
            off += used;
        }
        if (c->is_closing) {
            return;
        }
        c->rx_len = have - off; /* below STREAM_LEN_HDR + TCP_MAX_PACKET: stream_next said so */
        memcpy(c->rx, buf + off, c->rx_len);
        if ((size_t)n < TCP_READ_LEN) {
            return;
        }
    }
}

void wk_tcp_on_conn(uv_poll_t *h, int status, int events)
{
    struct tcp_conn *c = h->data;
    struct worker *w = c->w;

    if (c->proxy && status >= 0) {
        if (!wk_proxy_on_client(c->proxy, events)) {
            wk_tcp_close(w, c, LOG_INFO, "port-share connection ended");
        }
    } else if (status < 0) {
        wk_tcp_close(w, c, LOG_INFO, uv_strerror(status));
    } else {
        if ((events & UV_WRITABLE) && !c->is_closing) {
            conn_write(w, c);
        }
        if ((events & UV_READABLE) && !c->is_closing) {
            conn_read(w, c);
        }
    }
    wk_flush_out(w);
}

/* A connection accepted on fd from `from`: into a free slot of the table, or closed. */
static void conn_open(struct worker *w, int fd, const union udp_addr *from)
{
    struct tcp_conn *c;
    size_t slot = SIZE_MAX;
    int one = 1;

    for (size_t i = 0; i < w->n_conn_slots; i++) {
        size_t s = (w->conn_hint + i) % w->n_conn_slots;

        if (!w->conns[s]) {
            slot = s;
            break;
        }
    }
    c = slot == SIZE_MAX ? NULL : calloc(1, sizeof(*c));
    if (!c) {
        wk_drop(w, &w->stats.drop_tcp_refused, from,
                "TCP connection refused: this worker's connection table is full");
        close(fd);
        return;
    }
    c->w = w;
    c->fd = fd;
    c->slot = slot;
    c->link = tcp_link_make(w->index, slot, w->conn_gen[slot]);
    c->remote = *from;
    c->accepted_ms = uv_now(&w->loop);
    /* packets are written in batches already; a small control packet should not wait */
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (uv_poll_init(&w->loop, &c->poll, fd) != 0) {
        close(fd);
        free(c);
        return;
    }
    c->poll.data = c;
    w->conns[slot] = c;
    w->conn_hint = slot + 1;
    w->n_conns++;
    stat_inc(&w->stats.tcp_accepted);
    uv_poll_start(&c->poll, UV_READABLE, wk_tcp_on_conn);
}

static void on_listen(uv_poll_t *h, int status, int events)
{
    struct worker *w = h->data;

    (void)events;
    if (status < 0) {
        return;
    }
    for (int i = 0; i < TCP_ACCEPTS_PER_WAKEUP; i++) {
        union udp_addr from;
        socklen_t len = sizeof(from);
        int fd = accept4(w->tcp_fd, &from.sa, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);

        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) {
                continue;
            }
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                wk_drop(w, &w->stats.drop_tcp_refused, NULL, strerror(errno));
            }
            break;
        }
        conn_open(w, fd, &from);
    }
    wk_flush_out(w);
}

void wk_tcp_tick(struct worker *w, uint64_t now)
{
    uint64_t hand_window_ms = (uint64_t)w->env->cfg->timers.hand_window_s * 1000;

    for (size_t i = 0; i < w->n_conn_slots; i++) {
        struct tcp_conn *c = w->conns[i];

        if (c && !c->peer && !c->proxy && !c->is_closing &&
            now - c->accepted_ms >= hand_window_ms) {
            stat_inc(&w->stats.drop_tcp_hand_window);
            wk_tcp_close(w, c, LOG_INFO, "no completed handshake within hand-window: closing");
        }
    }
}

void wk_tcp_stop(struct worker *w)
{
    if (w->tcp_fd < 0) {
        return;
    }
    uv_poll_stop(&w->tcp_poll);
    uv_close((uv_handle_t *)&w->tcp_poll, NULL);
    for (size_t i = 0; i < w->n_conn_slots; i++) {
        if (w->conns[i]) {
            conn_release(w, w->conns[i]);
        }
    }
    w->tcp_dirty = NULL;
}

void wk_tcp_free(struct worker *w)
{
    free(w->conns);
    w->conns = NULL;
    free(w->conn_gen);
    w->conn_gen = NULL;
    free(w->tcp_rx);
    w->tcp_rx = NULL;
}

int worker_listen_tcp(struct worker *w, int fd, size_t max_conns)
{
    int err;

    w->conns = calloc(max_conns, sizeof(*w->conns));
    w->conn_gen = calloc(max_conns, sizeof(*w->conn_gen));
    w->tcp_rx = malloc(STREAM_LEN_HDR + TCP_MAX_PACKET + TCP_READ_LEN);
    if (!w->conns || !w->conn_gen || !w->tcp_rx) {
        wk_tcp_free(w);
        return -ENOMEM;
    }
    w->n_conn_slots = max_conns;
    err = uv_poll_init(&w->loop, &w->tcp_poll, fd);
    if (err) {
        wk_tcp_free(w);
        return err;
    }
    w->tcp_fd = fd;
    w->tcp_poll.data = w;
    return uv_poll_start(&w->tcp_poll, UV_READABLE, on_listen);
}
