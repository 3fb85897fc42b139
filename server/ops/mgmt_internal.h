/* server/ops/mgmt_internal.h: what the management interface's files share (mgmt.c: listener,
 * clients, output, log cache; mgmt_cmd.c: the commands, declared at the end). Loop thread only,
 * except the log cache, which the log hook fills from any thread under mgmt.lock. */
#ifndef SERVER_OPS_MGMT_INTERNAL_H
#define SERVER_OPS_MGMT_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "server/log/log.h"
#include "server/ops/mgmt.h"

#define READ_CHUNK 4096
#define MGMT_BLOCK_MAX 65536 /* bytes of one client-auth config block */
#define MGMT_PK_B64_MAX 2048 /* a pk-sig answer: the base64 of an RSA 8192 signature fits */

union mgmt_stream {
    uv_handle_t h;
    uv_stream_t s;
    uv_tcp_t tcp;
    uv_pipe_t pipe;
};

struct mgmt_client {
    struct mgmt_client *next;
    struct mgmt *m;
    union mgmt_stream u;
    char peer[80]; /* for the log: address or "unix" */
    char in[MGMT_LINE_MAX];
    size_t in_len;
    bool is_discarding; /* skipping the rest of an overlong line */
    bool is_authed;     /* past the password (or none asked) */
    int n_tries;
    bool is_log_rt, is_state_rt, is_echo_rt;
    int bytecount_s; /* 0: off */
    int env_filter;  /* env-filter level for >CLIENT:ENV lines (0: all) */
    /* client-auth's config block, being read up to END: the lines so far, "\n"-separated */
    bool is_in_block;
    bool is_block_overflow; /* more than MGMT_BLOCK_MAX bytes: the command fails at END */
    unsigned long block_cid;
    unsigned block_kid;
    char *block;
    size_t block_len;
    uint64_t next_bytecount_ms;
    int version; /* `version N`: the client's management version (2.6: 1 until it says) */
    /* pk-sig / rsa-sig's base64 lines, being read up to END (mgmt_pk.c) */
    bool is_in_pk_block;
    bool is_pk_overflow;
    char pk_b64[MGMT_PK_B64_MAX];
    size_t pk_b64_len;
    bool is_in_cert_block; /* `certificate`'s lines, up to END, go into block (mgmt_query.c) */
    bool is_closing;
    char rbuf[READ_CHUNK];
};

struct log_item {
    int64_t t;
    enum log_level lvl;
    char *text; /* owned */
};

struct mgmt {
    uv_loop_t *loop;
    const struct config *cfg;
    struct mgmt_ops ops;
    union mgmt_stream listener;
    bool is_listener_open;
    uv_async_t log_async; /* new log lines for real-time clients */
    uv_timer_t timer;     /* bytecount */
    bool are_handles_open;
    struct mgmt_client *clients;
    size_t n_clients;
    struct mgmt_client *connecting; /* management-client: the link while its connect runs */
    int client_uid, client_gid;     /* -1: any (management-client-user / -group) */
    /* The log cache: written by any thread through the hook, so under lock. */
    pthread_mutex_t lock;
    struct log_item *cache;
    size_t cache_cap;
    uint64_t n_logged;  /* lines ever added: the next one goes to cache[n_logged % cap] */
    bool is_closed;     /* mgmt_close ran: the hook no longer wakes the loop (under lock) */
    uint64_t n_sent;    /* lines already shown to real-time clients (loop thread) */
    bool is_held;       /* start-up waits for `hold release` */
    bool has_hold_flag; /* `hold` shows it, `hold on|off` sets it (2.6's MF_HOLD) */
    bool has_state;
    int64_t state_t;
    uint32_t state_local;
    uint32_t link_addr;
    uint16_t link_port;
    int verb, mute;
    bool is_pk_wanted;                 /* a >PK_SIGN is out: pk-sig is taken (mgmt_pk_sign) */
    bool is_pk_answering, has_pk_next; /* the next request, asked during an answer */
    char pk_next[MGMT_PK_B64_MAX], pk_next_alg[64];
    enum mgmt_query query; /* what start-up waits for (mgmt_query.c); NONE: nothing */
    char query_what[128];  /* its password type or certificate tag */
    char query_msg[128];   /* MGMT_QUERY_NEEDSTR: the text after MSG: */
    char *query_answer;    /* the answer, until mgmt_query_take hands it over */
};

