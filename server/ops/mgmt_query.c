/* server/ops/mgmt_query.c: what start-up asks the management client for, and its answers:
 * management-query-passwords (">PASSWORD:Need 'Private Key' password", `password`) and
 * management-external-cert (">NEED-CERTIFICATE:TAG", `certificate` and its PEM lines up to END),
 * pkcs11-id-management (">NEED-STR:Need 'pkcs11-id-request' string", `needstr`, and
 * `pkcs11-id-count` / `pkcs11-id-get` to list the ids).
 * Facts and replies from openvpn 2.6 src/openvpn/manage.c (management_query_user_pass,
 * man_query_user_pass, management_query_cert, man_certificate, management_auth_failure) and
 * doc/management-notes.txt. Loop thread only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/platform_util.h>

#include "server/ops/mgmt_internal.h"
#include "server/ops/pkcs11.h"

#define PASSWORD_MAX                                                                               \
    4096 /* bytes of a password answer (2.6 USER_PASS_LEN is 4096 with                             \
          * ENABLE_MANAGEMENT, for long tokens) */

/* The request line as 2.6 sends it, into buf. */
static void request_line(const struct mgmt *m, char *buf, size_t cap)
{
    if (m->query == MGMT_QUERY_PASSWORD) {
        snprintf(buf, cap, ">PASSWORD:Need '%s' password", m->query_what);
    } else if (m->query == MGMT_QUERY_NEEDSTR) {
        snprintf(buf, cap, ">NEED-STR:Need '%s' string MSG:%s", m->query_what, m->query_msg);
    } else {
        snprintf(buf, cap, ">NEED-CERTIFICATE:%s", m->query_what);
    }
}

void mgmt_query_start(struct mgmt *m, enum mgmt_query kind, const char *what)
{
    char line[320];

    m->query = kind;
    snprintf(m->query_what, sizeof(m->query_what), "%s", what);
    if (kind == MGMT_QUERY_NONE) {
        return;
    }
    request_line(m, line, sizeof(line));
    for (struct mgmt_client *c = m->clients, *next; c; c = next) {
        next = c->next;
        if (c->is_authed && !c->is_closing) {
            mgmt_reply(c, "%s", line);
        }
    }
}

void mgmt_query_start_str(struct mgmt *m, const char *type, const char *text)
{
    snprintf(m->query_msg, sizeof(m->query_msg), "%s", text);
    mgmt_query_start(m, MGMT_QUERY_NEEDSTR, type);
}

bool mgmt_query_take(struct mgmt *m, char **out)
{
    if (!m->query_answer) {
        return false;
    }
    *out = m->query_answer;
    m->query_answer = NULL;
    return true;
}

void mgmt_query_failed(struct mgmt *m, const char *type)
{
    for (struct mgmt_client *c = m->clients, *next; c; c = next) {
        next = c->next;
        if (c->is_authed && !c->is_closing) {
            mgmt_reply(c, ">PASSWORD:Verification Failed: '%s'", type);
        }
    }
}

void mgmt_query_welcome(struct mgmt_client *c)
{
    char line[320];

    if (c->m->query != MGMT_QUERY_NONE) {
        request_line(c->m, line, sizeof(line));
        mgmt_reply(c, "%s", line);
    }
}

/* The request is answered with text (taken over): it ends for every client. */
static void answered(struct mgmt *m, char *text)
{
    if (m->query_answer) { /* (not taken yet: the first answer stands) */
        mbedtls_platform_zeroize(text, strlen(text));
        free(text);
        return;
    }
    m->query_answer = text;
    m->query = MGMT_QUERY_NONE;
}

/* A `password` or `needstr` answer (label: "password" or "needstr-string", as in 2.6's replies)
 * to the request of kind: refused when no such request is open or its type differs; otherwise
 * a copy of value (at most PASSWORD_MAX - 1 bytes) answers it. */
