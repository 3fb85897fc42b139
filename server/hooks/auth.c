/* server/hooks/auth.c: see auth.h. Acceptor thread only. */
#include "server/hooks/auth.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mbedtls/platform_util.h>

#include "proto/peer_info.h"
#include "server/hooks/hook_env.h"
#include "server/log/log.h"
#include "server/hooks/openvpn_plugin.h"
#include "server/hooks/plugin.h"
#include "server/hooks/script.h"
#include "server/thread/mailbox.h"

#define AUTH_PATH_MAX 512
#define AUTH_REASON_MAX 256 /* bytes of a script's AUTH_FAILED reason that are read */

enum req_state {
    REQ_RUNNING,  /* a plugin call or the script runs */
    REQ_DEFERRED, /* it answered "deferred": waiting for the auth control file */
};

struct auth_call;

struct auth {
    uv_loop_t *loop;
    const struct config *cfg;
    struct plugin_set *plugins;
    const struct script_env *global_env; /* auth_set_global_env; NULL: base_env */
    size_t n_plugins;                    /* those that want AUTH_USER_PASS_VERIFY */
    struct auth_req *reqs;               /* pending requests */
    size_t n_pending;
    struct mailbox *mb; /* plugin calls come back through the box of the loop's thread */
    int who;
    auth_pending_cb pending; /* auth_set_pending_cb; NULL: auth_pending_file is not read */
};

/* A call into a plugin. Owned by the auth module; it outlives its request if that is
 * cancelled while the plugin works, and owns the environment the plugin reads. */
struct auth_call {
    struct plugin_call pc;
    struct auth *au;
    struct auth_req *req; /* NULL once the request is gone; acceptor thread only */
    struct script_env env;
    struct msg *done; /* MSG_CALL posted when the plugin returns (made ahead: cannot fail) */
};

#define AUTH_IV_SSO_MAX 128

struct auth_req {
    struct auth *au;
    struct auth_req *next, **pprev;
    enum req_state state;
    size_t stage; /* 0..n_plugins-1: that plugin; n_plugins: the script */
    auth_done_cb done;
    void *ctx;
    struct script *script;
    struct auth_call *call;
    struct script_env plugin_env; /* what plugins get: the password always (openvpn 2.6) */
    struct script_env script_env; /* what the script gets */
    char up_file[AUTH_PATH_MAX];  /* via-file: username/password; "" once removed */
    char acf[AUTH_PATH_MAX];      /* auth_control_file */
    char apf[AUTH_PATH_MAX];      /* auth_pending_file */
    char afr[AUTH_PATH_MAX];      /* auth_failed_reason_file */
    char iv_sso[AUTH_IV_SSO_MAX]; /* the client's IV_SSO: the pending methods it supports */
    struct plugin_client *client; /* a reference to its plugin contexts, or NULL */
};

/* verify-client-cert none|optional lets a client in without a certificate: then its username
 * and password are all that identify it, so something must check them. The config parser
 * could only see that a plugin is configured; now that the plugins are open, the events they
 * handle are known (openvpn 2.6 counts any plugin here, options.c; its key_method_2_read then
 * refuses such a client at run time, ssl.c). Returns 0, or -EINVAL with errbuf naming the
 * lines. */
static int check_certless_auth(const struct auth *au, char *errbuf, size_t errbuf_len)
{
    const struct config *cfg = au->cfg;
    char plugins[400] = "";
    size_t len;

    if (cfg->tls.verify_client_cert == CONFIG_VERIFY_REQUIRE || auth_is_configured(au) ||
        cfg->mgmt.client_auth) {
        return 0;
    }
    for (size_t i = 0; i < cfg->hooks.n_plugins; i++) {
        const char *name = strrchr(cfg->hooks.plugins[i].path, '/');

        len = strlen(plugins);
        snprintf(plugins + len, sizeof(plugins) - len, "%s%s (%s)", i ? ", " : "",
                 cfg->hooks.plugins[i].where, name ? name + 1 : cfg->hooks.plugins[i].path);
    }
    snprintf(errbuf, errbuf_len,
             "%s: verify-client-cert: '%s' lets clients connect without a certificate, but "
             "nothing would check their username and password: there is no "
             "auth-user-pass-verify, and %s%s%s",
             cfg->tls.verify_client_cert_where ? cfg->tls.verify_client_cert_where
                                               : config_origin(cfg),
             cfg->tls.verify_client_cert == CONFIG_VERIFY_NONE ? "none" : "optional",
             cfg->hooks.n_plugins == 0   ? "no plugin"
             : cfg->hooks.n_plugins == 1 ? "the plugin at "
                                         : "none of the plugins at ",
             plugins,
             cfg->hooks.n_plugins == 0   ? ""
             : cfg->hooks.n_plugins == 1 ? " does not handle AUTH_USER_PASS_VERIFY"
                                         : " handles AUTH_USER_PASS_VERIFY");
    return -EINVAL;
}

