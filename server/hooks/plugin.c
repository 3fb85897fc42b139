/* server/hooks/plugin.c: see plugin.h. */
#include "server/hooks/plugin.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/base64.h>
#include <mbedtls/platform_util.h>

#include "server/log/log.h"
#include "server/hooks/openvpn_plugin.h"
#include "server/hooks/plugin_native.h"

/* The events ovpnd calls plugins for (see plugin.h). */
#define SUPPORTED_MASK                                                                             \
    ((1 << OVPN_PLUGIN_AUTH_USER_PASS_VERIFY) | (1 << OVPN_PLUGIN_TLS_VERIFY) |                    \
     (1 << OVPN_PLUGIN_CLIENT_CONNECT) | (1 << OVPN_PLUGIN_CLIENT_CONNECT_V2) |                    \
     (1 << OVPN_PLUGIN_CLIENT_DISCONNECT) | (1 << OVPN_PLUGIN_LEARN_ADDRESS) |                     \
     (1 << OVPN_PLUGIN_CLIENT_CRRESPONSE) | (1 << OVPN_PLUGIN_UP) | (1 << OVPN_PLUGIN_DOWN) |      \
     (1 << OVPN_PLUGIN_ROUTE_UP) | (1 << OVPN_PLUGIN_CLIENT_CONNECT_DEFER) |                       \
     (1 << OVPN_PLUGIN_CLIENT_CONNECT_DEFER_V2) | (1 << OVPN_PLUGIN_ROUTE_PREDOWN) |               \
     (1 << OVPN_PLUGIN_TLS_FINAL))

/* Internal call types on a plugin's queue: a client context's constructor and destructor. */
#define CALL_CONSTRUCT (-1)
#define CALL_DESTRUCT (-2)

struct plugin {
    const struct config_plugin *conf;
    size_t index; /* in its set: the slot of its context in a plugin_client */
    void *dl;
    void *handle;
    unsigned int type_mask;
    ovpn_plugin_func_v3_fn func3;
    ovpn_plugin_func_v2_fn func2;
    ovpn_plugin_func_v1_fn func1;
    ovpn_plugin_close_v1_fn close1;
    ovpn_plugin_client_constructor_v1_fn client_ctor; /* NULL: no per-client contexts */
    ovpn_plugin_client_destructor_v1_fn client_dtor;
    void *server_ctx; /* the server's own per-client context (2.6: the top instance's) */
    bool is_native;   /* ovpnd's own interface (plugin_native.h) */
    struct native_plugin native;
    pthread_t thread;
    bool has_thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct plugin_call *head, **tail; /* queued calls */
    bool is_stopping;
    bool is_exited; /* its thread has left its loop: nothing queued runs any more */
};

struct plugin_set {
    struct plugin *plugins;
    size_t n;
};

/* One plugin's part of a client: the calls that make and end its context, and the context. */
struct client_slot {
    struct plugin_call ctor, dtor;
    void *ctx; /* plugin thread only */
};

struct plugin_client {
    struct plugin_set *ps;
    atomic_uint refs;
    atomic_uint n_pending;      /* destructors queued and not yet done, + 1 while they are queued */
    struct client_slot slots[]; /* one per plugin of ps, in its order */
};

static const char *const event_names[OVPN_PLUGIN_N_EVENTS] = {
    "UP",
    "DOWN",
    "ROUTE_UP",
    "IPCHANGE",
    "TLS_VERIFY",
    "AUTH_USER_PASS_VERIFY",
    "CLIENT_CONNECT",
    "CLIENT_DISCONNECT",
    "LEARN_ADDRESS",
    "CLIENT_CONNECT_V2",
    "TLS_FINAL",
    "(11)",
    "ROUTE_PREDOWN",
    "CLIENT_CONNECT_DEFER",
    "CLIENT_CONNECT_DEFER_V2",
    "CLIENT_CRRESPONSE",
};

