/* server/ops/mgmt_cmd.c: the management interface's commands (declared in mgmt_internal.h). Replies
 * are worded as openvpn 2.6's src/openvpn/manage.c words them. */

#include "server/ops/mgmt_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "server/config/config.h"
#include "server/ops/status.h"

#define MAX_PARMS 16 /* words of one command, as 2.6's MAX_PARMS */

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
            mgmt_reply(c, "ERROR: the '%s' command requires %s%d parameter%s", p[0],
                       is_at_least ? "at least " : "", n, n > 1 ? "s" : "");
            return false;
        }
    }
    return true;
}

static const char *const help_lines[] = {
    "Commands:",
    "bytecount n            : Show bytes in/out, update every n secs (0=off).",
    "certificate            : Enter a client certificate in response to >NEED-CERTIFICATE",
    "                         notification. Enter certificate base64 on subsequent lines",
    "                         followed by END",
    "client-auth CID KID    : Authenticate client-id/key-id CID/KID (MULTILINE)",
    "client-auth-nt CID KID : Authenticate client-id/key-id CID/KID",
    "client-deny CID KID R [CR] : Deny auth client-id/key-id CID/KID with log reason",
    "                             text R and optional client reason text CR",
    "client-pending-auth CID KID MSG timeout : Instruct OpenVPN to send AUTH_PENDING and "
    "INFO_PRE msg",
    "                                      to the client and wait for a final "
    "client-auth/client-deny",
    "client-kill CID [M]    : Kill client instance CID with message M (def=RESTART)",
    "echo [on|off] [N|all]  : Like log, but only show messages in echo buffer.",
    "env-filter [level]     : Set env-var filter level",
    "exit|quit              : Close management session.",
    "forget-passwords       : Forget passwords entered so far.",
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
    "needstr type action    : Enter confirmation for NEED-STR request of 'type',",
    "                         where action is reply string.",
    "ovpnd-drain [on|off]   : Show or set draining: new clients are not answered,",
    "                         connected ones stay (ovpnd's own; /health says 503).",
    "password type p        : Enter password p for a queried OpenVPN password.",
    "pid                    : Show process ID of the current OpenVPN process.",
    "pkcs11-id-count        : Get number of available PKCS#11 identities.",
    "pkcs11-id-get index    : Get PKCS#11 identity at index.",
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
    mgmt_reply(c, "Management Interface for ovpnd %s", OVPND_VERSION);
    for (size_t i = 0; i < sizeof(help_lines) / sizeof(help_lines[0]); i++) {
        mgmt_reply(c, "%s", help_lines[i]);
    }
}

/* The CONNECTED entry as 2.6's log_entry_print writes it with LOG_PRINT_INT_DATE |
 * LOG_PRINT_STATE | LOG_PRINT_LOCAL_IP | LOG_PRINT_REMOTE_IP: time, state, detail, the tunnel
 * address, the remote link address (none on a server: ",,"), the local one (",," when bound to
 * the wildcard address). */
