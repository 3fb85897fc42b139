/* server/ops/mgmt.c: the management interface's listener, clients and commands; see mgmt.h.
 * Replies and notifications are worded as openvpn 2.6's src/openvpn/manage.c words them. */
#include "server/ops/mgmt.h"

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

#include "server/config/config.h"
#include "server/log/log.h"

#define MAX_PARMS 16 /* words of one command, as 2.6's MAX_PARMS */
#define READ_CHUNK 4096

union mgmt_stream {
    uv_handle_t h;
    uv_stream_t s;
    uv_tcp_t tcp;
    uv_pipe_t pipe;
};

struct mgmt_client {
    struct mgmt_client *next;
    struct mgmt *m;
    union mgmt_stream u;
    char peer[80]; /* for the log: address or "unix" */
    char in[MGMT_LINE_MAX];
    size_t in_len;
    bool is_discarding; /* skipping the rest of an overlong line */
    bool is_authed;     /* past the password (or none asked) */
    int n_tries;
    bool is_log_rt, is_state_rt, is_echo_rt;
    int bytecount_s; /* 0: off */
    uint64_t next_bytecount_ms;
    bool is_closing;
    char rbuf[READ_CHUNK];
};

struct log_item {
    int64_t t;
    enum log_level lvl;
    char *text; /* owned */
};

struct mgmt {
    uv_loop_t *loop;
    const struct config *cfg;
    struct mgmt_ops ops;
    union mgmt_stream listener;
    bool is_listener_open;
    uv_async_t log_async; /* new log lines for real-time clients */
    uv_timer_t timer;     /* bytecount */
    bool are_handles_open;
    struct mgmt_client *clients;
    size_t n_clients;
    int client_uid, client_gid; /* -1: any (management-client-user / -group) */
    /* The log cache: written by any thread through the hook, so under lock. */
    pthread_mutex_t lock;
    struct log_item *cache;
    size_t cache_cap;
    uint64_t n_logged;  /* lines ever added: the next one goes to cache[n_logged % cap] */
    uint64_t n_sent;    /* lines already shown to real-time clients (loop thread) */
    bool is_held;       /* start-up waits for `hold release` */
    bool has_hold_flag; /* `hold` shows it, `hold on|off` sets it (2.6's MF_HOLD) */
    bool has_state;
    int64_t state_t;
    uint32_t state_local;
    uint32_t link_addr;
    uint16_t link_port;
    int verb, mute;
};

static void client_close(struct mgmt_client *c);

static uint64_t now_ms(struct mgmt *m)
{
    return uv_now(m->loop);
}

static void on_written(uv_write_t *req, int status)
{
    (void)status; /* a failed write shows up as a read error or EOF */
    free(req);
}

/* Queue len bytes to c; a client that lets MGMT_OUT_MAX bytes pile up is dropped. */
static void send_raw(struct mgmt_client *c, const char *data, size_t len)
{
    uv_write_t *req;
    uv_buf_t b;

    if (c->is_closing || len == 0) {
        return;
    }
    if (uv_stream_get_write_queue_size(&c->u.s) + len > MGMT_OUT_MAX) {
        log_msg(LOG_WARN, "MANAGEMENT: client %s reads too slowly (over %u bytes waiting): dropped",
                c->peer, MGMT_OUT_MAX);
        client_close(c);
        return;
    }
    req = malloc(sizeof(*req) + len);
    if (!req) {
        client_close(c);
        return;
    }
    memcpy(req + 1, data, len);
    b = uv_buf_init((char *)(req + 1), (unsigned int)len);
    if (uv_write(req, &c->u.s, &b, 1, on_written) != 0) {
        free(req);
        client_close(c);
    }
}

__attribute__((format(printf, 2, 3))) static void reply(struct mgmt_client *c, const char *fmt, ...)
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
    send_raw(c, line, (size_t)n);
}

/* text with "\n" line ends, sent with "\r\n" ones. */
static void send_text(struct mgmt_client *c, const char *text, size_t len)
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
    send_raw(c, out, j);
    free(out);
}

static void on_closed(uv_handle_t *h)
{
    free(h->data);
}

static void client_close(struct mgmt_client *c)
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
}

