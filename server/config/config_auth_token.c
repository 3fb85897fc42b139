/* server/config/config_auth_token.c: auth-gen-token and auth-gen-token-secret. Syntax, defaults and
 * checks from openvpn 2.6 src/openvpn/options.c (add_option, options_postprocess_mutate,
 * options_postprocess_verify_ce) and doc/man-sections/server-options.rst.
 */
#include "server/config/config_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/platform_util.h>

#include "proto/auth_token.h"

_Static_assert(sizeof(((struct config *)0)->auth.auth_token_secret) == AUTH_TOKEN_SECRET_LEN,
               "secret size");

/* `auth-gen-token [lifetime] [renewal-time] [external-auth]`: the first argument is always the
 * lifetime; the second a non-zero renewal time or external-auth; the third external-auth. */
int config_h_auth_gen_token(struct config_parser *ps, int argc, char **argv)
{
    struct config *cfg = ps->cfg;
    int err;

    cfg->auth.auth_gen_token = true;
    cfg->auth.auth_token_lifetime_s = 0;
    cfg->auth.auth_token_renewal_s = 0;
    cfg->auth.auth_token_external_auth = false;
    ps->seen_auth_gen_token = config_here(ps);
    if (argc > 1) {
        err = config_parse_int(ps, "lifetime", argv[1], 0, 0x7fffffff,
                               &cfg->auth.auth_token_lifetime_s);
        if (err) {
            return err;
        }
    }
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "external-auth") == 0) {
            cfg->auth.auth_token_external_auth = true;
        } else if (i == 2 && strspn(argv[i], "0123456789") == strlen(argv[i]) &&
                   strspn(argv[i], "0") != strlen(argv[i])) {
            err = config_parse_int(ps, "renewal-time", argv[i], 1, 0x7fffffff,
                                   &cfg->auth.auth_token_renewal_s);
            if (err) {
                return err;
            }
        } else {
            /* 2.6 refuses a renewal-time of 0 the same way ("Invalid argument"). */
            return config_error(ps,
                                "invalid argument '%s' (syntax: auth-gen-token [lifetime] "
                                "[renewal-time] [external-auth]; renewal-time is at least 1)",
                                argv[i]);
        }
    }
    return 0;
}

int config_h_auth_gen_token_secret(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    return config_set_file(ps, &ps->auth_token_secret, &ps->cfg->auth.auth_token_secret_text,
                           argv[1]);
}

/* Read and parse the secret into cfg->auth.auth_token_secret. */
static int load_secret(struct config_parser *ps)
{
    struct config *cfg = ps->cfg;
    struct config_blob *text = &cfg->auth.auth_token_secret_text;
    const struct config_where *w = &ps->auth_token_secret.where;
    const char *why = NULL;
    size_t line = 0;
    int err;

    if (ps->auth_token_secret.path != NULL) {
        err = config_read_blob(ps, w, "auth-gen-token-secret", ps->auth_token_secret.path, text);
        if (err) {
            return err;
        }
    }
    if (text->data == NULL) {
        return 0;
    }
    if (auth_token_key_parse(text->data, text->len, cfg->auth.auth_token_secret, &line, &why) !=
        0) {
        if (line > 0) {
            return config_error_at(ps, w, "auth-gen-token-secret", "%s:%zu: %s", text->origin, line,
                                   why);
        }
        return config_error_at(ps, w, "auth-gen-token-secret", "%s: %s", text->origin, why);
    }
    cfg->auth.has_auth_token_secret = true;
    /* Only the parsed key is needed from here on. */
    config_blob_clear(text);
    return 0;
}

int config_check_auth_token(struct config_parser *ps)
{
    struct config *cfg = ps->cfg;
    const struct config_where *w = &ps->seen_auth_gen_token;
    int err;

    if (!cfg->auth.auth_gen_token) {
        if (ps->auth_token_secret.where.line != 0) {
            return config_warn(ps, &ps->auth_token_secret.where,
                               "auth-gen-token-secret: ignored without auth-gen-token");
        }
        return 0;
    }
    if (cfg->timers.reneg_sec <= 0) {
        return config_error_at(ps, w, "auth-gen-token", "needs a non-infinite reneg-sec (it is %d)",
                               cfg->timers.reneg_sec);
    }
    if (cfg->auth.auth_token_renewal_s == 0) {
        cfg->auth.auth_token_renewal_s = cfg->timers.reneg_sec; /* options_postprocess_mutate */
    }
    if (cfg->auth.auth_token_renewal_s < 2 * cfg->timers.hand_window_s) {
        return config_error_at(
            ps, w, "auth-gen-token",
            "renewal time (%d s%s) needs to be at least two times hand-window "
            "(%d s), as in openvpn 2.6",
            cfg->auth.auth_token_renewal_s,
            cfg->auth.auth_token_renewal_s == cfg->timers.reneg_sec ? ", from reneg-sec" : "",
            cfg->timers.hand_window_s);
    }
    if (cfg->auth.auth_user_pass_verify == NULL && cfg->hooks.n_plugins == 0) {
        err = config_warn(ps, w,
                          "auth-gen-token: no token is ever made without auth-user-pass-verify or "
                          "a plugin checking passwords (as in openvpn 2.6)");
        if (err) {
            return err;
        }
    }
    return load_secret(ps);
}