void mgmt_cmd_state_format(const struct mgmt *m, char *buf, size_t cap)
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
        mgmt_reply(c, "SUCCESS: real-time %s notification set to ON", type);
        return;
    }
    if (strcmp(parm, "off") == 0) {
        *is_rt = false;
        mgmt_reply(c, "SUCCESS: real-time %s notification set to OFF", type);
        return;
    }
    if (strcmp(parm, "all") != 0 && (n = atoi(parm)) <= 0) {
        mgmt_reply(c, "ERROR: %s parameter must be 'on' or 'off' or some number n or 'all'", type);
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
            if (mgmt_log_format(m, seq, line, sizeof(line))) {
                mgmt_reply(c, "%s", line);
            }
        }
    } else if (strcmp(type, "state") == 0 && m->has_state) {
        mgmt_cmd_state_format(m, line, sizeof(line));
        mgmt_reply(c, "%s", line);
    }
    mgmt_reply(c, "END");
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
            mgmt_reply(c, "ERROR: error parsing IP address: %s", host);
            return;
        }
        if (port <= 0 || port >= 65536) {
            mgmt_reply(c, "ERROR: port number is out of range: %s", colon + 1);
            return;
        }
        n = m->ops.kill_addr(m->ops.ctx, ntohl(a.s_addr), (uint16_t)port);
        if (n > 0) {
            mgmt_reply(c, "SUCCESS: %d client(s) at address %s:%d killed", n, host, port);
        } else {
            mgmt_reply(c, "ERROR: client at address %s:%d not found", host, port);
        }
        return;
    }
    if (colon == victim || !victim[0]) {
        mgmt_reply(c, "ERROR: kill parse");
        return;
    }
    {
        char cn[128]; /* 2.6 parses the victim into 128 bytes, up to the first ':' */
        int n;

        snprintf(cn, sizeof(cn), "%.*s", colon ? (int)(colon - victim) : (int)strlen(victim),
                 victim);
        n = m->ops.kill_cn(m->ops.ctx, cn);
        if (n > 0) {
            mgmt_reply(c, "SUCCESS: common name '%s' found, %d client(s) killed", cn, n);
        } else {
            mgmt_reply(c, "ERROR: common name '%s' not found", cn);
        }
    }
}

/* A CID, KID or TIMEOUT: a decimal number (2.6 parse_cid / parse_uint, "ERROR: cannot parse
 * WHAT" otherwise). */
static bool parse_number(struct mgmt_client *c, const char *str, const char *what,
                         unsigned long max, unsigned long *out)
{
    char *end;

    errno = 0;
    *out = strtoul(str, &end, 10);
    if (errno || end == str || *end || str[0] == '-' || *out > max) {
        mgmt_reply(c, "ERROR: cannot parse %s", what);
        return false;
    }
    return true;
}

static bool parse_cid_kid(struct mgmt_client *c, const char *cid_str, const char *kid_str,
                          unsigned long *cid, unsigned *kid)
{
    unsigned long k;

    if (!parse_number(c, cid_str, "CID", ULONG_MAX, cid) ||
        !parse_number(c, kid_str, "KID", UINT_MAX, &k)) {
        return false;
    }
    *kid = (unsigned)k;
    return true;
}

static void cmd_client_kill(struct mgmt_client *c, const char *cid_str, const char *msg)
{
    unsigned long cid;

    if (!parse_number(c, cid_str, "CID", ULONG_MAX, &cid)) {
        return;
    }
    if (c->m->ops.kill_cid(c->m->ops.ctx, cid, msg)) {
        mgmt_reply(c, "SUCCESS: client-kill command succeeded");
    } else {
        mgmt_reply(c, "ERROR: client-kill command failed");
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
            mgmt_reply(c, "SUCCESS: signal %s thrown", sigs[i].name);
            return;
        }
    }
    mgmt_reply(c, "ERROR: signal '%s' is not a known signal type", name);
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
        mgmt_reply(c, "ERROR: status version %d is not 1, 2 or 3", version);
        return;
    }
    mem = open_memstream(&text, &len);
    if (!mem) {
        mgmt_reply(c, "ERROR: out of memory");
        return;
    }
    err = m->ops.status(m->ops.ctx, version, mem);
    fclose(mem);
    if (err) {
        mgmt_reply(c, "ERROR: status failed");
    } else {
        mgmt_send_text(c, text, len);
    }
    free(text);
}

static void cmd_level(struct mgmt_client *c, const char *name, const char *parm, int *level)
{
    if (!parm) {
        mgmt_reply(c, "SUCCESS: %s=%d", name, *level);
        return;
    }
    int v = atoi(parm);

    /* 2.6 error.c set_debug_level / set_mute_cutoff: verb 0..15 (M_DEBUG_LEVEL), mute >= 0 */
    if (v < 0 || (level == &c->m->verb && v > 15)) {
        mgmt_reply(c, "ERROR: %s level is out of range", name);
        return;
    }
    *level = v;
    if (level == &c->m->verb) {
        log_set_level(log_level_from_verb(v));
    }
    mgmt_reply(c, "SUCCESS: %s level changed", name);
}

