/* server/hooks/hooks.c: see hooks.h. Loop thread only, except on_call_done (plugin threads). */
#include "server/hooks/hooks.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/hooks/hook_env.h"
#include "server/log/log.h"
#include "server/hooks/openvpn_plugin.h"
#include "server/hooks/plugin.h"
#include "server/thread/mailbox.h"

#define WHY_MAX 300
#define CONFIG_MAX (64 << 10) /* bytes of "config" text kept from CLIENT_CONNECT_V2 plugins */

struct hook_call;

struct hooks {
    uv_loop_t *loop;
    struct plugin_set *plugins;
    struct hook_run *runs; /* every unfinished run, queued serial ones included */
    size_t n_runs;
    struct hook_run *serial_head, **serial_tail; /* serial runs waiting for their turn */
    struct hook_run *serial_active;
    struct hook_run *start_head, **start_tail; /* other runs, begun but not yet stepped */
    uv_async_t async;                          /* starts the runs of the start list from the loop */
    uv_timer_t grace;
    bool has_handles;
    bool is_shutting_down;
    struct mailbox *mb; /* plugin calls come back through the box of the loop's thread */
    int who;
    void (*on_closed)(void *ctx); /* hooks_on_closed */
    void *on_closed_ctx;
};

struct hook_run {
    struct hooks *h;
    struct hook_run *next, **pprev; /* h->runs */
    struct hook_run *next_serial;   /* in h's serial queue or start list */
    char what[32];
    char ctx_name[128]; /* detached: who, for the warning */
    int types[HOOK_MAX_TYPES];
    size_t n_types;
    char **type_argv[HOOK_MAX_TYPES];
    char **script_argv;           /* words + args; NULL without a script */
    struct script_env env;        /* for plugins */
    struct script_env script_env; /* env + script_type */
    bool is_script_after_failure, is_serial, is_detached, has_started;
    bool is_deferrable, is_deferred;
    struct plugin_client *client; /* a reference, or NULL */
    size_t ti, pi;                /* next plugin: type index, plugin index */
    bool is_type_failed, is_failed, is_script_started;
    struct hook_call *call;
    struct script *script;
    hook_done_cb done;
    void *ctx;
    char why[WHY_MAX];
    char *config;
    size_t config_len;
};

struct hook_call {
    struct plugin_call pc;
    struct hooks *h;
    struct hook_run *run;  /* NULL once the run is gone */
    struct script_env env; /* the call owns what the plugin reads: it may outlive its run */
    char **argv;
    struct msg *done; /* MSG_CALL posted when the plugin returns (made ahead: cannot fail) */
};

static void on_async(uv_async_t *a);

static void strv_free(char **v)
{
    for (size_t i = 0; v != NULL && v[i] != NULL; i++) {
        free(v[i]);
    }
    free(v);
}

/* A NULL-terminated copy of a then b (either may be NULL). */
static int strv_join(char *const *a, char *const *b, char ***out)
{
    size_t na = 0, nb = 0;
    char **v;

    while (a != NULL && a[na] != NULL) {
        na++;
    }
    while (b != NULL && b[nb] != NULL) {
        nb++;
    }
    v = calloc(na + nb + 1, sizeof(*v));
    if (v == NULL) {
        return -ENOMEM;
    }
    for (size_t i = 0; i < na + nb; i++) {
        v[i] = strdup(i < na ? a[i] : b[i - na]);
        if (v[i] == NULL) {
            strv_free(v);
            return -ENOMEM;
        }
    }
    *out = v;
    return 0;
}

int hooks_new(uv_loop_t *loop, struct mailbox *mb, int who, struct plugin_set *ps,
              struct hooks **out)
{
    struct hooks *h = calloc(1, sizeof(*h));
    int err;

    if (h == NULL) {
        return -ENOMEM;
    }
    h->loop = loop;
    h->mb = mb;
    h->who = who;
    h->plugins = ps;
    h->serial_tail = &h->serial_head;
    h->start_tail = &h->start_head;
    err = uv_async_init(loop, &h->async, on_async);
    if (err) {
        free(h);
        return err;
    }
    uv_timer_init(loop, &h->grace);
    h->async.data = h->grace.data = h;
    h->has_handles = true;
    *out = h;
    return 0;
}

bool hooks_wanted(const struct hooks *h, int type, char *const *script)
{
    return script != NULL || plugin_set_count(h->plugins, type) > 0;
}

size_t hooks_n_running(const struct hooks *h)
{
    return h->n_runs;
}

