/* server/config/config_compat.c: `compat-mode VERSION`, openvpn 2.6's way of bringing back the
 * defaults of an older release for peers of that release. Facts from openvpn 2.6
 * src/openvpn/options.c ("compat-mode", options_set_backwards_compatible_options) and
 * doc/man-sections/generic-options.rst.
 */
#include "server/config/config_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int config_h_compat_mode(struct config_parser *ps, int argc, char **argv)
{
    unsigned major, minor, patch;
    char tail;

    (void)argc;
    if (sscanf(argv[1], "%u.%u.%u%c", &major, &minor, &patch, &tail) != 3 || minor > 99 ||
        patch > 99) {
        return config_error(ps, "cannot parse version number '%s' (for example 2.4.0)", argv[1]);
    }
    ps->seen_compat_mode = config_here(ps);
    ps->compat_version = major * 10000 + minor * 100 + patch;
    return 0;
}

static bool before(const struct config_parser *ps, unsigned version)
{
    return ps->compat_version != 0 && ps->compat_version < version;
}

static bool in_list(const char *list, const char *name)
{
    size_t len = strlen(name);

    for (const char *p = list; p != NULL; p = strchr(p, ':')) {
        p += *p == ':' ? 1 : 0;
        if (strncmp(p, name, len) == 0 && (p[len] == ':' || p[len] == '\0')) {
            return true;
        }
    }
    return false;
}

/* Appends name to data-ciphers, as 2.6 does for peers before 2.5. */
static int append_cipher(struct config_parser *ps, const char *name)
{
    struct config_tls *tls = &ps->cfg->tls;
    size_t len = strlen(tls->data_ciphers) + 1 + strlen(name) + 1;
    char *list;

    if (!config_data_cipher_supported(name)) {
        /* 2.6 stops here too, with OpenSSL 3: "--data-ciphers list contains unsupported
         * ciphers" (BF-CBC, the pre-2.4 default, needs OpenSSL's legacy provider) */
        return config_error_at(ps, &ps->seen_compat_mode, "compat-mode",
                               "%s would join data-ciphers for peers before 2.5, and ovpnd does "
                               "not offer it (the AES and CAMELLIA CBC ciphers and the AEAD "
                               "ciphers are); set 'cipher' to one of them",
                               name);
    }
    if ((list = malloc(len)) == NULL) {
        return config_nomem(ps);
    }
    snprintf(list, len, "%s:%s", tls->data_ciphers, name);
    free(tls->data_ciphers);
    tls->data_ciphers = list;
    return 0;
}

int config_apply_compat_mode(struct config_parser *ps)
{
    struct config *cfg = ps->cfg;
    int err = 0;

    if (ps->compat_version == 0) {
        return 0;
    }
    if (before(ps, 20307) && ps->seen_tls_version_min.line == 0) {
        /* 2.3.6 and older speak TLS 1.0 only */
        err = config_set_str(ps, &cfg->tls.tls_version_min, "1.0");
    }
    if (err == 0 && before(ps, 20400)) {
        /* no NCP before 2.4: `cipher` (BF-CBC when unset) is also the fallback */
        if (cfg->tls.cipher == NULL) {
            err = config_set_str(ps, &cfg->tls.cipher, "BF-CBC");
        }
        if (err == 0 && cfg->tls.data_ciphers_fallback == NULL) {
            err = config_set_str(ps, &cfg->tls.data_ciphers_fallback, cfg->tls.cipher);
        }
    }
    if (err == 0 && before(ps, 20500) && cfg->tls.cipher != NULL &&
        !in_list(cfg->tls.data_ciphers, cfg->tls.cipher)) {
        err = append_cipher(ps, cfg->tls.cipher);
    }
    if (err == 0 && before(ps, 20600) && !ps->seen_compression) {
        /* before 2.6, compression was allowed unless a line said otherwise */
        cfg->net.comp.allow = COMP_ALLOW_ASYM;
    }
    if (err == 0) {
        err = config_warn(ps, &ps->seen_compat_mode,
                          "compat-mode: the defaults of openvpn %u.%u.%u are in force (this "
                          "lowers security; each change can also be made with its own option)",
                          ps->compat_version / 10000, ps->compat_version / 100 % 100,
                          ps->compat_version % 100);
    }
    return err;
}