/* What every script and plugin sees (openvpn 2.6 setenv_settings). */
static int base_env(const struct config *cfg, struct script_env *env)
{
    return hook_env_base(cfg, env);
}

int auth_new(uv_loop_t *loop, struct mailbox *mb, int who, const struct config *cfg,
             struct auth **out, char *errbuf, size_t errbuf_len)
{
    struct auth *au = calloc(1, sizeof(*au));
    struct script_env env = {0};
    int err;

    if (au == NULL) {
        return -ENOMEM;
    }
    au->loop = loop;
    au->mb = mb;
    au->who = who;
    au->cfg = cfg;
    err = base_env(cfg, &env);
    err = err ? err : script_env_add(&env, "script_context", "init");
    if (err) {
        snprintf(errbuf, errbuf_len, "out of memory");
    } else {
        err = plugin_set_open(cfg, env.vars, &au->plugins, errbuf, errbuf_len);
    }
    script_env_clear(&env);
    if (err == 0) {
        au->n_plugins = plugin_set_count(au->plugins, OVPN_PLUGIN_AUTH_USER_PASS_VERIFY);
        err = check_certless_auth(au, errbuf, errbuf_len);
    }
    if (err) {
        auth_free(au);
        return err;
    }
    *out = au;
    return 0;
}

void auth_set_global_env(struct auth *au, const struct script_env *env)
{
    au->global_env = env;
}

struct plugin_set *auth_plugins(const struct auth *au)
{
    return au->plugins;
}

bool auth_is_configured(const struct auth *au)
{
    return au->cfg->auth.auth_user_pass_verify != NULL || au->n_plugins > 0;
}

void auth_set_config(struct auth *au, const struct config *cfg)
{
    if (au) {
        au->cfg = cfg;
    }
}

bool auth_admits(const struct config *cfg, bool has_cert, bool is_user_pass_ok, const char **why)
{
    if (has_cert) {
        return true;
    }
    if (cfg->tls.verify_client_cert == CONFIG_VERIFY_REQUIRE) {
        *why = "no client certificate";
        return false;
    }
    if (!is_user_pass_ok) {
        *why = "no client certificate, and no username/password check accepted this client";
        return false;
    }
    return true;
}

size_t auth_n_pending(const struct auth *au)
{
    return au->n_pending;
}

void auth_failed_message(const char *reason, char *out, size_t cap)
{
    size_t n;

    n = (size_t)snprintf(out, cap, "AUTH_FAILED");
    if (reason == NULL || reason[0] == '\0' || n + 2 >= cap) {
        return;
    }
    out[n++] = ',';
    for (const char *p = reason; *p != '\0' && *p != '\n' && *p != '\r' && n + 1 < cap; p++) {
        unsigned char c = (unsigned char)*p;

        if (c >= 0x20 && c != 0x7f) {
            out[n++] = (char)c;
        }
    }
    while (n > 0 && (out[n - 1] == ' ' || out[n - 1] == '\t')) {
        n--;
    }
    if (out[n - 1] == ',') {
        n--; /* nothing printable was left */
    }
    out[n] = '\0';
}

/* ---- temporary files ---- */

static const char *tmp_dir(const struct auth *au)
{
    const char *dir = au->cfg->hooks.tmp_dir;

    if (dir == NULL) {
        dir = getenv("TMPDIR");
    }
    return dir != NULL && dir[0] != '\0' ? dir : "/tmp";
}

