/* server/config/config_auth.c: handlers for how clients are authenticated beyond their certificate:
 * auth-user-pass-verify, plugin, auth-user-pass-optional, username-as-common-name,
 * script-security, tmp-dir and the environment given to scripts and plugins (setenv,
 * setenv-safe). Facts from openvpn 2.6
 * src/openvpn/options.c (add_option, options_postprocess_verify_ce, check_cmd_access) and
 * doc/man-sections/script-options.rst.
 */
#include "server/config/config_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mbedtls/dhm.h>
#include <mbedtls/x509_crl.h>

#include "proto/dh_params.h"

/* openvpn's script-security levels (run_command.h SSEC_*). */
#define SSEC_SCRIPTS 2 /* user-defined scripts may run */
#define SSEC_PW_ENV 3  /* passwords may be passed to scripts in the environment */

void config_strv_free(char **v)
{
    if (v == NULL) {
        return;
    }
    for (char **p = v; *p != NULL; p++) {
        free(*p);
    }
    free(v);
}

/* Split a command the way openvpn's argv_parse_cmd does (the config-line rules: blanks,
 * quotes, backslashes) into a NULL-terminated vector in *out. */
static int split_command(struct config_parser *ps, const char *cmd, char ***out)
{
    size_t len = strlen(cmd);
    char *scratch = malloc(len + CONFIG_MAX_ARGS), *words[CONFIG_MAX_ARGS], why[128];
    char **v = NULL;
    int n = 0, err;

    if (scratch == NULL) {
        return config_nomem(ps);
    }
    err = config_split_line(cmd, len, scratch, words, &n, why, sizeof(why));
    if (err) {
        free(scratch);
        return config_error(ps, "command '%s': %s", cmd, why);
    }
    if (n == 0) {
        free(scratch);
        return config_error(ps, "the command is empty");
    }
    v = calloc((size_t)n + 1, sizeof(*v));
    for (int i = 0; v != NULL && i < n; i++) {
        v[i] = strdup(words[i]);
        if (v[i] == NULL) {
            config_strv_free(v);
            v = NULL;
        }
    }
    free(scratch);
    if (v == NULL) {
        return config_nomem(ps);
    }
    config_strv_free(*out);
    *out = v;
    return 0;
}

int config_h_auth_user_pass_verify(struct config_parser *ps, int argc, char **argv)
{
    struct config *cfg = ps->cfg;

    if (argc < 3) {
        return config_error(ps, "needs a second argument, 'via-env' or 'via-file' (as in "
                                "openvpn 2.6)");
    }
    if (strcmp(argv[2], "via-file") == 0) {
        cfg->auth.auth_user_pass_verify_via_file = true;
    } else if (strcmp(argv[2], "via-env") == 0) {
        cfg->auth.auth_user_pass_verify_via_file = false;
    } else {
        return config_error(ps, "second argument must be 'via-env' or 'via-file', not '%s'",
                            argv[2]);
    }
    ps->seen_auth_user_pass_verify = config_here(ps);
    return split_command(ps, argv[1], &cfg->auth.auth_user_pass_verify);
}

/* tls-verify, client-connect, client-disconnect, client-crresponse, learn-address: CMD, split
 * as above. */