static void close_handles(struct hooks *h)
{
    if (!h->has_handles) {
        return;
    }
    uv_timer_stop(&h->grace);
    uv_close((uv_handle_t *)&h->async, NULL);
    uv_close((uv_handle_t *)&h->grace, NULL);
    h->has_handles = false;
    if (h->on_closed != NULL) {
        h->on_closed(h->on_closed_ctx);
    }
}

void hooks_on_closed(struct hooks *h, void (*cb)(void *ctx), void *ctx)
{
    h->on_closed = cb;
    h->on_closed_ctx = ctx;
}

static void run_free(struct hook_run *r)
{
    struct hooks *h = r->h;

    if (r->pprev != NULL) {
        *r->pprev = r->next;
        if (r->next != NULL) {
            r->next->pprev = r->pprev;
        }
        h->n_runs--;
    }
    if (r->call != NULL) {
        r->call->run = NULL; /* freed when the plugin returns */
    }
    script_abandon(r->script);
    for (size_t i = 0; i < HOOK_MAX_TYPES; i++) {
        strv_free(r->type_argv[i]);
    }
    strv_free(r->script_argv);
    script_env_clear(&r->env);
    script_env_clear(&r->script_env);
    free(r->config);
    /* after r->call: a call still on its plugin's queue goes before the destructors */
    plugin_client_unref(r->client);
    free(r);
    if (h->is_shutting_down && h->n_runs == 0) {
        close_handles(h);
    }
}

static void step(struct hook_run *r);
static void serial_next(struct hooks *h);

/* The run has its answer: report it, free it, let the next serial run go. */
static void finish(struct hook_run *r, bool is_ok)
{
    struct hooks *h = r->h;
    bool is_deferred = is_ok && r->is_deferred;
    struct hook_result res = {is_ok, r->why, r->config && !is_deferred ? r->config : "",
                              is_deferred};
    bool was_serial_active = h->serial_active == r;

    r->script = NULL; /* ended */
    if (r->is_detached && !is_ok) {
        log_msg(LOG_WARN, "%s: %s failed: %s", r->ctx_name, r->what, r->why);
    }
    if (r->done != NULL) {
        r->done(r->ctx, &res);
    }
    if (was_serial_active) {
        h->serial_active = NULL;
    }
    run_free(r);
    if (was_serial_active) {
        serial_next(h);
    }
}

static void on_script_exit(void *ctx, int exit_status, int term_signal)
{
    struct hook_run *r = ctx;

    r->script = NULL;
    if (term_signal != 0) {
        snprintf(r->why, sizeof(r->why), "%s script killed by signal %d", r->what, term_signal);
        r->is_failed = true;
    } else if (exit_status != 0) {
        snprintf(r->why, sizeof(r->why), "%s script exited with status %d", r->what, exit_status);
        r->is_failed = true;
    }
    finish(r, !r->is_failed);
}

/* A plugin thread: the call returned. Hand it to the loop's thread (call_returned). */
static void on_call_done(struct plugin_call *pc)
{
    struct hook_call *c = (struct hook_call *)pc;
    struct msg *m = c->done;

    c->done = NULL;
    mailbox_post(c->h->mb, c->h->who, m);
}

static void call_free(struct hook_call *c)
{
    msg_free(c->done); /* not posted: the call never started */
    plugin_string_list_free(c->pc.return_list);
    strv_free(c->argv);
    script_env_clear(&c->env);
    free(c);
}

static void keep_config(struct hook_run *r, const struct ovpn_plugin_string_list *l)
{
    for (; l != NULL; l = l->next) {
        size_t len;
        char *grown;

        if (l->name == NULL || l->value == NULL || strcmp(l->name, "config") != 0) {
            continue;
        }
        len = strlen(l->value);
        if (r->config_len + len + 2 > CONFIG_MAX) {
            r->is_type_failed = true;
            snprintf(r->why, sizeof(r->why), "%s: a plugin returned more than %d bytes of config",
                     r->what, CONFIG_MAX);
            return;
        }
        grown = realloc(r->config, r->config_len + len + 2);
        if (grown == NULL) {
            r->is_type_failed = true;
            snprintf(r->why, sizeof(r->why), "%s: out of memory", r->what);
            return;
        }
        r->config = grown;
        memcpy(r->config + r->config_len, l->value, len);
        r->config_len += len;
        r->config[r->config_len++] = '\n';
        r->config[r->config_len] = '\0';
    }
}

/* The call came back to a thread that has stopped: nothing waits for it. */
static void call_discard(void *arg)
{
    call_free(arg);
}

/* The events whose plugins answer with "config" lines (2.6 plugin_return). */
static bool returns_config(int type)
{
    return type == OVPN_PLUGIN_CLIENT_CONNECT_V2 || type == OVPN_PLUGIN_CLIENT_CONNECT_DEFER_V2;
}