static void cmd_hold(struct mgmt_client *c, const char *parm)
{
    struct mgmt *m = c->m;

    if (!parm) {
        mgmt_reply(c, "SUCCESS: hold=%d", m->has_hold_flag ? 1 : 0);
    } else if (strcmp(parm, "on") == 0) {
        m->has_hold_flag = true; /* (a server holds only at start-up: no later effect) */
        mgmt_reply(c, "SUCCESS: hold flag set to ON");
    } else if (strcmp(parm, "off") == 0) {
        m->has_hold_flag = false;
        mgmt_reply(c, "SUCCESS: hold flag set to OFF");
    } else if (strcmp(parm, "release") == 0) {
        if (m->is_held) {
            m->is_held = false;
            log_msg(LOG_INFO, "MANAGEMENT: hold released");
            m->ops.hold_release(m->ops.ctx);
        }
        mgmt_reply(c, "SUCCESS: hold release succeeded");
    } else {
        mgmt_reply(c, "ERROR: bad hold command parameter");
    }
}

static void cmd_bytecount(struct mgmt_client *c, const char *parm)
{
    int s = atoi(parm);

    c->bytecount_s = s > 0 ? s : 0;
    c->next_bytecount_ms = mgmt_now_ms(c->m) + (uint64_t)c->bytecount_s * 1000;
    mgmt_reply(c, "SUCCESS: bytecount interval changed");
}

static void unsupported(struct mgmt_client *c, const char *name);

/* client-auth's answer, once its block has ended (or at once for client-auth-nt: 2.6 words
 * both replies as client-auth's). */
static void client_auth_done(struct mgmt_client *c)
{
    struct mgmt *m = c->m;
    bool ok =
        !c->is_block_overflow && m->ops.client_auth(m->ops.ctx, c->block_cid, c->block_kid, true,
                                                    NULL, NULL, c->block_len ? c->block : NULL);

    if (c->block) {
        memset(c->block, 0, c->block_len);
    }
    free(c->block);
    c->block = NULL;
    c->block_len = 0;
    c->is_in_block = c->is_block_overflow = false;
    mgmt_reply(c,
               ok ? "SUCCESS: client-auth command succeeded" : "ERROR: client-auth command failed");
}

/* A line of client-auth's block: "END" ends it; others are kept (up to MGMT_BLOCK_MAX bytes). */
static void block_line(struct mgmt_client *c, const char *line)
{
    size_t len = strlen(line);
    char *grown;

    if (strcmp(line, "END") == 0) {
        client_auth_done(c);
        return;
    }
    if (c->is_block_overflow) {
        return;
    }
    if (c->block_len + len + 2 > MGMT_BLOCK_MAX ||
        !(grown = realloc(c->block, c->block_len + len + 2))) {
        log_msg(LOG_WARN, "MANAGEMENT: client-auth block from %s over %d bytes: refused", c->peer,
                MGMT_BLOCK_MAX);
        c->is_block_overflow = true;
        return;
    }
    c->block = grown;
    memcpy(c->block + c->block_len, line, len);
    c->block_len += len;
    c->block[c->block_len++] = '\n';
    c->block[c->block_len] = '\0';
}

static void cmd_client_auth(struct mgmt_client *c, char **p, bool has_block)
{
    if (!c->m->cfg->mgmt.client_auth) {
        unsupported(c, p[0]);
        return;
    }
    if (!parse_cid_kid(c, p[1], p[2], &c->block_cid, &c->block_kid)) {
        return;
    }
    if (has_block) {
        c->is_in_block = true; /* the lines up to END follow */
    } else {
        client_auth_done(c);
    }
}