/* The plugin interface takes const char ** vectors of strings ovpnd built as char **. */
static const char **cvec(char **v)
{
    union {
        char **m;
        const char **c;
    } u = {v};

    return u.c;
}

/* ---- callbacks offered to v3 plugins ---- */

static void cb_vlog(int flags, const char *name, const char *fmt, va_list ap)
{
    enum log_level lvl = (flags & OVPN_PLOG_ERR)     ? LOG_ERR
                         : (flags & OVPN_PLOG_WARN)  ? LOG_WARN
                         : (flags & OVPN_PLOG_DEBUG) ? LOG_DEBUG
                                                     : LOG_INFO;
    int saved = errno;
    char text[1024];

    if (!log_enabled(lvl)) {
        return;
    }
    vsnprintf(text, sizeof(text), fmt, ap);
    if (flags & OVPN_PLOG_ERRNO) {
        log_msg(lvl, "%s: %s: %s", name ? name : "plugin", text, strerror(saved));
    } else {
        log_msg(lvl, "%s: %s", name ? name : "plugin", text);
    }
}

static void cb_log(int flags, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void cb_log(int flags, const char *name, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    cb_vlog(flags, name, fmt, ap);
    va_end(ap);
}

static void cb_memzero(void *data, size_t len)
{
    mbedtls_platform_zeroize(data, len);
}

static int cb_base64_encode(const void *data, int size, char **str)
{
    size_t need = 0;
    char *out;

    if (size < 0 || str == NULL) {
        return -1;
    }
    (void)mbedtls_base64_encode(NULL, 0, &need, data, (size_t)size);
    out = malloc(need + 1);
    if (out == NULL ||
        mbedtls_base64_encode((unsigned char *)out, need + 1, &need, data, (size_t)size) != 0) {
        free(out);
        return -1;
    }
    out[need] = '\0';
    *str = out;
    return (int)need;
}

static int cb_base64_decode(const char *str, void *data, int size)
{
    size_t n = 0;

    if (size < 0 || str == NULL ||
        mbedtls_base64_decode(data, (size_t)size, &n, (const unsigned char *)str, strlen(str)) !=
            0) {
        return -1;
    }
    return (int)n;
}

static struct ovpn_plugin_callbacks callbacks = {
    cb_log, cb_vlog, cb_memzero, cb_base64_encode, cb_base64_decode,
};

/* ---- the plugin thread ---- */

void plugin_string_list_free(struct ovpn_plugin_string_list *l)
{
    while (l != NULL) {
        struct ovpn_plugin_string_list *next = l->next;

        free(l->name);
        free(l->value);
        free(l);
        l = next;
    }
}

#define CALL_MAX_ARGS 8 /* argv after the path: "add ADDRESS CN" is the longest ovpnd passes */

static int call_plugin(struct plugin *p, struct plugin_call *c)
{
    const char *argv[CALL_MAX_ARGS + 2] = {p->conf->argv[0], NULL};
    const char **envp = cvec(c->envp);
    struct ovpn_plugin_string_list *list = NULL;
    void *ctx = c->client != NULL ? c->client->slots[p->index].ctx : p->server_ctx;
    int ret;

    if (c->type == CALL_CONSTRUCT) {
        c->client->slots[p->index].ctx = p->client_ctor(p->handle);
        return OVPN_PLUGIN_FUNC_SUCCESS;
    }
    if (c->type == CALL_DESTRUCT) {
        if (ctx != NULL) { /* as 2.6: a constructor that returned NULL has no destructor call */
            p->client_dtor(p->handle, ctx);
        }
        c->client->slots[p->index].ctx = NULL;
        return OVPN_PLUGIN_FUNC_SUCCESS;
    }

    for (size_t i = 0; c->argv != NULL && c->argv[i] != NULL && i < CALL_MAX_ARGS; i++) {
        argv[i + 1] = c->argv[i];
    }

    if (p->is_native) {
        ret = native_plugin_call(&p->native, c->type, argv, envp, &list);
    } else if (p->func3) {
        struct ovpn_plugin_func_in in = {c->type, argv, envp, p->handle, ctx, -1, NULL};
        struct ovpn_plugin_func_out out = {&list};

        ret = p->func3(OVPN_PLUGIN_STRUCT_VERSION, &in, &out);
    } else if (p->func2) {
        ret = p->func2(p->handle, c->type, argv, envp, ctx, &list);
    } else {
        ret = p->func1(p->handle, c->type, argv, envp);
    }
    if (c->wants_return_list) {
        c->return_list = list;
    } else {
        plugin_string_list_free(list);
    }
    return ret;
}

static void *plugin_thread(void *arg)
{
    struct plugin *p = arg;

    pthread_mutex_lock(&p->lock);
    for (;;) {
        struct plugin_call *c;

        while (p->head == NULL && !p->is_stopping) {
            pthread_cond_wait(&p->cond, &p->lock);
        }
        if (p->head == NULL) {
            break;
        }
        c = p->head;
        p->head = c->next;
        if (p->head == NULL) {
            p->tail = &p->head;
        }
        if (p->is_stopping && c->type != CALL_DESTRUCT) {
            c->result = OVPN_PLUGIN_FUNC_ERROR;
        } else {
            pthread_mutex_unlock(&p->lock);
            c->result = call_plugin(p, c);
            pthread_mutex_lock(&p->lock);
        }
        c->done(c);
    }
    p->is_exited = true;
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* Append c to p's queue. A closing plugin takes only destructors, until its thread exits.
 * Returns 0 or -ESHUTDOWN. */
static int enqueue(struct plugin *p, struct plugin_call *c)
{
    int err = 0;

    pthread_mutex_lock(&p->lock);
    if (p->is_exited || (p->is_stopping && c->type != CALL_DESTRUCT)) {
        err = -ESHUTDOWN;
    } else {
        c->next = NULL;
        *p->tail = c;
        p->tail = &c->next;
        pthread_cond_signal(&p->cond);
    }
    pthread_mutex_unlock(&p->lock);
    return err;
}

/* ---- open, close ---- */

/* Log which events p gets. Returns 0. */
static int log_loaded(const struct plugin *p)
{
    char names[400] = "";

    for (int t = 0; t < OVPN_PLUGIN_N_EVENTS; t++) {
        if (p->type_mask & (1u << t)) {
            snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
                     names[0] ? ", " : "", event_names[t]);
        }
    }
    log_msg(LOG_INFO, "plugin %s loaded (%s; events: %s)", p->conf->path,
            p->is_native ? "ovpnd plugin interface" : "OpenVPN plugin interface",
            names[0] ? names : "none");
    return 0;
}

static int load(struct plugin *p, char **envp, char *errbuf, size_t errbuf_len)
{
    const struct config_plugin *conf = p->conf;
    ovpn_plugin_open_v3_fn open3;
    ovpn_plugin_open_v2_fn open2;
    ovpn_plugin_open_v1_fn open1;
    ovpnd_plugin_open_fn native_open;
    const char **argv = cvec(conf->argv);

    p->dl = dlopen(conf->path, RTLD_NOW);
    if (p->dl == NULL) {
        snprintf(errbuf, errbuf_len, "%s: plugin: cannot load %s", conf->where, dlerror());
        return -EINVAL;
    }
    *(void **)&native_open = dlsym(p->dl, "ovpnd_plugin_open");
    if (native_open) {
        char why[512];

        if (native_plugin_open(&p->native, native_open, conf->path, argv, &p->type_mask, why,
                               sizeof(why))) {
            snprintf(errbuf, errbuf_len, "%s: plugin: %s", conf->where, why);
            return -EINVAL;
        }
        p->is_native = true;
        p->handle = &p->native; /* non-NULL: opened */
        return log_loaded(p);
    }
    *(void **)&open3 = dlsym(p->dl, "openvpn_plugin_open_v3");
    *(void **)&open2 = dlsym(p->dl, "openvpn_plugin_open_v2");
    *(void **)&open1 = dlsym(p->dl, "openvpn_plugin_open_v1");
    *(void **)&p->func3 = dlsym(p->dl, "openvpn_plugin_func_v3");
    *(void **)&p->func2 = dlsym(p->dl, "openvpn_plugin_func_v2");
    *(void **)&p->func1 = dlsym(p->dl, "openvpn_plugin_func_v1");
    *(void **)&p->close1 = dlsym(p->dl, "openvpn_plugin_close_v1");
    *(void **)&p->client_ctor = dlsym(p->dl, "openvpn_plugin_client_constructor_v1");
    *(void **)&p->client_dtor = dlsym(p->dl, "openvpn_plugin_client_destructor_v1");
    if ((!open3 && !open2 && !open1) || (!p->func3 && !p->func2 && !p->func1) || !p->close1) {
        snprintf(errbuf, errbuf_len,
                 "%s: plugin: %s is not an OpenVPN plugin (it lacks openvpn_plugin_open_vN, "
                 "openvpn_plugin_func_vN or openvpn_plugin_close_v1, and ovpnd_plugin_open)",
                 conf->where, conf->path);
        return -EINVAL;
    }
    if (open3) {
        struct ovpn_plugin_open_in in = {
            SUPPORTED_MASK, argv, cvec(envp), &callbacks, OVPN_PLUGIN_SSLAPI_NONE,
            "2.6.14",       2,    6,          "14"};
        struct ovpn_plugin_open_out out = {0, NULL, NULL};

        if (open3(OVPN_PLUGIN_STRUCT_VERSION, &in, &out) == OVPN_PLUGIN_FUNC_SUCCESS) {
            p->handle = out.handle;
            p->type_mask = (unsigned int)out.type_mask;
        }
    } else if (open2) {
        p->type_mask = SUPPORTED_MASK;
        p->handle = open2(&p->type_mask, argv, cvec(envp), NULL);
    } else {
        p->type_mask = SUPPORTED_MASK;
        p->handle = open1(&p->type_mask, argv, cvec(envp));
    }
    if (p->handle == NULL) {
        snprintf(errbuf, errbuf_len, "%s: plugin: %s failed to initialise (see its messages above)",
                 conf->where, conf->path);
        return -EINVAL;
    }
    if (p->type_mask & ~(unsigned int)SUPPORTED_MASK) {
        char names[400] = "";

        for (int t = 0; t < OVPN_PLUGIN_N_EVENTS; t++) {
            if ((p->type_mask & ~(unsigned int)SUPPORTED_MASK) & (1u << t)) {
                snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
                         names[0] ? ", " : "", event_names[t]);
            }
        }
        snprintf(errbuf, errbuf_len,
                 "%s: plugin: %s wants events ovpnd does not call plugins for (%s): not "
                 "implemented yet (implemented: TLS_VERIFY, AUTH_USER_PASS_VERIFY, "
                 "CLIENT_CONNECT, CLIENT_CONNECT_V2, CLIENT_CONNECT_DEFER, "
                 "CLIENT_CONNECT_DEFER_V2, CLIENT_DISCONNECT, LEARN_ADDRESS, "
                 "CLIENT_CRRESPONSE, TLS_FINAL, UP, ROUTE_UP, ROUTE_PREDOWN, DOWN)",
                 conf->where, conf->path, names);
        return -EINVAL;
    }
    if (p->client_ctor != NULL) {
        /* 2.6 plugin_list_open: the server's own context, right after open */
        p->server_ctx = p->client_ctor(p->handle);
    }
    return log_loaded(p);
}

