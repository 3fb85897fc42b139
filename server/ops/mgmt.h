/* server/ops/mgmt.h: the management interface's listener and protocol (openvpn 2.6
 * doc/management-notes.txt, server side).
 *
 * One listener, TCP (`management IP PORT [PW-FILE]`) or a unix socket (`management PATH unix
 * [PW-FILE]`), on a libuv loop the caller owns: the acceptor's (server/control/mgmt_ctl.c), so
 * that commands which read or end sessions run on the thread that owns them, without a lock and
 * without a round trip. Several management clients may be connected at once (openvpn 2.6 takes
 * one); each has its own password state, real-time switches (log, state, echo) and bytecount
 * interval. Output is queued per client up to MGMT_OUT_MAX bytes; a client that does not read
 * and falls further behind is dropped, so it can block neither the others nor the loop.
 *
 * Lines sent end in "\r\n", as 2.6's; commands are read up to "\n", control characters other
 * than the line end are dropped (2.6 manage.c command_line_add). Commands that act on sessions
 * go through struct mgmt_ops; everything else is answered here.
 */
#ifndef SERVER_OPS_MGMT_H
#define SERVER_OPS_MGMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <uv.h>

#define MGMT_VERSION 5          /* openvpn 2.6 manage.h MANAGEMENT_VERSION */
#define MGMT_LINE_MAX 1024      /* a command line, as 2.6's command_line_new(1024) */
#define MGMT_OUT_MAX (1u << 20) /* bytes queued to one client before it is dropped */
#define MGMT_PASSWORD_TRIES 3   /* 2.6 MANAGEMENT_N_PASSWORD_RETRIES */
#define MGMT_MAX_CLIENTS 16     /* connections beyond this are closed at once */

struct config;
struct mgmt;

/* What a command does to the sessions; ctx is passed back. Each runs on the loop's thread. */
struct mgmt_ops {
    void *ctx;
    /* The status text (version 1, 2 or 3) written to out, lines ending in "\n". 0 or -errno. */
    int (*status)(void *ctx, int version, FILE *out);
    /* Clients connected now and the link bytes received and sent by the server so far. */
    void (*load_stats)(void *ctx, uint64_t *n_clients, uint64_t *bytes_in, uint64_t *bytes_out);
    /* End every client with common name cn (2.6: "RESTART" is sent). Returns how many. */
    int (*kill_cn)(void *ctx, const char *cn);
    /* End the client at IPv4 address addr (host order) and port. Returns how many. */
    int (*kill_addr)(void *ctx, uint32_t addr, uint16_t port);
    /* End client cid, sending it kill_msg (NULL: "RESTART"). Whether cid was found. */
    bool (*kill_cid)(void *ctx, unsigned long cid, const char *kill_msg);
    /* Call fn for every connected client with its CID and link byte counters. */
    void (*each_client)(void *ctx,
                        void (*fn)(void *arg, unsigned long cid, uint64_t bytes_in,
                                   uint64_t bytes_out),
                        void *arg);
    /* `hold release` while start-up waits (management-hold): begin serving clients. */
    void (*hold_release)(void *ctx);
    /* management-client-auth: client-auth / client-auth-nt (is_auth, config: the block's lines
     * joined by "\n", NULL for none, borrowed) or client-deny (reason, client_reason may be
     * NULL) for key kid of client cid. Whether it counted (2.6 tls_authenticate_key). */
    bool (*client_auth)(void *ctx, unsigned long cid, unsigned kid, bool is_auth,
                        const char *reason, const char *client_reason, const char *config);
    /* ovpnd-drain (ovpnd's own command): set draining to 1 (new clients are not answered, the
     * connected ones stay) or 0 (serve again), or -1 to leave it; returns whether the server
     * drains now and the clients connected in *n_clients. */
    bool (*drain)(void *ctx, int set, uint64_t *n_clients);
    /* client-pending-auth CID KID EXTRA TIMEOUT (seconds). Whether it was sent. */
    bool (*client_pending_auth)(void *ctx, unsigned long cid, unsigned kid, const char *extra,
                                unsigned timeout_s);
    /* management-external-key: the answer to the >PK_SIGN that is out (b64: its lines joined,
     * borrowed). Whether it was a good signature. */
    bool (*pk_sig)(void *ctx, const char *b64);
};

/* Open the listener of cfg->mgmt on loop (the socket is bound now: call before privileges are
 * dropped; a unix socket is created mode 0660, owned by management-client-user/-group when
 * given) and install the log hook that feeds the log cache. cfg and loop outlive the
 * interface. Main thread, before loop runs. 0 or -errno with a reason in errbuf. */
int mgmt_new(uv_loop_t *loop, const struct config *cfg, const struct mgmt_ops *ops,
             struct mgmt **out, char *errbuf, size_t errbuf_len);

/* Record the CONNECTED state (2.6's server reaches it at "Initialization Sequence
 * Completed"): tun_local is the server's tunnel address (host order), port its UDP port. Loop
 * thread. */
