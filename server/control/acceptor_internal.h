/* server/control/acceptor_internal.h: what the acceptor's source files share: its session
 * structures and the helpers one file offers the other. Acceptor thread only, like everything in
 * them, except a TLS session while a handshake step runs on the thread pool (tls_step.c). */
#ifndef SERVER_CONTROL_ACCEPTOR_INTERNAL_H
#define SERVER_CONTROL_ACCEPTOR_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <uv.h>

#include "proto/key_method.h"
#include "proto/packet.h"
#include "proto/packet_id.h"
#include "proto/peer_info.h"
#include "proto/reliable.h"
#include "proto/tls_crypt_v2.h"
#include "proto/tls_session.h"
#include "proto/tls_wrap.h"
#include "server/addr/routes.h"
#include "server/config/config.h"
#include "server/config/topology.h"
#include "server/control/acceptor.h"
#include "server/control/connect_freq.h"
#include "server/control/crl.h"
#include "server/control/block_cache.h"
#include "server/control/timer_heap.h"
#include "server/log/log.h"
#include "server/ops/heap_trim.h"
#include "server/ops/metrics.h"
#include "server/data/udp.h"
#include "server/thread/msgq.h"
#include "server/config/ccd.h"
#include "server/data/peer.h"
#include "server/thread/mailbox.h"
#include "server/thread/msg.h"
#include "server/thread/peer_slot.h"
#include "server/hooks/hooks.h"
#include "server/hooks/script.h"
#include "server/ops/status.h"
#include "server/hooks/auth_token.h"
#include "server/ops/pkcs11.h"

#define ACCEPTOR_TICK_MS 200
#define IPV4_UDP_HDR 28
#define CTL_BUF_LEN 2048
#define ACCEPTOR_POOL_MSGS 256 /* P_DATA_V2 datagrams handed to workers and not yet consumed */
#define APP_BUF_LEN 16384      /* one full TLS record */
#define CLOSE_LINGER_MS 5000   /* keep a failed/exiting session to finish ACKs, as 2.6 does */
#define PUSH_REPEAT_IGNORE_MS 30000
#define HOOKS_SHUTDOWN_GRACE_MS 5000 /* client-disconnect scripts at shutdown */
#define EKM_LABEL_DATA "EXPORTER-OpenVPN-datakeys"

enum cs_state {
    CS_TLS,     /* TLS handshake, then the client's key-method-2 message */
    CS_ACTIVE,  /* keys installed in the worker */
    CS_CLOSING, /* AUTH_FAILED sent or EXIT received: linger, then free */
};

enum ks_state {
    KS_TLS,    /* TLS handshake, then the client's key-method-2 message */
    KS_ACTIVE, /* key-method 2 done, data keys handed to the worker */
};

/* One TLS negotiation (key_id) of a session: its own reliability state and TLS session. A
 * session has at most two: the primary and the one being negotiated or the lame duck. */
struct auth_wait;      /* admit.c: a key state whose username/password is being checked */
struct acc_status_job; /* status_writer.c: the status file's copy and its write */
struct tls_job;        /* tls_step.c: a handshake step running on the thread pool */

struct key_state {
    bool in_use;
    uint8_t key_id;
    enum ks_state state;
    bool has_sent_key_method2;
    uint64_t start_ms;
    uint64_t tls_us;     /* time its handshake steps took on the TLS threads */
    bool is_tls_working; /* the first handshake's TLS work started and has not finished */
    struct reliable rel;
    /* Heap-allocated: a handshake step running on the thread pool keeps it alive after the key
     * state is cleared. While job is set, tls belongs to that step: the acceptor neither reads
     * nor writes it, and ciphertext that arrives meanwhile waits in held. */
    struct tls_session *tls;
    struct tls_job *job;
    uint8_t *held;
    size_t held_len;
    size_t held_cap;
    struct auth_wait *auth_wait; /* non-NULL while the client's credentials are checked */
    unsigned kid;                /* the management interface's key ID (KID) of this key */
    /* client-pending-auth: the checks may run until then (ms), past hand-window; 0: not set */
    uint64_t auth_deadline_ms;
};

/* Who the client is, as its handshake and authentication told (set once it is authenticated,
 * before install, from the first negotiation). */
struct cs_client {
    struct peer_info pi;
    char cn[PEER_CN_MAX];
    bool has_cn;             /* cn names the client: its certificate's common name, or its
                              * username with username-as-common-name; false for a client
                              * without either ("UNDEF", which 2.6 gives no common name) */
    char *username;          /* the verified username, or NULL */
    char *orig_username;     /* the one the client authenticated with, when override-username
                              * replaced it (admit.c); also accepted at renegotiations */
    char cipher_name[32];    /* data cipher chosen for the client */
    uint8_t cert_sha256[32]; /* of the client certificate */
    /* what a CRL names a certificate by (RFC 5280 5.3.3): its serial number and issuer, kept to
     * check connected clients against a CRL read later (reload.c); n_serial 0: no certificate */
    uint8_t serial[32];
    size_t n_serial;
    uint8_t issuer_sha256[32]; /* of the issuer name's DER */
};

/* The control channel's tls-auth / tls-crypt wrapping of this session (proto/tls_wrap.h). */
struct cs_wrap {
    uint32_t tx_id;
    uint32_t tx_time;
    struct packet_id_rx rx;
    /* tls-crypt-v2: the client's own key Kc, from its authenticated WKc; the control channel is
     * wrapped with it instead of the acceptor's wrap (acc_cs_wrap) */
    struct tls_wrap_ctx kc;
    bool has_kc;
    struct acc_v2_verify *v2_verify; /* tls-crypt-v2-verify runs: no TLS work until it ends */
    /* dyn-tls-crypt (2.6): once the first key is installed for a client that announced it
     * (install.c), its renegotiations (key_id > 0) are tls-crypt wrapped with dyn, which has
     * its own packet ids both ways (receive.c, session.c) */
    struct tls_wrap_ctx dyn;
    bool has_dyn;
    uint32_t dyn_tx_id;
    uint32_t dyn_tx_time;
    struct packet_id_rx dyn_rx;
};

/* Renegotiation (renegotiate.c). */
struct cs_reneg {
    uint64_t next_ms;
    /* tran-window: the data key the running or last renegotiation replaces, retired in the
     * worker at old_key_expire_ms (renegotiate.c retire_old_key) */
    bool has_old_key;
    uint8_t old_key_id;
    uint64_t old_key_expire_ms;
};

/* The push reply (push_reply.c). */
struct cs_push {
    uint64_t sent_ms;
    bool is_sent;
    bool is_requested;
    const char *comp; /* compression option pushed to this client, or NULL */
};

/* Scripts and plugins (client_hooks.c); all NULL/false when none is configured. */
struct cs_hooks {
    struct script_env *tls_env; /* the certificate chain's variables (X509_N_*, tls_id_N ...) */
    struct script_env *env;     /* the client's variables, as client-connect gets them */
    char **learned;             /* addresses learn-address accepted, for its "delete" */
    size_t n_learned;
    bool is_disconnect_done; /* client-disconnect (and learn-address deletes) started */
    bool is_vaddr_unlearned; /* learn-address refused its IPv4 address: nothing is routed to it */
    bool needs_reassign;     /* client-connect output changed its addresses or iroutes */
    struct acc_hook_wait *cr_wait;       /* client-crresponse running */
    struct acceptor *cr_acceptor;        /* for its answer */
    struct plugin_client *plugin_client; /* its plugins' per-client contexts (a reference; NULL
                                          * when no plugin has them), from its creation */
};

/* dev tap: the MACs the client has learned, as its worker reported them (tap_macs.c). */
struct cs_macs {
    struct status_mac *list; /* n of cap */
    size_t n, cap;
    struct acc_mac_wait *waits; /* learn-address runs about its MACs, not finished */
};

/* inactive and session-timeout for a connected client (limits.c), from the config or its
 * client-config-dir file. */
struct cs_limits {
    int inactive_s;          /* 0: off */
    uint64_t inactive_bytes; /* fewer tunnel bytes than this in inactive_s: inactive */
    uint64_t session_end_ms; /* session-timeout: when it ends (acc_now_ms); 0: never */
    uint64_t window_end_ms;  /* inactive with bytes: the end of the window being counted */
    uint64_t window_mark;    /* peer->tun_bytes when it began */
    uint64_t stale_check_ms; /* stale-routes-check: its next look (acc_now_ms) */
    bool is_unrouted;        /* stale-routes-check took its addresses' routes away */
};

/* auth-gen-token (token.c). */
struct cs_token {
    struct auth_token_session at; /* this session's tokens */
    uint64_t renew_ms;            /* when the renewal timer next makes a token */
};

