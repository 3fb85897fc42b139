/* server/config/config_pkcs11.c: the server's certificate and key on a PKCS#11 token:
 * pkcs11-providers, pkcs11-protected-authentication, pkcs11-private-mode, pkcs11-cert-private,
 * pkcs11-pin-cache, pkcs11-id, pkcs11-id-management (openvpn 2.6 options.c add_option and
 * options_postprocess_verify_ce; doc/man-sections/pkcs11-options.rst). The per-provider lists
 * give their values by position: the Nth value is the Nth provider's; a later line replaces
 * the values it gives. The token is opened at start-up (server/ops/pkcs11.h). */
#include "server/config/config_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* *where = "FILE:LINE" of the line being parsed (owned by the config). */
static int set_where(struct config_parser *ps, char **where)
{
    char *s = NULL;

    if (asprintf(&s, "%s:%d", ps->file, ps->line) < 0) {
        return config_error(ps, "out of memory");
    }
    free(*where);
    *where = s;
    return 0;
}

int config_h_pkcs11_providers(struct config_parser *ps, int argc, char **argv)
{
    struct config_pkcs11 *p = &ps->cfg->pkcs11;

    for (size_t i = 0; i < p->n_providers; i++) {
        free(p->providers[i]);
        p->providers[i] = NULL;
    }
    p->n_providers = 0;
    for (int i = 1; i < argc && i - 1 < CONFIG_PKCS11_MAX; i++) {
        int err = config_set_str(ps, &p->providers[i - 1], argv[i]);

        if (err) {
            return err;
        }
        p->n_providers = (size_t)i;
    }
    ps->seen_pkcs11_providers = config_here(ps);
    return set_where(ps, &p->providers_where);
}

/* pkcs11-protected-authentication [0|1]..., pkcs11-cert-private [0|1]..., pkcs11-private-mode
 * HEX...: by provider position. */
int config_h_pkcs11_list(struct config_parser *ps, int argc, char **argv)
{
    struct config_pkcs11 *p = &ps->cfg->pkcs11;
    bool is_mode = strcmp(argv[0], "pkcs11-private-mode") == 0;
    bool *flags = strcmp(argv[0], "pkcs11-cert-private") == 0 ? p->cert_private : p->protected_auth;

    for (int i = 1; i < argc && i - 1 < CONFIG_PKCS11_MAX; i++) {
        char *end = NULL;
        unsigned long v;

        errno = 0;
        v = strtoul(argv[i], &end, is_mode ? 16 : 10);
        if (errno || end == argv[i] || *end != '\0' || argv[i][0] == '-' || v > 0xffffffffUL) {
            return config_error(ps, "'%s' is not %s", argv[i],
                                is_mode ? "a hexadecimal mask (PKCS11H_PRIVATEMODE_MASK_*)"
                                        : "0 or 1");
        }
        if (is_mode) {
            p->private_mode[i - 1] = (unsigned)v;
        } else {
            flags[i - 1] = v != 0; /* 2.6: any number but 0 is 1 */
        }
    }
    return 0;
}

int config_h_pkcs11_pin_cache(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    ps->seen_pkcs11_pin_cache = config_here(ps);
    return config_parse_int(ps, NULL, argv[1], -1, 0x7fffffff, &ps->cfg->pkcs11.pin_cache_s);
}

int config_h_pkcs11_id(struct config_parser *ps, int argc, char **argv)
{
    int err = set_where(ps, &ps->cfg->pkcs11.id_where);

    (void)argc;
    ps->seen_pkcs11_id = config_here(ps);
    return err ? err : config_set_str(ps, &ps->cfg->pkcs11.id, argv[1]);
}

int config_h_pkcs11_id_management(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    ps->seen_pkcs11_id_management = config_here(ps);
    ps->cfg->pkcs11.id_management = true;
    return set_where(ps, &ps->cfg->pkcs11.id_where);
}

/* "Parameter --NAME cannot be used when --pkcs11-provider is also specified." (2.6's words) */
static int conflict(struct config_parser *ps, const struct config_where *w, const char *name)
{
    return config_error_at(ps, w, name,
                           "Parameter --%s cannot be used when --pkcs11-provider is also "
                           "specified (as in openvpn 2.6: the certificate and key are on the "
                           "token)",
                           name);
}

int config_check_pkcs11(struct config_parser *ps)
{
    struct config *cfg = ps->cfg;
    const struct config_pkcs11 *p = &cfg->pkcs11;
    int err = 0;

    if (p->n_providers == 0) {
        /* 2.6 warns and goes on */
        if (p->id) {
            return config_warn(ps, &ps->seen_pkcs11_id,
                               "pkcs11-id: Option pkcs11-id is ignored as no pkcs11-providers "
                               "are specified");
        }
        if (p->id_management) {
            return config_warn(ps, &ps->seen_pkcs11_id_management,
                               "pkcs11-id-management: Option pkcs11-id-management is ignored as "
                               "no pkcs11-providers are specified");
        }
        return 0;
    }
    if (p->id_management && p->id) {
        return config_error_at(ps, &ps->seen_pkcs11_id, "pkcs11-id",
                               "Parameter --pkcs11-id cannot be used when --pkcs11-id-management "
                               "is also specified (as in openvpn 2.6)");
    }
    if (!p->id_management && !p->id) {
        return config_error_at(ps, &ps->seen_pkcs11_providers, "pkcs11-providers",
                               "Parameter --pkcs11-id or --pkcs11-id-management should be "
                               "specified (as in openvpn 2.6)");
    }
    if (ps->cert.path != NULL || cfg->tls.cert.data != NULL) {
        err = conflict(ps, &ps->cert.where, "cert");
    }
    if (ps->key.path != NULL || cfg->tls.key.data != NULL) {
        err = conflict(ps, &ps->key.where, "key");
    }
    if (cfg->mgmt.external_key) {
        err = conflict(ps, NULL, "management-external-key");
    }
    if (cfg->mgmt.external_cert) {
        err = conflict(ps, NULL, "management-external-cert");
    }
    if (ps->certp.pkcs12.path != NULL || ps->certp.pkcs12_inline.data != NULL) {
        err = conflict(ps, &ps->certp.pkcs12.where, "pkcs12");
    }
    if (p->id_management && !cfg->mgmt.query_passwords) {
        /* 2.6 asks the management client with management-query-passwords, else at the
         * console; ovpnd asks the management client only */
        err = config_error_at(ps, &ps->seen_pkcs11_id_management, "pkcs11-id-management",
                              "needs management and management-query-passwords in ovpnd: the "
                              "id is asked there (>NEED-STR:Need 'pkcs11-id-request' string), "
                              "not at the terminal");
    }
    if (p->pin_cache_s >= 0 && !cfg->mgmt.query_passwords) {
        err = config_error_at(ps, &ps->seen_pkcs11_pin_cache, "pkcs11-pin-cache",
                              "a PIN cache that runs out needs management-query-passwords in "
                              "ovpnd: the PIN is asked again there while the server serves (not "
                              "at the terminal); leave it out, or write -1");
    }
    return err;
}
