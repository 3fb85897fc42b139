/* server/data/worker_proxy.c: port-share: a TCP connection whose first bytes are not an OpenVPN
 * client's (proto/stream.h stream_is_openvpn_start) is proxied, both ways, to the port-share
 * server (a web server, so that VPN and HTTPS share port 443), as openvpn 2.6 does in its
 * port-share process (ps.c). The worker that accepted the connection carries the proxy: the
 * client's side stays the connection's (worker_tcp.c), the server's side is a socket of this
 * file, and bytes wait in two bounded buffers: a side whose buffer towards the other is full is
 * not read until it drains. With a journal directory, each proxied connection has a file there
 * named after the proxy's own address and port towards the server ("ADDR:PORT") and holding the
 * client's address, for the server's logs (2.6 ps.c journal_add); the acceptor writes and
 * removes it (files are not written on a worker's loop). Worker thread only.
 */
#include "server/data/worker_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/stream.h"

#define PROXY_BUF_LEN (STREAM_LEN_HDR + TCP_MAX_PACKET + TCP_READ_LEN)

struct tcp_proxy {
    struct worker *w;
    struct tcp_conn *conn; /* the client's side (worker_tcp.c) */
    uv_poll_t *client_poll;
    int client_fd;
    int up_fd; /* the port-share server's side */
    uv_poll_t up_poll;
    bool is_connecting;
    bool is_up_eof; /* the server closed: what it sent goes out, then the connection ends */
    bool is_done;
    size_t to_up_len, to_client_len;
    uint8_t to_up[PROXY_BUF_LEN];
    uint8_t to_client[PROXY_BUF_LEN];
    char *journal; /* its journal file, or NULL */
};

/* A journal file to write (text non-NULL) or remove, on the acceptor's thread. */
struct journal_op {
    char *path;
    char *text;
};

static void journal_op_free(void *arg)
{
    struct journal_op *op = arg;

    free(op->path);
    free(op->text);
    free(op);
}

static void journal_op_run(void *arg)
{
    struct journal_op *op = arg;

    if (op->text) {
        int fd = open(op->path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0640);

        if (fd < 0 || write(fd, op->text, strlen(op->text)) != (ssize_t)strlen(op->text)) {
            log_msg(LOG_WARN, "port-share: cannot write journal file %s: %s", op->path,
                    strerror(errno));
        }
        if (fd >= 0) {
            close(fd);
        }
    } else {
        (void)unlink(op->path);
    }
    journal_op_free(op);
}

static void journal_post(struct worker *w, const char *path, const char *text)
{
    struct journal_op *op = calloc(1, sizeof(*op));
    struct msg *m = NULL;

    if (op) {
        op->path = strdup(path);
        op->text = text ? strdup(text) : NULL;
        m = op->path && (!text || op->text) ? msg_call_new(journal_op_run, journal_op_free, op)
                                            : NULL;
    }
    if (!m) {
        if (op) {
            journal_op_free(op);
        }
        log_msg(LOG_ERR, "worker %d: port-share: out of memory for a journal file", w->index);
        return;
    }
    mailbox_post(w->env->mb, MAILBOX_ACCEPTOR, m);
}

/* a as 2.6 writes a socket address (socket.c print_sockaddr_ex): "[AF_INET]ADDR:PORT" or
 * "[AF_INET6]ADDR:PORT", into out (JOURNAL_ADDR_MAX bytes). False when it cannot. */