struct ctl_session {
    struct ctl_session *hnext;
    /* its next deadline in sessions.timers (acceptor.c acc_cs_touch): the tick looks at a
     * session only when something of it is due */
    struct timer_heap_entry timer;
    /* in sessions.by_cn once it has a peer (acc_install_prepare), when it has a common name */
    struct ctl_session *cn_next;
    struct ctl_session **cn_pprev; /* what points at it there (O(1) unlink: with duplicate-cn,
                                    * thousands share one name); NULL when not in the index */
    unsigned long cid;             /* the management interface's client ID (CID), never reused */
    struct ctl_session *cid_next;  /* in sessions.by_cid from creation to free */
    unsigned next_kid;             /* the KID of this session's next key */
    bool is_mgmt_asked; /* >CLIENT:CONNECT went out: DISCONNECT and ADDRESS follow (2.6) */
    union udp_addr remote;
    struct udp_local local; /* multihome: the address its datagrams arrive on, replies' source */
    uint64_t link;          /* the TCP connection it came on (server/data/tcp.h), 0 over UDP */
    uint8_t own_sid[SESSION_ID_LEN];
    uint8_t peer_sid[SESSION_ID_LEN];
    struct key_state ks[2];
    int primary; /* index into ks of the newest active (or, at first, the only) key_state */
    enum cs_state state;
    uint64_t created_ms;
    uint64_t close_at_ms;
    /* its first negotiation is under way (counted in n_in_flight until the client is connected
     * or the session closes); the client gives up at hs_deadline_ms (admission_decide_deadline) */
    bool is_in_flight;
    uint64_t hs_deadline_ms;
    bool is_installed;     /* the worker confirmed MSG_INSTALL */
    struct ccd *ccd;       /* its client-config-dir file, read at connect; NULL if none */
    bool is_dead;          /* freed at the next sweep */
    struct peer *peer;     /* set once the client is authenticated */
    bool is_peer_live;     /* installed in a worker and not reported gone */
    bool is_connected;     /* fully connected: client-disconnect is due when it goes */
    size_t takeover_index; /* pool entry of this client's previous session here, or SIZE_MAX */
    struct log_ratelimit rl;
    bool is_float_refusal_logged; /* a float onto another client's address was refused */
    struct cs_client client;
    struct cs_wrap wrap;
    struct cs_reneg reneg;
    struct cs_push push;
    struct cs_hooks hooks;
    struct cs_macs macs;
    struct cs_token token;
    struct cs_limits limits;
};

/* What a feature does when a session ends, as libuv's close callbacks: on_close when the
 * session starts closing (the client is gone: its linger for ACKs begins), on_free just before it
 * is freed. Either may be NULL. session.c calls them in the order of acc_cleanups (acceptor.c);
 * it names no feature itself. */
struct acc_cleanup {
    void (*on_close)(struct acceptor *a, struct ctl_session *cs);
    void (*on_free)(struct acceptor *a, struct ctl_session *cs);
};

struct acceptor_stats {
    uint64_t drop_short, drop_wrap, drop_replay, drop_malformed, drop_cookie, drop_no_session,
        drop_window, drop_handshake_timeout, drop_connect_freq, drop_connect_freq_initial,
        handshakes_ok, handshakes_failed, auth_failed,
        drop_wkc,        /* tls-crypt-v2: WKc missing, malformed, not ours, expired; no Kc */
        drop_v2_refused, /* tls-crypt-v2-verify refused the client key */
        drop_handover,   /* P_DATA_V2 or V1 for a worker that is ACCEPTOR_POOL_MSGS behind */
        drop_busy,       /* hard resets left unanswered: the handshakes in flight at the bound */
        drop_draining,   /* new sessions not answered while draining (ovpnd-drain on) */
        drop_too_late,   /* handshakes dropped before a TLS step that would end past the
                          * client's hand-window (admission_decide_too_late) */
        tls_started,     /* first TLS handshakes that got TLS work (their first step) */
        tls_done;        /* of those, whose TLS handshake finished (its work was not lost) */
};

/* One TLS configuration (certificate, key, CA, CRL) with a count of the TLS sessions built on
 * it: a reload (reload.c) makes a new one for the handshakes that follow, and the one it replaces
 * lives until its last session is cleared. */
struct acc_tls_conf {
    struct tls_server_conf conf; /* first: a session's conf pointer is cast back */
    size_t n_sessions;
    struct acc_tls_conf *next_retired;
};

/* The control channel's crypto: wrapping, randomness, the TLS configuration and the cookie key. */
struct acc_crypto {
    struct tls_wrap_ctx wrap;          /* tls-auth / tls-crypt; NONE with tls-crypt-v2 */
    uint8_t wrap_key2[STATIC_KEY_LEN]; /* its key file, for dyn-tls-crypt (zero with NONE) */
    bool is_tls_crypt_v2;              /* tls-crypt-v2: its clients wrap with their own keys */
    struct tls_crypt_v2_server_key v2_key;
    mbedtls_entropy_context entropy;
    mbedtls_ctr_drbg_context drbg;
    struct acc_tls_conf *tls;     /* new sessions are built on this one */
    struct acc_tls_conf *retired; /* replaced by a reload, freed once without sessions */
    /* Read-locked by every handshake step on the thread pool, write-locked to replace the CRL
     * in tls (writer-preferring, so a stream of handshakes cannot starve a CRL reload). */
    pthread_rwlock_t tls_conf_lock;
    bool has_tls_conf_lock;
    size_t n_tls_jobs;  /* handshake steps queued or running */
    long n_tls_threads; /* the thread pool's size (UV_THREADPOOL_SIZE) */
    uint64_t step_us;   /* a handshake step's average duration on the pool (moving average) */
    uint64_t hs_us;     /* the TLS threads' time for one first handshake (moving average) */
    struct crl_watch crl;
    uint8_t cookie_key[32];
};

/* What server/hooks does for the acceptor: credentials, tokens, scripts and plugins. */
struct acc_checks {
    struct auth *auth;            /* username/password checks (auth-user-pass-verify) */
    struct auth_token_ctx token;  /* auth-gen-token */
    struct hooks *hooks;          /* tls-verify, client-connect, client-disconnect, learn-address */
    struct script_env global_env; /* what every script and plugin call gets (hook_env_global) */
};

/* The sessions (session.c) and the clients among them. */
struct acc_sessions {
    struct ctl_session **table; /* by the client's address and port (acc_addr_hash) */
    /* the sessions with a peer by common name, table_size buckets (acc_cn_index_add): what
     * duplicate-cn off compares at each connect */
    struct ctl_session **by_cn;
    /* every session by its CID, table_size buckets (CIDs are sequential: a chain is about one
     * long): what management commands naming a CID look up (acc_mgmt_find_cid) */
    struct ctl_session **by_cid;
    size_t table_size; /* a power of two */
    size_t n_sessions;
    size_t n_clients;
    /* first negotiations under way, from the session's creation until the client is connected
     * or the session closes (ctl_session is_in_flight), and their bound
     * (admission_decide.h): new clients' resets are answered only below it */
    size_t n_in_flight;
    size_t max_in_flight;
    long configured_in_flight; /* OVPND_HANDSHAKES_IN_FLIGHT, 0: the measured default */
    uint64_t hs_rate;          /* first handshakes a second (admission_decide_rate) */
    uint64_t connected_mark;   /* stats.handshakes_ok at the last update of hs_rate */
    uint64_t timeouts_mark;    /* handshake timeouts and too-late drops then */
    uint64_t next_rate_ms;     /* the next update (acc_now_ms) */
    struct peer_slots slots;   /* peer_ids in use */
    struct peer **by_peer_id;  /* the peer holding each slot of slots, or NULL (acc_peer_by_id) */
    unsigned long next_cid;    /* the CID of the next session */
    /* every session with something due (a retransmission, hand-window, reneg-sec, tran-window,
     * the linger's end, inactive, session-timeout ...), by its earliest deadline: room for
     * every session is reserved when it is made (acc_session_create) */
    struct timer_heap timers;
};

/* A config a reload put in force (reload.c): a shallow copy of the start-up config whose
 * reloadable settings come from the file read at the reload and belong to it alone; the other
 * pointers are the start-up config's. Kept until the acceptor is freed, since scripts and
 * checks that started before a later reload may still read it. */
struct acc_overlay {
    struct config cfg;
    struct acc_overlay *next;
};

/* management-external-key (pk_sign.c): handshakes waiting for the management client's
 * signature, in order; one request is out at a time. */
#define PK_SIGN_TIMEOUT_MS 5000 /* an unanswered request fails its handshake after this */
struct acc_pk_wait {
    unsigned long cid; /* the session's CID and its key's KID */
    unsigned kid;
};
struct acc_pk_sign {
    struct acc_pk_wait *q; /* not yet sent, oldest first */
    size_t n, cap;
    bool is_out; /* out is waiting for its answer since sent_ms */
    struct acc_pk_wait out;
    uint64_t sent_ms;
};

/* pkcs11-providers (pk_token.c): the server key on a PKCS#11 token. Its signatures are made on
 * a thread of their own, one at a time in order, so that a slow token holds neither the
 * acceptor nor a TLS thread: a handshake waits for its signature as for management-external-key
 * (proto/pk_external.h). */
struct acc_token_job; /* pk_token.c: one signature asked of the token */
struct acc_pk_token {
    struct acceptor *a;     /* the acceptor this is part of */
    struct pkcs11_key *key; /* NULL: no token */
    bool is_ec;             /* the certificate's key is EC (else RSA) */
    char *cert_pem;         /* the certificate read from the token at start-up, for reloads */
    pthread_t thread;
    bool has_thread;
    pthread_mutex_t lock; /* guards the queue and is_stopping */
    pthread_cond_t cond;
    struct acc_token_job *head, *tail; /* waiting for the token thread, oldest first */
    bool is_stopping;
    /* pkcs11-pin-cache N: the log-in ran out and the token thread waits (on cond) for the PIN
     * the management client gives (under lock: pin_type, pin, is_pin_given) */
    char pin_type[300]; /* "LABEL token" */
    char *pin;          /* the answer (NULL: none will come) */
    bool is_pin_given;
    bool is_pin_asked; /* acceptor thread: the request is out on the management interface */
};