/* A new empty mode-0600 file TMPDIR/ovpnd-TAG-XXXXXX, its path in path (AUTH_PATH_MAX). With
 * content, that is written to it. Returns 0 or -errno. */
static int make_temp(const struct auth *au, const char *tag, const char *content, char *path)
{
    int fd, len = snprintf(path, AUTH_PATH_MAX, "%s/ovpnd-%s-XXXXXX", tmp_dir(au), tag);
    int err = 0;

    if (len < 0 || len >= AUTH_PATH_MAX) {
        path[0] = '\0';
        return -ENAMETOOLONG;
    }
    fd = mkstemp(path); /* mode 0600 */
    if (fd < 0) {
        err = -errno;
        path[0] = '\0';
        return err;
    }
    if (content != NULL) {
        size_t left = strlen(content);
        const char *p = content;

        while (left > 0) {
            ssize_t w = write(fd, p, left);

            if (w < 0 && errno == EINTR) {
                continue;
            }
            if (w <= 0) {
                err = w < 0 ? -errno : -EIO;
                break;
            }
            p += w;
            left -= (size_t)w;
        }
    }
    if (close(fd) != 0 && err == 0) {
        err = -errno;
    }
    if (err) {
        unlink(path);
        path[0] = '\0';
    }
    return err;
}

static void remove_file(char *path)
{
    if (path[0] != '\0') {
        unlink(path);
        path[0] = '\0';
    }
}

/* Up to cap-1 bytes of the start of path into buf (NUL-terminated); "" if unreadable. */
static void read_small(const char *path, char *buf, size_t cap)
{
    int fd = path[0] != '\0' ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    ssize_t n = 0;

    buf[0] = '\0';
    if (fd < 0) {
        return;
    }
    n = read(fd, buf, cap - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
}

/* ---- requests ---- */

static void req_unlink(struct auth_req *r)
{
    if (r->pprev != NULL) {
        *r->pprev = r->next;
        if (r->next != NULL) {
            r->next->pprev = r->pprev;
        }
        r->pprev = NULL;
        r->au->n_pending--;
    }
}

static void req_free(struct auth_req *r)
{
    req_unlink(r);
    if (r->call != NULL) {
        r->call->req = NULL; /* freed when the plugin returns */
    }
    script_env_clear(&r->plugin_env);
    script_env_clear(&r->script_env);
    script_abandon(r->script);
    remove_file(r->up_file);
    remove_file(r->acf);
    remove_file(r->apf);
    remove_file(r->afr);
    plugin_client_unref(r->client); /* after its call was queued: the destructors follow it */
    free(r);
}

void auth_cancel(struct auth_req *r)
{
    if (r != NULL) {
        req_free(r);
    }
}

/* Done: done() is called and r freed. A refusal's client reason is client_reason, else what
 * the check wrote into auth_failed_reason_file. */
static void finish_with(struct auth_req *r, bool is_ok, const char *log_reason,
                        const char *client_reason)
{
    char reason[AUTH_REASON_MAX];

    reason[0] = '\0';
    if (!is_ok && client_reason) {
        snprintf(reason, sizeof(reason), "%s", client_reason);
    } else if (!is_ok) {
        read_small(r->afr, reason, sizeof(reason));
    }
    r->script = NULL; /* ended: nothing to kill */
    req_unlink(r);
    r->done(r->ctx, is_ok, reason[0] != '\0' ? reason : NULL, log_reason);
    req_free(r);
}

static void finish(struct auth_req *r, bool is_ok, const char *log_reason)
{
    finish_with(r, is_ok, log_reason, NULL);
}

static int run_stage(struct auth_req *r);

/* The current stage accepted the client: on to the next, or done. */
static void stage_ok(struct auth_req *r, const char *log_reason)
{
    int err;

    r->stage++;
    r->state = REQ_RUNNING;
    if (r->stage > r->au->n_plugins ||
        (r->stage == r->au->n_plugins && r->au->cfg->auth.auth_user_pass_verify == NULL)) {
        finish(r, true, log_reason);
        return;
    }
    err = run_stage(r);
    if (err) {
        char why[128];

        snprintf(why, sizeof(why), "cannot run the next check: %s", strerror(-err));
        finish(r, false, why);
    }
}

/* The auth control file's first byte: 1 accepted, 0 refused, anything else still pending
 * (ssl_verify.c key_state_test_auth_control_file). */
static bool check_control_file(struct auth_req *r)
{
    char c[2];

    read_small(r->acf, c, sizeof(c));
    if (c[0] == '1') {
        stage_ok(r, "deferred: auth control file says 1");
        return true;
    }
    if (c[0] == '0') {
        finish(r, false, "deferred: auth control file says 0");
        return true;
    }
    return false;
}

/* Whether method is among the comma-separated ones of iv_sso (2.6 check_auth_pending_method). */
static bool sso_has(const char *iv_sso, const char *method)
{
    size_t len = strlen(method);

    for (const char *p = iv_sso; *p;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);

        if (n == len && len > 0 && strncmp(p, method, n) == 0) {
            return true;
        }
        p += n + (e ? 1 : 0);
    }
    return false;
}

