/* server/ops/mgmt.c: the management interface's listener, clients and commands; see mgmt.h.
 * Replies and notifications are worded as openvpn 2.6's src/openvpn/manage.c words them. */
#include "server/ops/mgmt.h"

#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <mbedtls/platform_util.h>

#include "server/config/config.h"
#include "server/log/log.h"
#include "server/ops/mgmt_internal.h"

uint64_t mgmt_now_ms(struct mgmt *m)
{
    return uv_now(m->loop);
}

static void on_written(uv_write_t *req, int status)
{
    (void)status; /* a failed write shows up as a read error or EOF */
    free(req);
}

/* Queue len bytes to c; a client that lets MGMT_OUT_MAX bytes pile up is dropped. */
void mgmt_send_raw(struct mgmt_client *c, const char *data, size_t len)
{
    uv_write_t *req;
    uv_buf_t b;

    if (c->is_closing || len == 0) {
        return;
    }
    if (uv_stream_get_write_queue_size(&c->u.s) + len > MGMT_OUT_MAX) {
        log_msg(LOG_WARN, "MANAGEMENT: client %s reads too slowly (over %u bytes waiting): dropped",
                c->peer, MGMT_OUT_MAX);
        mgmt_client_close(c);
        return;
    }
    req = malloc(sizeof(*req) + len);
    if (!req) {
        mgmt_client_close(c);
        return;
    }
    memcpy(req + 1, data, len);
    b = uv_buf_init((char *)(req + 1), (unsigned int)len);
    if (uv_write(req, &c->u.s, &b, 1, on_written) != 0) {
        free(req);
        mgmt_client_close(c);
    }
}

void mgmt_reply(struct mgmt_client *c, const char *fmt, ...)
{
    char line[MGMT_LINE_MAX + 512];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(line, sizeof(line) - 2, fmt, ap);
    va_end(ap);
    if (n < 0) {
        return;
    }
    if ((size_t)n > sizeof(line) - 3) {
        n = (int)sizeof(line) - 3;
    }
    line[n++] = '\r';
    line[n++] = '\n';
    mgmt_send_raw(c, line, (size_t)n);
}

/* text with "\n" line ends, sent with "\r\n" ones. */
void mgmt_send_text(struct mgmt_client *c, const char *text, size_t len)
{
    size_t n_lines = 0, j = 0;
    char *out;

    for (size_t i = 0; i < len; i++) {
        n_lines += text[i] == '\n';
    }
    out = malloc(len + n_lines + 1);
    if (!out) {
        return;
    }
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\n') {
            out[j++] = '\r';
        }
        out[j++] = text[i];
    }
    mgmt_send_raw(c, out, j);
    free(out);
}

static void on_closed(uv_handle_t *h)
{
    struct mgmt_client *c = h->data;

    free(c->block);
    free(c);
}

void mgmt_client_close(struct mgmt_client *c)
{
    struct mgmt *m = c->m;

    if (c->is_closing) {
        return;
    }
    c->is_closing = true;
    for (struct mgmt_client **pp = &m->clients; *pp; pp = &(*pp)->next) {
        if (*pp == c) {
            *pp = c->next;
            m->n_clients--;
            break;
        }
    }
    log_msg(LOG_INFO, "MANAGEMENT: Client disconnected");
    uv_close(&c->u.h, on_closed);
    if (m->cfg->mgmt.connect_out && !m->is_closed) {
        /* management-client: the link going away stops the server (2.6 man_reset_client_socket:
         * SIGTERM), handled by the main thread as a signal from outside */
        log_msg(LOG_WARN, "MANAGEMENT: the link to the management client closed: exiting");
        kill(getpid(), SIGTERM);
    }
}

void mgmt_welcome(struct mgmt_client *c)
{
    mgmt_reply(c, ">INFO:OpenVPN Management Interface Version %d -- type 'help' for more info",
               MGMT_VERSION);
    if (c->m->is_held) {
        mgmt_reply(c, ">HOLD:Waiting for hold release:0");
    }
    mgmt_query_welcome(c);
}