static void welcome(struct mgmt_client *c)
{
    reply(c, ">INFO:OpenVPN Management Interface Version %d -- type 'help' for more info",
          MGMT_VERSION);
    if (c->m->is_held) {
        reply(c, ">HOLD:Waiting for hold release:0");
    }
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

    if (!text) {
        return;
    }
    pthread_mutex_lock(&m->lock);
    it = &m->cache[m->n_logged % m->cache_cap];
    free(it->text);
    it->t = now_s;
    it->lvl = lvl;
    it->text = text;
    m->n_logged++;
    pthread_mutex_unlock(&m->lock);
    uv_async_send(&m->log_async);
}

/* Copy line number seq of the cache as "T,F,text" into buf; false if it is gone. */
static bool log_item_format(struct mgmt *m, uint64_t seq, char *buf, size_t cap)
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
        if (!log_item_format(m, m->n_sent, line, sizeof(line))) {
            continue;
        }
        for (struct mgmt_client *c = m->clients, *next; c; c = next) {
            next = c->next; /* (a slow client may be dropped by reply) */
            if (c->is_authed && c->is_log_rt) {
                reply(c, ">LOG:%s", line);
            }
        }
    }
}

/* ---- commands ---- */

/* Split line into words as 2.6's parse_line: blanks separate, double quotes group, a backslash
 * escapes the next character. Returns the number of words (up to MAX_PARMS). */
static int split(char *line, char **p)
{
    int n = 0;
    char *r = line, *w;

    while (*r && n < MAX_PARMS) {
        while (*r == ' ' || *r == '\t') {
            r++;
        }
        if (!*r) {
            break;
        }
        p[n++] = w = r;
        bool is_quoted = false;
        while (*r && (is_quoted || (*r != ' ' && *r != '\t'))) {
            if (*r == '"') {
                is_quoted = !is_quoted;
                r++;
            } else if (*r == '\\' && r[1]) {
                *w++ = r[1];
                r += 2;
            } else {
                *w++ = *r++;
            }
        }
        if (*r) {
            r++;
        }
        *w = '\0';
    }
    p[n] = NULL;
    return n;
}

static bool need(struct mgmt_client *c, char **p, int n, bool is_at_least)
{
    for (int i = 1; i <= n; i++) {
        if (!p[i]) {
            reply(c, "ERROR: the '%s' command requires %s%d parameter%s", p[0],
                  is_at_least ? "at least " : "", n, n > 1 ? "s" : "");
            return false;
        }
    }
    return true;
}

static const char *const help_lines[] = {
    "Commands:",
    "bytecount n            : Show bytes in/out, update every n secs (0=off).",
    "client-kill CID [M]    : Kill client instance CID with message M (def=RESTART)",
    "echo [on|off] [N|all]  : Like log, but only show messages in echo buffer.",
    "env-filter [level]     : Set env-var filter level",
    "exit|quit              : Close management session.",
    "help                   : Print this message.",
    "hold [on|off|release]  : Set/show hold flag to on/off state, or",
    "                         release current hold and start tunnel.",
    "kill cn                : Kill the client instance(s) having common name cn.",
    "kill IP:port           : Kill the client instance connecting from IP:port.",
    "load-stats             : Show global server load stats.",
    "log [on|off] [N|all]   : Turn on/off realtime log display",
    "                         + show last N lines or 'all' for entire history.",
    "mute [n]               : Set log mute level to n, or show level if n is absent.",
    "nclients               : Show the number of connected clients.",
    "pid                    : Show process ID of the current OpenVPN process.",
    "signal s               : Send signal s to daemon,",
    "                         s = SIGHUP|SIGTERM|SIGUSR1|SIGUSR2.",
    "state [on|off] [N|all] : Like log, but show state history.",
    "status [n]             : Show current daemon status info using format #n.",
    "verb [n]               : Set log verbosity level to n, or show if n is absent.",
    "version [n]            : Set client's version to n or show current version of daemon.",
    "END",
};

static void cmd_help(struct mgmt_client *c)
{
    reply(c, "Management Interface for ovpnd %s", OVPND_VERSION);
    for (size_t i = 0; i < sizeof(help_lines) / sizeof(help_lines[0]); i++) {
        reply(c, "%s", help_lines[i]);
    }
}

/* The CONNECTED entry as 2.6's log_entry_print writes it with LOG_PRINT_INT_DATE |
 * LOG_PRINT_STATE | LOG_PRINT_LOCAL_IP | LOG_PRINT_REMOTE_IP: time, state, detail, the tunnel
 * address, the remote link address (none on a server: ",,"), the local one (",," when bound to
 * the wildcard address). */
