/* server/control/client_connect.c: the client-connect plugins and script, and their deferred
 * answers. Acceptor thread only.
 *
 * As openvpn 2.6 (multi.c client_connect_handlers), three handlers run one after another, each
 * only if configured: the CLIENT_CONNECT plugins (a file to write config lines into, and
 * $client_connect_deferred_file), the CLIENT_CONNECT_V2 plugins ("config" in their return list),
 * then the client-connect script (the same two files as the first). Their outputs are merged
 * into the client's client-config-dir options in that order. Each handler may defer its answer:
 *  - a CLIENT_CONNECT plugin returns OVPN_PLUGIN_FUNC_DEFERRED or writes 2 to the deferred file,
 *    and later writes 1 (accepted, its config file read then) or 0 (refused) there; plugins that
 *    want CLIENT_CONNECT_DEFER are called at each look, as 2.6 does;
 *  - a CLIENT_CONNECT_V2 plugin returns OVPN_PLUGIN_FUNC_DEFERRED; it is then asked again with
 *    CLIENT_CONNECT_DEFER_V2 (which it must want, as 2.6 requires) until that answers
 *    success (with its config) or failure;
 *  - the script exits 0 after writing 2 to the deferred file, and something it left behind
 *    writes 1 or 0 there later.
 * 2.6 looks again whenever the client's packets arrive; ovpnd looks on a timer of the waiting
 * client alone (CC_FILE_POLL_MS, CC_PLUGIN_POLL_MS), so other clients never wait for it. The
 * client gets its keys and PUSH_REPLY once the answer is in; the whole wait counts against
 * hand-window (admit.c), as 2.6's client gives up on its push requests after hand-window.
 */
#include "server/control/acceptor.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/hooks/hook_env.h"
#include "server/hooks/hooks.h"
#include "server/hooks/openvpn_plugin.h"
#include "server/hooks/plugin.h"

#include "server/control/acceptor_internal.h"

#define CC_PATH_MAX 512
#define CC_FILE_POLL_MS 250    /* a deferred answer in a file: an open and a one-byte read */
#define CC_PLUGIN_POLL_MS 1000 /* CLIENT_CONNECT_DEFER_V2: a call on the plugin's thread */

enum cc_handler { CC_PLUGIN_V1, CC_PLUGIN_V2, CC_SCRIPT, CC_END };

static const char *const handler_names[] = {"client-connect plugin (CLIENT_CONNECT)",
                                            "client-connect plugin (CLIENT_CONNECT_V2)",
                                            "client-connect script", ""};

struct acc_cc_wait {
    struct acceptor *a;
    struct ctl_session *cs;
    acc_hook_cb cb;
    void *ctx;
    enum cc_handler handler;
    struct hook_run *run;
    bool is_deferred;       /* the handler deferred its answer: the timer looks for it */
    bool changes_addresses; /* an output so far sets addresses or iroutes */
    uint64_t deferred_ms;   /* when it deferred (acceptor clock) */
    uv_timer_t *timer;      /* while deferred; closed and freed with w */
    char config_file[CC_PATH_MAX], deferred_file[CC_PATH_MAX]; /* "" when none */
};

static int start_handler(struct acc_cc_wait *w);

static void remove_file(char *path)
{
    if (path[0] != '\0') {
        unlink(path);
        path[0] = '\0';
    }
}

static void timer_closed(uv_handle_t *h)
{
    free(h);
}

void acc_cc_wait_cancel(struct acc_cc_wait *w)
{
    if (w == NULL) {
        return;
    }
    hook_run_cancel(w->run);
    remove_file(w->config_file);
    remove_file(w->deferred_file);
    if (w->timer != NULL) {
        uv_close((uv_handle_t *)w->timer, timer_closed);
    }
    free(w);
}

/* Report and free w: the callback may free the wait that owns w's pointer. */
static void finish(struct acc_cc_wait *w, bool is_ok, const char *why)
{
    acc_hook_cb cb = w->cb;
    void *ctx = w->ctx;
    char text[600];

    snprintf(text, sizeof(text), "%s", why ? why : "");
    w->run = NULL; /* finished: hooks frees it */
    acc_cc_wait_cancel(w);
    cb(ctx, is_ok, text);
}