/* What start-up got from the management client (mgmt_startup.c), for the reloads after it. */
struct acc_mgmt_startup {
    bool is_waiting;         /* start-up runs the loop for an answer: `hold release` only ends
                              * that wait (the UDP socket is not set up yet) */
    int signum;              /* SIGINT or SIGTERM while waiting: start-up stops; else 0 */
    uv_signal_t sigs[5];     /* the signals caught while waiting */
    uv_timer_t notify_timer; /* systemd told of the wait every NOTIFY_WAIT_EVERY_MS */
    const char *waiting_for; /* what the wait is for (notify_waiting), NULL between waits */
    char *cert;              /* management-external-cert: the PEM text given, NULL without */
    bool has_key_sha256;     /* management-query-passwords unlocked the key: */
    uint8_t key_sha256[32];  /*   the SHA-256 of its encrypted text */
};

struct acceptor {
    const struct acceptor_env *env; /* what the server gave it (acceptor.h) */
    /* the config in force: env->cfg, or after a reload the newest overlay's (reload.c) */
    struct config *cfg;
    struct acc_overlay *overlays; /* newest first */
    uv_loop_t loop;
    uv_thread_t thread;
    uv_async_t async; /* wakes the loop for what arrives in its mailbox box */
    int fd;
    struct udp_local rx_local; /* multihome: where the datagram being handled arrived, else
                                * family 0 */
    /* the time in the tls-auth / tls-crypt packet_id of the control packet being handled (the
     * client's session start, admission_decide_deadline); 0 when unknown */
    uint32_t rx_wrap_time;
    uv_poll_t poll;
    uv_timer_t tick;
    uv_timer_t status_timer;
    uv_timer_t persist_timer; /* ifconfig-pool-persist SECONDS */
    int status_fd;            /* open status file when privileges are dropped, else -1 */
    int status_err;           /* the status file's last write error (-errno) logged, or 0 */
    bool is_status_off;       /* the status file could not be opened before a chroot: not written */
    int persist_err;          /* the ifconfig-pool-persist file's last write error logged, or 0 */
    struct acc_status_job *status_job; /* the status file's copy and writer (status_writer.c) */
    struct acc_crypto crypto;
    struct acc_checks checks;
    struct acc_sessions sessions;
    struct connect_freq cf;                 /* connect-freq */
    struct connect_freq_initial cf_initial; /* connect-freq-initial */
    struct heap_trim heap_trim;             /* free heap back to the kernel after clients leave */
    /* blocks above M_MMAP_THRESHOLD kept for the next connect or control message
     * (block_cache.h): key-method-2 messages, and the TLS record buffers that sessions release
     * and take again through tls_bufs (session.c) */
    struct block_cache km2_blocks, tls_in_blocks, tls_out_blocks;
    struct tls_buf_hooks tls_bufs;
    struct acceptor_stats stats;
    struct log_ratelimit rl;
    struct msg_pool pool; /* P_DATA_V2 handed to workers (steering off); cleared by acceptor_free */
    char options_string[KEY_METHOD2_OPTIONS_MAX];
    const struct acc_cleanup *cleanups; /* n_cleanups of them (acceptor.c acc_cleanups) */
    size_t n_cleanups;
    struct mgmt *mgmt; /* the management interface (mgmt_ctl.c), NULL without `management` */
    struct acc_pk_sign pk_sign;           /* management-external-key (pk_sign.c) */
    struct acc_pk_token pk_token;         /* pkcs11-providers (pk_token.c) */
    struct acc_mgmt_startup mgmt_startup; /* management-query-passwords / -external-cert */
    struct script_env updown_env;         /* management-up-down: the UP/DOWN environment */
    struct metrics *metrics;   /* the Prometheus endpoint (metrics_ctl.c), NULL without one */
    struct metrics_control mx; /* what it shows of this thread: handshakes, auth, renegotiations */
    uint64_t next_notify_ms;   /* the next STATUS= for systemd (metrics_ctl.c) */
    size_t n_clients_notified; /* the client count that STATUS= said last */
    uint64_t next_watchdog_ms; /* the next WATCHDOG=1 */
    bool is_stopping;
    bool is_draining;         /* ovpnd-drain on (mgmt_ctl.c): no new sessions; /health says 503 */
    bool are_workers_stopped; /* set by acceptor_free: post nothing to workers any more */
    uint8_t rx_buf[CTL_BUF_LEN];
    uint8_t plain_buf[CTL_BUF_LEN];
    uint8_t app_buf[APP_BUF_LEN];
};

/* The acceptor loop's clock, in ms. */
uint64_t acc_now_ms(struct acceptor *a);

/* Something of cs changed (a packet, a message sent or queued, a state, a deadline): the next
 * tick looks at it, as the tick used to look at every session, and works out when it is due
 * next. Every change that can bring a deadline of cs forward calls this (or acc_flush, which
 * does); O(log n) in the number of sessions. Acceptor thread. */
void acc_cs_touch(struct acceptor *a, struct ctl_session *cs);

/* acc_cs_touch for every session (a reload may change hand-window, reneg-sec and the rest). */
void acc_touch_all(struct acceptor *a);

/* Log a line about one client: prefixed with its CN and address; warnings rate-limited per
 * session. */
void acc_cs_log(struct acceptor *a, struct ctl_session *cs, enum log_level lvl, const char *fmt,
                ...) __attribute__((format(printf, 4, 5)));

/* The key state whose TLS session carries control messages now. */
struct key_state *acc_primary_ks(struct ctl_session *cs);

/* Free ks's TLS session and reliability state; it can be initialised again. */
void acc_ks_clear(struct key_state *ks);

/* Queue one control-channel message (text + NUL, one TLS record) on the primary key state. */
void acc_send_message(struct acceptor *a, struct ctl_session *cs, const char *text);

/* The same on ks, which must be in use with its TLS handshake done (else it is logged and
 * dropped). */
void acc_send_message_on(struct acceptor *a, struct ctl_session *cs, struct key_state *ks,
                         const char *text);

/* A renegotiation of cs (ks, not the primary key state) failed or did not finish: why goes to the
 * log. The session ends: ks is cleared, the client is told RESTART on the primary key state (a
 * client that never started the new one reads it there; 2.6 clients read only their newest key
 * state, and learn of it from their ping-restart) and cs closes. 2.6 instead keeps a UDP client
 * on its old key until tran-window runs out (ssl.c tls_multi_process: no hard error while an
 * older key is active); a client that skips or fails renegotiations would never be checked
 * again. */
void acc_reneg_failed(struct acceptor *a, struct ctl_session *cs, struct key_state *ks,
                      const char *why);

/* The peer that holds peer_id (the one a hand-over gave it to), or NULL: O(1), from the index
 * acc_pick_peer_slot, acc_peer_slot_hand_over and acc_release_peer_slot keep. A peer whose
 * session is gone (ctl NULL) may still be returned until its worker lets it go. */
struct peer *acc_peer_by_id(struct acceptor *a, uint32_t peer_id);

/* Close cs: ask its worker to drop the peer, keep the session linger_ms for ACKs, then free. */
void acc_cs_close(struct acceptor *a, struct ctl_session *cs, uint64_t linger_ms);

/* Whether two authenticated sessions are the same client: the same client certificate (or
 * none on both), the same common name (both with one: see has_cn) and the same verified
 * username (both NULL: none was checked); without a common name, the same non-empty username. The
 * identity duplicate-cn uses is the common name alone (install.c). */
bool acc_same_client(const struct ctl_session *x, const struct ctl_session *y);

/* Close the other sessions at keep's address and port that keep replaces: those not yet
 * authenticated (one address and port is one client's flow at a time, and a new handshake
 * from it means the old one was given up), and, unless only_pending, the authenticated ones
 * of the same client (acc_same_client; keep must be authenticated then). Another client's
 * authenticated session there stays: an address and port proves nothing about who sends from
 * it (a NAT can hand it to another client; anyone on the path can use it), so only the same
 * credentials replace a session. A replaced one is the same client's previous session: it
 * leaves keep its pool entry (keep->takeover_index) and, if live in a worker, is returned in
 * *prev (may be NULL) so that keep can take over its peer-id as well. Returns how many of the
 * closed ones held a client slot (they count until the workers let go). */
size_t acc_close_others_at(struct acceptor *a, struct ctl_session *keep, bool only_pending,
                           struct peer **prev);

/* Give prev's peer-id and worker to p (the same client's new session, installed after prev's
 * removal in the same worker queue), and withdraw prev's routes now; prev's later release
 * leaves the peer-id alone. 2.6 keeps a client's peer-id across its sessions from one address
 * (one multi_instance), and a 2.6 client whose new session came from a server reset keeps
 * sending with it. */
void acc_peer_slot_hand_over(struct acceptor *a, struct peer *prev, struct peer *p);

/* The client's key-method-2 message arrived on ks (admit.c): the first one
 * authenticates the client and installs it in a worker; later ones renegotiate its keys. */
void acc_handle_key_method2(struct acceptor *a, struct ctl_session *cs, struct key_state *ks,
                            const uint8_t *msg, size_t len);

/* Drop what ks's pending username/password check holds (admit.c); its result is
 * never used. No-op when none is pending. */
void acc_auth_abort(struct key_state *ks);

/* ks's username/password check did not finish within hand-window (admit.c): abandon it
 * and refuse the client with AUTH_FAILED. */
void acc_auth_timeout(struct acceptor *a, struct ctl_session *cs, struct key_state *ks);

/* Send cs its PUSH_REPLY (push_reply.c): the configured push lines, then 2.6's global and
 * per-client options, split with push-continuation when long. */