static void close_one(struct plugin *p)
{
    if (p->has_thread) {
        pthread_mutex_lock(&p->lock);
        p->is_stopping = true;
        pthread_cond_signal(&p->cond);
        pthread_mutex_unlock(&p->lock);
        pthread_join(p->thread, NULL);
        p->has_thread = false;
    }
    if (p->handle != NULL) {
        if (p->is_native) {
            native_plugin_close(&p->native);
        } else {
            if (p->server_ctx != NULL && p->client_dtor != NULL) {
                p->client_dtor(p->handle, p->server_ctx);
            }
            p->server_ctx = NULL;
            p->close1(p->handle);
        }
        p->handle = NULL;
    }
    if (p->dl != NULL) {
        dlclose(p->dl);
        p->dl = NULL;
    }
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->cond);
}

int plugin_set_open(const struct config *cfg, char **envp, struct plugin_set **out, char *errbuf,
                    size_t errbuf_len)
{
    struct plugin_set *ps = calloc(1, sizeof(*ps));
    int err = 0;

    if (ps == NULL ||
        (cfg->hooks.n_plugins > 0 &&
         (ps->plugins = calloc(cfg->hooks.n_plugins, sizeof(*ps->plugins))) == NULL)) {
        free(ps);
        snprintf(errbuf, errbuf_len, "plugin: out of memory");
        return -ENOMEM;
    }
    for (size_t i = 0; i < cfg->hooks.n_plugins && err == 0; i++) {
        struct plugin *p = &ps->plugins[i];

        p->conf = &cfg->hooks.plugins[i];
        p->index = i;
        p->tail = &p->head;
        pthread_mutex_init(&p->lock, NULL);
        pthread_cond_init(&p->cond, NULL);
        ps->n = i + 1;
        err = load(p, envp, errbuf, errbuf_len);
        if (err == 0) {
            err = -pthread_create(&p->thread, NULL, plugin_thread, p);
            p->has_thread = err == 0;
            if (err) {
                snprintf(errbuf, errbuf_len, "%s: plugin: cannot start its thread: %s",
                         p->conf->where, strerror(-err));
            }
        }
    }
    if (err) {
        plugin_set_close(ps);
        return err;
    }
    *out = ps;
    return 0;
}

