/* server/config/config_mgmt.c: the management interface's directives: `management`,
 * management-client-user / -group, management-log-cache, management-hold, management-signal,
 * management-forget-disconnect, management-query-passwords, management-external-key and
 * management-external-cert; and ovpnd's own `metrics` and `metrics-per-client`. Facts from
 * openvpn 2.6 src/openvpn/options.c (add_option and options_postprocess_verify_ce) and manage.c.
 */
#include "server/config/config_internal.h"

#include "proto/pk_external.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MGMT_PASSWORD_MAX 256 /* openvpn reads the first line of the file into USER_PASS_LEN */

/* The first line of path (relative to the last `cd`), without its line end. */
static int read_password(struct config_parser *ps, const char *path)
{
    char *full = config_resolve(ps, path), line[MGMT_PASSWORD_MAX + 2];
    FILE *f;
    size_t len;

    if (!full) {
        return config_nomem(ps);
    }
    f = fopen(full, "re");
    free(full);
    if (!f) {
        return config_error(ps, "cannot read the password file '%s': %s", path, strerror(errno));
    }
    if (!fgets(line, sizeof(line), f)) {
        line[0] = '\0';
    }
    fclose(f);
    len = strcspn(line, "\r\n");
    line[len] = '\0';
    if (len == 0) {
        return config_error(ps, "the password file '%s' has no password on its first line", path);
    }
    free(ps->cfg->mgmt.password);
    ps->cfg->mgmt.password = strdup(line);
    memset(line, 0, sizeof(line));
    return ps->cfg->mgmt.password ? 0 : config_nomem(ps);
}

int config_h_management(struct config_parser *ps, int argc, char **argv)
{
    struct config_mgmt *m = &ps->cfg->mgmt;
    int err, port;

    ps->seen_management = config_here(ps);
    free(m->where);
    m->where = NULL;
    if (asprintf(&m->where, "%s:%d", ps->file, ps->line) < 0) {
        m->where = NULL;
        return config_nomem(ps);
    }
    m->is_unix = strcmp(argv[2], "unix") == 0;
    if (!m->is_unix) {
        err = config_parse_int(ps, "port", argv[2], 1, 65535, &port);
        if (err) {
            return err;
        }
    }
    err = config_set_str(ps, &m->addr, argv[1]);
    err = err ? err : config_set_str(ps, &m->port, m->is_unix ? NULL : argv[2]);
    if (!err && argc == 4) {
        /* openvpn 2.6 also takes "stdin" here, to ask on the terminal; a daemon has none */
        if (strcmp(argv[3], "stdin") == 0) {
            return config_error(ps, "a password from stdin is not supported: give a file");
        }
        err = read_password(ps, argv[3]);
    }
    return err;
}

int config_h_management_client_user(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    ps->cfg->mgmt.has_modifiers = true;
    return config_set_str(ps, &ps->cfg->mgmt.client_user, argv[1]);
}

int config_h_management_client_group(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    ps->cfg->mgmt.has_modifiers = true;
    return config_set_str(ps, &ps->cfg->mgmt.client_group, argv[1]);
}

int config_h_management_log_cache(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    ps->cfg->mgmt.has_modifiers = true;
    /* openvpn 2.6 refuses a cache under 1; the upper bound keeps memory in check */
    return config_parse_int(ps, NULL, argv[1], 1, 100000, &ps->cfg->mgmt.log_cache);
}

int config_h_management_flag(struct config_parser *ps, int argc, char **argv)
{
    struct config_mgmt *m = &ps->cfg->mgmt;

    (void)argc;
    m->has_modifiers = true;
    if (strcmp(argv[0], "management-hold") == 0) {
        m->hold = true;
    } else if (strcmp(argv[0], "management-signal") == 0) {
        m->signal = true;
    } else if (strcmp(argv[0], "management-client-auth") == 0) {
        m->client_auth = true;
    } else if (strcmp(argv[0], "management-up-down") == 0) {
        m->up_down = true;
    } else if (strcmp(argv[0], "management-client") == 0) {
        m->connect_out = true;
    } else if (strcmp(argv[0], "management-query-passwords") == 0) {
        m->query_passwords = true;
    } else {
        m->forget_disconnect = true;
    }
    return 0;
}