void acc_send_push_reply(struct acceptor *a, struct ctl_session *cs);

/* The second word of the `ifconfig` pushed to cs's client (assign.c): the netmask with
 * topology subnet, the server end with net30 (the block's +1) and p2p (the server's address), or
 * the client-config-dir ifconfig-push's second word. 0 when cs has no address yet. */
uint32_t acc_ifconfig_peer(struct acceptor *a, const struct ctl_session *cs);

/* Feed ciphertext from the peer to ks's TLS session, or hold it while a handshake step runs
 * (tls_step.c). Returns 0 or -PE_NOSPACE (more than the TLS session's limit pending). */
int acc_tls_feed(struct key_state *ks, const uint8_t *data, size_t len);

/* Run one handshake step of ks on the thread pool (tls_step.c); acc_tls_stepped gets its
 * result on the acceptor thread. No-op while a step of ks is already running: the held
 * ciphertext gets its own step when that one ends. Runs the step inline when the thread pool
 * refuses work. */
void acc_tls_step(struct acceptor *a, struct ctl_session *cs, struct key_state *ks);

/* The end of a handshake step of ks (tls_step.c): ret and err as tls_session_handshake gives
 * them. ks is in use and its step is over. */
void acc_tls_stepped(struct acceptor *a, struct ctl_session *cs, struct key_state *ks, int ret,
                     const char *err);

/* Free ks's TLS session (tls_step.c), or hand it to its running step to free when done. */
void acc_tls_release(struct key_state *ks);

/* ---- functions one acceptor file offers the others, by file ---- */

/* session.c */

/* Bucket of address s in a session table of size buckets (a power of two). */
size_t acc_addr_hash(const union udp_addr *s, size_t size);

/* The live session at address from on TCP link (0: UDP), whatever its session id, or NULL. */
struct ctl_session *acc_table_find(struct acceptor *a, const union udp_addr *from, uint64_t link);

/* The session at from whose client session id is sid, or NULL. A client that starts a new
 * session keeps its old one until the new one is authenticated, so an address can have two. */
struct ctl_session *acc_table_find_sid(struct acceptor *a, const union udp_addr *from,
                                       uint64_t link, const uint8_t sid[SESSION_ID_LEN]);

/* Add cs to the session table (and to n_sessions). */
void acc_table_insert(struct acceptor *a, struct ctl_session *cs);

/* Take cs out of the session table (and n_sessions); no-op when it is not there. */
void acc_table_unlink(struct acceptor *a, struct ctl_session *cs);

/* The session with CID cid, whatever its state (closing or dead too), or NULL: sessions are in
 * sessions.by_cid from acc_session_create to acc_cs_free. O(1). */
struct ctl_session *acc_find_cid(struct acceptor *a, unsigned long cid);

/* Bucket of common name cn in a table of size buckets (a power of two). */
size_t acc_cn_hash(const char *cn, size_t size);

/* cs has its peer now: put it in sessions.by_cn under its common name (none without one, see
 * cs_client has_cn); acc_cs_free takes it out. */
void acc_cn_index_add(struct acceptor *a, struct ctl_session *cs);

/* cs's common name becomes cn (override-username with username-as-common-name): in
 * sessions.by_cn, in cs->client and in its peer's copy. Before the peer is installed. */
void acc_cn_rename(struct acceptor *a, struct ctl_session *cs, const char *cn);

/* Build, wrap (tls-auth / tls-crypt) and send one control packet of cs: opcode on key_id with
 * acks and, for a reliable packet, message_id and payload. 0, or the build error (logged); a
 * failed sendto is only logged. */
int acc_send_control(struct acceptor *a, struct ctl_session *cs, uint8_t key_id, uint8_t opcode,
                     const struct control_acks *acks, uint32_t message_id, const uint8_t *payload,
                     size_t payload_len);

/* Move pending TLS output of ks into reliable packets and send what is due, with ACKs. */
void acc_flush_ks(struct acceptor *a, struct ctl_session *cs, struct key_state *ks);

/* acc_flush_ks for each key state of cs in use. */
void acc_flush(struct acceptor *a, struct ctl_session *cs);

/* A zeroed struct key_method2 for one handshake, kept from an earlier one when it can
 * (block_cache.h): the caller gives it back with acc_km2_give. NULL if out of memory. */
struct key_method2 *acc_km2_take(struct acceptor *a);

/* Wipe km (pre_master, randoms, a password) and keep it for the next handshake. NULL is a no-op.
 */
void acc_km2_give(struct acceptor *a, struct key_method2 *km);

/* Set up the kept blocks and the record-buffer hooks every key state's TLS session gets (none
 * kept yet). acceptor_new, before the loop runs. */
void acc_blocks_init(struct acceptor *a);

/* The acceptor's tick: free the kept blocks once connects and control messages have stopped. */
void acc_blocks_tick(struct acceptor *a, uint64_t now);

/* Free every kept block (acceptor_free, once every session is freed). */
void acc_blocks_clear(struct acceptor *a);

/* Start ks afresh for key_id: a new TLS session and reliability state whose first message id
 * is first_id each way. 0 or -ENOMEM. */
int acc_ks_init(struct acceptor *a, struct key_state *ks, uint8_t key_id, uint32_t first_id);

/* Free p with its data keys (no worker uses it any more). */
void acc_free_peer(struct peer *p);

/* Free cs now: out of the table, its key states, client-config-dir file, hook and token
 * state; its peer too unless still live in a worker (freed when MSG_GONE comes). */
void acc_cs_free(struct acceptor *a, struct ctl_session *cs);

/* At the tick: once a second, the handshake rate and from it the bound on handshakes in flight
 * (admission_decide.h). O(1). */
void acc_admission_tick(struct acceptor *a, uint64_t now);

/* cs's first negotiation is no longer in flight (the client is connected, or the session
 * closes): one less counted against the bound (admission_decide.h). No-op when it was not. */
void acc_hs_landed(struct acceptor *a, struct ctl_session *cs);

/* A new session for a client reset whose cookie verified (pkt, from; on TCP link, else 0):
 * session ids from pkt, key_id 0 in use, in the table, its first handshake in flight (its
 * deadline from a->rx_wrap_time, admission_decide_deadline). NULL when out of memory. */
struct ctl_session *acc_session_create(struct acceptor *a, const struct control_packet *pkt,
                                       const union udp_addr *from, uint64_t link);

/* The live sessions other than cs at address `to` (one in its handshake included: it too is
 * another client until it says otherwise): how many (*n_other), how many of them are cs's client
 * (*n_same, is_same_client), and the first that is not, or NULL. A closing session no longer
 * counts: its peer is being removed from its worker. An address can hold several (a restarted
 * client's old and new session, another client's behind the same address and port). */
struct ctl_session *acc_sessions_at(struct acceptor *a, const union udp_addr *to,
                                    const struct ctl_session *cs, size_t *n_other, size_t *n_same);

/* cookie.c */

/* Step 2 of the stateless handshake (section 3.5): answer a well-formed client reset
 * (acceptor_decide_control()), store nothing. kc_wrap: for a tls-crypt-v2 client's V3 reset,
 * its Kc (the answer is wrapped with it and asks for the WKc again, section 3.6); else NULL. */
void acc_answer_hard_reset(struct acceptor *a, const struct control_packet *pkt,
                           const union udp_addr *from, const struct tls_wrap_ctx *kc_wrap);

/* A well-formed client hard reset on TCP link (from), wrap packet_id wrap_id: TCP proved the
 * address, so there is no cookie round trip (2.6 mtcp.c creates the instance at accept): under
 * connect-freq-initial, max-clients and connect-freq, create the session and answer the reset
 * from it. kc_wrap: a tls-crypt-v2 client's Kc (from its WKc), kept with the session, and
 * metadata (md_len bytes) for tls-crypt-v2-verify; else NULL. The link is closed when the
 * client is turned away. */
void acc_tcp_session_start(struct acceptor *a, const struct control_packet *pkt,
                           const union udp_addr *from, uint64_t link, uint32_t wrap_id,
                           const struct tls_wrap_ctx *kc_wrap, const uint8_t *md, size_t md_len);

/* receive.c */

/* A packet-triggered problem with no session: count it and log at most a few lines. */
void acc_drop_pkt(struct acceptor *a, uint64_t *counter, const union udp_addr *from,
                  const char *why);

/* One datagram from the UDP socket (len bytes of buf, from), or one packet a worker read from
 * TCP link (else 0): P_DATA_V2 goes to its worker; a control packet is unwrapped, judged
 * (acceptor_decide.h) and handed to its session, or starts one (over UDP after the cookie round
 * trip, over TCP at the client's hard reset: acc_tcp_session_start). */
void acc_handle_datagram(struct acceptor *a, const uint8_t *buf, size_t len,
                         const union udp_addr *from, uint64_t link);

/* A worker reports TCP link closed (MSG_LINK_CLOSED; from: the client's address on it): the
 * sessions on it end. */
void acc_link_closed(struct acceptor *a, uint64_t link, const union udp_addr *from);

/* Session cleanup (on_free): a TCP session's connection is closed with it, unless another
 * session of the same client uses it (MSG_LINK_CLOSE). */
void acc_link_on_free(struct acceptor *a, struct ctl_session *cs);

/* uv_poll callback of the UDP socket: read and handle up to 64 datagrams. */
void acc_on_udp(uv_poll_t *h, int status, int events);

/* tls_step.c */

/* A negotiation or TLS session that failed (why: for the log). The first negotiation, or the
 * active key's TLS session (closed or broken by the peer), ends the whole session as in 2.6; so
 * does a renegotiation (acc_reneg_failed: unlike 2.6, which keeps the old key). */