static void state_format(const struct mgmt *m, char *buf, size_t cap)
{
    char tun[INET_ADDRSTRLEN], link[INET_ADDRSTRLEN + 8];
    struct in_addr in = {.s_addr = htonl(m->state_local)};

    inet_ntop(AF_INET, &in, tun, sizeof(tun));
    if (m->link_addr) {
        struct in_addr l = {.s_addr = htonl(m->link_addr)};
        char a[INET_ADDRSTRLEN];

        inet_ntop(AF_INET, &l, a, sizeof(a));
        snprintf(link, sizeof(link), "%s,%u", a, m->link_port);
    } else {
        snprintf(link, sizeof(link), ",");
    }
    snprintf(buf, cap, "%" PRId64 ",CONNECTED,SUCCESS,%s,,,%s", m->state_t, tun, link);
}

/* log / state / echo: on, off, N or all (2.6 manage.c man_history). */
static void history(struct mgmt_client *c, const char *parm, const char *type, bool *is_rt)
{
    struct mgmt *m = c->m;
    int n = 0;
    char line[LOG_LINE_MAX + 64];

    if (strcmp(parm, "on") == 0) {
        *is_rt = true;
        reply(c, "SUCCESS: real-time %s notification set to ON", type);
        return;
    }
    if (strcmp(parm, "off") == 0) {
        *is_rt = false;
        reply(c, "SUCCESS: real-time %s notification set to OFF", type);
        return;
    }
    if (strcmp(parm, "all") != 0 && (n = atoi(parm)) <= 0) {
        reply(c, "ERROR: %s parameter must be 'on' or 'off' or some number n or 'all'", type);
        return;
    }
    if (strcmp(type, "log") == 0) {
        uint64_t end, count;

        pthread_mutex_lock(&m->lock);
        end = m->n_logged;
        pthread_mutex_unlock(&m->lock);
        count = end < m->cache_cap ? end : m->cache_cap;
        if (n > 0 && (uint64_t)n < count) {
            count = (uint64_t)n;
        }
        for (uint64_t seq = end - count; seq < end; seq++) {
            if (log_item_format(m, seq, line, sizeof(line))) {
                reply(c, "%s", line);
            }
        }
    } else if (strcmp(type, "state") == 0 && m->has_state) {
        state_format(m, line, sizeof(line));
        reply(c, "%s", line);
    }
    reply(c, "END");
}

static void cmd_kill(struct mgmt_client *c, const char *victim)
{
    struct mgmt *m = c->m;
    const char *colon = strchr(victim, ':');

    if (colon && colon[1]) {
        char host[128];
        struct in_addr a;
        int port = atoi(colon + 1), n;

        snprintf(host, sizeof(host), "%.*s", (int)(colon - victim), victim);
        if (inet_pton(AF_INET, host, &a) != 1) {
            reply(c, "ERROR: error parsing IP address: %s", host);
            return;
        }
        if (port <= 0 || port >= 65536) {
            reply(c, "ERROR: port number is out of range: %s", colon + 1);
            return;
        }
        n = m->ops.kill_addr(m->ops.ctx, ntohl(a.s_addr), (uint16_t)port);
        if (n > 0) {
            reply(c, "SUCCESS: %d client(s) at address %s:%d killed", n, host, port);
        } else {
            reply(c, "ERROR: client at address %s:%d not found", host, port);
        }
        return;
    }
    if (colon == victim || !victim[0]) {
        reply(c, "ERROR: kill parse");
        return;
    }
    {
        char cn[128]; /* 2.6 parses the victim into 128 bytes, up to the first ':' */
        int n;

        snprintf(cn, sizeof(cn), "%.*s", colon ? (int)(colon - victim) : (int)strlen(victim),
                 victim);
        n = m->ops.kill_cn(m->ops.ctx, cn);
        if (n > 0) {
            reply(c, "SUCCESS: common name '%s' found, %d client(s) killed", cn, n);
        } else {
            reply(c, "ERROR: common name '%s' not found", cn);
        }
    }
}

static void cmd_client_kill(struct mgmt_client *c, const char *cid_str, const char *msg)
{
    char *end;
    unsigned long cid;

    errno = 0;
    cid = strtoul(cid_str, &end, 10);
    if (errno || end == cid_str || *end || cid_str[0] == '-') {
        reply(c, "ERROR: cannot parse CID");
        return;
    }
    if (c->m->ops.kill_cid(c->m->ops.ctx, cid, msg)) {
        reply(c, "SUCCESS: client-kill command succeeded");
    } else {
        reply(c, "ERROR: client-kill command failed");
    }
}

