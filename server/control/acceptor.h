/* server/control/acceptor.h: the control-plane thread.
 *
 * Owns socket 0 of the UDP group: the stateless HMAC-cookie exchange (nothing is stored for a
 * spoofed reset), the reliability layer, the TLS session (mbedTLS), key method 2, cipher
 * negotiation, address assignment and PUSH_REPLY. When a client's data keys are ready it hands
 * the peer to its worker (MSG_INSTALL). It also writes the status file.
 */
#ifndef SERVER_CONTROL_ACCEPTOR_H
#define SERVER_CONTROL_ACCEPTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct acceptor;
struct plugin_set;
struct script_env;
struct config;
struct ip_pool;
struct mailbox;
struct routes;
struct topology_plan;
struct tun_dev;
struct worker_stats;

/* What the server gives the acceptor: set up by the main thread before acceptor_new, unchanged
 * afterwards; what it points to outlives the acceptor. */
struct acceptor_env {
    struct config *cfg;
    struct mailbox *mb;    /* the acceptor's box and the workers' (server/thread) */
    struct routes *routes; /* address ownership; the acceptor is its only writer */
    struct ip_pool *pool;  /* the same pool routes hands out (n 0 without one): read here */
    /* what server / ifconfig* expand to; the acceptor's after start-up (a reload that grows the
     * pool replaces it) */
    struct topology_plan *plan;
    const struct tun_dev *tun; /* the TUN device, for a route when the pool grows */
    const char *dev_name;      /* the TUN device, for scripts' $dev */
    int udp_fd;                /* socket 0 of the UDP group, not owned */
    int n_workers;
    size_t max_local_peers;                         /* peer_id slots per worker */
    const struct worker_stats *const *worker_stats; /* n_workers of them, for the status file */
    uint32_t server_addr;                           /* tunnel address of the server, host order */
    bool has_ipv6;                                  /* the tun device has an IPv6 address */
    uint8_t server_addr6[16];                       /* ... this one, network order */
    int ipv6_bits;          /* its prefix length, pushed with pool addresses */
    bool is_pool_persisted; /* ifconfig-pool-persist with SECONDS > 0, no duplicate-cn */
    int persist_fd;         /* the persist file opened before privileges were dropped, or -1 */
    int persist_err;        /* why it could not be opened at start-up (-errno, logged), or 0 */
    /* what a reload parses again (reload.c): the command line as config text, NULL = no
     * reload; and the directory the server started in (absolute, or NULL) */
    const char *config_text;
    const char *start_dir;
};

/* Build the acceptor: TLS configuration from the certificate blobs, the tls-auth / tls-crypt
 * key, the UDP socket env->udp_fd, its box of env->mb. env must stay valid while the acceptor
 * lives. errbuf gets a readable reason on failure. Main thread. Returns 0 or a negative code;
 * on failure everything it set up is released and *out is left as it was. */
int acceptor_new(const struct acceptor_env *env, struct acceptor **out, char *errbuf,
                 size_t errbuf_len);

/* `--test-config`: what acceptor_new checks of cfg, without sockets, threads or a loop: the TLS
 * configuration (CA, certificate, key, tls-groups, tls-cipher), the CRL, the tls-auth /
 * tls-crypt / tls-crypt-v2 keys, and the plugins, which are loaded and opened as at start-up
 * (a library that is not an OpenVPN plugin or a plugin asking for an event ovpnd does not run
 * is refused; then verify-client-cert's need for a password check) and closed again. Main
 * thread, before privileges are dropped, like start-up. Returns 0, or a negative code with the
 * reason in errbuf (errbuf_len bytes). */
int acceptor_test_config(struct config *cfg, char *errbuf, size_t errbuf_len);

/* Start the acceptor's thread. 0 or -errno. */
int acceptor_start(struct acceptor *a);

/* Ask the acceptor to tell clients goodbye (explicit-exit-notify) and stop; waits for its
 * thread. Main thread. */
void acceptor_stop(struct acceptor *a);

/* Free a (stopped, or never started) acceptor with its sessions and peers. Call only after every
 * worker has stopped, since workers use the peers. Main thread. */
void acceptor_free(struct acceptor *a);

/* The `plugin`s the acceptor opened (server/hooks/plugin.h), for the events around the TUN
 * device; valid until acceptor_free. Main thread. */
struct plugin_set *acceptor_plugins(const struct acceptor *a);

/* management-up-down: env (the route-up environment: 2.6 announces UP in do_route, after the
 * routes, with that environment) is copied; management clients get it as UP once start-up is
 * released (at once, or at `hold release`), and as DOWN when the server stops. Main thread,
 * before acceptor_start. Returns 0 or -ENOMEM. */
int acceptor_set_updown_env(struct acceptor *a, const struct script_env *env);

#endif /* SERVER_CONTROL_ACCEPTOR_H */