/* ---- the log cache (the hook runs on any thread) ---- */

static char flag_of(enum log_level lvl)
{
    /* 2.6 error.c msg_flags_string: I info, N non-fatal error, W warning, D debug */
    switch (lvl) {
    case LOG_ERR:
        return 'N';
    case LOG_WARN:
        return 'W';
    case LOG_INFO:
        return 'I';
    default:
        return 'D';
    }
}

static void on_log_line(void *ctx, int64_t now_s, enum log_level lvl, const char *message)
{
    struct mgmt *m = ctx;
    char *text = strdup(message);
    struct log_item *it;

    if (!m || !text) { /* (m: a thread that read the hook as it was being removed) */
        free(text);
        return;
    }
    pthread_mutex_lock(&m->lock);
    it = &m->cache[m->n_logged % m->cache_cap];
    free(it->text);
    it->t = now_s;
    it->lvl = lvl;
    it->text = text;
    m->n_logged++;
    if (!m->is_closed) { /* under the lock: never after mgmt_close closed the handle */
        uv_async_send(&m->log_async);
    }
    pthread_mutex_unlock(&m->lock);
}

/* Copy line number seq of the cache as "T,F,text" into buf; false if it is gone. */
bool mgmt_log_format(struct mgmt *m, uint64_t seq, char *buf, size_t cap)
{
    bool ok = false;

    pthread_mutex_lock(&m->lock);
    if (seq < m->n_logged && m->n_logged - seq <= m->cache_cap) {
        const struct log_item *it = &m->cache[seq % m->cache_cap];

        snprintf(buf, cap, "%" PRId64 ",%c,%s", it->t, flag_of(it->lvl), it->text);
        ok = true;
    }
    pthread_mutex_unlock(&m->lock);
    return ok;
}

static void on_log_async(uv_async_t *h)
{
    struct mgmt *m = h->data;
    char line[LOG_LINE_MAX + 64];
    uint64_t end;

    pthread_mutex_lock(&m->lock);
    end = m->n_logged;
    pthread_mutex_unlock(&m->lock);
    for (; m->n_sent < end; m->n_sent++) {
        if (!mgmt_log_format(m, m->n_sent, line, sizeof(line))) {
            continue;
        }
        for (struct mgmt_client *c = m->clients, *next; c; c = next) {
            next = c->next; /* (a slow client may be dropped by reply) */
            if (c->is_authed && c->is_log_rt) {
                mgmt_reply(c, ">LOG:%s", line);
            }
        }
    }
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    struct mgmt_client *c = s->data;

    (void)buf;
    if (nread < 0) {
        mgmt_client_close(c);
        return;
    }
    for (ssize_t i = 0; i < nread && !c->is_closing; i++) {
        unsigned char ch = (unsigned char)c->rbuf[i];

        if (ch == '\n') {
            if (c->is_discarding) {
                c->is_discarding = false;
                mgmt_reply(c, "ERROR: command line too long (over %d bytes)", MGMT_LINE_MAX - 1);
            } else {
                c->in[c->in_len] = '\0';
                mgmt_cmd_line(c, c->in);
            }
            c->in_len = 0;
        } else if (ch < 0x20 || ch == 0x7f) {
            continue; /* 2.6 keeps printable characters only */
        } else if (c->in_len + 1 >= sizeof(c->in)) {
            c->is_discarding = true;
            c->in_len = 0;
        } else if (!c->is_discarding) {
            c->in[c->in_len++] = (char)ch;
        }
    }
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    struct mgmt_client *c = h->data;

    (void)suggested;
    *buf = uv_buf_init(c->rbuf, sizeof(c->rbuf));
}