/* Apply one output (a file, or config text) after what cs->ccd has. */
static int apply_output(struct ctl_session *cs, const char *file, const char *text,
                        const char *name, bool *changes_addresses, char *why, size_t why_len)
{
    struct ccd out;
    char errbuf[400];
    bool found = false;
    int err;

    if (file != NULL) {
        err = ccd_load_path(&out, file, name, &found, errbuf, sizeof(errbuf));
    } else {
        found = text[0] != '\0';
        err = ccd_parse_string(&out, name, text, errbuf, sizeof(errbuf));
        if (err == 0 && (out.path = strdup(name)) == NULL) {
            err = -ENOMEM;
        }
    }
    if (err == 0 && found) {
        if (cs->ccd == NULL && (cs->ccd = calloc(1, sizeof(*cs->ccd))) == NULL) {
            err = -ENOMEM;
        }
        if (err == 0) {
            *changes_addresses = *changes_addresses || out.has_ifconfig_push ||
                                 out.has_ifconfig_ipv6_push || out.n_iroutes > 0;
            err = ccd_merge(cs->ccd, &out);
        }
    }
    if (err) {
        snprintf(why, why_len, "%s", err == -ENOMEM ? "out of memory" : errbuf);
    }
    ccd_free(&out);
    return err;
}

/* `disable` in what cs->ccd has now: why says so. */
static bool is_disabled(const struct ctl_session *cs, char *why, size_t why_len)
{
    if (cs->ccd && cs->ccd->is_disabled) {
        snprintf(why, why_len, "disabled by 'disable' in %s", cs->ccd->path);
        return true;
    }
    return false;
}

int acc_client_connect_apply(struct acceptor *a, struct ctl_session *cs, const char *text,
                             const char *name, char *why, size_t why_len)
{
    bool changes = false;
    int err;

    (void)a;
    err = apply_output(cs, NULL, text, name, &changes, why, why_len);
    if (err == 0 && is_disabled(cs, why, why_len)) {
        err = -EPERM;
    }
    cs->hooks.needs_reassign = cs->hooks.needs_reassign || changes;
    return err;
}

/* The deferred file's first byte (2.6 ccs_test_deferred_ret_file): '0', '1', '2', 0 when the
 * file is missing or empty, or '?' for anything else (2.6 counts that as a refusal). */
static char read_answer(const char *path)
{
    FILE *f = path[0] != '\0' ? fopen(path, "r") : NULL;
    int c;

    if (f == NULL) {
        return 0;
    }
    c = fgetc(f);
    fclose(f);
    if (c == EOF) {
        return 0;
    }
    return c == '0' || c == '1' || c == '2' ? (char)c : '?';
}

/* The handler answered: apply its output (config_file, or text), then go on with the next. */
static void handler_done(struct acc_cc_wait *w, const char *text)
{
    struct ctl_session *cs = w->cs;
    static const char *const output_names[] = {"client-connect plugin file",
                                               "client-connect-v2 plugin config",
                                               "client-connect script output", ""};
    char why[600];
    int err = 0;

    if (w->is_deferred) {
        acc_cs_log(w->a, cs, LOG_INFO, "%s: deferred answer accepted after %" PRIu64 " ms",
                   handler_names[w->handler], acc_now_ms(w->a) - w->deferred_ms);
        w->is_deferred = false;
    }
    if (text != NULL) {
        if (text[0] != '\0') {
            err = apply_output(cs, NULL, text, output_names[w->handler], &w->changes_addresses, why,
                               sizeof(why));
        }
    } else if (w->config_file[0] != '\0') {
        err = apply_output(cs, w->config_file, NULL, output_names[w->handler],
                           &w->changes_addresses, why, sizeof(why));
    }
    remove_file(w->config_file);
    remove_file(w->deferred_file);
    if (err || is_disabled(cs, why, sizeof(why))) {
        finish(w, false, why);
        return;
    }
    w->handler++;
    err = start_handler(w);
    if (err == 1) {
        cs->hooks.needs_reassign = w->changes_addresses;
        finish(w, true, NULL);
    } else if (err < 0) {
        snprintf(why, sizeof(why), "cannot run the client-connect handlers: %s", strerror(-err));
        finish(w, false, why);
    }
}

