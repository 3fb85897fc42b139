/* tests/plugin/test_plugin.c: an OpenVPN-interface plugin for tests/unit/test_auth.c and
 * tests/netns/test_hooks.sh.
 * open: argv[1] is "ok", "fail" (open fails), "want-ipchange" (asks for IPCHANGE, which ovpnd
 * does not call), or "hooks LOG CN ADDRESS" (below).
 * AUTH_USER_PASS_VERIFY ("ok"): username "good" succeeds, "defer" answers DEFERRED after
 * writing 1 to $auth_control_file, anything else fails; the call also fails unless argv[0] is
 * the plugin path and $password is "pw".
 * "hooks LOG CN ADDRESS [FLAGS]": TLS_VERIFY, CLIENT_CONNECT_V2, CLIENT_DISCONNECT and
 * LEARN_ADDRESS append a line to the file LOG: the event name, then its argv after the path,
 * then common_name from the environment. CLIENT_CONNECT_V2 returns the config
 * "ifconfig-push ADDRESS 255.255.255.0" for the client whose common_name is CN. FLAGS "v1": it
 * also wants CLIENT_CONNECT, and writes a push line into the file named by argv[1]; "fail": every
 * call fails (after logging); "defer DCN": CLIENT_CONNECT_V2 answers DEFERRED for the client whose
 * common_name is DCN, and CLIENT_CONNECT_DEFER_V2 (logged too) answers DEFERRED until 3 s have
 * passed, then returns the config "push \"route 198.19.72.0 255.255.255.0\""; "final" (with
 * "defer DCN FCN"): it also wants TLS_FINAL (logged, and a line "EKM cn=CN HEX" when the
 * environment has exported_keying_material) and fails it for the client whose common_name is
 * FCN; a client may load it this way too (TLS_FINAL then names the server). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/hooks/openvpn_plugin.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int openvpn_plugin_open_v3(int version, const struct ovpn_plugin_open_in *in,
                                  struct ovpn_plugin_open_out *out);
EXPORT int openvpn_plugin_func_v3(int version, const struct ovpn_plugin_func_in *in,
                                  struct ovpn_plugin_func_out *out);
EXPORT void openvpn_plugin_close_v1(void *handle);

static char path[512], log_path[512], hook_cn[128], hook_addr[64];
static char defer_cn[128], final_cn[128];
static int is_hooks, is_v1, is_fail;
static time_t defer_until;

static const char *get_env(const char *name, const char **envp)
{
    size_t len = strlen(name);

    for (size_t i = 0; envp[i] != NULL; i++) {
        if (strncmp(envp[i], name, len) == 0 && envp[i][len] == '=') {
            return envp[i] + len + 1;
        }
    }
    return "";
}

int openvpn_plugin_open_v3(int version, const struct ovpn_plugin_open_in *in,
                           struct ovpn_plugin_open_out *out)
{
    if (version != OVPN_PLUGIN_STRUCT_VERSION || in->argv[1] == NULL ||
        strcmp(in->argv[1], "fail") == 0 || strcmp(get_env("verb", in->envp), "") == 0) {
        return OVPN_PLUGIN_FUNC_ERROR;
    }
    snprintf(path, sizeof(path), "%s", in->argv[0]);
    out->type_mask = 1 << OVPN_PLUGIN_AUTH_USER_PASS_VERIFY;
    if (strcmp(in->argv[1], "want-ipchange") == 0) {
        out->type_mask |= 1 << OVPN_PLUGIN_IPCHANGE;
    }
    if (strcmp(in->argv[1], "hooks") == 0) {
        if (in->argv[2] == NULL || in->argv[3] == NULL || in->argv[4] == NULL) {
            return OVPN_PLUGIN_FUNC_ERROR;
        }
        is_hooks = 1;
        snprintf(log_path, sizeof(log_path), "%s", in->argv[2]);
        snprintf(hook_cn, sizeof(hook_cn), "%s", in->argv[3]);
        snprintf(hook_addr, sizeof(hook_addr), "%s", in->argv[4]);
        out->type_mask = 1 << OVPN_PLUGIN_TLS_VERIFY | 1 << OVPN_PLUGIN_CLIENT_CONNECT_V2 |
                         1 << OVPN_PLUGIN_CLIENT_DISCONNECT | 1 << OVPN_PLUGIN_LEARN_ADDRESS;
        is_v1 = in->argv[5] != NULL && strstr(in->argv[5], "v1") != NULL;
        is_fail = in->argv[5] != NULL && strstr(in->argv[5], "fail") != NULL;
        if (is_v1) {
            out->type_mask |= 1 << OVPN_PLUGIN_CLIENT_CONNECT;
        }
        if (in->argv[5] != NULL && strstr(in->argv[5], "defer") != NULL) {
            if (in->argv[6] == NULL) {
                return OVPN_PLUGIN_FUNC_ERROR;
            }
            snprintf(defer_cn, sizeof(defer_cn), "%s", in->argv[6]);
            out->type_mask |= 1 << OVPN_PLUGIN_CLIENT_CONNECT_DEFER_V2;
        }
        if (in->argv[5] != NULL && strstr(in->argv[5], "final") != NULL) {
            if (in->argv[6] == NULL || in->argv[7] == NULL) {
                return OVPN_PLUGIN_FUNC_ERROR;
            }
            snprintf(final_cn, sizeof(final_cn), "%s", in->argv[7]);
            out->type_mask |= 1 << OVPN_PLUGIN_TLS_FINAL;
        }
    }
    out->handle = path;
    in->callbacks->plugin_log(OVPN_PLOG_NOTE, "test-plugin", "opened");
    return OVPN_PLUGIN_FUNC_SUCCESS;
}

static int hooks_call(const struct ovpn_plugin_func_in *in, struct ovpn_plugin_func_out *out)
{
    static const char *const names[] = {
        [OVPN_PLUGIN_TLS_VERIFY] = "TLS_VERIFY",
        [OVPN_PLUGIN_CLIENT_CONNECT] = "CLIENT_CONNECT",
        [OVPN_PLUGIN_CLIENT_CONNECT_V2] = "CLIENT_CONNECT_V2",
        [OVPN_PLUGIN_CLIENT_DISCONNECT] = "CLIENT_DISCONNECT",
        [OVPN_PLUGIN_LEARN_ADDRESS] = "LEARN_ADDRESS",
        [OVPN_PLUGIN_CLIENT_CONNECT_DEFER_V2] = "CLIENT_CONNECT_DEFER_V2",
        [OVPN_PLUGIN_TLS_FINAL] = "TLS_FINAL",
    };
    const char *cn = get_env("common_name", in->envp);
    FILE *f;

    if (in->type < 0 || (size_t)in->type >= sizeof(names) / sizeof(names[0]) ||
        names[in->type] == NULL || strcmp(in->argv[0], path) != 0 ||
        get_env("script_type", in->envp)[0] != '\0') {
        return OVPN_PLUGIN_FUNC_ERROR;
    }
    f = fopen(log_path, "a");
    if (f == NULL) {
        return OVPN_PLUGIN_FUNC_ERROR;
    }
    fputs(names[in->type], f);
    for (int i = 1; in->argv[i] != NULL; i++) {
        fprintf(f, " %s", in->argv[i]);
    }
    fprintf(f, " cn=%s\n", cn);
    if (in->type == OVPN_PLUGIN_TLS_FINAL && get_env("exported_keying_material", in->envp)[0]) {
        fprintf(f, "EKM cn=%s %s\n", cn, get_env("exported_keying_material", in->envp));
    }
    fclose(f);
    if (is_fail) {
        return OVPN_PLUGIN_FUNC_ERROR;
    }
    if (in->type == OVPN_PLUGIN_CLIENT_CONNECT) {
        f = in->argv[1] != NULL ? fopen(in->argv[1], "w") : NULL;
        if (f == NULL) {
            return OVPN_PLUGIN_FUNC_ERROR;
        }
        fputs("push \"route 198.19.71.0 255.255.255.0\"\n", f);
        fclose(f);
    }
    if (in->type == OVPN_PLUGIN_TLS_FINAL) {
        return strcmp(cn, final_cn) == 0 ? OVPN_PLUGIN_FUNC_ERROR : OVPN_PLUGIN_FUNC_SUCCESS;
    }
    if (in->type == OVPN_PLUGIN_CLIENT_CONNECT_V2 && defer_cn[0] != '\0' &&
        strcmp(cn, defer_cn) == 0) {
        defer_until = time(NULL) + 3;
        return OVPN_PLUGIN_FUNC_DEFERRED;
    }
    if (in->type == OVPN_PLUGIN_CLIENT_CONNECT_DEFER_V2) {
        struct ovpn_plugin_string_list *l;

        if (time(NULL) < defer_until) {
            return OVPN_PLUGIN_FUNC_DEFERRED;
        }
        l = calloc(1, sizeof(*l));
        if (l == NULL || (l->name = strdup("config")) == NULL ||
            (l->value = strdup("push \"route 198.19.72.0 255.255.255.0\"")) == NULL) {
            return OVPN_PLUGIN_FUNC_ERROR;
        }
        *out->return_list = l;
        return OVPN_PLUGIN_FUNC_SUCCESS;
    }
    if (in->type == OVPN_PLUGIN_CLIENT_CONNECT_V2 && strcmp(cn, hook_cn) == 0) {
        struct ovpn_plugin_string_list *l = calloc(1, sizeof(*l));
        char text[128];

        snprintf(text, sizeof(text), "ifconfig-push %s 255.255.255.0", hook_addr);
        if (l == NULL || (l->name = strdup("config")) == NULL ||
            (l->value = strdup(text)) == NULL) {
            return OVPN_PLUGIN_FUNC_ERROR;
        }
        *out->return_list = l;
    }
    return OVPN_PLUGIN_FUNC_SUCCESS;
}

int openvpn_plugin_func_v3(int version, const struct ovpn_plugin_func_in *in,
                           struct ovpn_plugin_func_out *out)
{
    const char *user = get_env("username", in->envp);

    (void)version;
    if (is_hooks) {
        return hooks_call(in, out);
    }
    if (in->type != OVPN_PLUGIN_AUTH_USER_PASS_VERIFY || strcmp(in->argv[0], path) != 0 ||
        in->argv[1] != NULL || strcmp(get_env("password", in->envp), "pw") != 0) {
        return OVPN_PLUGIN_FUNC_ERROR;
    }
    if (strcmp(user, "good") == 0) {
        return OVPN_PLUGIN_FUNC_SUCCESS;
    }
    if (strcmp(user, "defer") == 0) {
        FILE *f = fopen(get_env("auth_control_file", in->envp), "w");

        if (f == NULL) {
            return OVPN_PLUGIN_FUNC_ERROR;
        }
        fputs("1", f);
        fclose(f);
        return OVPN_PLUGIN_FUNC_DEFERRED;
    }
    return OVPN_PLUGIN_FUNC_ERROR;
}

void openvpn_plugin_close_v1(void *handle)
{
    (void)handle;
}