int config_h_hook_script(struct config_parser *ps, int argc, char **argv)
{
    struct config *cfg = ps->cfg;

    (void)argc;
    if (strcmp(argv[0], "tls-verify") == 0) {
        ps->seen_tls_verify = config_here(ps);
        return split_command(ps, argv[1], &cfg->hooks.tls_verify);
    }
    if (strcmp(argv[0], "tls-crypt-v2-verify") == 0) {
        ps->seen_tls_crypt_v2_verify = config_here(ps);
        return split_command(ps, argv[1], &cfg->hooks.tls_crypt_v2_verify);
    }
    if (strcmp(argv[0], "client-connect") == 0) {
        ps->seen_client_connect = config_here(ps);
        return split_command(ps, argv[1], &cfg->hooks.client_connect);
    }
    if (strcmp(argv[0], "client-disconnect") == 0) {
        ps->seen_client_disconnect = config_here(ps);
        return split_command(ps, argv[1], &cfg->hooks.client_disconnect);
    }
    if (strcmp(argv[0], "up") == 0) {
        ps->seen_up = config_here(ps);
        return split_command(ps, argv[1], &cfg->hooks.up);
    }
    if (strcmp(argv[0], "down") == 0) {
        ps->seen_down = config_here(ps);
        return split_command(ps, argv[1], &cfg->hooks.down);
    }
    if (strcmp(argv[0], "route-pre-down") == 0) {
        return split_command(ps, argv[1], &cfg->hooks.route_pre_down);
    }
    if (strcmp(argv[0], "route-up") == 0) {
        ps->seen_route_up = config_here(ps);
        return split_command(ps, argv[1], &cfg->hooks.route_up);
    }
    if (strcmp(argv[0], "client-crresponse") == 0) {
        ps->seen_client_crresponse = config_here(ps);
        return split_command(ps, argv[1], &cfg->hooks.client_crresponse);
    }
    ps->seen_learn_address = config_here(ps);
    return split_command(ps, argv[1], &cfg->hooks.learn_address);
}

int config_h_auth_user_pass_optional(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    ps->cfg->auth.auth_user_pass_optional = true;
    ps->seen_auth_user_pass_optional = config_here(ps);
    return 0;
}

int config_h_username_as_common_name(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    ps->cfg->auth.username_as_common_name = true;
    ps->seen_username_as_cn = config_here(ps);
    return 0;
}

int config_h_script_security(struct config_parser *ps, int argc, char **argv)
{
    int level, err;

    if (argc > 2) {
        return config_error(ps, "the second argument (execve/system) was removed in openvpn 2.3");
    }
    ps->seen_script_security = config_here(ps);
    err = config_parse_int(ps, NULL, argv[1], 0, INT_MAX, &level);
    if (err) {
        return err;
    }
    if (level > SSEC_PW_ENV) {
        /* 2.6 stores any number and only ever compares with >=, so above 3 acts as 3. */
        err =
            config_warn(ps, NULL, "script-security: %d is treated as 3, the highest level", level);
        level = SSEC_PW_ENV;
    }
    ps->cfg->hooks.script_security = level;
    return err;
}

/* Checked after the last line (config_check_jail): with `chroot` it is inside the jail. */
int config_h_tmp_dir(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    ps->tmp_dir.where = config_here(ps);
    return config_set_str(ps, &ps->tmp_dir.path, argv[1]);
}

/* `setenv NAME [VALUE]` and `setenv-safe NAME [VALUE]` (the latter as OPENVPN_NAME): passed to
 * every script. `setenv FORWARD_COMPATIBLE 1` also changes how unknown directives are treated
 * (as in openvpn). */
int config_h_setenv(struct config_parser *ps, int argc, char **argv)
{
    struct config *cfg = ps->cfg;
    bool is_safe = strcmp(argv[0], "setenv-safe") == 0;
    const char *value = argc > 2 ? argv[2] : "";
    char **grown, *var;
    size_t len;

    if (!is_safe && strcmp(argv[1], "FORWARD_COMPATIBLE") == 0 && strcmp(value, "1") == 0) {
        ps->is_forward_compatible = true; /* unknown directives only warn from here on */
    }
    if (argv[1][0] == '\0' || strchr(argv[1], '=') != NULL) {
        return config_error(ps, "'%s' is not a variable name", argv[1]);
    }
    len = strlen(argv[1]) + strlen(value) + 10;
    var = malloc(len);
    grown = realloc(cfg->hooks.setenv, (cfg->hooks.n_setenv + 1) * sizeof(*grown));
    if (var == NULL || grown == NULL) {
        free(var);
        if (grown != NULL) {
            cfg->hooks.setenv = grown;
        }
        return config_nomem(ps);
    }
    snprintf(var, len, "%s%s=%s", is_safe ? "OPENVPN_" : "", argv[1], value);
    cfg->hooks.setenv = grown;
    cfg->hooks.setenv[cfg->hooks.n_setenv++] = var;
    return 0;
}