void acc_ks_fail(struct acceptor *a, struct ctl_session *cs, struct key_state *ks, const char *why);

/* Run TLS on ks with what arrived: a handshake step (on the thread pool; acc_tls_stepped goes
 * on), or, once the handshake is done, read application data. */
void acc_drive_tls(struct acceptor *a, struct ctl_session *cs, struct key_state *ks);

/* renegotiate.c */

/* key_id after k: 1..7, wrapping to 1, never back to 0 (ssl.c key_state_init). */
uint8_t acc_next_key_id(uint8_t k);

/* Start a renegotiation with key_id in the slot that is not the primary one. We are the TLS
 * server either way: the peer's SOFT_RESET (or ours) is followed by its ClientHello. The key
 * this one replaces lives tran-window seconds from now (2.6 ssl.c key_state_soft_reset); the
 * one before it, if still there, goes now (2.6 drops its lame duck key at each soft reset). */
struct key_state *acc_start_renegotiation(struct acceptor *a, struct ctl_session *cs,
                                          uint8_t key_id, bool we_initiate);

/* hand-window for negotiations in progress, and reneg-sec for the primary key. */
void acc_check_key_states(struct acceptor *a, struct ctl_session *cs, uint64_t now,
                          uint64_t hand_window_ms);

/* limits.c: inactive and session-timeout (openvpn 2.6 forward.c check_inactivity_timeout,
 * check_session_timeout) */

/* cs has just connected: take its limits from the config and its client-config-dir file.
 * Acceptor thread. */
void acc_limits_start(struct acceptor *a, struct ctl_session *cs);

/* From the tick, for a connected session: end it when its session-timeout has come or it was
 * inactive too long. As 2.6 closes the client instance, the client is not told (it notices at
 * its ping-restart and reconnects). Acceptor thread. */
void acc_limits_tick(struct acceptor *a, struct ctl_session *cs, uint64_t now_ms);

/* When acc_limits_tick next has something to look at for cs (acc_now_ms; now_ms when it may be
 * at once), UINT64_MAX: never (until cs changes). Acceptor thread. */
uint64_t acc_limits_next_ms(const struct acceptor *a, const struct ctl_session *cs,
                            uint64_t now_ms);

/* pk_sign.c: management-external-key */

/* ks's handshake step returned -PE_WANT_SIGN: send what it already wrote and queue its request
 * (once). */
void acc_pk_sign_wanted(struct acceptor *a, struct ctl_session *cs, struct key_state *ks);

/* The management client's `pk-sig` answer (its base64 lines joined) for the request that is
 * out: checked, and the handshake goes on or fails. Whether it was a good signature. */
bool acc_pk_sign_answer(struct acceptor *a, const char *b64);

/* At the tick: the request out for PK_SIGN_TIMEOUT_MS fails its handshake. */
void acc_pk_sign_tick(struct acceptor *a, uint64_t now_ms);

/* Free the queue (acceptor_free). */
void acc_pk_sign_free(struct acceptor *a);

/* The key state of session cid whose handshake waits for a signature (key KID kid), with its
 * session in *cs; NULL when it ended or no longer waits. */
struct key_state *acc_pk_sign_find(struct acceptor *a, unsigned long cid, unsigned kid,
                                   struct ctl_session **cs);

/* ks's signature will not come (why: for the log, naming where it was asked): its next step
 * fails the handshake. */
void acc_pk_sign_fail(struct acceptor *a, struct ctl_session *cs, struct key_state *ks,
                      const char *why);

/* pk_token.c: pkcs11-providers */

/* --test-config: load cfg's providers and, unless its id comes from the management client or
 * a certificate is private (both need start-up's answers), find pkcs11-id's certificate; no PIN
 * is asked. Everything is unloaded again. 0, or -EINVAL, -ENOENT, -EIO, -ENOMEM with the reason
 * in errbuf, prefixed with the config line. Main thread. */
int acc_pk_token_check(const struct config *cfg, char *errbuf, size_t errbuf_len);

/* Open the token at start-up: load the providers, find pkcs11-id's certificate (with
 * pkcs11-id-management the id id_fn(ctx) gives: malloc'd, NULL when none came) (it becomes
 * a->cfg's, config_cert_set_external), log in (the PIN from pin_fn(ctx), see
 * server/ops/pkcs11.h), start the signing thread. 0, -EACCES (no PIN or a wrong one), -EINVAL,
 * -ENOENT, -EIO, -ENOMEM with the reason in errbuf, prefixed with the config line
 * (FILE:LINE of pkcs11-providers or pkcs11-id). Main thread, in acceptor_new. */
int acc_pk_token_start(struct acceptor *a, pkcs11_pin_fn pin_fn, char *(*id_fn)(void *ctx),
                       void *ctx, char *errbuf, size_t errbuf_len);

/* Whether handshakes sign on the token (the config in force names one and it is open). */
bool acc_pk_token_is_on(const struct acceptor *a);

/* ks's handshake step returned -PE_WANT_SIGN with the token: its request goes to the token
 * thread (once); the answer steps the handshake again (or fails it). Acceptor thread. */
void acc_pk_token_wanted(struct acceptor *a, struct ctl_session *cs, struct key_state *ks);

/* At the tick: the management client's answer to a PIN the token thread waits for
 * (pkcs11-pin-cache), handed over. O(1). */
void acc_pk_token_tick(struct acceptor *a);

/* A reload's config next with pkcs11-providers: its certificate is the one start-up read, when
 * it names the same providers, properties and id; otherwise the reload is refused (the token
 * is opened at start-up only). 0, -EINVAL or -ENOMEM with the reason in errbuf. Acceptor thread.
 */
int acc_pk_token_reload(struct acceptor *a, struct config *next, char *errbuf, size_t errbuf_len);

/* Stop the signing thread (a signature under way is waited for), drop the waiting requests,
 * close the token (release). */
void acc_pk_token_free(struct acceptor *a);

/* mgmt_ctl.c: the management interface on the acceptor's loop */

/* The session with CID cid that is not closing, or NULL (acc_find_cid). */
struct ctl_session *acc_mgmt_find_cid(struct acceptor *a, unsigned long cid);

/* Open the listener of `management` (nothing without it). Main thread, in acceptor_new.
 * 0 or -errno with a reason in errbuf; on failure a->mgmt may be set: close and free it. */
int acc_mgmt_init(struct acceptor *a, char *errbuf, size_t errbuf_len);

/* Start-up is done: unless management-hold holds it, start reading the UDP socket and record
 * the CONNECTED state; under hold this runs again at `hold release`. Acceptor thread. */
void acc_mgmt_started(struct acceptor *a);

/* mgmt_startup.c: what start-up waits for on the management interface */

/* Whether cfg needs something at start-up before the TLS configuration can be built: the
 * password of an encrypted key (management-query-passwords), the certificate
 * (management-external-cert), or the PKCS#11 token opened (pkcs11-providers: its id and PIN). */
bool acc_mgmt_startup_pending(const struct config *cfg);

/* Ask the management client for what a->cfg lacks and wait for the answers, running a's loop
 * on the calling (main) thread, before the TLS configuration is built (acceptor_new, after
 * acc_mgmt_init): management-hold first (2.6 holds before it asks), then the certificate, then
 * the key's password, then the PKCS#11 token (acc_pk_token_start; its PIN at the terminal when
 * there is no management-query-passwords); each wait is logged and lasts until answered, or
 * until SIGINT / SIGTERM.
 * Puts the answers into a->cfg (config_cert_set_external, config_key_unlock). 0; -EACCES for a
 * wrong password (">PASSWORD:Verification Failed" told), -EINVAL for a certificate that does
 * not read, -EINTR for a signal, each with the reason in errbuf (errbuf_len bytes). */
int acc_mgmt_startup(struct acceptor *a, char *errbuf, size_t errbuf_len);

/* A reload's config next (parsed, not in force): its locked key and missing certificate are
 * the ones start-up got, unless they changed; a locked key that changed cannot be unlocked
 * without asking. 0, or -EINVAL / -ENOMEM with the reason in errbuf. Acceptor thread. */
int acc_mgmt_startup_reload(struct acceptor *a, struct config *next, char *errbuf,
                            size_t errbuf_len);

/* Free what start-up kept (the certificate). */
void acc_mgmt_startup_free(struct acceptor *a);

/* cs is fully connected: >CLIENT:ESTABLISHED with its variables. Acceptor thread. */
void acc_mgmt_established(struct acceptor *a, struct ctl_session *cs);

/* Session cleanup (acc_cleanups): a client that management-client-auth asked about goes:
 * >CLIENT:DISCONNECT with the variables client-disconnect gets. */
void acc_mgmt_on_close(struct acceptor *a, struct ctl_session *cs);

/* management-client-auth: ask the management clients about ks's client (>CLIENT:CONNECT, or
 * REAUTH for a connected one, with its variables; client is its key-method-2 message, for the
 * username, password and peer-info). The answer comes back through acc_mgmt_answer. Returns 0
 * or -ENOMEM. Acceptor thread. */
int acc_mgmt_ask(struct acceptor *a, struct ctl_session *cs, const struct key_state *ks,
                 const struct key_method2 *client);

/* >CLIENT:CR_RESPONSE,CID,KID,RESPONSE with env's variables, to the management clients.
 * Acceptor thread. */
void acc_mgmt_cr_response(struct acceptor *a, struct ctl_session *cs, const struct key_state *ks,
                          const char *response, const struct script_env *env);