/* The loop's thread (a MSG_CALL from on_call_done): the plugin's answer goes on with its run. */
static void call_returned(void *arg)
{
    struct hook_call *c = arg;
    struct hook_run *r = c->run;

    if (r != NULL) {
        int type = r->types[r->ti];
        const char *name = plugin_name(r->h->plugins, type, r->pi);

        r->call = NULL;
        if (c->pc.result == OVPN_PLUGIN_FUNC_SUCCESS) {
            if (returns_config(type)) {
                keep_config(r, c->pc.return_list);
            }
        } else if (c->pc.result == OVPN_PLUGIN_FUNC_DEFERRED && r->is_deferrable) {
            r->is_deferred = true; /* the caller waits for the answer */
        } else {
            r->is_type_failed = true;
            snprintf(r->why, sizeof(r->why), "%s plugin %s %s (status %d)", r->what, name,
                     c->pc.result == OVPN_PLUGIN_FUNC_DEFERRED
                         ? "answered 'deferred', which ovpnd does not implement for this event"
                         : "failed",
                     c->pc.result);
        }
        r->pi++;
        step(r);
    }
    call_free(c);
}

static void on_async(uv_async_t *a)
{
    struct hooks *h = a->data;

    while (h->start_head != NULL) {
        struct hook_run *r = h->start_head;

        h->start_head = r->next_serial;
        if (h->start_head == NULL) {
            h->start_tail = &h->start_head;
        }
        r->has_started = true;
        step(r);
    }
    serial_next(h);
}

static int start_call(struct hook_run *r)
{
    static char *no_env[] = {NULL};
    struct hook_call *c = calloc(1, sizeof(*c));
    int type = r->types[r->ti], err;

    if (c == NULL) {
        return -ENOMEM;
    }
    err = hook_env_append(&c->env, &r->env);
    if (err == 0 && r->type_argv[r->ti] != NULL) {
        err = strv_join(r->type_argv[r->ti], NULL, &c->argv);
    }
    if (err) {
        call_free(c);
        return err;
    }
    c->h = r->h;
    c->run = r;
    c->done = msg_call_new(call_returned, call_discard, c);
    if (c->done == NULL) {
        call_free(c);
        return -ENOMEM;
    }
    c->pc.type = type;
    c->pc.client = r->client;
    c->pc.argv = c->argv;
    c->pc.envp = c->env.n > 0 ? c->env.vars : no_env; /* never NULL for a plugin */
    c->pc.wants_return_list = returns_config(type);
    c->pc.done = on_call_done;
    err = plugin_call_start(r->h->plugins, r->pi, &c->pc);
    if (err) {
        call_free(c);
        return err;
    }
    r->call = c;
    return 0;
}

/* Run the next plugin or the script, or finish. */
static void step(struct hook_run *r)
{
    int err;

    while (r->ti < r->n_types) {
        if (r->pi < plugin_set_count(r->h->plugins, r->types[r->ti])) {
            err = start_call(r);
            if (err == 0) {
                return;
            }
            r->is_type_failed = true;
            snprintf(r->why, sizeof(r->why), "%s: cannot call a plugin: %s", r->what,
                     strerror(-err));
            r->pi++;
            continue;
        }
        if (r->is_type_failed) {
            r->is_failed = true;
            if (!r->is_script_after_failure) {
                finish(r, false);
                return;
            }
        }
        r->ti++;
        r->pi = 0;
        r->is_type_failed = false;
    }
    if (r->script_argv != NULL && !r->is_script_started) {
        r->is_script_started = true;
        err =
            script_start(r->h->loop, r->script_argv, &r->script_env, on_script_exit, r, &r->script);
        if (err == 0) {
            return;
        }
        r->is_failed = true;
        snprintf(r->why, sizeof(r->why), "cannot run the %s script %s: %s", r->what,
                 r->script_argv[0], strerror(-err));
    }
    finish(r, !r->is_failed);
}

static void serial_next(struct hooks *h)
{
    while (h->serial_active == NULL && h->serial_head != NULL) {
        struct hook_run *r = h->serial_head;

        h->serial_head = r->next_serial;
        if (h->serial_head == NULL) {
            h->serial_tail = &h->serial_head;
        }
        h->serial_active = r;
        r->has_started = true;
        step(r);
    }
}