/* The loop's clock in ms. */
uint64_t mgmt_now_ms(struct mgmt *m);

/* Queue len bytes to c; a client with MGMT_OUT_MAX bytes unread is dropped (and closed). */
void mgmt_send_raw(struct mgmt_client *c, const char *data, size_t len);

/* One line to c, formatted, with "\r\n" added (cut to MGMT_LINE_MAX + 512 bytes). */
void mgmt_reply(struct mgmt_client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* text (len bytes, "\n" line ends) to c with "\r\n" line ends. */
void mgmt_send_text(struct mgmt_client *c, const char *text, size_t len);

/* Close c: unlinked from its mgmt now, freed by the handle's close callback. Idempotent. */
void mgmt_client_close(struct mgmt_client *c);

/* >INFO (and >HOLD while start-up is held): after connecting, or after the password. */
void mgmt_welcome(struct mgmt_client *c);

/* Cache line number seq as "TIME,FLAGS,text" into buf (cap bytes); false once it was pushed out
 * of the cache. Takes m->lock. */
bool mgmt_log_format(struct mgmt *m, uint64_t seq, char *buf, size_t cap);

/* mgmt_cmd.c: the commands (openvpn 2.6 manage.c man_dispatch_command), in 2.6's words. */

/* Handle one line from c (NUL-terminated, at most MGMT_LINE_MAX - 1 bytes, control characters
 * already dropped): the password while one is needed, else a command. c may be closed on
 * return (exit, three wrong passwords, output over MGMT_OUT_MAX). */
void mgmt_cmd_line(struct mgmt_client *c, char *line);

/* mgmt_pk.c: pk-sig and rsa-sig (management-external-key). */

/* The command cmd ("pk-sig" or "rsa-sig"): its lines follow, up to END, while a request is out. */
void mgmt_pk_cmd(struct mgmt_client *c, const char *cmd);

/* A line of that block. */
void mgmt_pk_line(struct mgmt_client *c, const char *line);

/* mgmt_query.c: start-up's questions (management-query-passwords, management-external-cert). */

/* The open request again, for a client that just got its >INFO line (2.6 man_welcome shows the
 * pending special state). */
void mgmt_query_welcome(struct mgmt_client *c);

/* `password TYPE PW` (and `username TYPE NAME`, which a server never asks for). */
void mgmt_query_password_cmd(struct mgmt_client *c, const char *cmd, const char *type,
                             const char *value);

/* `needstr TYPE STRING` (2.6 man_query_need_str). */
void mgmt_query_needstr_cmd(struct mgmt_client *c, const char *type, const char *value);

/* `pkcs11-id-count` and `pkcs11-id-get INDEX` (2.6 man_pkcs11_id_count, man_pkcs11_id_get): the
 * certificates on the tokens of pkcs11-providers (server/ops/pkcs11.h; none without them). */
void mgmt_pkcs11_id_count_cmd(struct mgmt_client *c);
void mgmt_pkcs11_id_get_cmd(struct mgmt_client *c, const char *index);

/* `certificate`: its PEM lines follow, up to END, while the certificate is asked for. */
void mgmt_query_cert_cmd(struct mgmt_client *c);

/* A line of that block. */
void mgmt_query_cert_line(struct mgmt_client *c, const char *line);

/* The CONNECTED state entry as `state` and >STATE print it (2.6 log_entry_print), into buf. */
void mgmt_cmd_state_format(const struct mgmt *m, char *buf, size_t cap);

#endif /* SERVER_OPS_MGMT_INTERNAL_H */