/* admit.c: the client's CR_RESPONSE (its answer to a CR_TEXT challenge; response is what
 * follows "CR_RESPONSE,", base64 as sent, unchecked as 2.6) on ks: to the management clients
 * and to client-crresponse / CLIENT_CRRESPONSE (2.6 push.c receive_cr_response), with the
 * client's certificate variables, common_name, untrusted_ip/port and username. Acceptor
 * thread. */
void acc_cr_response(struct acceptor *a, struct ctl_session *cs, const struct key_state *ks,
                     const char *response);

/* >CLIENT:ADDRESS for each address of cs->peer (primary first, then iroutes), once
 * management-client-auth asked about cs. Acceptor thread. */
void acc_mgmt_addresses(struct acceptor *a, struct ctl_session *cs);

/* admit.c: a management client's answer about key ks of cs (client-auth, client-auth-nt,
 * client-deny). is_auth: admitted, with config (the client-auth block, "\n"-separated lines,
 * borrowed; NULL or "" for none) applied like a client-connect script's output after it, at a
 * first connection only; refused: reason for the log, client_reason (NULL: none) for
 * AUTH_FAILED. A refusal of a connected client's current key ends the session, as its keys are
 * no longer authenticated (2.6 tls_authenticate_key). Returns whether it counted: false when ks
 * waits for no management answer (answered already, or never asked). Acceptor thread. */
bool acc_mgmt_answer(struct acceptor *a, struct ctl_session *cs, struct key_state *ks, bool is_auth,
                     const char *reason, const char *client_reason, const char *config);

/* client_cert.c: who the client of ks is from its certificate (common name, or "UNDEF" when
 * verify-client-cert lets it come without one), and the checks on it (CRL, peer-fingerprint,
 * verify-x509-name, remote-cert-*, x509-username-field ...). Returns false after refusing the
 * client. Acceptor thread. */
bool acc_check_certificate(struct acceptor *a, struct ctl_session *cs, struct key_state *ks);

/* client_cert.c: at a renegotiation, the checks on the certificate that can change (the CRL; the
 * same certificate as before). Returns false after refusing the client. Acceptor thread. */
bool acc_recheck_certificate(struct acceptor *a, struct ctl_session *cs, struct key_state *ks);

/* admit.c: hand the username/password checks what they need from the acceptor (the pending
 * auth callback). Main thread, in acceptor_new, after a->checks.auth is made. */
void acc_auth_init(struct acceptor *a);

/* admit.c: client-pending-auth for ks: send AUTH_PENDING (with ",timeout N" to clients that
 * announce IV_PROTO_AUTH_PENDING_KW) and "INFO_PRE,<extra>", and let the checks run until
 * timeout_s from now, at most max(hand-window, reneg-sec / 2) after the key started (2.6
 * push.c send_auth_pending_messages). Our key-method-2 message goes first if it has not (the
 * client reads control messages only after it). Returns false when ks waits for no answer,
 * the time is already up, or extra is too long for one control message. Acceptor thread. */
bool acc_auth_pending(struct acceptor *a, struct ctl_session *cs, struct key_state *ks,
                      const char *extra, unsigned timeout_s);

/* status_writer.c */

/* The status file's rows of the connected clients (calloc'd, the caller frees; *n_out of
 * them), and, when workers is not NULL, the workers' rows (TUN_MAX_QUEUES entries). NULL when
 * memory is short. The status file, the management interface and the metrics read these. */
struct status_client *acc_status_rows(struct acceptor *a, size_t *n_out,
                                      struct status_worker *workers);

/* Write the status file now (status.h), when one is configured: a row per client and the
 * workers' counters. Synchronous (at the end, once the loop has stopped); the timer's writes go
 * through the thread pool instead (acc_on_status_timer). No-op while such a write runs. */
void acc_write_status(struct acceptor *a);

/* Free the status job's buffers (release, once the loop has ended). */
void acc_status_job_free(struct acceptor *a);

/* The status text of the connected clients (status-version version: 1, 2 or 3) to out, as the
 * status file has it at this moment (the management `status` command). 0 or -errno. */
int acc_status_print(struct acceptor *a, int version, FILE *out);

/* Status timer callback (t->data is the acceptor): copy the rows (O(clients), no formatting)
 * and have the thread pool make the text and write it; when the previous write still runs,
 * this one follows it. */
void acc_on_status_timer(uv_timer_t *t);

/* ifconfig-pool-persist: the pool's common names to the file (every SECONDS and at the end, as
 * openvpn's multi_ifconfig_pool_persist). A small file, written on this thread like the status
 * file; workers never wait for it. */
void acc_write_pool_persist(struct acceptor *a);

/* ifconfig-pool-persist timer callback (t->data is the acceptor): acc_write_pool_persist. */
void acc_on_persist_timer(uv_timer_t *t);

/* metrics_ctl.c */

/* Start the metrics endpoint when the config has `metrics` (server/ops/metrics.h): at
 * acceptor_new, on the main thread, before privileges are dropped. 0 or a negative code with
 * the reason in errbuf. */
int acc_metrics_init(struct acceptor *a, char *errbuf, size_t errbuf_len);

/* Stop it (the acceptor is stopping; acceptor thread). */
void acc_metrics_stop(struct acceptor *a);

/* Count an authentication step's result for the metrics. */
void acc_metrics_auth(struct acceptor *a, enum metrics_auth_method method,
                      enum metrics_auth_result result);

/* A refusal of cs (acc_refuse, acc_turn_away): a failed first negotiation, or a failed
 * renegotiation of a connected client. */
void acc_metrics_refused(struct acceptor *a, const struct ctl_session *cs);

/* From the tick: systemd's STATUS= (the client count, when it changed) and WATCHDOG=1, when the
 * service manager asked for them (server/ops/notify.h). */
void acc_notify_tick(struct acceptor *a, uint64_t now_ms);

/* worker_events.c */

/* A worker dropped p (MSG_GONE, for reason): free p if its session is gone already, else
 * close the session after ping-restart or exit-notify. Address and peer-id go with the session. */
void acc_handle_gone(struct acceptor *a, struct peer *p, enum gone_reason reason);

/* The worker now routes the peer's packets: push its options (at once if the client set
 * IV_PROTO_REQUEST_PUSH, else when its PUSH_REQUEST came or comes). */
void acc_handle_installed(struct acceptor *a, struct peer *p);

/* A worker saw p's authenticated data come from `to`, an address its session is not at, and asks
 * whether it may float there. As openvpn 2.6 (multi.c multi_process_float): not onto an address
 * another client's session uses (the datagram may be a copy of the client's, sent by someone on
 * its path from that client's address to take its traffic); sessions of the same client there
 * (its earlier ones, left behind by a restart) are closed and the float goes ahead. Unlike 2.6,
 * sessions without a client certificate are never taken for the same client. The answer goes
 * back to the worker (MSG_FLOAT_OK: the control session has moved too; MSG_FLOAT_NO). The
 * first refusal of a session is logged, the worker counts the datagrams it drops. */
void acc_handle_float(struct acceptor *a, struct peer *p, const union udp_addr *to);

/* peer_hold.c */

/* Route what p holds to it (at install): its pool entry (to nothing when is_vaddr_unlearned:
 * learn-address refused it) and its routes, in every worker and the TUN steering map. Returns 0
 * or the steering map's negative errno (the packets are then handed over between workers; the
 * caller warns). */
int acc_route_peer(struct acceptor *a, struct peer *p, bool is_vaddr_unlearned);

/* Session cleanup (on_free): a peer no worker uses any more gives back what it holds and is
 * freed; a live one is freed when its worker reports it gone. */
void acc_peer_on_free(struct acceptor *a, struct ctl_session *cs);

/* Give back what p holds: its pool address (or /32 route), its routes, its peer-id slot (unless
 * handed over to the same client's next session) and its place in n_clients. */
void acc_release_peer_slot(struct acceptor *a, struct peer *p);

/* Give p a peer-id on the worker with the fewest peers (p->worker, p->peer_id). 0 or -ENOSPC. */
int acc_pick_peer_slot(struct acceptor *a, struct peer *p);

/* admit.c */

/* Refuse the client: reason goes to the log; the client gets text (NULL: plain AUTH_FAILED). */
void acc_refuse(struct acceptor *a, struct ctl_session *cs, const char *reason, const char *text);

/* acc_refuse with plain AUTH_FAILED for the client. */
void acc_auth_failed(struct acceptor *a, struct ctl_session *cs, const char *reason);

/* install.c */

/* SHA-256 of the peer certificate's DER (all zero without one): a renegotiation must present
 * the same certificate. */
void acc_cert_fingerprint(const struct tls_session *tls, uint8_t out[32]);

/* Turn a client away without AUTH_FAILED (which makes a 2.6 client give up): like 2.6 when it
 * is full, say nothing, so the client retries later. */
void acc_turn_away(struct acceptor *a, struct ctl_session *cs, const char *reason);

/* A renegotiation (key_id > 0) passed its checks and sent key method 2: new keys for the
 * worker (section 10). */
void acc_rekey(struct acceptor *a, struct ctl_session *cs, struct key_state *ks,
               const struct key_method2 *client, const struct key_method2 *sent);

/* The client is authenticated (certificate, and username/password when configured): give it
 * an address and a peer-id. It is then cs->peer, not yet live in a worker: acc_cs_free returns what
 * it holds. Returns false after refusing the client. */
bool acc_install_prepare(struct acceptor *a, struct ctl_session *cs,
                         const struct key_method2 *client);