static int run_new(struct hooks *h, const struct hook_req *req, struct hook_run **out)
{
    struct hook_run *r;
    int err = 0;

    if (h->is_shutting_down || !h->has_handles) {
        return -ESHUTDOWN;
    }
    r = calloc(1, sizeof(*r));
    if (r == NULL) {
        return -ENOMEM;
    }
    r->h = h;
    snprintf(r->what, sizeof(r->what), "%s", req->what);
    r->n_types = req->n_types < HOOK_MAX_TYPES ? req->n_types : HOOK_MAX_TYPES;
    for (size_t i = 0; i < r->n_types && err == 0; i++) {
        r->types[i] = req->types[i];
        if (req->type_argv[i] != NULL) {
            err = strv_join(req->type_argv[i], NULL, &r->type_argv[i]);
        }
    }
    if (err == 0 && req->script != NULL) {
        err = strv_join(req->script, req->script_args, &r->script_argv);
    }
    err = err ? err : hook_env_append(&r->env, req->env);
    err = err ? err : hook_env_append(&r->script_env, req->env);
    if (err == 0 && req->script != NULL) {
        err = script_env_add(&r->script_env, "script_type", req->script_type);
    }
    r->is_script_after_failure = req->is_script_after_failure;
    r->is_serial = req->is_serial;
    r->is_deferrable = req->is_deferrable;
    r->client = plugin_client_ref(req->client);
    if (err) {
        run_free(r);
        return err;
    }
    r->next = h->runs;
    if (r->next != NULL) {
        r->next->pprev = &r->next;
    }
    r->pprev = &h->runs;
    h->runs = r;
    h->n_runs++;
    *out = r;
    return 0;
}

/* Queue r: serial runs wait their turn, the others start at the next turn of the loop
 * (on_async), so that done is never called from inside hook_run_start. */
static void run_begin(struct hook_run *r)
{
    struct hooks *h = r->h;

    r->next_serial = NULL;
    if (r->is_serial) {
        *h->serial_tail = r;
        h->serial_tail = &r->next_serial;
    } else {
        *h->start_tail = r;
        h->start_tail = &r->next_serial;
    }
    uv_async_send(&h->async);
}

/* Take r out of the serial queue or the start list, if it is in one. */
static void unqueue(struct hooks *h, struct hook_run *r)
{
    struct hook_run **heads[2] = {&h->serial_head, &h->start_head};
    struct hook_run ***tails[2] = {&h->serial_tail, &h->start_tail};

    for (int i = 0; i < 2; i++) {
        for (struct hook_run **p = heads[i]; *p != NULL; p = &(*p)->next_serial) {
            if (*p == r) {
                *p = r->next_serial;
                if (*p == NULL) {
                    *tails[i] = p;
                }
                return;
            }
        }
    }
}

int hook_run_start(struct hooks *h, const struct hook_req *req, hook_done_cb done, void *ctx,
                   struct hook_run **out)
{
    struct hook_run *r;
    int err = run_new(h, req, &r);

    if (err) {
        return err;
    }
    r->done = done;
    r->ctx = ctx;
    run_begin(r);
    *out = r;
    return 0;
}

int hook_run_detached(struct hooks *h, const struct hook_req *req, const char *ctx_name)
{
    struct hook_run *r;
    int err = run_new(h, req, &r);

    if (err) {
        return err;
    }
    r->is_detached = true;
    snprintf(r->ctx_name, sizeof(r->ctx_name), "%s", ctx_name);
    run_begin(r);
    return 0;
}

void hook_run_cancel(struct hook_run *r)
{
    struct hooks *h;

    if (r == NULL) {
        return;
    }
    h = r->h;
    if (h->serial_active == r) {
        h->serial_active = NULL;
        run_free(r);
        serial_next(h);
        return;
    }
    unqueue(h, r);
    run_free(r);
}

static void on_grace(uv_timer_t *t)
{
    struct hooks *h = t->data;

    log_msg(LOG_WARN,
            "shutdown: %zu script or plugin calls still running after the grace "
            "period; scripts are killed",
            h->n_runs);
    h->serial_head = h->start_head = NULL;
    h->serial_tail = &h->serial_head;
    h->start_tail = &h->start_head;
    h->serial_active = NULL;
    while (h->runs != NULL) {
        run_free(h->runs); /* closes the handles with the last one */
    }
}

void hooks_shutdown(struct hooks *h, uint64_t grace_ms)
{
    if (h == NULL || h->is_shutting_down) {
        return;
    }
    h->is_shutting_down = true;
    if (h->n_runs == 0) {
        close_handles(h);
        return;
    }
    uv_timer_start(&h->grace, on_grace, grace_ms, 0);
}

void hooks_free(struct hooks *h)
{
    if (h == NULL) {
        return;
    }
    while (h->runs != NULL) {
        run_free(h->runs);
    }
    free(h);
}