/* management-client-user / -group: the peer's credentials (2.6 man_verify_unix_peer_uid_gid). */
static bool peer_allowed(struct mgmt *m, struct mgmt_client *c)
{
    struct ucred cred;
    socklen_t len = sizeof(cred);
    uv_os_fd_t fd;

    if (m->client_uid < 0 && m->client_gid < 0) {
        return true;
    }
    if (uv_fileno(&c->u.h, &fd) || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
        return false;
    }
    if (m->client_uid >= 0 && (int)cred.uid != m->client_uid) {
        log_msg(LOG_WARN,
                "MANAGEMENT: UID of socket peer (%d) doesn't match required value (%d) "
                "as given by --management-client-user",
                (int)cred.uid, m->client_uid);
        return false;
    }
    if (m->client_gid >= 0 && (int)cred.gid != m->client_gid) {
        log_msg(LOG_WARN,
                "MANAGEMENT: GID of socket peer (%d) doesn't match required value (%d) "
                "as given by --management-client-group",
                (int)cred.gid, m->client_gid);
        return false;
    }
    return true;
}

/* A new management client c (accepted, or connected to with management-client) joins the list
 * and gets the password prompt or the welcome. */
static void client_begin(struct mgmt_client *c, const char *from_to)
{
    struct mgmt *m = c->m;

    c->next = m->clients;
    m->clients = c;
    m->n_clients++;
    log_msg(LOG_INFO, "MANAGEMENT: Client connected %s %s", from_to, c->peer);
    if (uv_read_start(&c->u.s, on_alloc, on_read) != 0) {
        mgmt_client_close(c);
        return;
    }
    if (m->cfg->mgmt.password) {
        mgmt_send_raw(c, "ENTER PASSWORD:", strlen("ENTER PASSWORD:")); /* no line end, as 2.6 */
    } else {
        c->is_authed = true;
        mgmt_welcome(c);
    }
}

static void on_connection(uv_stream_t *server, int status)
{
    struct mgmt *m = server->data;
    struct mgmt_client *c;
    int err;

    if (status < 0) {
        return;
    }
    c = calloc(1, sizeof(*c));
    if (!c) {
        return;
    }
    c->m = m;
    c->u.h.data = c;
    err = m->cfg->mgmt.is_unix ? uv_pipe_init(m->loop, &c->u.pipe, 0)
                               : uv_tcp_init(m->loop, &c->u.tcp);
    if (err) {
        free(c);
        return;
    }
    c->u.h.data = c;
    if (uv_accept(server, &c->u.s) != 0) {
        uv_close(&c->u.h, on_closed);
        return;
    }
    if (m->cfg->mgmt.is_unix) {
        snprintf(c->peer, sizeof(c->peer), "unix:%s", m->cfg->mgmt.addr);
    } else {
        struct sockaddr_storage ss;
        int len = sizeof(ss);
        char a[INET6_ADDRSTRLEN] = "?";

        if (uv_tcp_getpeername(&c->u.tcp, (struct sockaddr *)&ss, &len) == 0) {
            uv_ip_name((struct sockaddr *)&ss, a, sizeof(a));
        }
        snprintf(c->peer, sizeof(c->peer), "[AF_INET]%s:%u", a,
                 ntohs(((struct sockaddr_in *)&ss)->sin_port));
    }
    if (m->n_clients >= MGMT_MAX_CLIENTS || !peer_allowed(m, c)) {
        log_msg(LOG_WARN, "MANAGEMENT: connection from %s refused (%s)", c->peer,
                m->n_clients >= MGMT_MAX_CLIENTS ? "too many management clients" : "credentials");
        uv_close(&c->u.h, on_closed);
        return;
    }
    client_begin(c, "from");
}

static void bytecount_one(void *arg, unsigned long cid, uint64_t in, uint64_t out)
{
    mgmt_reply(arg, ">BYTECOUNT_CLI:%lu,%" PRIu64 ",%" PRIu64, cid, in, out);
}