static void cmd_signal(struct mgmt_client *c, const char *name)
{
    static const struct {
        const char *name;
        int sig;
    } sigs[] = {{"SIGHUP", SIGHUP},
                {"SIGINT", SIGINT},
                {"SIGUSR1", SIGUSR1},
                {"SIGUSR2", SIGUSR2},
                {"SIGTERM", SIGTERM}};

    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        if (strcmp(name, sigs[i].name) == 0) {
            /* the main thread handles it exactly as a signal from outside */
            kill(getpid(), sigs[i].sig);
            reply(c, "SUCCESS: signal %s thrown", sigs[i].name);
            return;
        }
    }
    reply(c, "ERROR: signal '%s' is not a known signal type", name);
}

static void cmd_status(struct mgmt_client *c, const char *parm)
{
    struct mgmt *m = c->m;
    int version = parm ? atoi(parm) : 0;
    char *text = NULL;
    size_t len = 0;
    FILE *mem;
    int err;

    if (version == 0) {
        version = m->cfg->status.status_version; /* 2.6 management_callback_status */
    }
    if (version < 1 || version > 3) {
        reply(c, "ERROR: status version %d is not 1, 2 or 3", version);
        return;
    }
    mem = open_memstream(&text, &len);
    if (!mem) {
        reply(c, "ERROR: out of memory");
        return;
    }
    err = m->ops.status(m->ops.ctx, version, mem);
    fclose(mem);
    if (err) {
        reply(c, "ERROR: status failed");
    } else {
        send_text(c, text, len);
    }
    free(text);
}

static void cmd_level(struct mgmt_client *c, const char *name, const char *parm, int *level)
{
    if (!parm) {
        reply(c, "SUCCESS: %s=%d", name, *level);
        return;
    }
    int v = atoi(parm);

    /* 2.6 error.c set_debug_level / set_mute_cutoff: verb 0..15 (M_DEBUG_LEVEL), mute >= 0 */
    if (v < 0 || (level == &c->m->verb && v > 15)) {
        reply(c, "ERROR: %s level is out of range", name);
        return;
    }
    *level = v;
    if (level == &c->m->verb) {
        log_set_level(log_level_from_verb(v));
    }
    reply(c, "SUCCESS: %s level changed", name);
}

static void cmd_hold(struct mgmt_client *c, const char *parm)
{
    struct mgmt *m = c->m;

    if (!parm) {
        reply(c, "SUCCESS: hold=%d", m->has_hold_flag ? 1 : 0);
    } else if (strcmp(parm, "on") == 0) {
        m->has_hold_flag = true; /* (a server holds only at start-up: no later effect) */
        reply(c, "SUCCESS: hold flag set to ON");
    } else if (strcmp(parm, "off") == 0) {
        m->has_hold_flag = false;
        reply(c, "SUCCESS: hold flag set to OFF");
    } else if (strcmp(parm, "release") == 0) {
        if (m->is_held) {
            m->is_held = false;
            log_msg(LOG_INFO, "MANAGEMENT: hold released");
            m->ops.hold_release(m->ops.ctx);
        }
        reply(c, "SUCCESS: hold release succeeded");
    } else {
        reply(c, "ERROR: bad hold command parameter");
    }
}

static void cmd_bytecount(struct mgmt_client *c, const char *parm)
{
    int s = atoi(parm);

    c->bytecount_s = s > 0 ? s : 0;
    c->next_bytecount_ms = now_ms(c->m) + (uint64_t)c->bytecount_s * 1000;
    reply(c, "SUCCESS: bytecount interval changed");
}

static void unsupported(struct mgmt_client *c, const char *name)
{
    reply(c, "ERROR: The '%s' command is not supported by the current daemon mode", name);
}