static void cmd_client_deny(struct mgmt_client *c, char **p)
{
    struct mgmt *m = c->m;
    unsigned long cid;
    unsigned kid;

    if (!m->cfg->mgmt.client_auth) {
        unsupported(c, p[0]);
        return;
    }
    if (!parse_cid_kid(c, p[1], p[2], &cid, &kid)) {
        return;
    }
    if (m->ops.client_auth(m->ops.ctx, cid, kid, false, p[3], p[4], NULL)) {
        mgmt_reply(c, "SUCCESS: client-deny command succeeded");
    } else {
        mgmt_reply(c, "ERROR: client-deny command failed");
    }
}

static void cmd_client_pending_auth(struct mgmt_client *c, char **p)
{
    struct mgmt *m = c->m;
    unsigned long cid, timeout;
    unsigned kid;

    if (!m->cfg->mgmt.client_auth) {
        unsupported(c, p[0]);
        return;
    }
    if (!parse_cid_kid(c, p[1], p[2], &cid, &kid) ||
        !parse_number(c, p[4], "TIMEOUT", UINT_MAX, &timeout)) {
        return;
    }
    if (m->ops.client_pending_auth(m->ops.ctx, cid, kid, p[3], (unsigned)timeout)) {
        mgmt_reply(c, "SUCCESS: client-pending-auth command succeeded");
    } else {
        mgmt_reply(c, "ERROR: client-pending-auth command failed. Extra parameter might be too "
                      "long");
    }
}

static void unsupported(struct mgmt_client *c, const char *name)
{
    mgmt_reply(c, "ERROR: The '%s' command is not supported by the current daemon mode", name);
}

/* ovpnd-drain [on|off]: ovpnd's own command, named so that no openvpn command can clash. */
static void cmd_drain(struct mgmt_client *c, const char *parm)
{
    struct mgmt *m = c->m;
    uint64_t n = 0;
    int set = -1;
    bool is_draining;

    if (parm && strcmp(parm, "on") == 0) {
        set = 1;
    } else if (parm && strcmp(parm, "off") == 0) {
        set = 0;
    } else if (parm) {
        mgmt_reply(c, "ERROR: ovpnd-drain takes on, off or nothing");
        return;
    }
    is_draining = m->ops.drain(m->ops.ctx, set, &n);
    mgmt_reply(c, "SUCCESS: draining=%s nclients=%" PRIu64, is_draining ? "on" : "off", n);
}

