/* server/config/config_cert.c: handlers for the certificate options beyond ca/cert/key:
 * x509-username-field. Facts from openvpn 2.6 src/openvpn/options.c (add_option) and
 * ssl_verify.c (verify_cert).
 */
#include "server/config/config_internal.h"

#include <stdlib.h>
#include <string.h>

#include "proto/cert_name.h"

void config_cert_clear(struct config_cert *c)
{
    free(c->username_fields);
    memset(c, 0, sizeof(*c));
}

/* `x509-username-field FIELD...` (2.6 options.c): the last line wins; all-lower-case subject
 * field names are upper-cased with a deprecation warning, as 2.6 does; an unsupported "ext:"
 * stops start-up (2.6: "Unsupported x509-username-field extension"). A subject field OpenSSL
 * does not know is accepted with a warning: 2.6 starts and refuses every client then. */
int config_h_x509_username_field(struct config_parser *ps, int argc, char **argv)
{
    struct cert_name_field *fields = calloc((size_t)argc - 1, sizeof(*fields));
    const char *why = NULL;
    bool is_upcased;
    int err = 0;

    if (fields == NULL) {
        return config_nomem(ps);
    }
    for (int i = 1; i < argc && err == 0; i++) {
        if (cert_name_field_parse(argv[i], &fields[i - 1], &is_upcased, &why)) {
            err = config_error(ps, "'%s': %s", argv[i], why);
        } else if (is_upcased) {
            err = config_warn(ps, NULL,
                              "%s: DEPRECATED FEATURE (as in openvpn 2.6): automatically upcased "
                              "the field name '%s' to '%s'; please update your configuration",
                              argv[0], argv[i], fields[i - 1].name);
        }
        if (err == 0 && fields[i - 1].kind == CERT_NAME_SUBJECT && fields[i - 1].oid_len == 0) {
            err = config_warn(ps, NULL,
                              "%s: '%s' is not an X.509 attribute name: every client "
                              "certificate will be refused (as openvpn 2.6 does)",
                              argv[0], fields[i - 1].name);
        }
    }
    if (err) {
        free(fields);
        return err;
    }
    free(ps->cfg->cert.username_fields);
    ps->cfg->cert.username_fields = fields;
    ps->cfg->cert.n_username_fields = (size_t)argc - 1;
    return 0;
}