static void dispatch(struct mgmt_client *c, char **p)
{
    struct mgmt *m = c->m;
    const char *cmd = p[0];

    if (strcmp(cmd, "exit") == 0 || strcmp(cmd, "quit") == 0) {
        client_close(c);
    } else if (strcmp(cmd, "help") == 0) {
        cmd_help(c);
    } else if (strcmp(cmd, "version") == 0) {
        if (!p[1]) { /* with an argument 2.6 records the client's version and says nothing */
            reply(c, "OpenVPN Version: ovpnd %s", OVPND_VERSION);
            reply(c, "Management Version: %d", MGMT_VERSION);
            reply(c, "END");
        }
    } else if (strcmp(cmd, "pid") == 0) {
        reply(c, "SUCCESS: pid=%d", (int)getpid());
    } else if (strcmp(cmd, "nclients") == 0 || strcmp(cmd, "load-stats") == 0) {
        uint64_t n, in, out;

        m->ops.load_stats(m->ops.ctx, &n, &in, &out);
        if (cmd[0] == 'n') {
            reply(c, "SUCCESS: nclients=%" PRIu64, n);
        } else {
            reply(c, "SUCCESS: nclients=%" PRIu64 ",bytesin=%" PRIu64 ",bytesout=%" PRIu64, n, in,
                  out);
        }
    } else if (strcmp(cmd, "env-filter") == 0) {
        reply(c, "SUCCESS: env_filter_level=%d", p[1] ? atoi(p[1]) : 0);
    } else if (strcmp(cmd, "signal") == 0) {
        if (need(c, p, 1, false)) {
            cmd_signal(c, p[1]);
        }
    } else if (strcmp(cmd, "status") == 0) {
        cmd_status(c, p[1]);
    } else if (strcmp(cmd, "kill") == 0) {
        if (need(c, p, 1, false)) {
            cmd_kill(c, p[1]);
        }
    } else if (strcmp(cmd, "client-kill") == 0) {
        if (need(c, p, 1, true)) {
            cmd_client_kill(c, p[1], p[2]);
        }
    } else if (strcmp(cmd, "verb") == 0) {
        cmd_level(c, "verb", p[1], &m->verb);
    } else if (strcmp(cmd, "mute") == 0) {
        cmd_level(c, "mute", p[1], &m->mute);
    } else if (strcmp(cmd, "state") == 0) {
        history(c, p[1] ? p[1] : "1", "state", &c->is_state_rt);
        if (p[1] && p[2]) {
            history(c, p[2], "state", &c->is_state_rt);
        }
    } else if (strcmp(cmd, "log") == 0 || strcmp(cmd, "echo") == 0) {
        bool *rt = cmd[0] == 'l' ? &c->is_log_rt : &c->is_echo_rt;

        if (need(c, p, 1, true)) {
            history(c, p[1], cmd, rt);
            if (p[2]) {
                history(c, p[2], cmd, rt);
            }
        }
    } else if (strcmp(cmd, "hold") == 0) {
        cmd_hold(c, p[1]);
    } else if (strcmp(cmd, "bytecount") == 0) {
        if (need(c, p, 1, false)) {
            cmd_bytecount(c, p[1]);
        }
    } else if (strcmp(cmd, "client-auth") == 0 || strcmp(cmd, "client-auth-nt") == 0 ||
               strcmp(cmd, "client-deny") == 0 || strcmp(cmd, "client-pending-auth") == 0) {
        unsupported(c, cmd); /* management-client-auth is not implemented yet */
    } else {
        reply(c, "ERROR: unknown command, enter 'help' for more options");
    }
}

static void check_password(struct mgmt_client *c, const char *line)
{
    const char *pw = c->m->cfg->mgmt.password;
    size_t n = strlen(line) + 1, pw_len = strlen(pw) + 1;
    unsigned char diff = n != pw_len;

    /* constant time over the password's length, as 2.6 memcmp_constant_time */
    for (size_t i = 0; i < pw_len; i++) {
        diff |= (unsigned char)(pw[i] ^ (i < n ? line[i] : 0));
    }
    if (!diff) {
        c->is_authed = true;
        reply(c, "SUCCESS: password is correct");
        welcome(c);
        return;
    }
    /* 2.6 words "ERROR: bad password" but drops it, as it drops all output while the password
     * is still needed (manage.c virtual_output_callback_func): the client sees the prompt again */
    if (++c->n_tries >= MGMT_PASSWORD_TRIES) {
        log_msg(LOG_WARN, "MAN: client connection rejected after %d failed password attempts",
                MGMT_PASSWORD_TRIES);
        client_close(c);
        return;
    }
    send_raw(c, "ENTER PASSWORD:", strlen("ENTER PASSWORD:")); /* again, as 2.6 man_prompt */
}