static void on_timer(uv_timer_t *t);

/* The handler deferred its answer: look for it from now on. */
static void defer(struct acc_cc_wait *w)
{
    char why[200];
    int err;

    if (!w->is_deferred) {
        w->is_deferred = true;
        w->deferred_ms = acc_now_ms(w->a);
        acc_cs_log(w->a, w->cs, LOG_INFO, "%s deferred its answer", handler_names[w->handler]);
    }
    if (w->timer == NULL) {
        w->timer = malloc(sizeof(*w->timer));
        err = w->timer == NULL ? -ENOMEM : uv_timer_init(&w->a->loop, w->timer);
        if (err) {
            free(w->timer);
            w->timer = NULL;
            snprintf(why, sizeof(why), "cannot wait for the deferred client-connect answer: %s",
                     strerror(-err));
            finish(w, false, why);
            return;
        }
        w->timer->data = w;
    }
    uv_timer_start(w->timer, on_timer,
                   w->handler == CC_PLUGIN_V2 ? CC_PLUGIN_POLL_MS : CC_FILE_POLL_MS, 0);
}

/* What the deferred file says after a CLIENT_CONNECT plugin call or the script (is_deferred:
 * the plugin answered OVPN_PLUGIN_FUNC_DEFERRED). */
static void file_answer(struct acc_cc_wait *w, bool is_deferred)
{
    char answer = read_answer(w->deferred_file), why[300];

    if (answer == '0' || answer == '?') {
        snprintf(why, sizeof(why), "%s %s $client_connect_deferred_file", handler_names[w->handler],
                 answer == '0' ? "wrote 0 (refused) to" : "wrote an unexpected value to");
        finish(w, false, why);
    } else if (answer == '2' || (is_deferred && answer != '1') || (w->is_deferred && answer == 0)) {
        defer(w);
    } else {
        handler_done(w, NULL);
    }
}

static void on_run(void *ctx, const struct hook_result *res)
{
    struct acc_cc_wait *w = ctx;
    char why[400];

    w->run = NULL;
    if (!res->is_ok) {
        finish(w, false, res->why);
        return;
    }
    switch (w->handler) {
    case CC_PLUGIN_V1:
    case CC_SCRIPT:
        file_answer(w, res->is_deferred);
        return;
    case CC_PLUGIN_V2:
        if (!res->is_deferred) {
            handler_done(w, res->config);
            return;
        }
        if (!hooks_wanted(w->a->checks.hooks, OVPN_PLUGIN_CLIENT_CONNECT_DEFER_V2, NULL)) {
            snprintf(why, sizeof(why),
                     "a CLIENT_CONNECT_V2 plugin answered 'deferred' but no plugin wants "
                     "CLIENT_CONNECT_DEFER_V2, through which the answer would come (as openvpn "
                     "2.6, the client is refused)");
            finish(w, false, why);
            return;
        }
        defer(w);
        return;
    case CC_END:
        break;
    }
    finish(w, false, "client-connect: internal error");
}

/* Start a run of the handler's plugin event type (0: none) and/or script. */
static int run(struct acc_cc_wait *w, int type, bool with_files, bool with_script)
{
    struct acceptor *a = w->a;
    const struct config *cfg = a->cfg;
    char *args[2] = {with_files ? w->config_file : NULL, NULL};
    struct script_env env = {0};
    struct hook_req req;
    int err = hook_env_append(&env, w->cs->hooks.env);

    if (err == 0 && with_files) {
        err = script_env_add(&env, "client_connect_config_file", w->config_file);
        err = err ? err : script_env_add(&env, "client_connect_deferred_file", w->deferred_file);
    }
    memset(&req, 0, sizeof(req));
    req.what = "client-connect";
    if (type != 0) {
        req.types[0] = type;
        req.n_types = 1;
        req.type_argv[0] = with_files ? args : NULL;
    }
    if (with_script) {
        req.script = cfg->hooks.client_connect;
        req.script_args = args;
        req.script_type = "client-connect";
    }
    req.env = &env;
    req.is_deferrable = true;
    req.client = w->cs->hooks.plugin_client;
    err = err ? err : hook_run_start(a->checks.hooks, &req, on_run, w, &w->run);
    script_env_clear(&env);
    return err;
}