#ifndef OVPND_OPENVPN_PLUGIN_DIR
#define OVPND_OPENVPN_PLUGIN_DIR "/usr/lib/openvpn/plugins"
#endif

/* `plugin PATH [ARGS...]`: the file must be there now (it is loaded at start-up). */
int config_h_plugin(struct config_parser *ps, int argc, char **argv)
{
    struct config *cfg = ps->cfg;
    struct config_plugin *grown, *pl;
    char where[300];
    int err = 0;

    grown = realloc(cfg->hooks.plugins, (cfg->hooks.n_plugins + 1) * sizeof(*grown));
    if (grown == NULL) {
        return config_nomem(ps);
    }
    cfg->hooks.plugins = grown;
    pl = &cfg->hooks.plugins[cfg->hooks.n_plugins];
    memset(pl, 0, sizeof(*pl));
    cfg->hooks.n_plugins++;
    pl->argv = calloc((size_t)argc, sizeof(*pl->argv));
    for (int i = 1; pl->argv != NULL && i < argc; i++) {
        pl->argv[i - 1] = strdup(argv[i]);
        if (pl->argv[i - 1] == NULL) {
            return config_nomem(ps);
        }
    }
    if (argv[1][0] != '/' && argv[1][0] != '.' && strchr(argv[1], '/') == NULL) {
        size_t len = strlen(OVPND_OPENVPN_PLUGIN_DIR) + strlen(argv[1]) + 2;

        pl->path = malloc(len);
        if (pl->path != NULL) {
            snprintf(pl->path, len, "%s/%s", OVPND_OPENVPN_PLUGIN_DIR, argv[1]);
        }
    } else {
        pl->path = config_resolve(ps, argv[1]);
    }
    snprintf(where, sizeof(where), "%s:%d", ps->file, ps->line);
    pl->where = strdup(where);
    if (pl->argv == NULL || pl->path == NULL || pl->where == NULL) {
        return config_nomem(ps);
    }
    if (access(pl->path, R_OK) != 0) {
        err = config_error(ps, "cannot load '%s': %s", pl->path, strerror(errno));
    }
    return err;
}

/* `crl-verify FILE` (or an inline <crl-verify> block); read once the config is complete.
 * `crl-verify DIR dir`: config_cert.c. */
int config_h_crl_verify(struct config_parser *ps, int argc, char **argv)
{
    if (argc > 2) {
        if (ps->is_inline || strcmp(argv[2], "dir") != 0) {
            return config_error(ps, "the second argument can only be 'dir'");
        }
        return config_crl_verify_dir(ps, argv[1]);
    }
    free(ps->certp.crl_dir.path);
    ps->certp.crl_dir.path = NULL;
    return config_set_file(ps, &ps->crl, &ps->cfg->tls.crl, argv[1]);
}

/* Read the `dh` file and make sure Mbed TLS can use its parameters. The X9.42 form that
 * `openssl dhparam -dsaparam` writes, which 2.6's OpenSSL reads and Mbed TLS does not, is
 * rewritten as PKCS #3 with the same group (proto/dh_params.h). Another file Mbed TLS cannot
 * parse is dropped with a warning, not refused, since 2.6 is as lenient with what OpenSSL reads.
 * A file that cannot be read stops start-up, as in 2.6. */
static int check_dh(struct config_parser *ps)
{
    struct config *cfg = ps->cfg;
    mbedtls_dhm_context dhm;
    char *pkcs3;
    size_t pkcs3_len;
    int err = 0, ret;

    if (ps->dh.path != NULL) {
        err = config_read_blob(ps, &ps->dh.where, "dh", ps->dh.path, &cfg->tls.dh);
    }
    if (err || cfg->tls.dh.data == NULL) {
        return err;
    }
    mbedtls_dhm_init(&dhm);
    ret = mbedtls_dhm_parse_dhm(&dhm, (const unsigned char *)cfg->tls.dh.data, cfg->tls.dh.len + 1);
    mbedtls_dhm_free(&dhm);
    if (ret != 0 &&
        dh_params_x942_to_pkcs3(cfg->tls.dh.data, cfg->tls.dh.len, &pkcs3, &pkcs3_len) == 0) {
        free(cfg->tls.dh.data);
        cfg->tls.dh.data = pkcs3;
        cfg->tls.dh.len = pkcs3_len;
        ret = 0;
    }
    if (ret != 0) {
        err = config_warn(ps, &ps->dh.where,
                          "dh: %s: ignored: not DH parameters in PKCS #3 (PEM or DER) or X9.42 PEM "
                          "form (Mbed TLS error -0x%04x; `openssl dhparam` writes them); "
                          "the DHE suites use Mbed TLS's built-in 2048-bit group",
                          cfg->tls.dh.origin ? cfg->tls.dh.origin : "the file", (unsigned)-ret);
        config_blob_clear(&cfg->tls.dh);
    }
    return err;
}