void plugin_set_close(struct plugin_set *ps)
{
    if (ps == NULL) {
        return;
    }
    for (size_t i = ps->n; i > 0; i--) {
        close_one(&ps->plugins[i - 1]); /* reverse order, as openvpn */
    }
    free(ps->plugins);
    free(ps);
}

static struct plugin *find(const struct plugin_set *ps, int type, size_t index)
{
    for (size_t i = 0; ps != NULL && i < ps->n; i++) {
        if (ps->plugins[i].type_mask & (1u << type)) {
            if (index == 0) {
                return &ps->plugins[i];
            }
            index--;
        }
    }
    return NULL;
}

size_t plugin_set_count(const struct plugin_set *ps, int type)
{
    size_t n = 0;

    while (find(ps, type, n) != NULL) {
        n++;
    }
    return n;
}

const char *plugin_name(const struct plugin_set *ps, int type, size_t index)
{
    const struct plugin *p = find(ps, type, index);

    return p ? p->conf->path : "?";
}

int plugin_call_start(struct plugin_set *ps, size_t index, struct plugin_call *call)
{
    struct plugin *p = call->type >= 0 ? find(ps, call->type, index) : NULL;

    if (p == NULL) {
        return -EINVAL;
    }
    return enqueue(p, call);
}

/* ---- per-client contexts ---- */