/* Everything accepted the client: answer key method 2 and install it in a worker. sent: our
 * key-method-2 message when it went out already (client-pending-auth), else NULL. */
void acc_install_finish(struct acceptor *a, struct ctl_session *cs, struct key_state *ks,
                        const struct key_method2 *client, const struct key_method2 *sent);

/* Our key-method-2 message on ks with fresh randoms and our options string (keys are made from
 * it later, by acc_rekey / acc_install_finish). Returns the message (the caller's; it gives it
 * back with acc_km2_give) or NULL when out of memory, the random generator or TLS write failed,
 * or ks's TLS handshake is not done (or a step on the thread pool holds it). */
struct key_method2 *acc_send_key_method2(struct acceptor *a, struct key_state *ks);

/* assign.c */

/* Read the client's client-config-dir file into cs->ccd. Returns 0, or -1 after refusing the
 * client (bad file, `disable`, ccd-exclusive without a file). */
int acc_load_ccd(struct acceptor *a, struct ctl_session *cs);

/* Give back what acc_assign_addresses took in the pool. */
void acc_unassign(struct acceptor *a, struct peer *p);

/* Session cleanup (on_free, assign.c): free the session's client-config-dir file. */
void acc_ccd_on_free(struct acceptor *a, struct ctl_session *cs);

/* p's tunnel addresses and routes: IPv4 from ifconfig-push or the pool, IPv6 from
 * ifconfig-ipv6-push or the pool (the same entry as IPv4), iroutes from the client-config-dir
 * file. Returns 0; 1 to turn the client away quietly (pool exhausted: it retries, as with 2.6);
 * -1 to refuse it. why (why_len bytes) gets the reason for the log. */
int acc_assign_addresses(struct acceptor *a, struct ctl_session *cs, struct peer *p, char *why,
                         size_t why_len);

/* client-connect changed the client's addresses or iroutes: give back what it held and assign
 * again from the merged client-config-dir and client-connect outputs. Returns false after
 * refusing the client. */
bool acc_reassign_addresses(struct acceptor *a, struct ctl_session *cs);

/* ---- client_hooks.c: tls-verify, client-disconnect, learn-address, client-crresponse ---- */

struct acc_hook_wait; /* one step waiting for the scripts and plugins of one event */

/* Called on the loop when a step has finished (never from inside the start function): is_ok,
 * or why it refused the client. The step is freed already. */
typedef void (*acc_hook_cb)(void *ctx, bool is_ok, const char *why);

/* Whether any tls-verify, client-connect, client-disconnect or learn-address script or plugin is
 * configured; and whether one of the last three is (they need the client's environment). */
bool acc_hooks_any(const struct acceptor *a);
bool acc_hooks_client_env_wanted(const struct acceptor *a);

/* After ks's TLS handshake: keep the certificate variables in cs->hooks.tls_env (first negotiation)
 * and run tls-verify for each certificate of the chain, depth N down to 0; the first refusal
 * ends it. Returns 0 (cb follows, *out is the step), 1 (nothing to run: cb is not called), or
 * -errno. */
int acc_tls_verify_start(struct acceptor *a, struct ctl_session *cs, struct key_state *ks,
                         acc_hook_cb cb, void *ctx, struct acc_hook_wait **out);

/* After the client's key-method-2 message and its username/password check, at every TLS
 * negotiation: the TLS_FINAL plugins (2.6 ssl.c key_method_2_read, a last veto) with the
 * certificate variables, untrusted_ip/port, common_name, username and, with
 * keying-material-exporter, exported_keying_material from ks's TLS session; one that fails
 * refuses the client. Returns 0, 1 (no plugin wants it) or -errno as acc_tls_verify_start. */
int acc_tls_final_start(struct acceptor *a, struct ctl_session *cs, const struct key_state *ks,
                        const char *username, acc_hook_cb cb, void *ctx,
                        struct acc_hook_wait **out);

/* (Re)build cs->hooks.env, the client's environment, from its session, cs->peer's addresses,
 * cs->ccd and peer_info (the client's peer-info text). Returns 0 or -errno. */
int acc_client_env_build(struct acceptor *a, struct ctl_session *cs, const char *peer_info);

/* The client's CR_RESPONSE (response: as sent, base64): the CLIENT_CRRESPONSE plugins
 * ($crresponse) and the client-crresponse script (the response in a file, its last argument),
 * with client_env (borrowed) and $script_type. If one fails, the client is refused, as 2.6
 * deauthenticates it (ssl_verify.c verify_crresponse_script; 2.6 ignores a plugin's answer,
 * ovpnd does not). Returns 0 (started), 1 (nothing configured, or one still runs) or -errno. */
int acc_crresponse_start(struct acceptor *a, struct ctl_session *cs,
                         const struct script_env *client_env, const char *response);

/* learn-address "add" (or "update") for cs->peer's IPv4 address, IPv6 address and iroutes, one
 * after another. An address it refuses is not routed (cs->hooks.is_vaddr_unlearned; refused routes
 * are dropped from cs->peer->routes); cb then reports ok. Returns 0, 1 or -errno as above. */
int acc_learn_start(struct acceptor *a, struct ctl_session *cs, acc_hook_cb cb, void *ctx,
                    struct acc_hook_wait **out);

/* Forget a step: its callback is not called, its scripts are killed, its files removed. */
void acc_hook_wait_cancel(struct acc_hook_wait *w);

/* One learn-address run: OP ADDR [CN] (cn NULL: none), the client's environment client_env (NULL:
 * only script_type, as 2.6 runs "delete") and plugin contexts client (NULL: the server's);
 * serial, and the script runs even when a plugin failed (2.6 learn_address_script). With done,
 * done(ctx) gets the result and *run is for hook_run_cancel; without, it runs in the background
 * (a failure logged naming ctx_name). 0 or -errno (done is then never called). */
int acc_learn_run(struct acceptor *a, const char *op, const char *addr, const char *cn,
                  const struct script_env *client_env, struct plugin_client *client,
                  hook_done_cb done, void *ctx, struct hook_run **run, const char *ctx_name);

/* The client is going: client-disconnect if it was connected, then learn-address "delete" for
 * what was learned, both in the background. Once per session. */
void acc_client_gone(struct acceptor *a, struct ctl_session *cs);

/* learn-address "delete" (in the background) for every address learned for cs, which are
 * forgotten. */
void acc_hooks_unlearn(struct acceptor *a, struct ctl_session *cs);

/* Session cleanups of the hooks: on_close runs acc_client_gone for a client that was connected
 * or had addresses learned; on_free frees what the hooks keep in cs. */
void acc_hooks_on_close(struct acceptor *a, struct ctl_session *cs);
void acc_hooks_on_free(struct acceptor *a, struct ctl_session *cs);

/* ---- tap_macs.c: the MACs of dev tap clients, learn-address for them ---- */

struct acc_mac_wait; /* a learn-address run about one MAC */

/* MSG_MAC_NOTE from p's worker (data: a struct mac_note, len bytes): a MAC p learned, kept for
 * the status and for learn-address "delete" (and taken from the client that had it before);
 * or, with is_ask, run learn-address "add" (or "update" when another client had it) MAC@VID CN,
 * and answer p's worker (MSG_MAC_ANSWER). Ignored unless p's session is active. */
void acc_tap_mac_note(struct acceptor *a, struct peer *p, const uint8_t *data, size_t len);

/* The client is going: learn-address "delete" MAC@VID (no common name, as 2.6 multi.c
 * multi_reap_range runs it) for each of its MACs, in the background, if learn-address is
 * configured; the list is emptied. */
void acc_tap_macs_unlearn(struct acceptor *a, struct ctl_session *cs);

/* Free cs->macs: runs still going are cancelled. */
void acc_tap_macs_free(struct ctl_session *cs);

/* "aa:bb:cc:dd:ee:ff@VID" of m into buf (at least ACC_MAC_STR_MAX bytes); returns buf. */
#define ACC_MAC_STR_MAX 24
const char *acc_mac_str(const struct status_mac *m, char *buf, size_t buf_len);

/* ---- client_connect.c: the client-connect plugins and script, deferred answers ---- */

struct acc_cc_wait; /* the client-connect handlers of one client, until they all answered */

/* cs->peer has its addresses: build cs->hooks.env, then run the CLIENT_CONNECT plugins, the
 * CLIENT_CONNECT_V2 plugins and the client-connect script in turn (2.6's order), waiting for the
 * deferred answer of any of them; their outputs are merged into cs->ccd (cs->hooks.needs_reassign
 * tells whether addresses or iroutes changed). The wait has no deadline of its own: the caller's
 * hand-window cancels it. Returns 0 (cb follows, *out is the wait), 1 (nothing to run: cb is not
 * called) or -errno. */
int acc_client_connect_start(struct acceptor *a, struct ctl_session *cs, const char *peer_info,
                             acc_hook_cb cb, void *ctx, struct acc_cc_wait **out);

/* Forget w: its callback is not called, its scripts are killed, its files removed. NULL: no-op. */
void acc_cc_wait_cancel(struct acc_cc_wait *w);

/* Apply text (client-connect config lines, e.g. management's client-auth block; name for
 * errors) after what cs->ccd has, as a client-connect script's output. Returns 0, or -errno
 * with why (why_len bytes) saying what was wrong: a bad line, or `disable`. */
int acc_client_connect_apply(struct acceptor *a, struct ctl_session *cs, const char *text,
                             const char *name, char *why, size_t why_len);

/* ---- token.c: auth-gen-token ---- */

