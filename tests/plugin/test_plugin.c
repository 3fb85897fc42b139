/* tests/plugin/test_plugin.c: an OpenVPN-interface plugin for tests/unit/test_plugin.c.
 * open: argv[1] is "ok", "fail" (open fails) or "want-tls-verify" (asks for an event ovpnd does
 * not call). AUTH_USER_PASS_VERIFY: username "good" succeeds, "defer" answers DEFERRED after
 * writing 1 to $auth_control_file, anything else fails; the call also fails unless argv[0] is
 * the plugin path and $password is "pw". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/openvpn_plugin.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int openvpn_plugin_open_v3(int version, const struct ovpn_plugin_open_in *in,
                                  struct ovpn_plugin_open_out *out);
EXPORT int openvpn_plugin_func_v3(int version, const struct ovpn_plugin_func_in *in,
                                  struct ovpn_plugin_func_out *out);
EXPORT void openvpn_plugin_close_v1(void *handle);

static char path[512];

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
    if (strcmp(in->argv[1], "want-tls-verify") == 0) {
        out->type_mask |= 1 << OVPN_PLUGIN_TLS_VERIFY;
    }
    out->handle = path;
    in->callbacks->plugin_log(OVPN_PLOG_NOTE, "test-plugin", "opened");
    return OVPN_PLUGIN_FUNC_SUCCESS;
}

int openvpn_plugin_func_v3(int version, const struct ovpn_plugin_func_in *in,
                           struct ovpn_plugin_func_out *out)
{
    const char *user = get_env("username", in->envp);

    (void)version;
    (void)out;
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