static void ctor_done(struct plugin_call *call)
{
    (void)call; /* the context is in its slot; the object lives until the destructors ran */
}

static void client_release(struct plugin_client *pc)
{
    if (atomic_fetch_sub(&pc->n_pending, 1) == 1) {
        free(pc);
    }
}

static void dtor_done(struct plugin_call *call)
{
    client_release(call->client);
}

int plugin_client_new(struct plugin_set *ps, struct plugin_client **out)
{
    struct plugin_client *pc;
    size_t n_ctor = 0;

    *out = NULL;
    for (size_t i = 0; ps != NULL && i < ps->n; i++) {
        n_ctor += ps->plugins[i].client_ctor != NULL && !ps->plugins[i].is_native;
    }
    if (n_ctor == 0) {
        return 0;
    }
    pc = calloc(1, sizeof(*pc) + ps->n * sizeof(pc->slots[0]));
    if (pc == NULL) {
        return -ENOMEM;
    }
    pc->ps = ps;
    atomic_init(&pc->refs, 1);
    atomic_init(&pc->n_pending, 0);
    for (size_t i = 0; i < ps->n; i++) {
        struct plugin *p = &ps->plugins[i];
        struct client_slot *sl = &pc->slots[i];

        if (p->client_ctor == NULL || p->is_native) {
            continue;
        }
        sl->ctor.type = CALL_CONSTRUCT;
        sl->ctor.client = pc;
        sl->ctor.done = ctor_done;
        (void)enqueue(p, &sl->ctor); /* a closing plugin: no context (NULL), as if it failed */
    }
    *out = pc;
    return 0;
}