#define JOURNAL_ADDR_MAX (16 + NI_MAXHOST + NI_MAXSERV)
static bool journal_addr(const union udp_addr *a, char *out)
{
    char host[NI_MAXHOST], serv[NI_MAXSERV];

    if (getnameinfo(&a->sa, udp_addr_len(a), host, sizeof(host), serv, sizeof(serv),
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
        return false;
    }
    snprintf(out, JOURNAL_ADDR_MAX, "%s%s:%s",
             a->sa.sa_family == AF_INET6 ? "[AF_INET6]" : "[AF_INET]", host, serv);
    return true;
}

/* The connection to the server is up: its journal file, named after our end of it, names the
 * client, in 2.6's format (ps.c journal_add). */
static void journal_add(struct tcp_proxy *px, const union udp_addr *client)
{
    union udp_addr local;
    socklen_t len = sizeof(local);
    char from[JOURNAL_ADDR_MAX], to[JOURNAL_ADDR_MAX], path[4096];

    if (!px->w->env->cfg->net.port_share_dir || getsockname(px->up_fd, &local.sa, &len) < 0 ||
        !journal_addr(client, from) || !journal_addr(&local, to)) {
        return;
    }
    if ((size_t)snprintf(path, sizeof(path), "%s/%s", px->w->env->cfg->net.port_share_dir, to) >=
        sizeof(path)) {
        return;
    }
    px->journal = strdup(path);
    if (px->journal) {
        journal_post(px->w, path, from);
    }
}

static void set_polls(struct tcp_proxy *px)
{
    int client = 0, up = 0;

    if (px->is_done) {
        return;
    }
    if (px->to_up_len < PROXY_BUF_LEN) {
        client |= UV_READABLE;
    }
    if (px->to_client_len > 0) {
        client |= UV_WRITABLE;
    }
    if (px->is_connecting || px->to_up_len > 0) {
        up |= UV_WRITABLE;
    }
    if (!px->is_connecting && !px->is_up_eof && px->to_client_len < PROXY_BUF_LEN) {
        up |= UV_READABLE;
    }
    if (client) {
        uv_poll_start(px->client_poll, client, wk_tcp_on_conn);
    } else {
        uv_poll_stop(px->client_poll);
    }
    if (up) {
        uv_poll_start(&px->up_poll, up, wk_proxy_on_up);
    } else {
        uv_poll_stop(&px->up_poll);
    }
}

/* Send what buf holds (*len bytes) to fd, keep the rest. False on a send error. */
static bool pass_on(int fd, uint8_t *buf, size_t *len)
{
    ssize_t n;

    if (*len == 0) {
        return true;
    }
    n = send(fd, buf, *len, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0) {
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    }
    memmove(buf, buf + n, *len - (size_t)n);
    *len -= (size_t)n;
    return true;
}

/* Read from fd into buf (*len bytes used of PROXY_BUF_LEN). 0 at the end of the stream, -1 on
 * an error, 1 otherwise. */
static int take_in(int fd, uint8_t *buf, size_t *len)
{
    ssize_t n;

    if (*len == PROXY_BUF_LEN) {
        return 1;
    }
    n = recv(fd, buf + *len, PROXY_BUF_LEN - *len, MSG_DONTWAIT);
    if (n == 0) {
        return 0;
    }
    if (n < 0) {
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 1 : -1;
    }
    *len += (size_t)n;
    return 1;
}

/* The end of a step: pass on what can go, decide whether the proxy is over. */
static bool step_end(struct tcp_proxy *px)
{
    if (!px->is_done && !px->is_connecting && !pass_on(px->up_fd, px->to_up, &px->to_up_len)) {
        px->is_done = true;
    }
    if (!px->is_done && !pass_on(px->client_fd, px->to_client, &px->to_client_len)) {
        px->is_done = true;
    }
    if (px->is_up_eof && px->to_client_len == 0) {
        px->is_done = true;
    }
    set_polls(px);
    return !px->is_done;
}

bool wk_proxy_on_client(struct tcp_proxy *px, int events)
{
    if (events & UV_READABLE) {
        /* the client closing ends it (2.6 closes both sides too) */
        if (take_in(px->client_fd, px->to_up, &px->to_up_len) <= 0) {
            px->is_done = true;
        }
    }
    return step_end(px);
}

void wk_proxy_on_up(uv_poll_t *h, int status, int events)
{
    struct tcp_proxy *px = h->data;
    struct worker *w = px->w;

    if (status < 0) {
        px->is_done = true;
    } else if (px->is_connecting) {
        int soerr = 0;
        socklen_t len = sizeof(soerr);

        if (getsockopt(px->up_fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0 || soerr != 0) {
            log_msg(LOG_WARN, "worker %d: port-share: cannot connect to the server: %s", w->index,
                    strerror(soerr ? soerr : errno));
            px->is_done = true;
        } else if (events & UV_WRITABLE) {
            px->is_connecting = false;
            journal_add(px, wk_tcp_conn_remote(px->conn));
        }
    } else if (events & UV_READABLE) {
        int r = take_in(px->up_fd, px->to_client, &px->to_client_len);

        if (r < 0) {
            px->is_done = true;
        } else if (r == 0) {
            px->is_up_eof = true;
        }
    }
    if (!step_end(px)) {
        wk_tcp_proxy_done(w, px->conn);
    }
    wk_flush_out(w);
}

struct tcp_proxy *wk_proxy_new(struct worker *w, struct tcp_conn *conn, uv_poll_t *client_poll,
                               int client_fd, const uint8_t *first, size_t len)
{
    const union udp_addr *to = w->env->port_share;
    struct tcp_proxy *px;

    if (len > PROXY_BUF_LEN) {
        return NULL;
    }
    px = calloc(1, sizeof(*px));
    if (!px) {
        return NULL;
    }
    px->w = w;
    px->conn = conn;
    px->client_poll = client_poll;
    px->client_fd = client_fd;
    memcpy(px->to_up, first, len);
    px->to_up_len = len;
    px->up_fd = socket(to->sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (px->up_fd < 0) {
        free(px);
        return NULL;
    }
    if (connect(px->up_fd, &to->sa, udp_addr_len(to)) < 0 && errno != EINPROGRESS) {
        log_msg(LOG_WARN, "worker %d: port-share: cannot connect to the server: %s", w->index,
                strerror(errno));
        close(px->up_fd);
        free(px);
        return NULL;
    }
    if (uv_poll_init(&w->loop, &px->up_poll, px->up_fd) != 0) {
        close(px->up_fd);
        free(px);
        return NULL;
    }
    px->up_poll.data = px;
    px->is_connecting = true;
    set_polls(px);
    return px;
}

static void on_up_closed(uv_handle_t *h)
{
    struct tcp_proxy *px = h->data;

    close(px->up_fd);
    free(px);
}

void wk_proxy_free(struct tcp_proxy *px, bool is_stopping)
{
    if (!px) {
        return;
    }
    if (px->journal) {
        if (!is_stopping) {
            journal_post(px->w, px->journal, NULL);
        } else {
            (void)unlink(px->journal); /* the acceptor may be gone: at shutdown, here */
        }
        free(px->journal);
        px->journal = NULL;
    }
    px->is_done = true;
    uv_poll_stop(&px->up_poll);
    uv_close((uv_handle_t *)&px->up_poll, on_up_closed);
}
