/* tests/plugin/client_ctx_plugin.c: an OpenVPN-interface plugin with per-client contexts
 * (openvpn_plugin_client_constructor_v1 / _destructor_v1) for
 * tests/netns/test_plugin_client_ctx.sh.
 *
 * open: argv[1] is LOG, a file each call appends one line to. The constructor allocates a
 * context with a fresh number and logs "CONSTRUCT ctx=N". Each event logs
 * "EVENT ctx=N [ARGV...] cn=CN" (N "none" when the call had no context, "BAD" when it was not
 * one of ours): TLS_VERIFY at depth 0 stores the certificate's CN (X509_0_CN) in the context;
 * AUTH_USER_PASS_VERIFY refuses the username "bad"; CLIENT_CONNECT_V2, LEARN_ADDRESS,
 * CLIENT_DISCONNECT and TLS_FINAL log "MISMATCH" instead of EVENT when $common_name is not the CN
 * their context stored. The destructor logs "DESTRUCT ctx=N cn=CN seen=E1,E2,..." (the events
 * the context saw, each once, in the order first seen) and frees the context. Works with
 * openvpn 2.6 as well (its header is the same interface).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/hooks/openvpn_plugin.h"

#define EXPORT __attribute__((visibility("default")))
#define CTX_MAGIC 0x63747821u

EXPORT int openvpn_plugin_open_v3(int version, const struct ovpn_plugin_open_in *in,
                                  struct ovpn_plugin_open_out *out);
EXPORT int openvpn_plugin_func_v3(int version, const struct ovpn_plugin_func_in *in,
                                  struct ovpn_plugin_func_out *out);
EXPORT void openvpn_plugin_close_v1(void *handle);
EXPORT void *openvpn_plugin_client_constructor_v1(void *handle);
EXPORT void openvpn_plugin_client_destructor_v1(void *handle, void *ctx);

struct handle {
    char log_path[512];
    int next_id;
    pthread_mutex_t lock;
};

struct client_ctx {
    uint32_t magic;
    int id;
    char cn[128];
    char seen[512];
};

static const char *const names[OVPN_PLUGIN_N_EVENTS] = {
    [OVPN_PLUGIN_UP] = "UP",
    [OVPN_PLUGIN_TLS_VERIFY] = "TLS_VERIFY",
    [OVPN_PLUGIN_AUTH_USER_PASS_VERIFY] = "AUTH_USER_PASS_VERIFY",
    [OVPN_PLUGIN_CLIENT_CONNECT_V2] = "CLIENT_CONNECT_V2",
    [OVPN_PLUGIN_CLIENT_DISCONNECT] = "CLIENT_DISCONNECT",
    [OVPN_PLUGIN_LEARN_ADDRESS] = "LEARN_ADDRESS",
    [OVPN_PLUGIN_TLS_FINAL] = "TLS_FINAL",
};

static const char *get_env(const char *name, const char **envp)
{
    size_t len = strlen(name);

    for (size_t i = 0; envp != NULL && envp[i] != NULL; i++) {
        if (strncmp(envp[i], name, len) == 0 && envp[i][len] == '=') {
            return envp[i] + len + 1;
        }
    }
    return "";
}

static void log_line(struct handle *h, const char *line)
{
    FILE *f;

    pthread_mutex_lock(&h->lock);
    f = fopen(h->log_path, "a");
    if (f != NULL) {
        fprintf(f, "%s\n", line);
        fclose(f);
    }
    pthread_mutex_unlock(&h->lock);
}

int openvpn_plugin_open_v3(int version, const struct ovpn_plugin_open_in *in,
                           struct ovpn_plugin_open_out *out)
{
    struct handle *h;

    if (version != OVPN_PLUGIN_STRUCT_VERSION || in->argv[1] == NULL) {
        return OVPN_PLUGIN_FUNC_ERROR;
    }
    h = calloc(1, sizeof(*h));
    if (h == NULL) {
        return OVPN_PLUGIN_FUNC_ERROR;
    }
    snprintf(h->log_path, sizeof(h->log_path), "%s", in->argv[1]);
    pthread_mutex_init(&h->lock, NULL);
    out->type_mask = 0;
    for (int t = 0; t < OVPN_PLUGIN_N_EVENTS; t++) {
        if (names[t] != NULL) {
            out->type_mask |= 1 << t;
        }
    }
    out->handle = h;
    return OVPN_PLUGIN_FUNC_SUCCESS;
}

void *openvpn_plugin_client_constructor_v1(void *handle)
{
    struct handle *h = handle;
    struct client_ctx *c = calloc(1, sizeof(*c));
    char line[64];

    if (c == NULL) {
        return NULL;
    }
    pthread_mutex_lock(&h->lock);
    c->id = ++h->next_id;
    pthread_mutex_unlock(&h->lock);
    c->magic = CTX_MAGIC;
    snprintf(line, sizeof(line), "CONSTRUCT ctx=%d", c->id);
    log_line(h, line);
    return c;
}

void openvpn_plugin_client_destructor_v1(void *handle, void *ctx)
{
    struct client_ctx *c = ctx;
    char line[800];

    if (c->magic != CTX_MAGIC) {
        log_line(handle, "DESTRUCT ctx=BAD");
        return;
    }
    snprintf(line, sizeof(line), "DESTRUCT ctx=%d cn=%s seen=%s", c->id, c->cn, c->seen);
    log_line(handle, line);
    c->magic = 0;
    free(c);
}

int openvpn_plugin_func_v3(int version, const struct ovpn_plugin_func_in *in,
                           struct ovpn_plugin_func_out *out)
{
    struct handle *h = in->handle;
    struct client_ctx *c = in->per_client_context;
    const char *cn = get_env("common_name", in->envp);
    const char *name =
        in->type >= 0 && in->type < OVPN_PLUGIN_N_EVENTS && names[in->type] ? names[in->type] : "?";
    bool is_mismatch = false;
    char id[16], line[1024];
    size_t len;

    (void)version;
    (void)out;
    if (c == NULL) {
        snprintf(id, sizeof(id), "none");
    } else if (c->magic != CTX_MAGIC) {
        snprintf(id, sizeof(id), "BAD");
        c = NULL;
    } else {
        snprintf(id, sizeof(id), "%d", c->id);
    }
    if (c != NULL) {
        if (in->type == OVPN_PLUGIN_TLS_VERIFY && in->argv[1] != NULL &&
            strcmp(in->argv[1], "0") == 0) {
            snprintf(c->cn, sizeof(c->cn), "%s", get_env("X509_0_CN", in->envp));
        }
        if ((in->type == OVPN_PLUGIN_CLIENT_CONNECT_V2 ||
             in->type == OVPN_PLUGIN_CLIENT_DISCONNECT || in->type == OVPN_PLUGIN_TLS_FINAL ||
             in->type == OVPN_PLUGIN_LEARN_ADDRESS) &&
            strcmp(cn, c->cn) != 0) {
            is_mismatch = true;
        }
        if (strstr(c->seen, name) == NULL) {
            snprintf(c->seen + strlen(c->seen), sizeof(c->seen) - strlen(c->seen), "%s%s",
                     c->seen[0] ? "," : "", name);
        }
    }
    snprintf(line, sizeof(line), "%s ctx=%s", is_mismatch ? "MISMATCH" : name, id);
    for (int i = 1; in->argv[i] != NULL; i++) {
        len = strlen(line);
        snprintf(line + len, sizeof(line) - len, " %s", in->argv[i]);
    }
    len = strlen(line);
    snprintf(line + len, sizeof(line) - len, " cn=%s", cn);
    log_line(h, line);
    if (in->type == OVPN_PLUGIN_AUTH_USER_PASS_VERIFY &&
        strcmp(get_env("username", in->envp), "bad") == 0) {
        return OVPN_PLUGIN_FUNC_ERROR;
    }
    return OVPN_PLUGIN_FUNC_SUCCESS;
}

void openvpn_plugin_close_v1(void *handle)
{
    struct handle *h = handle;

    log_line(h, "CLOSE");
    pthread_mutex_destroy(&h->lock);
    free(h);
}