/* Read the CRL file and make sure mbed TLS can use it, so a broken CRL stops start-up instead
 * of letting every client in or none. */
static int check_crl(struct config_parser *ps)
{
    struct config *cfg = ps->cfg;
    mbedtls_x509_crl crl;
    int err = 0, ret;

    if (ps->crl.path != NULL) {
        char *host = NULL;

        /* with chroot, a file inside the jail (2.6 init_ssl prepends the chroot directory
         * for the first read, and re-reads it inside the jail later) */
        err = config_jail_path(ps, ps->crl.path, &host, &cfg->tls.crl_file);
        err = err ? err : config_read_blob(ps, &ps->crl.where, "crl-verify", host, &cfg->tls.crl);
        free(host);
    }
    if (err || cfg->tls.crl.data == NULL) {
        return err;
    }
    mbedtls_x509_crl_init(&crl);
    ret = mbedtls_x509_crl_parse(&crl, (const unsigned char *)cfg->tls.crl.data,
                                 cfg->tls.crl.len + 1);
    mbedtls_x509_crl_free(&crl);
    if (ret != 0) {
        err =
            config_error_at(ps, &ps->crl.where, "crl-verify",
                            "%s is not a CRL in PEM or DER form (mbed TLS error -0x%04x)",
                            cfg->tls.crl.origin ? cfg->tls.crl.origin : "the CRL", (unsigned)-ret);
    }
    return err;
}

/* options.c check_cmd_access: the program of a script must be a file that can be run now. For
 * root, access(X_OK) also passes a directory, so the file type and x bits are checked too.
 * 0, -EINVAL or -ENOMEM. */
static int check_program(struct config_parser *ps, const struct config_where *w, const char *name,
                         const char *program)
{
    char *path = NULL;
    const char *why = NULL;
    struct stat st;
    int err = 0;

    /* these scripts run after the chroot: inside the jail (2.6 check_cmd_access) */
    if (config_jail_path(ps, program, &path, NULL) != 0) {
        return config_nomem(ps);
    }
    if (access(path, X_OK) != 0 || stat(path, &st) != 0) {
        why = strerror(errno);
    } else if (!S_ISREG(st.st_mode)) {
        why = "not a regular file";
    } else if (!(st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH))) {
        why = "not executable (no x permission)";
    }
    if (why) {
        err = config_error_at(ps, w, name, "cannot execute '%s': %s", program, why);
    }
    free(path);
    return err;
}

/* A script directive needs script-security 2 and a program that can be run now (options.c
 * check_cmd_access). 2.6 only warns at start-up and then fails each call when script-security
 * is too low; ovpnd refuses to start, as for auth-user-pass-verify. */
static int check_script(struct config_parser *ps, const struct config_where *w, const char *name,
                        char *const *cmd)
{
    if (cmd == NULL) {
        return 0;
    }
    if (ps->cfg->hooks.script_security < SSEC_SCRIPTS) {
        return config_error_at(ps, w, name,
                               "running a script needs 'script-security 2' or higher (it is %d)",
                               ps->cfg->hooks.script_security);
    }
    return check_program(ps, w, name, cmd[0]);
}