/* Session cleanup (on_free): wipe the session's tokens. */
void acc_token_on_free(struct acceptor *a, struct ctl_session *cs);

/* $session_id and $session_state for the script and plugins, when is_set. */
struct acc_token_env {
    bool is_set;
    char session_id[AUTH_TOKEN_SESSION_ID_B64_LEN + 1];
    const char *session_state;
};

/* Read the auth-gen-token settings and secret (random without auth-gen-token-secret, which is
 * logged). Call once the acceptor's random generator is seeded. 0 or -EIO. */
int acc_token_init(struct acceptor *a);

/* The client's password before its username/password check (2.6 verify_user_pass): a token is
 * checked here. ACCEPTED: the client is authenticated (logged); REFUSED: refuse it with
 * *client_reason (NULL: plain AUTH_FAILED) and why (why_len bytes) for the log; NOT_USED and
 * EXTERNAL: run the check, with env for its environment. client->username may be emptied (a
 * token valid only for the empty username, external-auth). */
enum auth_token_verdict acc_token_check(struct acceptor *a, struct ctl_session *cs,
                                        struct key_method2 *client, struct acc_token_env *env,
                                        const char **client_reason, char *why, size_t why_len);

/* override_username.c: openvpn 2.7's override-username, after every client-connect output
 * (2.7 multi.c override_locked_username): with cs->ccd's override_username, the client's
 * username becomes it in the status, the scripts' environment (rebuilt from peer_info), its
 * auth-gen-token (acc_token_rebind, pushed with auth-token-user) and, with
 * username-as-common-name, its common name (acc_cn_rename); the old one is kept in
 * client.orig_username. Returns 0 (also when there is nothing to do), or -EPERM without a
 * username/password check (2.7 refuses the client then), -EINVAL for a name too long to be a
 * common name, -ENOMEM; why (why_len bytes) then says so, for refusing the client. */
int acc_override_username(struct acceptor *a, struct ctl_session *cs, const char *peer_info,
                          char *why, size_t why_len);

/* override_username.c: at a renegotiation, the client's old username (username, a buffer of
 * username_len bytes) stands for its new one in every check (2.7 verify_user_pass): rewritten in
 * place. No effect without an override. */
void acc_override_username_map(struct acceptor *a, struct ctl_session *cs, char *username,
                               size_t username_len);

#define TLS_USERNAME_LEN 64 /* openvpn ssl_verify.h: longest CN from username-as-common-name */

/* override-username changed cs->client.username: the token, if one was made, is made anew for
 * it (2.7 override_locked_username regenerates it), keeping its session id. */
void acc_token_rebind(struct acceptor *a, struct ctl_session *cs);

/* The check succeeded: make the client's (renewed) token, which PUSH_REPLY carries. */
void acc_token_on_success(struct acceptor *a, struct ctl_session *cs,
                          const struct key_method2 *client);

/* A renegotiation finished: send the renewed token ("PUSH_REPLY,auth-token ..."), as 2.6. */
void acc_token_after_rekey(struct acceptor *a, struct ctl_session *cs);

/* Renewal timer (renewal-time below reneg-sec): a new token every renewal-time. */
void acc_token_tick(struct acceptor *a, struct ctl_session *cs, uint64_t now_ms);

/* When acc_token_tick next has something to do for cs (acc_now_ms), UINT64_MAX: never (until
 * cs changes). */
uint64_t acc_token_next_ms(const struct acceptor *a, const struct ctl_session *cs);

/* With auth-gen-token, add session_id and session_state as the username/password check left
 * them to env (client-connect and later scripts see them, as in 2.6). 0 or -ENOMEM. */
int acc_token_env_add(const struct acceptor *a, const struct ctl_session *cs,
                      struct script_env *env);

/* The AUTH_FAILED text for a refusal by the script or plugins that gave none: "SESSION: token
 * expired" after an expired token with external-auth (2.6), else NULL. */
const char *acc_token_client_reason(const struct ctl_session *cs);

/* The token to push in PUSH_REPLY, or NULL. */
const char *acc_token_for_push(const struct acceptor *a, const struct ctl_session *cs);

/* ---- tls_crypt_v2.c: tls-crypt-v2 ---- */

/* The wrapping of cs's control channel: its own Kc with tls-crypt-v2, else the acceptor's. */
static inline const struct tls_wrap_ctx *acc_cs_wrap(const struct acceptor *a,
                                                     const struct ctl_session *cs)
{
    return cs->wrap.has_kc ? &cs->wrap.kc : &a->crypto.wrap;
}

/* Read the server key when tls-crypt-v2 is configured (a->crypto.is_tls_crypt_v2). 0 or -EINVAL
 * with the reason in errbuf. At start-up. */
int acc_v2_init(struct acceptor *a, char *errbuf, size_t errbuf_len);

/* Wipe the server key. */
void acc_v2_clear(struct acceptor *a);

/* What the WKc of a P_CONTROL_HARD_RESET_CLIENT_V3 or P_CONTROL_WKC_V1 gave (on the stack:
 * nothing is allocated for a client before its WKc authenticates). acc_v2_packet_wipe when done. */
struct acc_v2_packet {
    size_t wrapped_len;       /* bytes in front of the WKc: the tls-crypt wrapped packet */
    struct tls_wrap_ctx wrap; /* Kc, server side */
    uint8_t metadata[TLS_CRYPT_V2_MAX_METADATA_LEN];
    size_t md_len;
};

/* Find, authenticate and decrypt the WKc at the end of buf (len bytes, untrusted) with the
 * server key, check tls-crypt-v2-max-age, set up out->wrap with Kc. Returns NULL, or why the
 * packet is refused (a static string for the log; out holds no key then). */
const char *acc_v2_open_wkc(struct acceptor *a, const uint8_t *buf, size_t len,
                            struct acc_v2_packet *out);

/* Zeroize p. */
void acc_v2_packet_wipe(struct acc_v2_packet *p);

/* Start tls-crypt-v2-verify for cs's client key metadata (md, md_len bytes, type byte first),
 * if configured: returns 1 (running: cs->wrap.v2_verify is set, and cs does no TLS work until it
 * admits the key, acc_session_pump then; a refusal closes cs), 0 (not configured), or -errno. */
int acc_v2_verify_start(struct acceptor *a, struct ctl_session *cs, const uint8_t *md,
                        size_t md_len);

/* Session cleanup (on_free): cancel tls-crypt-v2-verify, wipe Kc. */
void acc_v2_on_free(struct acceptor *a, struct ctl_session *cs);

/* Feed what ks's reliability layer has in order to its TLS session and drive it (receive.c).
 * Not while cs->wrap.v2_verify runs. */
void acc_session_pump(struct acceptor *a, struct ctl_session *cs, struct key_state *ks);

/* ---- reload.c: SIGHUP re-reads the config without dropping clients ---- */

/* Build a TLS configuration from cfg's ca, cert, key, peer-fingerprint, tls-groups,
 * tls-cert-profile, tls-cipher, CRL and capath directory (into *crl, which starts watching cfg's
 * CRL file and capath directory; crl_watch_init). crl is &a->crypto.crl at start-up only; later
 * the watch in force is crl_watch_init's prev (a CRL file that cannot be used keeps every client
 * refused across the new configuration). root: the chroot directory while the server
 * has not entered it yet (start-up), else NULL. At start-up, at a reload, and when the capath
 * directory changes. *out is the caller's (acc_tls_conf_free). 0 or a negative code with the
 * reason in errbuf (errbuf_len bytes). Acceptor or main thread. */
int acc_tls_conf_new(struct acceptor *a, const struct config *cfg, const char *root,
                     struct acc_tls_conf **out, struct crl_watch *crl, char *errbuf,
                     size_t errbuf_len);

/* The capath directory changed (crl_watch_tick): new handshakes get a TLS configuration built
 * again from the config in force (acc_tls_conf_new), the current one is retired (freed once its
 * sessions are gone), and connected clients whose certificate a CRL now lists are disconnected
 * (acc_revoke_sweep). On failure (logged) the current configuration stays. Acceptor thread. */
void acc_tls_conf_renew(struct acceptor *a);

/* Free t (NULL: nothing); its sessions must be gone. */
void acc_tls_conf_free(struct acc_tls_conf *t);

/* A TLS session built on conf (by acc_ks_init) is cleared: one session less on it. */
void acc_tls_conf_put(struct tls_server_conf *conf);

/* At the tick: free the retired TLS configurations no session uses any more. */
void acc_tls_conf_sweep(struct acceptor *a);

/* MSG_RELOAD: read the config again (the command line the server started with) and apply what
 * can change without dropping a client; log what needs a restart; a config that does not parse
 * or check changes nothing. Acceptor thread. */
void acc_reload(struct acceptor *a);

/* Record in cs->client the serial number and issuer of the client certificate of ks (nothing
 * without one), for acc_revoke_sweep. */
void acc_cert_identity(struct key_state *ks, struct ctl_session *cs);

/* Whether the CRL in force lists the certificate recorded by acc_cert_identity. */
bool acc_cert_is_revoked(struct acceptor *a, struct ctl_session *cs);

/* Disconnect at once every connected client whose certificate the CRL in force revokes (after a
 * reload or a change of the CRL file), as acc_auth_failed: AUTH_FAILED, logged with the client's
 * name and address. */
void acc_revoke_sweep(struct acceptor *a);

/* Free the overlays of acc_reload (acceptor_free). */
void acc_reload_free(struct acceptor *a);

#endif /* SERVER_CONTROL_ACCEPTOR_INTERNAL_H */