/* The check answered "deferred": if it wrote auth_pending_file (2.6 ssl_verify.c
 * key_state_check_auth_pending_file: at least three lines, the timeout in seconds, the method
 * the client must announce in IV_SSO, the text for INFO_PRE), tell the client through the
 * pending callback; the file is removed. Then the control file may already hold the answer.
 * Returns false when r was finished (refused). */
static bool enter_deferred(struct auth_req *r)
{
    char text[3 * 1024 + 4], *line[3] = {NULL, NULL, NULL}, *p = text, *end;
    char why[200], client_why[160];
    long timeout;
    int n = 0;

    r->state = REQ_DEFERRED;
    read_small(r->apf, text, sizeof(text));
    if (text[0] != '\0' && r->au->pending) {
        if (truncate(r->apf, 0) != 0) { /* read once, as 2.6 removes it */
            log_msg(LOG_DEBUG, "auth: cannot empty the auth pending file: %s", strerror(errno));
        }
        while (n < 3 && p && *p) {
            line[n++] = p;
            p = strchr(p, '\n');
            if (p) {
                *p++ = '\0';
            }
        }
        for (int i = 0; i < n; i++) {
            line[i][strcspn(line[i], "\r")] = '\0';
        }
        if (n < 3) {
            finish(r, false, "auth pending file is not at least three lines long");
            return false;
        }
        errno = 0;
        timeout = strtol(line[0], &end, 10);
        if (errno || end == line[0] || timeout <= 0 || timeout > (long)UINT_MAX) {
            finish(r, false, "could not parse the auth pending file's timeout");
            return false;
        }
        if (!sso_has(r->iv_sso, line[1])) {
            snprintf(why, sizeof(why), "the client does not support pending auth method '%.64s'",
                     line[1]);
            snprintf(client_why, sizeof(client_why),
                     "Authentication failed, required pending auth method '%.64s' not "
                     "supported",
                     line[1]);
            finish_with(r, false, why, client_why);
            return false;
        }
        if (!r->au->pending(r->ctx, (unsigned)timeout, line[2])) {
            finish(r, false, "cannot send the pending auth message to the client");
            return false;
        }
    }
    return !check_control_file(r);
}

static void on_script_exit(void *ctx, int exit_status, int term_signal)
{
    struct auth_req *r = ctx;
    char why[96];

    remove_file(r->up_file); /* as 2.6: the password file goes when the script returns */
    r->script = NULL;
    if (term_signal != 0) {
        snprintf(why, sizeof(why), "auth-user-pass-verify script killed by signal %d", term_signal);
        finish(r, false, why);
    } else if (exit_status == 0) {
        stage_ok(r, "auth-user-pass-verify script exited with 0");
    } else if (exit_status == 2) {
        (void)enter_deferred(r); /* it may have answered already */
    } else {
        snprintf(why, sizeof(why), "auth-user-pass-verify script exited with %d", exit_status);
        finish(r, false, why);
    }
}

/* A plugin thread: the call returned. Hand it to the loop's thread (call_returned). */
static void on_call_done(struct plugin_call *pc)
{
    struct auth_call *c = (struct auth_call *)pc;
    struct msg *m = c->done;

    c->done = NULL;
    mailbox_post(c->au->mb, c->au->who, m);
}