int config_check_auth(struct config_parser *ps)
{
    struct config *cfg = ps->cfg;
    const struct config_where *w = &ps->seen_auth_user_pass_verify;
    const struct {
        const struct config_where *w;
        const char *name;
        char *const *cmd;
    } scripts[] = {
        {&ps->seen_tls_verify, "tls-verify", cfg->hooks.tls_verify},
        {&ps->seen_tls_crypt_v2_verify, "tls-crypt-v2-verify", cfg->hooks.tls_crypt_v2_verify},
        {&ps->seen_client_connect, "client-connect", cfg->hooks.client_connect},
        {&ps->seen_client_disconnect, "client-disconnect", cfg->hooks.client_disconnect},
        {&ps->seen_learn_address, "learn-address", cfg->hooks.learn_address},
        {&ps->seen_client_crresponse, "client-crresponse", cfg->hooks.client_crresponse},
    };
    int err = check_crl(ps);
    int dh_err = check_dh(ps);

    err = err ? err : dh_err;

    /* every script is checked, so that one run names each one that cannot run */
    for (size_t i = 0; i < sizeof(scripts) / sizeof(scripts[0]) && err != -ENOMEM; i++) {
        int e = check_script(ps, scripts[i].w, scripts[i].name, scripts[i].cmd);

        err = err ? err : e;
    }
    if (err) {
        return err;
    }
    if (ps->seen_verify_client_cert.line != 0) {
        /* for auth_new, which sees what the plugins handle (server/hooks/auth.h) */
        char where[300];

        snprintf(where, sizeof(where), "%s:%d", ps->seen_verify_client_cert.file,
                 ps->seen_verify_client_cert.line);
        free(cfg->tls.verify_client_cert_where);
        cfg->tls.verify_client_cert_where = strdup(where);
        if (cfg->tls.verify_client_cert_where == NULL) {
            return config_nomem(ps);
        }
    }
    if (cfg->tls.verify_client_cert != CONFIG_VERIFY_REQUIRE &&
        cfg->auth.auth_user_pass_verify == NULL && cfg->hooks.n_plugins == 0 &&
        !cfg->mgmt.client_auth) {
        /* options.c: "--verify-client-cert none|optional must be used with ...". Which events
         * a plugin handles is known once it is loaded: auth_new checks that one of them (or
         * the script) checks passwords. */
        return config_error_at(ps, &ps->seen_verify_client_cert, "verify-client-cert",
                               "'%s' needs auth-user-pass-verify, a plugin or "
                               "management-client-auth to check clients",
                               cfg->tls.verify_client_cert == CONFIG_VERIFY_NONE ? "none"
                                                                                 : "optional");
    }
    if (cfg->auth.auth_user_pass_verify == NULL && cfg->hooks.n_plugins == 0 &&
        !cfg->mgmt.client_auth) {
        /* options.c (options_postprocess_verify_ce): "--username-as-common-name must be used
         * with --management-client-auth, an --auth-user-pass-verify script, or plugin", and
         * the same for --auth-user-pass-optional; 2.6 does not start without one */
        const char *const why = "needs auth-user-pass-verify, a plugin or management-client-auth "
                                "(there is no username without them)";

        if (cfg->auth.username_as_common_name) {
            return config_error_at(ps, &ps->seen_username_as_cn, "username-as-common-name", "%s",
                                   why);
        }
        if (cfg->auth.auth_user_pass_optional) {
            return config_error_at(ps, &ps->seen_auth_user_pass_optional, "auth-user-pass-optional",
                                   "%s", why);
        }
    }
    if (cfg->auth.auth_user_pass_verify == NULL) {
        return 0;
    }
    if (cfg->hooks.script_security < SSEC_SCRIPTS) {
        return config_error_at(ps, w, "auth-user-pass-verify",
                               "running a script needs 'script-security 2' or higher (it is %d)",
                               cfg->hooks.script_security);
    }
    if (!cfg->auth.auth_user_pass_verify_via_file && cfg->hooks.script_security < SSEC_PW_ENV) {
        return config_error_at(ps, w, "auth-user-pass-verify",
                               "via-env passes the password in the environment, which needs "
                               "'script-security 3' (or use via-file)");
    }
    return check_program(ps, w, "auth-user-pass-verify", cfg->auth.auth_user_pass_verify[0]);
}