/* management-external-key [nopadding] [pkcs1] [pss] [digest] (2.6 options.c): the server's
 * signature comes from the management client; without pkcs1 or nopadding, pkcs1. */
int config_h_management_external_key(struct config_parser *ps, int argc, char **argv)
{
    static const struct {
        const char *name;
        unsigned flag;
    } flags[] = {{"nopadding", PK_EXT_NOPADDING},
                 {"pkcs1", PK_EXT_PKCS1},
                 {"pss", PK_EXT_PSS},
                 {"digest", PK_EXT_DIGEST}};
    struct config_mgmt *m = &ps->cfg->mgmt;
    unsigned set = 0;

    for (int i = 1; i < argc; i++) {
        size_t j = 0;

        while (j < sizeof(flags) / sizeof(flags[0]) && strcmp(argv[i], flags[j].name) != 0) {
            j++;
        }
        if (j == sizeof(flags) / sizeof(flags[0])) {
            return config_error(ps, "unknown flag '%s' (nopadding, pkcs1, pss, digest)", argv[i]);
        }
        set |= flags[j].flag;
    }
    if (!(set & (PK_EXT_PKCS1 | PK_EXT_NOPADDING))) {
        set |= PK_EXT_PKCS1;
    }
    m->has_modifiers = true;
    m->external_key = true;
    m->external_key_flags = set;
    return 0;
}

/* management-external-cert TAG (2.6 options.c): the certificate comes from the management
 * client, which is asked for it by TAG; the last line wins. */
int config_h_management_external_cert(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    ps->cfg->mgmt.has_modifiers = true;
    return config_set_str(ps, &ps->cfg->mgmt.external_cert, argv[1]);
}

int config_check_mgmt(struct config_parser *ps)
{
    const struct config_mgmt *m = &ps->cfg->mgmt;

    /* the same three checks as openvpn 2.6 options_postprocess_verify_ce */
    if (!m->addr && m->has_modifiers) {
        return config_error_at(ps, NULL, NULL,
                               "management-* directives need a `management` directive");
    }
    if ((m->client_user || m->client_group) && !m->is_unix) {
        return config_error_at(ps, NULL, NULL,
                               "management-client-user and management-client-group need "
                               "`management PATH unix`");
    }
    if (m->addr && !m->is_unix && !m->password) {
        return config_warn(ps, ps->seen_management.line > 0 ? &ps->seen_management : NULL, "%s",
                           CONFIG_WARN_MGMT_NO_PASSWORD);
    }
    return 0;
}

/* metrics HOST PORT: ovpnd's own (server/ops/metrics.h). HOST is a literal address, so that what
 * the endpoint binds is what the config says (no name lookup picking one address of several). */
int config_h_metrics(struct config_parser *ps, int argc, char **argv)
{
    struct config_metrics *m = &ps->cfg->metrics;
    struct in6_addr a6;
    struct in_addr a4;
    int err;

    (void)argc;
    if (inet_pton(AF_INET, argv[1], &a4) != 1 && inet_pton(AF_INET6, argv[1], &a6) != 1) {
        return config_error(ps, "'%s' is not an IPv4 or IPv6 address", argv[1]);
    }
    err = config_parse_int(ps, "port", argv[2], 1, 65535, &m->port);
    return err ? err : config_set_str(ps, &m->host, argv[1]);
}

/* metrics-per-client: series per connected client, labelled by common name. */
int config_h_metrics_per_client(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    ps->cfg->metrics.per_client = true;
    return 0;
}

int config_check_metrics(struct config_parser *ps)
{
    if (ps->cfg->metrics.per_client && !ps->cfg->metrics.host) {
        return config_error_at(ps, NULL, NULL, "metrics-per-client needs a `metrics` directive");
    }
    return 0;
}