static void call_free(struct auth_call *c)
{
    msg_free(c->done); /* not posted: the call never started */
    script_env_clear(&c->env);
    free(c);
}

/* The call came back to a thread that has stopped: nothing waits for it. */
static void call_discard(void *arg)
{
    call_free(arg);
}

static void call_returned(void *arg)
{
    struct auth_call *c = arg;
    struct auth_req *r = c->req;
    char why[600];

    if (r != NULL) {
        const char *name = plugin_name(r->au->plugins, OVPN_PLUGIN_AUTH_USER_PASS_VERIFY, r->stage);

        r->call = NULL;
        switch (c->pc.result) {
        case OVPN_PLUGIN_FUNC_SUCCESS:
            snprintf(why, sizeof(why), "plugin %s accepted", name);
            stage_ok(r, why);
            break;
        case OVPN_PLUGIN_FUNC_DEFERRED:
            (void)enter_deferred(r);
            break;
        default:
            snprintf(why, sizeof(why), "plugin %s refused (status %d)", name, c->pc.result);
            finish(r, false, why);
            break;
        }
    }
    call_free(c);
}

void auth_tick(struct auth *au)
{
    struct auth_req *r = au->reqs, *next;

    for (; r != NULL; r = next) {
        next = r->next;
        if (r->state == REQ_DEFERRED) {
            (void)check_control_file(r);
        }
    }
}

/* The per-client variables: after base_env, as openvpn 2.6 sets them for
 * user-pass-verify. with_password: also $password; is_script: also $script_type. */
static int build_env(const struct auth *au, const struct auth_req *r, const struct auth_client *c,
                     bool with_password, bool is_script, struct script_env *env)
{
    int err;

    if (au->global_env != NULL) {
        err = hook_env_append(env, au->global_env); /* script_context included */
    } else {
        err = base_env(au->cfg, env);
        err = err ? err : script_env_add(env, "script_context", "init");
    }
    if (err == 0 && is_script) { /* 2.6 plugin_call_ssl removes script_type for plugins */
        err = script_env_add(env, "script_type", "user-pass-verify");
    }
    err = err ? err : script_env_add(env, "common_name", c->common_name);
    /* untrusted_ip, or untrusted_ip6 for an IPv6 client (misc.c, setenv_sockaddr) */
    err = err ? err : hook_env_addr(env, "untrusted", &c->remote);
    err = err ? err : script_env_add(env, "auth_control_file", r->acf);
    err = err ? err : script_env_add(env, "auth_pending_file", r->apf);
    err = err ? err : script_env_add(env, "auth_failed_reason_file", r->afr);
    err = err ? err : hook_env_peer_info(env, c->peer_info);
    if (c->session_id != NULL && c->session_state != NULL) {
        err = err ? err : script_env_add(env, "session_id", c->session_id);
        err = err ? err : script_env_add(env, "session_state", c->session_state);
    }
    /* A username or password with a line break cannot be passed; the acceptor has made control
     * characters '_' already, as 2.6 does (proto/client_name.h). */
    err = err ? err : script_env_add(env, "username", c->username);
    if (err == 0 && with_password) {
        err = script_env_add(env, "password", c->password);
    }
    return err;
}

static int build_argv(const struct auth *au, struct auth_req *r, char ***out)
{
    char *const *cmd = au->cfg->auth.auth_user_pass_verify;
    size_t n = 0;
    char **argv;

    while (cmd[n] != NULL) {
        n++;
    }
    argv = calloc(n + 2, sizeof(*argv));
    if (argv == NULL) {
        return -ENOMEM;
    }
    memcpy(argv, cmd, n * sizeof(*argv));
    if (r->up_file[0] != '\0') {
        argv[n] = r->up_file;
    }
    *out = argv;
    return 0;
}

/* Empty the control and reason files for a new stage. */
static void reset_files(const struct auth_req *r)
{
    if (truncate(r->acf, 0) != 0 || truncate(r->afr, 0) != 0) {
        log_msg(LOG_DEBUG, "auth: cannot empty the auth control files: %s", strerror(errno));
    }
}