static void answer_text(struct mgmt_client *c, enum mgmt_query kind, const char *label,
                        const char *type, const char *value)
{
    struct mgmt *m = c->m;
    char *copy;

    if (m->query != kind) {
        mgmt_reply(c, "ERROR: no %s is currently needed at this time", label);
        return;
    }
    if (strcmp(type, m->query_what) != 0) {
        mgmt_reply(c, "ERROR: %s of type '%s' entered, but we need one of type '%s'", label, type,
                   m->query_what);
        return;
    }
    copy = strndup(value, PASSWORD_MAX - 1);
    if (!copy) {
        mgmt_reply(c, "ERROR: out of memory");
        return;
    }
    answered(m, copy);
    mgmt_reply(c, "SUCCESS: '%s' %s entered, but not yet verified", type, label);
}

void mgmt_query_password_cmd(struct mgmt_client *c, const char *cmd, const char *type,
                             const char *value)
{
    /* a server asks for passwords only, never for a username */
    if (strcmp(cmd, "password") != 0) {
        mgmt_reply(c, "ERROR: no %s is currently needed at this time", cmd);
        return;
    }
    answer_text(c, MGMT_QUERY_PASSWORD, "password", type, value);
}

void mgmt_query_cert_cmd(struct mgmt_client *c)
{
    if (c->m->query != MGMT_QUERY_CERT) {
        mgmt_reply(c, "ERROR: The certificate command is not currently available");
        return;
    }
    free(c->block);
    c->block = NULL;
    c->block_len = 0;
    c->is_block_overflow = false;
    c->is_in_cert_block = true;
}

void mgmt_query_cert_line(struct mgmt_client *c, const char *line)
{
    struct mgmt *m = c->m;
    size_t len = strlen(line);
    char *grown, *text;

    if (strcmp(line, "END") != 0) {
        if (c->is_block_overflow) {
            return;
        }
        /* 2.6 joins the lines with "\n" (management_query_multiline_flatten_newline) */
        if (c->block_len + len + 2 > MGMT_BLOCK_MAX ||
            !(grown = realloc(c->block, c->block_len + len + 2))) {
            log_msg(LOG_WARN, "MANAGEMENT: certificate from %s over %d bytes: refused", c->peer,
                    MGMT_BLOCK_MAX);
            c->is_block_overflow = true;
            return;
        }
        c->block = grown;
        if (c->block_len > 0) {
            c->block[c->block_len++] = '\n';
        }
        memcpy(c->block + c->block_len, line, len + 1);
        c->block_len += len;
        return;
    }
    c->is_in_cert_block = false;
    /* an empty block too (2.6 takes it, then fails to read a certificate from it) */
    text = c->block ? c->block : strdup("");
    if (m->query != MGMT_QUERY_CERT || c->is_block_overflow || !text) {
        if (text != c->block) {
            free(text);
        }
        mgmt_reply(c, "ERROR: certificate command failed");
    } else {
        answered(m, text);
        c->block = NULL;
        mgmt_reply(c, "SUCCESS: certificate command succeeded");
    }
    free(c->block);
    c->block = NULL;
    c->block_len = 0;
    c->is_block_overflow = false;
}

void mgmt_query_needstr_cmd(struct mgmt_client *c, const char *type, const char *value)
{
    answer_text(c, MGMT_QUERY_NEEDSTR, "needstr-string", type, value);
}

#define TOKEN_BUSY                                                                                 \
    "ERROR: the PKCS#11 token is in use (a signature, or its PIN being asked): ask again later"

void mgmt_pkcs11_id_count_cmd(struct mgmt_client *c)
{
    int n = pkcs11_id_count();

    if (n < 0) {
        mgmt_reply(c, TOKEN_BUSY);
        return;
    }
    mgmt_reply(c, ">PKCS11ID-COUNT:%d", n);
}

void mgmt_pkcs11_id_get_cmd(struct mgmt_client *c, const char *index)
{
    int i = atoi(index); /* (2.6's atoi: a word that is not a number is 0) */
    char *id = NULL, *b64 = NULL;

    int err = pkcs11_id_get(i, &id, &b64);

    if (err == 0) {
        mgmt_reply(c, ">PKCS11ID-ENTRY:'%d', ID:'%s', BLOB:'%s'", i, id, b64);
    } else if (err == -EBUSY) {
        mgmt_reply(c, TOKEN_BUSY);
    } else {
        mgmt_reply(c, ">PKCS11ID-ENTRY:'%d'", i);
    }
    free(id);
    free(b64);
}