static void on_timer(uv_timer_t *t)
{
    struct mgmt *m = t->data;
    uint64_t now = mgmt_now_ms(m);

    for (struct mgmt_client *c = m->clients, *next; c; c = next) {
        next = c->next;
        if (c->is_authed && c->bytecount_s > 0 && now >= c->next_bytecount_ms) {
            c->next_bytecount_ms = now + (uint64_t)c->bytecount_s * 1000;
            m->ops.each_client(m->ops.ctx, bytecount_one, c);
        }
    }
}

/* ---- set-up ---- */

/* "FILE:LINE" of the management line, for start-up errors ("" when unknown). */
static const char *where_of(const struct mgmt *m)
{
    return m->cfg->mgmt.where ? m->cfg->mgmt.where : "";
}

static int listen_unix(struct mgmt *m, char *errbuf, size_t errbuf_len)
{
    const char *path = m->cfg->mgmt.addr;
    struct stat st;
    int err;

    if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
        unlink(path); /* left by an earlier run */
    }
    err = uv_pipe_init(m->loop, &m->listener.pipe, 0);
    if (err) {
        return err;
    }
    m->is_listener_open = true;
    err = uv_pipe_bind(&m->listener.pipe, path);
    if (err) {
        snprintf(errbuf, errbuf_len, "%s%smanagement: cannot bind %s: %s", where_of(m),
                 m->cfg->mgmt.where ? ": " : "", path, uv_strerror(err));
    }
    return err;
}

static int tcp_address(struct mgmt *m, struct sockaddr_storage *ss, char *errbuf, size_t errbuf_len)
{
    int err = uv_ip4_addr(m->cfg->mgmt.addr, atoi(m->cfg->mgmt.port), (struct sockaddr_in *)ss);

    if (err) {
        err = uv_ip6_addr(m->cfg->mgmt.addr, atoi(m->cfg->mgmt.port), (struct sockaddr_in6 *)ss);
    }
    if (err) {
        snprintf(errbuf, errbuf_len, "management: '%s' is not an IP address", m->cfg->mgmt.addr);
        return -EINVAL;
    }
    return 0;
}

/* management-client: the one management client is the end we connect to. */
static void on_connected(uv_connect_t *req, int status)
{
    struct mgmt_client *c = req->data;
    struct mgmt *m = c->m;

    free(req);
    if (status == UV_ECANCELED) {
        return; /* mgmt_close closed the handle while the connect was under way */
    }
    m->connecting = NULL;
    if (status < 0 || m->is_closed) {
        if (status < 0) {
            log_msg(LOG_ERR, "MANAGEMENT: connect to %s failed: %s; exiting", c->peer,
                    uv_strerror(status));
        }
        c->is_closing = true;
        uv_close(&c->u.h, on_closed);
        if (!m->is_closed) {
            kill(getpid(), SIGTERM); /* as 2.6: "Signal received from management interface" */
        }
        return;
    }
    client_begin(c, "to");
}

static int connect_out(struct mgmt *m, char *errbuf, size_t errbuf_len)
{
    struct sockaddr_storage ss;
    struct mgmt_client *c;
    uv_connect_t *req;
    int err = m->cfg->mgmt.is_unix ? 0 : tcp_address(m, &ss, errbuf, errbuf_len);

    if (err) {
        return err;
    }
    c = calloc(1, sizeof(*c));
    req = calloc(1, sizeof(*req));
    if (!c || !req) {
        free(c);
        free(req);
        return -ENOMEM;
    }
    c->m = m;
    req->data = c;
    err = m->cfg->mgmt.is_unix ? uv_pipe_init(m->loop, &c->u.pipe, 0)
                               : uv_tcp_init(m->loop, &c->u.tcp);
    if (err) {
        free(c);
        free(req);
        return err;
    }
    c->u.h.data = c;
    if (m->cfg->mgmt.is_unix) {
        snprintf(c->peer, sizeof(c->peer), "unix:%s", m->cfg->mgmt.addr);
        uv_pipe_connect(req, &c->u.pipe, m->cfg->mgmt.addr, on_connected);
        m->connecting = c;
        return 0;
    }
    snprintf(c->peer, sizeof(c->peer), "%s:%s", m->cfg->mgmt.addr, m->cfg->mgmt.port);
    err = uv_tcp_connect(req, &c->u.tcp, (struct sockaddr *)&ss, on_connected);
    if (err) {
        snprintf(errbuf, errbuf_len, "management: cannot connect to %s: %s", c->peer,
                 uv_strerror(err));
        free(req);
        uv_close(&c->u.h, on_closed);
        return err;
    }
    m->connecting = c;
    return 0;
}