static void on_line(struct mgmt_client *c, char *line)
{
    char *p[MAX_PARMS + 1];

    if (!c->is_authed) {
        check_password(c, line);
        return;
    }
    if (split(line, p) > 0) {
        dispatch(c, p);
    }
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    struct mgmt_client *c = s->data;

    (void)buf;
    if (nread < 0) {
        client_close(c);
        return;
    }
    for (ssize_t i = 0; i < nread && !c->is_closing; i++) {
        unsigned char ch = (unsigned char)c->rbuf[i];

        if (ch == '\n') {
            if (c->is_discarding) {
                c->is_discarding = false;
                reply(c, "ERROR: command line too long (over %d bytes)", MGMT_LINE_MAX - 1);
            } else {
                c->in[c->in_len] = '\0';
                on_line(c, c->in);
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
    c->next = m->clients;
    m->clients = c;
    m->n_clients++;
    log_msg(LOG_INFO, "MANAGEMENT: Client connected from %s", c->peer);
    if (uv_read_start(&c->u.s, on_alloc, on_read) != 0) {
        client_close(c);
        return;
    }
    if (m->cfg->mgmt.password) {
        send_raw(c, "ENTER PASSWORD:", strlen("ENTER PASSWORD:")); /* no line end, as 2.6 */
    } else {
        c->is_authed = true;
        welcome(c);
    }
}

static void bytecount_one(void *arg, unsigned long cid, uint64_t in, uint64_t out)
{
    reply(arg, ">BYTECOUNT_CLI:%lu,%" PRIu64 ",%" PRIu64, cid, in, out);
}

static void on_timer(uv_timer_t *t)
{
    struct mgmt *m = t->data;
    uint64_t now = now_ms(m);

    for (struct mgmt_client *c = m->clients, *next; c; c = next) {
        next = c->next;
        if (c->is_authed && c->bytecount_s > 0 && now >= c->next_bytecount_ms) {
            c->next_bytecount_ms = now + (uint64_t)c->bytecount_s * 1000;
            m->ops.each_client(m->ops.ctx, bytecount_one, c);
        }
    }
}

/* ---- set-up ---- */

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
        snprintf(errbuf, errbuf_len, "management: cannot bind %s: %s", path, uv_strerror(err));
    }
    return err;
}

static int listen_tcp(struct mgmt *m, char *errbuf, size_t errbuf_len)
{
    struct sockaddr_storage ss;
    int err;

    err = uv_ip4_addr(m->cfg->mgmt.addr, atoi(m->cfg->mgmt.port), (struct sockaddr_in *)&ss);
    if (err) {
        err = uv_ip6_addr(m->cfg->mgmt.addr, atoi(m->cfg->mgmt.port), (struct sockaddr_in6 *)&ss);
    }
    if (err) {
        snprintf(errbuf, errbuf_len, "management: '%s' is not an IP address", m->cfg->mgmt.addr);
        return -EINVAL;
    }
    err = uv_tcp_init(m->loop, &m->listener.tcp);
    if (err) {
        return err;
    }
    m->is_listener_open = true;
    err = uv_tcp_bind(&m->listener.tcp, (struct sockaddr *)&ss, 0);
    if (err) {
        snprintf(errbuf, errbuf_len, "management: cannot bind %s:%s: %s", m->cfg->mgmt.addr,
                 m->cfg->mgmt.port, uv_strerror(err));
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
    if (!err) {
        err = cfg->mgmt.is_unix ? listen_unix(m, errbuf, errbuf_len)
                                : listen_tcp(m, errbuf, errbuf_len);
    }
    m->listener.h.data = m;
    if (!err) {
        err = uv_listen(&m->listener.s, 8, on_connection);
        if (err) {
            snprintf(errbuf, errbuf_len, "management: cannot listen: %s", uv_strerror(err));
        }
    }
    if (!err && cfg->mgmt.is_unix) {
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
    log_msg(LOG_INFO, "MANAGEMENT: %s interface listening on %s%s%s%s",
            cfg->mgmt.is_unix ? "unix socket" : "TCP", cfg->mgmt.addr, cfg->mgmt.is_unix ? "" : ":",
            cfg->mgmt.is_unix ? "" : cfg->mgmt.port,
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

        state_format(m, line, sizeof(line));
        for (struct mgmt_client *c = m->clients, *next; c; c = next) {
            next = c->next;
            if (c->is_authed && c->is_state_rt) {
                reply(c, ">STATE:%s", line);
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
            reply(c, "%s", line);
        }
    }
}

void mgmt_close(struct mgmt *m)
{
    if (!m) {
        return;
    }
    log_set_hook(NULL, NULL);
    while (m->clients) {
        client_close(m->clients);
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
    pthread_mutex_destroy(&m->lock);
    free(m);
}