/* The config file and the deferred file for the CLIENT_CONNECT plugins or the script. */
static int make_files(struct acc_cc_wait *w)
{
    const char *dir = w->a->cfg->hooks.tmp_dir;
    int err = script_make_temp(dir, "cc", w->config_file, CC_PATH_MAX);

    return err ? err : script_make_temp(dir, "ccr", w->deferred_file, CC_PATH_MAX);
}

/* Start w->handler, or the first configured one after it. Returns 0 (started), 1 (none left)
 * or -errno. */
static int start_handler(struct acc_cc_wait *w)
{
    struct hooks *h = w->a->checks.hooks;

    for (; w->handler < CC_END; w->handler++) {
        switch (w->handler) {
        case CC_PLUGIN_V1:
            if (hooks_wanted(h, OVPN_PLUGIN_CLIENT_CONNECT, NULL)) {
                int err = make_files(w);

                return err ? err : run(w, OVPN_PLUGIN_CLIENT_CONNECT, true, false);
            }
            break;
        case CC_PLUGIN_V2:
            if (hooks_wanted(h, OVPN_PLUGIN_CLIENT_CONNECT_V2, NULL)) {
                return run(w, OVPN_PLUGIN_CLIENT_CONNECT_V2, false, false);
            }
            break;
        case CC_SCRIPT:
            if (w->a->cfg->hooks.client_connect != NULL) {
                int err = make_files(w);

                return err ? err : run(w, 0, true, true);
            }
            break;
        case CC_END:
            break;
        }
    }
    return 1;
}

/* Look for the deferred answer: ask the plugins again, or read the file. */
static void on_timer(uv_timer_t *t)
{
    struct acc_cc_wait *w = t->data;
    struct hooks *h = w->a->checks.hooks;
    char why[200];
    int err = 0;

    if (w->handler == CC_PLUGIN_V2) {
        err = run(w, OVPN_PLUGIN_CLIENT_CONNECT_DEFER_V2, false, false);
    } else if (w->handler == CC_PLUGIN_V1 &&
               hooks_wanted(h, OVPN_PLUGIN_CLIENT_CONNECT_DEFER, NULL)) {
        err = run(w, OVPN_PLUGIN_CLIENT_CONNECT_DEFER, true, false);
    } else {
        file_answer(w, false);
        return;
    }
    if (err) {
        snprintf(why, sizeof(why), "cannot ask the client-connect plugins again: %s",
                 strerror(-err));
        finish(w, false, why);
    }
}

int acc_client_connect_start(struct acceptor *a, struct ctl_session *cs, const char *peer_info,
                             acc_hook_cb cb, void *ctx, struct acc_cc_wait **out)
{
    const struct config *cfg = a->cfg;
    struct acc_cc_wait *w;
    int err;

    if (!acc_hooks_client_env_wanted(a)) {
        return 1;
    }
    err = acc_client_env_build(a, cs, peer_info);
    if (err) {
        return err;
    }
    if (!hooks_wanted(a->checks.hooks, OVPN_PLUGIN_CLIENT_CONNECT, cfg->hooks.client_connect) &&
        !hooks_wanted(a->checks.hooks, OVPN_PLUGIN_CLIENT_CONNECT_V2, NULL)) {
        return 1;
    }
    w = calloc(1, sizeof(*w));
    if (w == NULL) {
        return -ENOMEM;
    }
    w->a = a;
    w->cs = cs;
    w->cb = cb;
    w->ctx = ctx;
    w->handler = CC_PLUGIN_V1;
    err = start_handler(w);
    if (err != 0) {
        acc_cc_wait_cancel(w);
        return err;
    }
    *out = w;
    return 0;
}