static void dispatch(struct mgmt_client *c, char **p)
{
    struct mgmt *m = c->m;
    const char *cmd = p[0];

    if (strcmp(cmd, "exit") == 0 || strcmp(cmd, "quit") == 0) {
        mgmt_client_close(c);
    } else if (strcmp(cmd, "help") == 0) {
        cmd_help(c);
    } else if (strcmp(cmd, "version") == 0) {
        if (p[1]) { /* 2.6 records the client's version and says nothing */
            c->version = atoi(p[1]);
        } else {
            mgmt_reply(c, "OpenVPN Version: %s", OVPND_TITLE);
            mgmt_reply(c, "Management Version: %d", MGMT_VERSION);
            mgmt_reply(c, "END");
        }
    } else if (strcmp(cmd, "pid") == 0) {
        mgmt_reply(c, "SUCCESS: pid=%d", (int)getpid());
    } else if (strcmp(cmd, "nclients") == 0 || strcmp(cmd, "load-stats") == 0) {
        uint64_t n, in, out;

        m->ops.load_stats(m->ops.ctx, &n, &in, &out);
        if (cmd[0] == 'n') {
            mgmt_reply(c, "SUCCESS: nclients=%" PRIu64, n);
        } else {
            mgmt_reply(c, "SUCCESS: nclients=%" PRIu64 ",bytesin=%" PRIu64 ",bytesout=%" PRIu64, n,
                       in, out);
        }
    } else if (strcmp(cmd, "env-filter") == 0) {
        c->env_filter = p[1] ? atoi(p[1]) : 0;
        mgmt_reply(c, "SUCCESS: env_filter_level=%d", c->env_filter);
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
    } else if (strcmp(cmd, "client-auth") == 0 || strcmp(cmd, "client-auth-nt") == 0) {
        if (need(c, p, 2, false)) {
            cmd_client_auth(c, p, strcmp(cmd, "client-auth") == 0);
        }
    } else if (strcmp(cmd, "client-deny") == 0) {
        if (need(c, p, 3, true)) {
            cmd_client_deny(c, p);
        }
    } else if (strcmp(cmd, "client-pending-auth") == 0) {
        if (need(c, p, 4, false)) {
            cmd_client_pending_auth(c, p);
        }
    } else if (strcmp(cmd, "ovpnd-drain") == 0) {
        cmd_drain(c, p[1]);
    } else if (strcmp(cmd, "pk-sig") == 0 || strcmp(cmd, "rsa-sig") == 0) {
        mgmt_pk_cmd(c, cmd);
    } else if (strcmp(cmd, "password") == 0 || strcmp(cmd, "username") == 0) {
        if (need(c, p, 2, false)) {
            mgmt_query_password_cmd(c, cmd, p[1], p[2]);
        }
    } else if (strcmp(cmd, "certificate") == 0) {
        mgmt_query_cert_cmd(c);
    } else if (strcmp(cmd, "needstr") == 0) {
        if (need(c, p, 2, false)) {
            mgmt_query_needstr_cmd(c, p[1], p[2]);
        }
    } else if (strcmp(cmd, "pkcs11-id-count") == 0) {
        mgmt_pkcs11_id_count_cmd(c);
    } else if (strcmp(cmd, "pkcs11-id-get") == 0) {
        if (need(c, p, 1, false)) {
            mgmt_pkcs11_id_get_cmd(c, p[1]);
        }
    } else if (strcmp(cmd, "forget-passwords") == 0) {
        /* the decrypted key stays in use; no password is kept (nothing to forget) */
        mgmt_reply(c, "SUCCESS: Passwords were forgotten");
    } else if (strcmp(cmd, "push-update-broad") == 0 || strcmp(cmd, "push-update-cid") == 0) {
        /* openvpn 2.7's; a stock 2.6 client does not read PUSH_UPDATE messages */
        mgmt_reply(c, "ERROR: %s is not supported: openvpn 2.6 clients do not take PUSH_UPDATE",
                   cmd);
    } else {
        mgmt_reply(c, "ERROR: unknown command, enter 'help' for more options");
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
        mgmt_reply(c, "SUCCESS: password is correct");
        mgmt_welcome(c);
        return;
    }
    /* 2.6 words "ERROR: bad password" but drops it, as it drops all output while the password
     * is still needed (manage.c virtual_output_callback_func): the client sees the prompt again */
    if (++c->n_tries >= MGMT_PASSWORD_TRIES) {
        log_msg(LOG_WARN, "MAN: client connection rejected after %d failed password attempts",
                MGMT_PASSWORD_TRIES);
        mgmt_client_close(c);
        return;
    }
    mgmt_send_raw(c, "ENTER PASSWORD:", strlen("ENTER PASSWORD:")); /* again, as 2.6 man_prompt */
}

void mgmt_cmd_line(struct mgmt_client *c, char *line)
{
    char *p[MAX_PARMS + 1];

    if (!c->is_authed) {
        check_password(c, line);
        return;
    }
    if (c->is_in_block) {
        block_line(c, line);
        return;
    }
    if (c->is_in_pk_block) {
        mgmt_pk_line(c, line);
        return;
    }
    if (c->is_in_cert_block) {
        mgmt_query_cert_line(c, line);
        return;
    }
    if (split(line, p) > 0) {
        dispatch(c, p);
    }
}
