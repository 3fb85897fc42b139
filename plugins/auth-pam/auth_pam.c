/* plugins/auth-pam/auth_pam.c: ovpnd-auth-pam.so, a username/password plugin that checks
 * clients with PAM and understands OpenVPN's static challenge.
 *
 *     plugin PREFIX/lib/ovpnd/plugins/ovpnd-auth-pam.so SERVICE    (build: build/plugins/)
 *
 * It uses the OpenVPN plugin interface (server/hooks/openvpn_plugin.h), so it loads into ovpnd and
 * into openvpn 2.6 alike. For each client it runs pam_start(SERVICE, username),
 * pam_authenticate and pam_acct_mgmt, with PAM_RHOST set to the client's address.
 *
 * Answers to PAM's prompts go by position, never by the echo flag: the first prompt (echo on or
 * off) gets the password, and every later one gets the static-challenge response. A client
 * profile with `static-challenge TEXT ECHO` sends its password as
 * "SCRV1:<base64 password>:<base64 response>" (openvpn misc.c, static challenge); without that
 * form there is no response, and a stack that asks a second question fails. That is what an
 * OTP module placed after pam_unix needs: Debian's openvpn-plugin-auth-pam.so instead answers
 * every echo-off prompt with the password and every echo-on prompt with the username.
 * Informational and error messages from PAM are logged.
 *
 * Threads: ovpnd runs every call of a plugin on that plugin's own thread, one at a time; the
 * PAM call blocks only that thread. Run ovpnd as root (or give it a PAM stack that works
 * unprivileged): pam_unix needs to read /etc/shadow.
 */
#include <security/pam_appl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "server/hooks/openvpn_plugin.h"

#define EXPORT __attribute__((visibility("default")))
#define NAME "ovpnd-auth-pam"
#define SECRET_MAX 1024

struct context {
    char *service;
    struct ovpn_plugin_callbacks *cb;
};

/* One authentication: what PAM's prompts are answered with. */
struct answers {
    const char *password;
    const char *response; /* NULL without a static-challenge response */
    int n_prompts;
    struct context *ctx;
};

static const char *get_env(const char *name, const char **envp)
{
    size_t len = strlen(name);

    for (size_t i = 0; envp != NULL && envp[i] != NULL; i++) {
        if (strncmp(envp[i], name, len) == 0 && envp[i][len] == '=') {
            return envp[i] + len + 1;
        }
    }
    return NULL;
}

static int conv(int n, const struct pam_message **msgs, struct pam_response **out, void *data)
{
    struct answers *a = data;
    struct pam_response *resp;

    *out = NULL;
    if (n <= 0 || n > PAM_MAX_NUM_MSG) {
        return PAM_CONV_ERR;
    }
    resp = calloc((size_t)n, sizeof(*resp));
    if (resp == NULL) {
        return PAM_BUF_ERR;
    }
    for (int i = 0; i < n; i++) {
        const char *text = msgs[i]->msg ? msgs[i]->msg : "";
        const char *answer;

        switch (msgs[i]->msg_style) {
        case PAM_PROMPT_ECHO_OFF:
        case PAM_PROMPT_ECHO_ON:
            answer = a->n_prompts == 0 ? a->password : a->response;
            a->n_prompts++;
            if (answer == NULL) {
                a->ctx->cb->plugin_log(OVPN_PLOG_WARN, NAME,
                                       "PAM asks '%s' but the client sent no static-challenge "
                                       "response",
                                       text);
                goto fail;
            }
            resp[i].resp = strdup(answer);
            if (resp[i].resp == NULL) {
                goto fail;
            }
            break;
        case PAM_ERROR_MSG:
        case PAM_TEXT_INFO:
            a->ctx->cb->plugin_log(OVPN_PLOG_NOTE, NAME, "PAM: %s", text);
            break;
        default:
            goto fail;
        }
    }
    *out = resp;
    return PAM_SUCCESS;

fail:
    for (int i = 0; i < n; i++) {
        if (resp[i].resp != NULL) {
            a->ctx->cb->plugin_secure_memzero(resp[i].resp, strlen(resp[i].resp));
            free(resp[i].resp);
        }
    }
    free(resp);
    return PAM_CONV_ERR;
}

/* "SCRV1:<b64 password>:<b64 response>" into pw and resp (SECRET_MAX bytes each). Returns
 * false when password is not in that form (it is then the password itself). */
