/* server/ops/mgmt_pk.c: management-external-key's side of the management interface: >PK_SIGN out,
 * pk-sig (or rsa-sig) and its base64 lines in (openvpn 2.6 manage.c management_query_pk_sig,
 * man_pk_sig; doc/management-notes.txt). Loop thread only. */
#include <stdio.h>
#include <string.h>

#include "server/ops/mgmt_internal.h"

void mgmt_pk_sign(struct mgmt *m, const char *b64, const char *alg)
{
    if (m->is_pk_answering) {
        /* asked while the last answer is handled: after that answer's SUCCESS or ERROR line */
        snprintf(m->pk_next, sizeof(m->pk_next), "%s", b64);
        snprintf(m->pk_next_alg, sizeof(m->pk_next_alg), "%s", alg);
        m->has_pk_next = true;
        return;
    }
    m->is_pk_wanted = true;
    for (struct mgmt_client *c = m->clients; c; c = c->next) {
        if (!c->is_authed || c->is_closing) {
            continue;
        }
        if (c->version <= 1) {
            mgmt_reply(c, ">RSA_SIGN:%s", b64);
        } else if (c->version == 2) {
            mgmt_reply(c, ">PK_SIGN:%s", b64);
        } else {
            mgmt_reply(c, ">PK_SIGN:%s,%s", b64, alg);
        }
    }
}

void mgmt_pk_sign_cancel(struct mgmt *m)
{
    if (m) {
        m->is_pk_wanted = false;
    }
}

void mgmt_pk_cmd(struct mgmt_client *c, const char *cmd)
{
    if (!c->m->is_pk_wanted) {
        mgmt_reply(c, "ERROR: The %s command is not currently available", cmd);
        return;
    }
    c->is_in_pk_block = true;
    c->is_pk_overflow = false;
    c->pk_b64_len = 0;
    c->pk_b64[0] = '\0';
}

void mgmt_pk_line(struct mgmt_client *c, const char *line)
{
    struct mgmt *m = c->m;
    size_t len = strlen(line);
    bool ok;

    if (strcmp(line, "END") != 0) {
        /* 2.6 joins the lines without a separator */
        if (len >= sizeof(c->pk_b64) - c->pk_b64_len) {
            c->is_pk_overflow = true;
        } else {
            memcpy(c->pk_b64 + c->pk_b64_len, line, len + 1);
            c->pk_b64_len += len;
        }
        return;
    }
    c->is_in_pk_block = false;
    ok = m->is_pk_wanted && !c->is_pk_overflow && m->ops.pk_sig;
    m->is_pk_wanted = false; /* (the answer may send the next request) */
    m->is_pk_answering = true;
    ok = ok && m->ops.pk_sig(m->ops.ctx, c->pk_b64);
    m->is_pk_answering = false;
    /* 2.6 names the request by what it sent (pk-sign, or rsa-sign for a version 1 client) */
    mgmt_reply(c, "%s: %s command %s", ok ? "SUCCESS" : "ERROR",
               c->version <= 1 ? "rsa-sign" : "pk-sign", ok ? "succeeded" : "failed");
    if (m->has_pk_next) {
        m->has_pk_next = false;
        mgmt_pk_sign(m, m->pk_next, m->pk_next_alg);
    }
}
