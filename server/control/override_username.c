/* server/control/override_username.c: openvpn 2.7's override-username (multi.c
 * override_locked_username): a client-connect output renames the client. Acceptor thread only. */
#include "server/control/acceptor.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/control/acceptor_internal.h"

int acc_override_username(struct acceptor *a, struct ctl_session *cs, const char *peer_info,
                          char *why, size_t why_len)
{
    const char *name = cs->ccd ? cs->ccd->override_username : NULL;
    char *copy;

    if (name == NULL || cs->client.orig_username ||
        (cs->client.username && strcmp(cs->client.username, name) == 0)) {
        return 0;
    }
    if (cs->client.username == NULL) {
        snprintf(why, why_len,
                 "override-username needs a username/password check (auth-user-pass-verify, a "
                 "plugin that checks passwords, or management-client-auth)");
        return -EPERM;
    }
    if (a->cfg->auth.username_as_common_name && strlen(name) >= TLS_USERNAME_LEN) {
        snprintf(why, why_len, "override-username: too long to become the common name");
        return -EINVAL;
    }
    copy = strdup(name);
    if (!copy) {
        snprintf(why, why_len, "out of memory");
        return -ENOMEM;
    }
    acc_cs_log(a, cs, LOG_INFO, "override-username: username '%.128s' is now '%.128s'",
               cs->client.username, name);
    cs->client.orig_username = cs->client.username;
    cs->client.username = copy;
    if (a->cfg->auth.username_as_common_name) {
        acc_cn_rename(a, cs, copy);
    }
    acc_token_rebind(a, cs);
    /* learn-address and client-disconnect see the new name, as 2.7's do once its client
     * renegotiates */
    if (acc_client_env_build(a, cs, peer_info) != 0) {
        snprintf(why, why_len, "out of memory");
        return -ENOMEM;
    }
    return 0;
}

void acc_override_username_map(struct acceptor *a, struct ctl_session *cs, char *username,
                               size_t username_len)
{
    if (cs->client.orig_username && strcmp(username, cs->client.orig_username) == 0) {
        acc_cs_log(a, cs, LOG_DEBUG, "username '%.128s' taken as '%.128s' (override-username)",
                   username, cs->client.username);
        snprintf(username, username_len, "%s", cs->client.username);
    }
}