static int run_stage(struct auth_req *r)
{
    struct auth *au = r->au;
    int err;

    reset_files(r);
    if (r->stage < au->n_plugins) {
        struct auth_call *c = calloc(1, sizeof(*c));

        if (c == NULL) {
            return -ENOMEM;
        }
        for (size_t i = 0; i < r->plugin_env.n; i++) {
            err = script_env_add_raw(&c->env, r->plugin_env.vars[i]);
            if (err) {
                call_free(c);
                return err;
            }
        }
        c->au = au;
        c->req = r;
        c->done = msg_call_new(call_returned, call_discard, c);
        if (c->done == NULL) {
            call_free(c);
            return -ENOMEM;
        }
        c->pc.type = OVPN_PLUGIN_AUTH_USER_PASS_VERIFY;
        c->pc.client = r->client;
        c->pc.envp = c->env.vars;
        c->pc.done = on_call_done;
        err = plugin_call_start(au->plugins, r->stage, &c->pc);
        if (err) {
            call_free(c);
            return err;
        }
        r->call = c;
        return 0;
    }
    {
        char **argv = NULL;

        err = build_argv(au, r, &argv);
        err =
            err ? err : script_start(au->loop, argv, &r->script_env, on_script_exit, r, &r->script);
        free(argv);
    }
    return err;
}

int auth_start(struct auth *au, const struct auth_client *c, auth_done_cb done, void *ctx,
               struct auth_req **out)
{
    const struct config *cfg = au->cfg;
    struct auth_req *r = calloc(1, sizeof(*r));
    bool has_script = cfg->auth.auth_user_pass_verify != NULL;
    int err;

    if (r == NULL) {
        return -ENOMEM;
    }
    if (strpbrk(c->username, "\r\n") != NULL || strpbrk(c->password, "\r\n") != NULL) {
        free(r);
        return -EINVAL;
    }
    r->au = au;
    r->done = done;
    r->ctx = ctx;
    r->state = REQ_RUNNING;
    r->client = plugin_client_ref(c->client);
    peer_info_value(c->peer_info, "IV_SSO", r->iv_sso, sizeof(r->iv_sso));
    err = make_temp(au, "acf", NULL, r->acf);
    err = err ? err : make_temp(au, "apf", NULL, r->apf);
    err = err ? err : make_temp(au, "afr", NULL, r->afr);
    if (err == 0 && has_script && cfg->auth.auth_user_pass_verify_via_file) {
        size_t len = strlen(c->username) + strlen(c->password) + 3;
        char *text = malloc(len);

        err = text == NULL ? -ENOMEM : 0;
        if (text != NULL) {
            snprintf(text, len, "%s\n%s\n", c->username, c->password);
            err = make_temp(au, "up", text, r->up_file);
            mbedtls_platform_zeroize(text, len);
            free(text);
        }
    }
    if (err == 0 && au->n_plugins > 0) {
        err = build_env(au, r, c, true, false, &r->plugin_env);
    }
    if (err == 0 && has_script) {
        err = build_env(au, r, c, !cfg->auth.auth_user_pass_verify_via_file, true, &r->script_env);
    }
    err = err ? err : run_stage(r);
    if (err) {
        req_free(r);
        return err;
    }
    r->next = au->reqs;
    if (r->next != NULL) {
        r->next->pprev = &r->next;
    }
    r->pprev = &au->reqs;
    au->reqs = r;
    au->n_pending++;
    *out = r;
    return 0;
}

const char *auth_req_control_file(const struct auth_req *r)
{
    return r->acf;
}

void auth_set_pending_cb(struct auth *au, auth_pending_cb cb)
{
    au->pending = cb;
}

void auth_shutdown(struct auth *au)
{
    while (au->reqs != NULL) {
        req_free(au->reqs);
    }
}

void auth_free(struct auth *au)
{
    if (au == NULL) {
        return;
    }
    while (au->reqs != NULL) {
        req_free(au->reqs);
    }
    /* Joins the plugin threads: calls that return meanwhile go to the box, whose owner has
     * stopped by now (the box discards them). */
    plugin_set_close(au->plugins);
    free(au);
}