struct plugin_client *plugin_client_ref(struct plugin_client *pc)
{
    if (pc != NULL) {
        atomic_fetch_add(&pc->refs, 1);
    }
    return pc;
}

void plugin_client_unref(struct plugin_client *pc)
{
    struct plugin_set *ps;

    if (pc == NULL || atomic_fetch_sub(&pc->refs, 1) != 1) {
        return;
    }
    ps = pc->ps;
    atomic_store(&pc->n_pending, 1); /* held while queueing: a destructor may finish at once */
    for (size_t i = 0; i < ps->n; i++) {
        struct plugin *p = &ps->plugins[i];
        struct client_slot *sl = &pc->slots[i];

        if (p->client_ctor == NULL || p->is_native) {
            continue;
        }
        sl->dtor.type = CALL_DESTRUCT;
        sl->dtor.client = pc;
        sl->dtor.done = dtor_done;
        atomic_fetch_add(&pc->n_pending, 1);
        if (enqueue(p, &sl->dtor) != 0) {
            atomic_fetch_sub(&pc->n_pending, 1); /* its thread is gone: the context leaks */
        }
    }
    client_release(pc);
}

/* plugin_call_all_sync: the call, first, so that its done callback finds the rest. */
struct sync_wait {
    struct plugin_call pc;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool is_done;
};

static void sync_done(struct plugin_call *call)
{
    struct sync_wait *w = (struct sync_wait *)call;

    pthread_mutex_lock(&w->lock);
    w->is_done = true;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

int plugin_call_all_sync(struct plugin_set *ps, struct plugin_call *call)
{
    size_t n = plugin_set_count(ps, call->type);
    struct sync_wait w;
    int err = 0;

    memset(&w, 0, sizeof(w));
    pthread_mutex_init(&w.lock, NULL);
    pthread_cond_init(&w.cond, NULL);
    for (size_t i = 0; i < n && err == 0; i++) {
        w.pc = *call;
        w.pc.done = sync_done;
        w.pc.next = NULL;
        w.is_done = false;
        if (plugin_call_start(ps, i, &w.pc) != 0) {
            err = -ESHUTDOWN;
            break;
        }
        pthread_mutex_lock(&w.lock);
        while (!w.is_done) {
            pthread_cond_wait(&w.cond, &w.lock);
        }
        pthread_mutex_unlock(&w.lock);
        plugin_string_list_free(w.pc.return_list);
        call->result = w.pc.result;
        if (w.pc.result != OVPN_PLUGIN_FUNC_SUCCESS) {
            log_msg(LOG_ERR, "plugin %s: event %s failed (status %d)",
                    plugin_name(ps, call->type, i), event_names[call->type], w.pc.result);
            err = -ECHILD;
        }
    }
    pthread_cond_destroy(&w.cond);
    pthread_mutex_destroy(&w.lock);
    return err;
}