static int listen_tcp(struct mgmt *m, char *errbuf, size_t errbuf_len)
{
    struct sockaddr_storage ss;
    int err = tcp_address(m, &ss, errbuf, errbuf_len);

    if (err) {
        return err;
    }
    err = uv_tcp_init(m->loop, &m->listener.tcp);
    if (err) {
        return err;
    }
    m->is_listener_open = true;
    err = uv_tcp_bind(&m->listener.tcp, (struct sockaddr *)&ss, 0);
    if (err) {
        snprintf(errbuf, errbuf_len, "%s%smanagement: cannot bind %s:%s: %s", where_of(m),
                 m->cfg->mgmt.where ? ": " : "", m->cfg->mgmt.addr, m->cfg->mgmt.port,
                 uv_strerror(err));
    }
    return err;
}

static int resolve_ids(struct mgmt *m, char *errbuf, size_t errbuf_len)
{
    const struct config_mgmt *c = &m->cfg->mgmt;

    m->client_uid = m->client_gid = -1;
    if (c->client_user) {
        struct passwd *pw = getpwnam(c->client_user);

        if (!pw) {
            snprintf(errbuf, errbuf_len, "management-client-user: no user '%s'", c->client_user);
            return -EINVAL;
        }
        m->client_uid = (int)pw->pw_uid;
    }
    if (c->client_group) {
        struct group *gr = getgrnam(c->client_group);

        if (!gr) {
            snprintf(errbuf, errbuf_len, "management-client-group: no group '%s'", c->client_group);
            return -EINVAL;
        }
        m->client_gid = (int)gr->gr_gid;
    }
    return 0;
}

int mgmt_new(uv_loop_t *loop, const struct config *cfg, const struct mgmt_ops *ops,
             struct mgmt **out, char *errbuf, size_t errbuf_len)
{
    struct mgmt *m = calloc(1, sizeof(*m));
    int err;

    if (!m) {
        return -ENOMEM;
    }
    m->loop = loop;
    m->cfg = cfg;
    m->ops = *ops;
    m->is_held = m->has_hold_flag = cfg->mgmt.hold;
    m->verb = cfg->proc.verb;
    m->mute = cfg->proc.mute;
    m->cache_cap = (size_t)(cfg->mgmt.log_cache > 0 ? cfg->mgmt.log_cache : 250);
    m->cache = calloc(m->cache_cap, sizeof(*m->cache));
    if (!m->cache || pthread_mutex_init(&m->lock, NULL) != 0) {
        free(m->cache);
        free(m);
        return -ENOMEM;
    }
    m->listener.h.data = m;
    err = resolve_ids(m, errbuf, errbuf_len);
    if (!err && cfg->mgmt.connect_out) {
        err = connect_out(m, errbuf, errbuf_len);
    } else if (!err) {
        err = cfg->mgmt.is_unix ? listen_unix(m, errbuf, errbuf_len)
                                : listen_tcp(m, errbuf, errbuf_len);
    }
    m->listener.h.data = m;
    if (!err && !cfg->mgmt.connect_out) {
        err = uv_listen(&m->listener.s, 8, on_connection);
        if (err) {
            snprintf(errbuf, errbuf_len, "%s%smanagement: cannot listen on %s%s%s: %s", where_of(m),
                     cfg->mgmt.where ? ": " : "", cfg->mgmt.addr, cfg->mgmt.is_unix ? "" : ":",
                     cfg->mgmt.is_unix ? "" : cfg->mgmt.port, uv_strerror(err));
        }
    }
    if (!err && cfg->mgmt.is_unix && !cfg->mgmt.connect_out) {
        chmod(cfg->mgmt.addr, 0660); /* the owner and its group (management-client-group) */
    }
    err = err ? err : uv_async_init(loop, &m->log_async, on_log_async);
    if (!err) {
        m->log_async.data = m;
        err = uv_timer_init(loop, &m->timer);
        if (err) {
            uv_close((uv_handle_t *)&m->log_async, NULL);
        }
    }
    if (!err) {
        m->are_handles_open = true;
        m->timer.data = m;
        err = uv_timer_start(&m->timer, on_timer, 1000, 1000);
    }
    if (err) {
        mgmt_close(m);
        *out = m; /* freed by the caller after the loop closed the handles */
        return err;
    }
    log_set_hook(on_log_line, m);
    log_msg(LOG_INFO, "MANAGEMENT: %s interface %s %s%s%s%s",
            cfg->mgmt.is_unix ? "unix socket" : "TCP",
            cfg->mgmt.connect_out ? "connecting to" : "listening on", cfg->mgmt.addr,
            cfg->mgmt.is_unix ? "" : ":", cfg->mgmt.is_unix ? "" : cfg->mgmt.port,
            cfg->mgmt.hold ? " (holding start-up until `hold release`)" : "");
    *out = m;
    return 0;
}