void mgmt_set_connected(struct mgmt *m, uint32_t tun_local, uint16_t port);

/* Whether management-hold still holds start-up (no `hold release` yet). Loop thread. */
bool mgmt_is_held(const struct mgmt *m);

/* Send line (without line end; "\r\n" is added) to every client past its password that wants
 * notifications, e.g. ">CLIENT:ESTABLISHED,0". Loop thread. */
void mgmt_notify(struct mgmt *m, const char *line);

/* A >CLIENT notification to every client past its password: head (e.g.
 * ">CLIENT:CONNECT,0,1"), then ">CLIENT:ENV,n_clients=N" unless n_clients < 0 (2.6
 * man_output_extra_env), then, for clients with an env-filter level above 0, the valid lines
 * of peer_info ("NAME=value\n" lines, NULL for none), then the n_vars "NAME=value" strings of
 * vars that each client's env-filter level shows (2.6 env_filter_match), then
 * ">CLIENT:ENV,END". The lines reach each client together. Loop thread. */
void mgmt_notify_client(struct mgmt *m, const char *head, long n_clients, const char *peer_info,
                        const char *const *vars, size_t n_vars);

/* Whether any client is connected and past its password (so building notifications pays). */
bool mgmt_has_clients(const struct mgmt *m);

/* Close the listener and every client, remove the hook and the unix socket; the handles close
 * on the loop, which must run once more before mgmt_free. Loop thread (or the main thread
 * before the loop ran). */
void mgmt_close(struct mgmt *m);

/* management-up-down (2.6 manage.c management_up_down): ">UPDOWN:<what>" (UP or DOWN), then
 * each of the n_vars "NAME=value" strings as ">UPDOWN:ENV,NAME=value" and ">UPDOWN:ENV,END", to
 * every logged-in management client; nothing without the directive. Loop thread. */
void mgmt_up_down(struct mgmt *m, const char *what, const char *const *vars, size_t n_vars);

/* management-external-key (2.6 manage.c management_query_pk_sig): ask for a signature of the
 * base64 data b64 with algorithm alg (2.6's names: "RSA_PKCS1_PADDING", "ECDSA", ...):
 * ">PK_SIGN:b64,alg" to clients that said `version 3` or more, ">PK_SIGN:b64" for version 2,
 * ">RSA_SIGN:b64" otherwise; the first `pk-sig` (or `rsa-sig`) block ending in END goes to
 * ops->pk_sig. One request at a time. Loop thread. */
void mgmt_pk_sign(struct mgmt *m, const char *b64, const char *alg);

/* The request is given up (timeout): a later pk-sig is refused. m NULL: nothing. Loop thread. */
void mgmt_pk_sign_cancel(struct mgmt *m);

/* What start-up asks the management client for (2.6 manage.c management_query_user_pass,
 * management_query_cert): an encrypted key's password (management-query-passwords) or the
 * server certificate (management-external-cert). */
enum mgmt_query {
    MGMT_QUERY_NONE,
    MGMT_QUERY_PASSWORD, /* ">PASSWORD:Need 'TYPE' password", answered by `password TYPE PW` */
    MGMT_QUERY_CERT,     /* ">NEED-CERTIFICATE:TAG", answered by `certificate`, lines, END */
    MGMT_QUERY_NEEDSTR,  /* ">NEED-STR:Need 'TYPE' string MSG:TEXT", answered by `needstr TYPE S`
                          * (pkcs11-id-management: TYPE pkcs11-id-request) */
};

/* Ask for kind, what being the password's type ("Private Key") or the certificate's TAG (at
 * most 127 bytes are kept): the request goes to every client past its password now and to each
 * one that gets there later (after its >INFO line), until the first good answer, which
 * mgmt_query_take then returns. One request at a time: a new one replaces the last. Loop
 * thread. */
void mgmt_query_start(struct mgmt *m, enum mgmt_query kind, const char *what);

/* mgmt_query_start(m, MGMT_QUERY_NEEDSTR, type) with text after MSG: (at most 127 bytes). */
void mgmt_query_start_str(struct mgmt *m, const char *type, const char *text);

/* The answer, once one came: true with *out the password or the certificate's PEM lines joined
 * by "\n" (malloc'd, NUL-terminated; the caller wipes and frees it), and the request is over;
 * false while it is still out (or none is). Loop thread. */
bool mgmt_query_take(struct mgmt *m, char **out);

/* The password of type was wrong: ">PASSWORD:Verification Failed: 'TYPE'" to every client
 * past its password (2.6 manage.c management_auth_failure). Loop thread. */
void mgmt_query_failed(struct mgmt *m, const char *type);

/* Free m after mgmt_close and the loop's last run. NULL is a no-op. */
void mgmt_free(struct mgmt *m);

/* A reload (SIGHUP) set verb and mute: what the `verb` and `mute` commands show from now on. m
 * NULL: nothing. Acceptor thread (the management interface's loop). */
void mgmt_set_verb(struct mgmt *m, int verb, int mute);

#endif /* SERVER_OPS_MGMT_H */