static bool split_scrv1(struct context *ctx, const char *password, char *pw, char *resp)
{
    const char *b64_pw, *colon;
    char part[2 * SECRET_MAX];
    int n;

    if (strncmp(password, "SCRV1:", 6) != 0) {
        return false;
    }
    b64_pw = password + 6;
    colon = strchr(b64_pw, ':');
    if (colon == NULL || (size_t)(colon - b64_pw) >= sizeof(part)) {
        return false;
    }
    memcpy(part, b64_pw, (size_t)(colon - b64_pw));
    part[colon - b64_pw] = '\0';
    n = ctx->cb->plugin_base64_decode(part, pw, SECRET_MAX - 1);
    if (n < 0) {
        return false;
    }
    pw[n] = '\0';
    n = ctx->cb->plugin_base64_decode(colon + 1, resp, SECRET_MAX - 1);
    if (n < 0) {
        return false;
    }
    resp[n] = '\0';
    ctx->cb->plugin_secure_memzero(part, sizeof(part));
    return true;
}

static int authenticate(struct context *ctx, const char **envp)
{
    const char *user = get_env("username", envp), *password = get_env("password", envp);
    const char *rhost = get_env("untrusted_ip", envp);
    char pw[SECRET_MAX], resp[SECRET_MAX];
    struct answers a = {password, NULL, 0, ctx};
    struct pam_conv pc = {conv, &a};
    pam_handle_t *h = NULL;
    int ret;

    if (user == NULL || user[0] == '\0' || password == NULL) {
        ctx->cb->plugin_log(OVPN_PLOG_WARN, NAME, "no username or password");
        return OVPN_PLUGIN_FUNC_ERROR;
    }
    if (split_scrv1(ctx, password, pw, resp)) {
        a.password = pw;
        a.response = resp;
    }
    ret = pam_start(ctx->service, user, &pc, &h);
    if (ret == PAM_SUCCESS && rhost != NULL) {
        ret = pam_set_item(h, PAM_RHOST, rhost);
    }
    if (ret == PAM_SUCCESS) {
        ret = pam_authenticate(h, PAM_DISALLOW_NULL_AUTHTOK);
    }
    if (ret == PAM_SUCCESS) {
        ret = pam_acct_mgmt(h, PAM_DISALLOW_NULL_AUTHTOK);
    }
    if (ret != PAM_SUCCESS) {
        ctx->cb->plugin_log(OVPN_PLOG_WARN, NAME, "user '%s' (service %s): %s", user, ctx->service,
                            h ? pam_strerror(h, ret) : "pam_start failed");
    }
    if (h != NULL) {
        pam_end(h, ret);
    }
    ctx->cb->plugin_secure_memzero(pw, sizeof(pw));
    ctx->cb->plugin_secure_memzero(resp, sizeof(resp));
    return ret == PAM_SUCCESS ? OVPN_PLUGIN_FUNC_SUCCESS : OVPN_PLUGIN_FUNC_ERROR;
}

EXPORT int openvpn_plugin_open_v3(int version, const struct ovpn_plugin_open_in *in,
                                  struct ovpn_plugin_open_out *out);
EXPORT int openvpn_plugin_func_v3(int version, const struct ovpn_plugin_func_in *in,
                                  struct ovpn_plugin_func_out *out);
EXPORT void openvpn_plugin_close_v1(void *handle);

int openvpn_plugin_open_v3(int version, const struct ovpn_plugin_open_in *in,
                           struct ovpn_plugin_open_out *out)
{
    struct context *ctx;

    if (version < OVPN_PLUGIN_STRUCT_VERSION || in->callbacks == NULL) {
        return OVPN_PLUGIN_FUNC_ERROR;
    }
    if (in->argv[0] == NULL || in->argv[1] == NULL || in->argv[2] != NULL) {
        in->callbacks->plugin_log(OVPN_PLOG_ERR, NAME, "usage: plugin %s PAM-SERVICE",
                                  in->argv[0] ? in->argv[0] : NAME ".so");
        return OVPN_PLUGIN_FUNC_ERROR;
    }
    ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL || (ctx->service = strdup(in->argv[1])) == NULL) {
        free(ctx);
        return OVPN_PLUGIN_FUNC_ERROR;
    }
    ctx->cb = in->callbacks;
    out->type_mask = 1 << OVPN_PLUGIN_AUTH_USER_PASS_VERIFY;
    out->handle = ctx;
    return OVPN_PLUGIN_FUNC_SUCCESS;
}

int openvpn_plugin_func_v3(int version, const struct ovpn_plugin_func_in *in,
                           struct ovpn_plugin_func_out *out)
{
    (void)version;
    (void)out;
    if (in->type != OVPN_PLUGIN_AUTH_USER_PASS_VERIFY) {
        return OVPN_PLUGIN_FUNC_ERROR;
    }
    return authenticate(in->handle, in->envp);
}

void openvpn_plugin_close_v1(void *handle)
{
    struct context *ctx = handle;

    free(ctx->service);
    free(ctx);
}