void mgmt_set_connected(struct mgmt *m, uint32_t tun_local, uint16_t port)
{
    struct in_addr a;

    m->has_state = true;
    m->state_t = (int64_t)time(NULL);
    m->state_local = tun_local;
    m->link_port = port;
    if (m->cfg->net.local && inet_pton(AF_INET, m->cfg->net.local, &a) == 1) {
        m->link_addr = ntohl(a.s_addr);
    }
    if (m->clients) {
        char line[256];

        mgmt_cmd_state_format(m, line, sizeof(line));
        for (struct mgmt_client *c = m->clients, *next; c; c = next) {
            next = c->next;
            if (c->is_authed && c->is_state_rt) {
                mgmt_reply(c, ">STATE:%s", line);
            }
        }
    }
}

bool mgmt_is_held(const struct mgmt *m)
{
    return m && m->is_held;
}

bool mgmt_has_clients(const struct mgmt *m)
{
    if (!m) {
        return false;
    }
    for (const struct mgmt_client *c = m->clients; c; c = c->next) {
        if (c->is_authed) {
            return true;
        }
    }
    return false;
}

void mgmt_notify(struct mgmt *m, const char *line)
{
    if (!m) {
        return;
    }
    for (struct mgmt_client *c = m->clients, *next; c; c = next) {
        next = c->next;
        if (c->is_authed) {
            mgmt_reply(c, "%s", line);
        }
    }
}

void mgmt_up_down(struct mgmt *m, const char *what, const char *const *vars, size_t n_vars)
{
    if (!m || !m->cfg->mgmt.up_down) {
        return;
    }
    for (struct mgmt_client *c = m->clients, *next; c; c = next) {
        next = c->next;
        if (!c->is_authed) {
            continue;
        }
        mgmt_reply(c, ">UPDOWN:%s", what);
        for (size_t i = 0; i < n_vars; i++) {
            mgmt_reply(c, ">UPDOWN:ENV,%s", vars[i]);
        }
        mgmt_reply(c, ">UPDOWN:ENV,END");
    }
}

/* 2.6 manage.c env_filter_match: level 0 shows every variable, 1 the X509_ ones and those
 * below, 2 (and above) only this short list. */
static bool env_shown(const char *var, int level)
{
    static const char *const names[] = {
        "username=",
        "password=",
        "X509_0_CN=",
        "tls_serial_",
        "untrusted_ip=",
        "ifconfig_local=",
        "ifconfig_netmask=",
        "daemon_start_time=",
        "daemon_pid=",
        "dev=",
        "ifconfig_pool_remote_ip=",
        "ifconfig_pool_netmask=",
        "time_duration=",
        "bytes_sent=",
        "bytes_received=",
        "session_id=",
        "session_state=",
    };

    if (level == 0 || (level <= 1 && strncmp(var, "X509_", 5) == 0)) {
        return true;
    }
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strncmp(var, names[i], strlen(names[i])) == 0) {
            return true;
        }
    }
    return false;
}

/* A peer-info line shown to a filtering client: NAME=value, NAME of letters, digits and '_',
 * value printable (2.6 validate_peer_info_line). */
static bool peer_info_line_ok(const char *line, size_t len)
{
    size_t i = 0;

    while (i < len && (isalnum((unsigned char)line[i]) || line[i] == '_')) {
        i++;
    }
    if (i == 0 || i >= len || line[i] != '=') {
        return false;
    }
    for (i++; i < len; i++) {
        if (!isprint((unsigned char)line[i])) {
            return false;
        }
    }
    return true;
}

void mgmt_notify_client(struct mgmt *m, const char *head, long n_clients, const char *peer_info,
                        const char *const *vars, size_t n_vars)
{
    if (!m) {
        return;
    }
    for (struct mgmt_client *c = m->clients, *next; c; c = next) {
        next = c->next;
        if (!c->is_authed) {
            continue;
        }
        mgmt_reply(c, "%s", head);
        if (n_clients >= 0 && c->env_filter == 0) { /* "n_clients=" is not on the short list */
            mgmt_reply(c, ">CLIENT:ENV,n_clients=%ld", n_clients);
        }
        for (const char *l = peer_info; c->env_filter > 0 && l && *l;) {
            const char *e = strchr(l, '\n');
            size_t len = e ? (size_t)(e - l) : strlen(l);

            if (peer_info_line_ok(l, len)) {
                mgmt_reply(c, ">CLIENT:ENV,%.*s", (int)len, l);
            }
            l += len + (e ? 1 : 0);
        }
        for (size_t i = 0; i < n_vars; i++) {
            if (env_shown(vars[i], c->env_filter)) {
                mgmt_reply(c, ">CLIENT:ENV,%s", vars[i]);
            }
        }
        mgmt_reply(c, ">CLIENT:ENV,END");
    }
}

void mgmt_close(struct mgmt *m)
{
    if (!m) {
        return;
    }
    log_set_hook(NULL, NULL);
    pthread_mutex_lock(&m->lock);
    m->is_closed = true;
    pthread_mutex_unlock(&m->lock);
    while (m->clients) {
        mgmt_client_close(m->clients);
    }
    if (m->connecting) {
        m->connecting->is_closing = true;
        uv_close(&m->connecting->u.h, on_closed); /* its connect ends with UV_ECANCELED */
        m->connecting = NULL;
    }
    if (m->is_listener_open) {
        m->is_listener_open = false;
        uv_close(&m->listener.h, NULL);
        if (m->cfg->mgmt.is_unix) {
            unlink(m->cfg->mgmt.addr);
        }
    }
    if (m->are_handles_open) {
        m->are_handles_open = false;
        uv_close((uv_handle_t *)&m->log_async, NULL);
        uv_close((uv_handle_t *)&m->timer, NULL);
    }
}

void mgmt_free(struct mgmt *m)
{
    if (!m) {
        return;
    }
    for (size_t i = 0; i < m->cache_cap; i++) {
        free(m->cache[i].text);
    }
    free(m->cache);
    if (m->query_answer) {
        mbedtls_platform_zeroize(m->query_answer, strlen(m->query_answer));
        free(m->query_answer);
    }
    pthread_mutex_destroy(&m->lock);
    free(m);
}

void mgmt_set_verb(struct mgmt *m, int verb, int mute)
{
    if (m) {
        m->verb = verb;
        m->mute = mute;
    }
}
