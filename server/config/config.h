/* server/config/config.h: the server configuration, read from an OpenVPN 2.6 server config file.
 *
 * Syntax follows openvpn 2.6 (src/openvpn/options.c: parse_line, read_config_file,
 * check_inline_file, add_option): one directive per line, words split on blanks, "..." and '...'
 * quoting, backslash escapes outside single quotes, '#' and ';' start a comment where a word
 * could start, a leading "--" on the directive name is allowed, <tag>...</tag> inline blocks,
 * `config FILE` includes (10 levels deep at most) and `cd DIR`.
 *
 * Every directive openvpn knows is in one table (server/config/config_table.c) and is either
 * implemented, accepted and ignored with a warning, refused as "not implemented yet in ovpnd",
 * refused as a client directive, or unknown. Errors read "FILE:LINE: directive: reason";
 * problems that belong to no line read "FILE: reason".
 *
 * Parsing runs on the main thread at start-up (and at a reload on the acceptor thread, into a
 * fresh struct config: server/control/reload.c, server/config/config_diff.h). It
 * reads files (the config and its includes, ca/cert/key, the tls-auth/tls-crypt key) but never
 * changes the process state: `cd DIR` is recorded in cd_dir for the caller to chdir() into, as
 * openvpn does at that point, so that relative status/log/writepid paths mean the same thing.
 * Once parsed the struct is read-only and may be shared between threads.
 */
#ifndef SERVER_CONFIG_CONFIG_H
#define SERVER_CONFIG_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/client_nat.h"
#include "proto/comp.h"
#include "proto/vlan.h"

#define CONFIG_PROTO_UDP4 1 /* `proto udp4`: UDP over IPv4 */
#define CONFIG_PROTO_UDP6 2 /* `proto udp6`: UDP over IPv6, dual-stack ("::" takes IPv4 too) */
#define CONFIG_PROTO_UDP                                                                           \
    3                       /* `proto udp` (default): IPv4, or IPv6 dual-stack when `local` is     \
                             * an IPv6 address */
#define CONFIG_PROTO_TCP4 4 /* `proto tcp4-server` / `tcp4`: TCP over IPv4 */
#define CONFIG_PROTO_TCP6 5 /* `proto tcp6-server` / `tcp6`: TCP over IPv6, dual-stack */
#define CONFIG_PROTO_TCP                                                                           \
    6 /* `proto tcp-server` / `tcp`: IPv4, or IPv6 dual-stack when `local` is an IPv6 address */
#define CONFIG_TCP_QUEUE_LIMIT 64 /* `tcp-queue-limit` default, as openvpn 2.6 */

/* Whether proto (CONFIG_PROTO_*) is one of the TCP ones. */
static inline bool config_proto_is_tcp(int proto)
{
    return proto >= CONFIG_PROTO_TCP4 && proto <= CONFIG_PROTO_TCP;
}

#define CONFIG_TOPOLOGY_SUBNET 1 /* one subnet; each client one address (ovpnd's default) */
#define CONFIG_TOPOLOGY_NET30 2  /* each client a /30 block (openvpn 2.6's default) */
#define CONFIG_TOPOLOGY_P2P 3    /* each client one address, point-to-point to the server */

#define CONFIG_NS_CERT_TYPE_NONE 0
#define CONFIG_NS_CERT_TYPE_CLIENT 1
#define CONFIG_NS_CERT_TYPE_SERVER 2

#define CONFIG_TLS_WRAP_NONE 0
#define CONFIG_TLS_WRAP_AUTH 1  /* tls-auth: HMAC over the control channel, digest `auth` */
#define CONFIG_TLS_WRAP_CRYPT 2 /* tls-crypt: AES-256-CTR + HMAC-SHA256 */

#define CONFIG_KEY_DIRECTION_NONE (-1) /* both directions use key[0] */
#define CONFIG_KEY_DIRECTION_NORMAL 0  /* "0": send with key[0], receive with key[1] */
#define CONFIG_KEY_DIRECTION_INVERSE 1 /* "1": send with key[1], receive with key[0] */

#define CONFIG_VERIFY_REQUIRE 0 /* verify-client-cert require (default) */
#define CONFIG_VERIFY_OPTIONAL                                                                     \
    1                        /* a certificate, if sent, must verify; needs a user/pass check       \
                              */
#define CONFIG_VERIFY_NONE 2 /* no client certificate asked for; needs a user/pass check */

/* How the mssfix value is meant (openvpn 2.6 options.c, "mssfix" and its post-processing). */
#define CONFIG_MSSFIX_PAYLOAD 0 /* `mssfix N`: N bounds the encrypted UDP payload */
#define CONFIG_MSSFIX_MTU 1     /* `mssfix N mtu` or the default: N bounds the whole IP packet */
#define CONFIG_MSSFIX_FIXED 2   /* `mssfix N fixed`: N bounds the TCP packet inside the tunnel */

#define CONFIG_PUSH_MAX_LEN 255      /* longest option text in a `push` */
#define CONFIG_MAX_ERRORS 20         /* errors kept in struct config (all are counted) */
#define CONFIG_MAX_REMOTE_CERT_KU 15 /* values on a remote-cert-ku line (openvpn MAX_PARMS - 1) */
#define CONFIG_DEFAULT_DATA_CIPHERS "AES-256-GCM:AES-128-GCM:CHACHA20-POLY1305"
/* `connect-freq-initial` when the config does not say (openvpn 2.6 options.c: cf_initial_max,
 * cf_initial_per) */
#define CONFIG_CONNECT_FREQ_INITIAL_MAX_DEFAULT 100
#define CONFIG_CONNECT_FREQ_INITIAL_PER_DEFAULT 10

/* File contents or inline block text. data is NUL-terminated; len excludes the NUL. origin is
 * the path the data came from, or "FILE:LINE (inline)". All NULL/0 when unset. Owned by the
 * struct config; wiped when freed. */
struct config_blob {
    char *data;
    size_t len;
    char *origin;
};

/* The `push "..."` option texts, in config order, kept as written (as openvpn 2.6 does).
 * Each one splits into words by the config-line rules, has at least one word, at most
 * CONFIG_PUSH_MAX_LEN characters and no comma. The options ovpnd itself derives
 * (route-gateway, topology, ping, ping-restart, ifconfig, peer-id, cipher, ...) are not in
 * this list. */
struct config_push {
    char **items;
    size_t n_items;
};

/* A `route` or `route-ipv6` of the server config: a kernel route into the tun device, added at
 * start-up (openvpn route.c). addr in network byte order, host bits clear. */
struct config_route {
    int family; /* 4 or 6 */
    uint8_t addr[16];
    int plen;
    int metric;     /* -1 = the kernel's default */
    uint32_t table; /* the `route-table` in effect at its line (2.7); 0 = the main table */
};

/* One `plugin PATH [ARGS...]` line. argv[0] is the path as openvpn hands it to the plugin;
 * path is the file that is loaded: argv[0], or for a bare name (no '/', not starting with '.')
 * that name in openvpn's plugin directory (OVPND_OPENVPN_PLUGIN_DIR), as openvpn 2.6 does
 * (plugin.c plugin_init_item). where is "FILE:LINE" for start-up errors. */
struct config_plugin {
    char **argv; /* NULL-terminated */
    char *path;
    char *where;
};

#define CONFIG_MAX_SOCKETS 2 /* `local` lines: one UDP and one TCP socket */

/* One `local HOST|* [PORT] [PROTO]` line (openvpn 2.7's multi-socket server). */
struct config_socket {
    char *host;    /* address or name to bind, NULL for `*` (any) */
    uint16_t port; /* 0: `port` */
    int proto;     /* CONFIG_PROTO_*, 0: `proto` (both filled in by the checks with two lines) */
};

/* Network: the sockets, the tun device, addresses, pools and routes */
struct config_net {
    uint16_t port;       /* `port` / `lport`, default 1194 */
    int proto;           /* CONFIG_PROTO_UDP (default), _UDP4, _UDP6, _TCP4, _TCP6 or _TCP */
    int tcp_queue_limit; /* `tcp-queue-limit N`: packets queued to one TCP client, default 64 */
    bool multihome;      /* `multihome`: UDP replies leave from the address the client used */
    int mark;            /* `mark N`: SO_MARK on the UDP and TCP sockets; 0 = none */
    char *bind_dev;      /* `bind-dev DEV`: SO_BINDTODEVICE on them (e.g. a VRF); NULL = none */
    int txqueuelen;      /* `txqueuelen N`: the tun/tap device's TX queue (packets); 0 = kernel's */
    char *local;         /* `local ADDR` as written (IPv4/IPv6 literal or host name), NULL = any */
    /* every `local` line; with two (one UDP, one TCP socket) each is complete after the checks,
     * with one its port and protocol went into port and proto */
    struct config_socket sockets[CONFIG_MAX_SOCKETS];
    int n_sockets;
    /* `port-share HOST PORT [DIR]`: TCP connections that do not start like an OpenVPN client
     * are proxied to HOST:PORT; DIR gets a file per proxied connection naming the client */
    char *port_share_host; /* NULL: no port-share */
    uint16_t port_share_port;
    char *port_share_dir;
    char *dev;   /* "tun" (the kernel picks tunN) or an explicit name such as "tun0" */
    bool is_tap; /* `dev tap`, `dev tapN`, `dev-type tap`: Ethernet frames, routed by MAC */
    bool has_lladdr;
    uint8_t lladdr[6]; /* `lladdr MAC`: the tap device's MAC address */
    /* `vlan-tagging`, `vlan-accept MODE`, `vlan-pvid VID` (dev tap, proto/vlan.h): the tap
     * device carries 802.1Q VLANs; vlan_pvid (1..4094, default 1) is the server's VID, and that
     * of a client whose client-config-dir file or client-connect output gives none */
    bool vlan_tagging;
    enum vlan_accept vlan_accept;
    uint16_t vlan_pvid;
    int topology; /* CONFIG_TOPOLOGY_*; default net30, as openvpn 2.6 (2.7: subnet); with a
                   * tap device subnet in effect (2.6 ignores topology there) */
    bool has_server;
    uint32_t server_network, server_netmask; /* `server NET MASK`, host byte order */
    bool server_nopool;                      /* `server NET MASK nopool` */
    int server_netbits;                      /* of server_netmask */
    /* `server-bridge GW MASK POOL_START POOL_END` (has_server_bridge: a pool from the
     * arguments, route-gateway GW pushed) or `server-bridge [nogw]` (server_bridge_dhcp: no
     * pool, "route-gateway dhcp" pushed unless nogw); host byte order (2.6 helper.c) */
    bool has_server_bridge, server_bridge_dhcp, server_bridge_nogw;
    uint32_t server_bridge_gw, server_bridge_netmask, server_bridge_pool_start,
        server_bridge_pool_end;
    bool has_ifconfig; /* `ifconfig LOCAL REMOTE_OR_NETMASK`: the tun's own IPv4 address */
    uint32_t ifconfig_local, ifconfig_remote_netmask; /* host byte order */
    bool has_ifconfig_pool;                           /* `ifconfig-pool START END [NETMASK]` */
    uint32_t ifconfig_pool_start, ifconfig_pool_end, ifconfig_pool_netmask; /* netmask 0: none */
    bool has_ifconfig_ipv6; /* `ifconfig-ipv6 LOCAL/BITS REMOTE`: the tun's own IPv6 address */
    uint8_t ifconfig_ipv6_local[16], ifconfig_ipv6_remote[16]; /* network byte order */
    int ifconfig_ipv6_bits;                                    /* 64..124 */
    bool has_ifconfig_ipv6_pool;                               /* `ifconfig-ipv6-pool BASE/BITS` */
    uint8_t ifconfig_ipv6_pool_base[16];
    int ifconfig_ipv6_pool_bits; /* 64..124 */
    char *ifconfig_pool_persist; /* `ifconfig-pool-persist FILE [SECONDS]`: the file, or NULL */
    int ifconfig_pool_persist_s; /* SECONDS: default 600; 0 = read at start-up, never written */
    bool has_ifconfig_push_constraint; /* `ifconfig-push-constraint NETWORK NETMASK` */
    uint32_t ifconfig_push_constraint_network, ifconfig_push_constraint_netmask;
    int tun_mtu;     /* default 1500 */
    int tun_mtu_occ; /* `tun-mtu N OCC`: MTU announced in OCC; 0 unset */
    int tls_mtu;     /* `max-packet-size N`: control packets, IP and UDP headers included, are
                      * at most this long (512..2048); default 1250, as 2.6 */
    int mssfix;      /* 0 = off; see mssfix_mode */
    int mssfix_mode; /* CONFIG_MSSFIX_*; default 1492 + MTU */
    /* `fragment N [mtu]`: data-channel payloads are cut so that each datagram's UDP payload
     * (with mtu: the whole IP packet) is at most N bytes (proto/fragment.h); 0 = off. UDP only.
     * Sets mssfix's default to `mssfix N mtu`, as 2.6 */
    int fragment;
    bool fragment_mtu;
    struct config_push push;
    struct comp_config comp; /* compress, comp-lzo, comp-noadapt, allow-compression */
    bool has_server_ipv6;
    uint8_t server_ipv6_network[16]; /* `server-ipv6 NET/BITS`, network byte order */
    int server_ipv6_bits;            /* 64..124 */
    struct config_route *routes;     /* `route`, `route-ipv6`, in config order */
    size_t n_routes;
    int route_metric;     /* `route-metric N`: given to routes without a metric; -1 = none */
    uint32_t route_table; /* the last `route-table N` (2.7), for the pool route; 0 = main */
    bool route_noexec;    /* `route-noexec`: the routes above are not added to the kernel */
    bool ifconfig_noexec; /* `ifconfig-noexec`: the tun device is left to the up script */
    bool block_ipv6; /* `block-ipv6`: IPv6 towards clients answered with ICMPv6 (worker_tun.c) */
    bool passtos;    /* `passtos`: an IPv4 packet's DSCP on the datagram that carries it to its
                      * client (proto/tos.h) */
    struct client_nat *client_nat; /* `client-nat` rules in config order (proto/client_nat.h),
                                    * applied by the workers; NULL = none */
    char *client_config_dir;       /* absolute path, NULL = none */
    bool ccd_exclusive;            /* a client without its own CCD file (DEFAULT does not count) is
                                    * refused (openvpn ssl_verify.c) */
    bool client_to_client;         /* forward packets between clients inside the server */
    bool tcp_nodelay; /* `socket-flags TCP_NODELAY` or `tcp-nodelay`: TCP_NODELAY on TCP
                       * connections (UDP is unaffected, as in 2.6) */
};

/* Timers, in seconds (openvpn 2.6 options.c defaults) */
struct config_timers {
    int keepalive_ping_s, keepalive_restart_s; /* `keepalive A B` as written; 0,0 = not set */
    /* Effective server-side timers. With keepalive A B: ping_s = A and ping_restart_s = 2 * B
     * (openvpn 2.6 helper.c, helper_keepalive, server mode), and the caller pushes
     * "ping A" and "ping-restart B" to clients. Otherwise from `ping` / `ping-restart`. 0 = off. */
    int ping_s, ping_restart_s;
    int hand_window_s; /* default 60 */
    int tran_window_s; /* default 3600: life of the old data key after a renegotiation started */
    int tls_timeout_s; /* default 2 */
    int reneg_sec;     /* default 3600; 0 = no time-based renegotiation */
    int reneg_sec_min; /* `reneg-sec MAX MIN`; -1 = not given (openvpn: up to 10% jitter) */
    /* `reneg-bytes N` / `reneg-pkts N`: renegotiate once the send key has carried N bytes
     * (data packets' wire length, both directions) or N packets (2.6 ssl.c, ks->n_bytes and
     * ks->n_packets); 0 = no limit (the default) */
    int reneg_bytes, reneg_pkts;
    bool is_ping_exit; /* ping_restart_s came from `ping-exit` (2.6: the same for a server's
                        * client instance, logged as ping-exit) */
};

/* TLS and crypto, with the CRL */
struct config_tls {
    struct config_blob ca, cert, key; /* PEM (or DER) text; required; checked with mbedTLS */
    bool dh_none;                     /* `dh none` */
    /* `dh FILE` or <dh>: PKCS #3 DH parameters (PEM or DER), checked with Mbed TLS; a DHE
     * suite (offered by Mbed TLS's default list or named by tls-cipher) uses this group, as
     * 2.6 does. Empty with `dh none` or no dh line (Mbed TLS's built-in 2048-bit group). */
    struct config_blob dh;
    int tls_wrap_mode;               /* CONFIG_TLS_WRAP_*: the key all clients share */
    struct config_blob tls_wrap_key; /* "OpenVPN Static key V1" text, file or inline */
    /* `tls-crypt-v2 FILE`: the server key (PEM) that unwraps each client's own key; with
     * tls-auth or tls-crypt beside it, clients with either kind of profile connect (2.6) */
    bool has_tls_crypt_v2;
    struct config_blob tls_crypt_v2_key;
    int tls_crypt_v2_max_age_days; /* `tls-crypt-v2-max-age DAYS` (2.7); 0 = no limit */
    int key_direction;             /* CONFIG_KEY_DIRECTION_*; tls-auth only */
    char *auth;                    /* digest for tls-auth, upper case; default "SHA1" */
    char *data_ciphers;            /* colon list, canonical upper case names; AEAD ciphers only */
    char *data_ciphers_fallback;   /* cipher for clients that cannot negotiate; NULL if unset */
    char *cipher; /* `cipher X`, upper case, NULL if unset: only named in the OCC string, like
                   * a 2.6 server (options.c, options_postprocess_cipher); never negotiated */
    int replay_window, replay_time_s; /* default 64, 15 (openvpn packet_id.h) */
    bool no_replay;                   /* always false: `no-replay` is refused with AEAD */
    /* `keying-material-exporter LABEL LEN`: LEN bytes (16..4095) exported from each TLS session
     * under LABEL (RFC 5705), given to TLS_FINAL plugins as exported_keying_material in hex */
    char *ekm_label; /* NULL = none */
    int ekm_len;
    bool force_ekm;         /* `force-tls-key-material-export`: refuse clients without TLS-EKM */
    char *tls_version_min;  /* "1.0", "1.1" or "1.2"; default "1.2" */
    char *tls_version_max;  /* same set, NULL = no maximum */
    char *tls_groups;       /* tls-groups LIST as given, NULL = default order */
    char *tls_cipher;       /* tls-cipher LIST as given, NULL = Mbed TLS's default */
    char *tls_cert_profile; /* legacy|insecure|preferred|suiteb, NULL = Mbed TLS's */
    int verify_client_cert; /* CONFIG_VERIFY_* */
    char *verify_client_cert_where; /* "FILE:LINE" of `verify-client-cert`, for start-up
                                     * errors; NULL when the config has none */
    bool remote_cert_tls_client;    /* `remote-cert-tls client`: client certs need the
                                     * TLS Web Client Authentication EKU and a key usage */
    struct config_blob crl;         /* `crl-verify FILE`: PEM/DER CRL(s), checked when parsed */
    char *crl_file;                 /* its path, to re-read when it changes; NULL when inline */
    /* `peer-fingerprint`: SHA-256 digests of the client certificates admitted, in config order
     * (several lines and <peer-fingerprint> blocks add up, as in 2.6). Without `ca` they stand
     * in for the CA (self-signed certificates); with it they are checked as well. */
    uint8_t (*peer_fingerprints)[32];
    size_t n_peer_fingerprints;
    /* `verify-hash` (deprecated in 2.6): fingerprints of the CA certificate at depth 1 of the
     * client's chain, verify_hash_len bytes each (20 SHA-1, 32 SHA-256; zero-padded to 32) */
    uint8_t (*verify_hashes)[32];
    size_t n_verify_hashes, verify_hash_len;
    int ns_cert_type; /* `ns-cert-type`: CONFIG_NS_CERT_TYPE_* */
    /* `verify-x509-name NAME [subject|name|name-prefix]`: NULL = not given */
    char *verify_x509_name;
    int verify_x509_type; /* CERT_CHECK_X509_* (proto/cert_check.h); default subject, as 2.6 */
    /* `remote-cert-ku [HEX...]`: the client certificate needs a key usage extension, and with
     * values its key usage bits include all bits of one of them (2.6 ssl_verify_mbedtls.c) */
    bool has_remote_cert_ku;
    unsigned remote_cert_ku[CONFIG_MAX_REMOTE_CERT_KU];
    size_t n_remote_cert_ku;
    char *remote_cert_eku; /* `remote-cert-eku OID-or-name`: NULL = not checked */
    /* management-query-passwords and an encrypted `key` without `askpass FILE`: key holds the
     * encrypted text until start-up asks for its password (config_key_unlock); the SHA-256 of
     * that text tells a reload whether the key file changed */
    bool is_key_locked;
    uint8_t key_locked_sha256[32];
};

/* Certificate options beyond ca/cert/key (config_cert.c; openvpn 2.6 options.c, ssl_verify.c) */
struct config_cert {
    /* `x509-username-field FIELD...`: the fields the client's name is made of (struct
     * cert_name_field, proto/cert_name.h), owned; NULL = the common name, as without it */
    struct cert_name_field *username_fields;
    size_t n_username_fields;
    struct config_blob extra_certs; /* `extra-certs`: PEM, appended to tls.cert when checked */
    char *crl_dir;                  /* `crl-verify DIR dir`: absolute path; NULL = not given */
    /* `capath DIR`: absolute path (inside the chroot); NULL = not given. CA certificates and
     * CRLs in OpenSSL's hashed layout (server/config/capath.h), read when the TLS
     * configuration is built and again when the directory changes */
    char *capath;
    /* `x509-track [+]ATTR` lines, in config order (struct cert_track, proto/cert_name.h); owned,
     * NULL when none: scripts then get every subject field as X509_{depth}_{field} */
    struct cert_track *x509_track;
    size_t n_x509_track;
    char *tls_export_cert_dir; /* `tls-export-cert DIR`: absolute path; NULL = not given */
};

/* Authentication (config_auth.c; openvpn 2.6 options.c and doc/man-sections) */
struct config_auth {
    char **auth_user_pass_verify;        /* `auth-user-pass-verify CMD METHOD`: CMD split into
                                          * words like openvpn's argv_parse_cmd, NULL-terminated;
                                          * NULL = no script */
    bool auth_user_pass_verify_via_file; /* via-file; otherwise via-env */
    bool auth_user_pass_optional;        /* clients may send no username/password */
    bool username_as_common_name;        /* the verified username replaces the CN */
    /* auth-gen-token (config_auth_token.c; openvpn 2.6 options.c, auth_token.c) */
    bool auth_gen_token;           /* `auth-gen-token [lifetime] [renewal-time] [external-auth]` */
    int auth_token_lifetime_s;     /* 0 = tokens live as long as they are renewed */
    int auth_token_renewal_s;      /* renewal-time; reneg_sec when not given */
    bool auth_token_external_auth; /* external-auth: the script and plugins also see tokens */
    bool has_auth_token_secret;    /* `auth-gen-token-secret FILE` was given and read */
    uint8_t auth_token_secret[32]; /* its HMAC-SHA256 key; wiped by config_free */
    struct config_blob auth_token_secret_text; /* the file's text (or inline block) */
};

/* Scripts and plugins (server/hooks) */
struct config_hooks {
    int script_security; /* 0..3, default 1 (built-in commands only) */
    char *tmp_dir;       /* `tmp-dir`; default $TMPDIR or /tmp */
    char **setenv;       /* `setenv NAME VALUE` as "NAME=VALUE", for scripts */
    size_t n_setenv;
    /* Scripts run at the points of openvpn 2.6 of the same name (server/hooks/hooks.h): the command
     * split like auth_user_pass_verify, NULL-terminated; NULL = none. */
    char **tls_verify;             /* `tls-verify CMD` */
    char **tls_crypt_v2_verify;    /* `tls-crypt-v2-verify CMD` */
    char **client_connect;         /* `client-connect CMD` */
    char **client_disconnect;      /* `client-disconnect CMD` */
    char **learn_address;          /* `learn-address CMD` */
    char **up, **down, **route_up; /* `up CMD`, `down CMD`, `route-up CMD` */
    char **route_pre_down;         /* `route-pre-down CMD`: before the routes go, at the end */
    bool down_pre;                 /* `down-pre`: down before the device is closed */
    char **client_crresponse;      /* `client-crresponse CMD` */
    struct config_plugin *plugins; /* `plugin PATH [ARGS...]`, in config order */
    size_t n_plugins;
};

/* Clients */
#define CONFIG_MAX_ROUTES_PER_CLIENT_DEFAULT 256 /* 2.6 options.c */

struct config_clients {
    int max_clients;                          /* default 1024 */
    int connect_freq_max, connect_freq_per_s; /* `connect-freq N SECS`; default 0 0: no limit */
    int connect_freq_initial_max;   /* `connect-freq-initial N SECS`: default 100 per ... */
    int connect_freq_initial_per_s; /* ... 10 s, as 2.6 */
    bool duplicate_cn;
    int explicit_exit_notify; /* 0 unset; N as given, 1 if the directive has no argument */
    /* `inactive N [BYTES]`: a client that moves fewer than BYTES tunnel bytes (any at all when
     * 0) in N seconds is disconnected; 0 = off (2.6 forward.c check_inactivity_timeout) */
    int inactive_s;
    uint64_t inactive_bytes;
    int session_timeout_s;     /* `session-timeout N`: a client is disconnected N s after it
                                * connected; 0 = off */
    int max_routes_per_client; /* `max-routes-per-client N`: default 256 (2.6) */
    /* `stale-routes-check N [T]`: every T seconds (default N), the addresses of a client with no
     * tunnel packet routed to or from it for N seconds are no longer routed (2.6 multi.c
     * check_stale_routes); 0 = off */
    int stale_routes_s, stale_routes_interval_s;
};

/* Process and logging */
struct config_proc {
    int workers; /* `workers N` (ovpnd only): 0 = one per online CPU, resolved by the caller */
    char *user, *group;            /* drop privileges to these after start-up; NULL = stay */
    bool persist_key, persist_tun; /* recorded; ovpnd behaves as if both were always set */
    bool daemonize;                /* `daemon [NAME]` */
    bool mlock;                    /* `mlock`: keep all memory in RAM (mlockall) */
    int nice; /* `nice N`: added to the process's nice value at start-up; 0 = unchanged */
    /* `remap-usr1 SIGHUP|SIGTERM` (0 = none): recorded only. openvpn 2.6 remaps a SIGUSR1 only
     * where it raises one itself (a client instance's restart, or during start-up; sig.c
     * remap_signal); a server sent SIGUSR1 restarts there whatever the setting (multi.c
     * multi_process_signal does not remap), and ovpnd has no restart of its own to remap. */
    int remap_usr1;
    /* `chroot DIR` (absolute; NULL: none): the server chroot()s here once everything opened at
     * start-up is open, before dropping privileges. As in openvpn 2.6, client-config-dir,
     * crl-verify, tls-export-cert, tmp-dir and the scripts run for clients are paths inside it
     * (config_jail_host gives their names outside it, for start-up). */
    char *chroot_dir;
    bool use_syslog;   /* `syslog [NAME]` or `daemon [NAME]`; log_file wins */
    char *syslog_name; /* NAME of the first of those, NULL if it had none */
    char *writepid;
    char *log_file;  /* `log FILE` / `log-append FILE`, the last one wins */
    char *log_where; /* "FILE:LINE" of that line, for the warning when it cannot be opened */
    bool log_append;
    bool suppress_timestamps;
    bool machine_readable_output; /* log lines stamped as 2.6's machine-readable-output */
    int verb;                     /* default 1 */
    int mute;                     /* 0 = off */
};

/* The status file (server/ops/status.h) */
struct config_status {
    char *status_file;
    int status_interval_s; /* default 60; 0 = only when asked or at exit (openvpn status.c) */
    int status_version;    /* 1 (default), 2 or 3 */
};

/* The warning (after "FILE:LINE: ") for `management IP PORT` without a password file, as
 * openvpn 2.6 gives it; a reload leaves it out while the management lines stay the same. */
#define CONFIG_WARN_MGMT_NO_PASSWORD                                                               \
    "management: a TCP port WITHOUT a password file is STRONGLY discouraged and insecure"

/* The management interface (server/ops/mgmt.h): `management IP PORT [PW-FILE]` or
 * `management PATH unix [PW-FILE]` and the directives that modify it (openvpn 2.6 options.c). */
struct config_mgmt {
    char *addr;             /* IP address or unix socket path; NULL: no management interface */
    char *port;             /* the port as written; NULL for a unix socket */
    char *where;            /* "FILE:LINE" of the management line, for start-up errors */
    bool is_unix;           /* `management PATH unix` */
    char *password;         /* the first line of PW-FILE (read while parsing), NULL without one */
    char *client_user;      /* management-client-user: only this user may connect (unix only) */
    char *client_group;     /* management-client-group: the same for a group */
    int log_cache;          /* management-log-cache N: log lines kept for `log all` (default 250) */
    bool hold;              /* management-hold: start serving clients after `hold release` */
    bool signal;            /* management-signal: recorded (a server's listener never resets) */
    bool forget_disconnect; /* management-forget-disconnect: recorded (no passwords to forget) */
    bool client_auth;       /* management-client-auth: management clients admit each client */
    bool up_down;           /* management-up-down: >UPDOWN:UP / DOWN notifications */
    bool connect_out;       /* management-client: connect to addr instead of listening; the
                             * server stops (SIGTERM) when that fails or the link closes */
    bool has_modifiers;     /* some management-* directive was given */
    bool external_key;      /* management-external-key: the management client signs (>PK_SIGN) */
    unsigned external_key_flags; /* its flags, PK_EXT_* of proto/pk_external.h */
    /* management-query-passwords: an encrypted key's password comes from the management client
     * (>PASSWORD), unless `askpass FILE` gives it (2.6 misc.c get_user_pass_cr) */
    bool query_passwords;
    /* management-external-cert TAG: the server certificate comes from the management client
     * (>NEED-CERTIFICATE:TAG) at start-up, instead of `cert`; NULL: not given */
    char *external_cert;
};

/* The server's certificate and key on a PKCS#11 token (server/ops/pkcs11.h), instead of cert and
 * key: pkcs11-providers and the per-provider lists beside it (2.6 options.c, MAX_PARMS). */
#define CONFIG_PKCS11_MAX 15
struct config_pkcs11 {
    char *providers[CONFIG_PKCS11_MAX];       /* pkcs11-providers: the provider libraries */
    size_t n_providers;                       /* 0: no token */
    bool protected_auth[CONFIG_PKCS11_MAX];   /* pkcs11-protected-authentication, by provider */
    unsigned private_mode[CONFIG_PKCS11_MAX]; /* pkcs11-private-mode (hex), by provider */
    bool cert_private[CONFIG_PKCS11_MAX];     /* pkcs11-cert-private, by provider */
    int pin_cache_s;    /* pkcs11-pin-cache: seconds a log-in lasts; -1 (default): for good */
    char *id;           /* pkcs11-id: the certificate's serialized id */
    bool id_management; /* pkcs11-id-management: the id comes from the management client */
    /* "FILE:LINE" of the pkcs11-providers and pkcs11-id (or pkcs11-id-management) lines, for
     * the errors of start-up, where the token is opened; NULL when not given */
    char *providers_where, *id_where;
};

/* ovpnd's own Prometheus endpoint (server/ops/metrics.h); openvpn 2.6 has no such directive. */
struct config_metrics {
    char *host;      /* `metrics HOST PORT`: the address the HTTP endpoint binds; NULL: none */
    int port;        /* 1-65535 */
    bool per_client; /* metrics-per-client: series per connected client, by common name */
};

struct config {
    char *source; /* the config file path as given, or the name passed to config_parse_string */
    char *config_file; /* the first `config FILE` as given (scripts' $config, as 2.6); NULL if
                        * none */
    char *cd_dir;      /* absolute directory from the last `cd`, NULL if none: chdir() here first */

    struct config_net net;
    struct config_timers timers;
    struct config_tls tls;
    struct config_cert cert;
    struct config_auth auth;
    struct config_hooks hooks;
    struct config_clients clients;
    struct config_proc proc;
    struct config_status status;
    struct config_mgmt mgmt;
    struct config_pkcs11 pkcs11;
    struct config_metrics metrics;

    /* Warnings collected while parsing ("FILE:LINE: directive: text"), for the caller to log. */
    char **warnings;
    size_t n_warnings;
    /* Errors, in the same form: every refused line (at most one error per line), then, when
     * every line was accepted, every failed check of the whole config. The first
     * CONFIG_MAX_ERRORS are kept, the others only counted. */
    char **errors;
    size_t n_errors;
    size_t n_errors_dropped;
};

/* Fill cfg with the defaults listed above; call before config_parse_*(). cfg is caller-owned
 * storage; anything in it is overwritten, not freed. If memory is short the string defaults
 * stay NULL and config_parse_*() fills them in (or fails with -ENOMEM). Cannot fail. */
void config_init(struct config *cfg);

/* Parse the config file at path into cfg (prepared by config_init; use each cfg once). Relative
 * paths inside (includes, ca, cert, key, tls-auth, tls-crypt) are opened relative to the
 * process's working directory or the last `cd`, like openvpn. After the last line the whole
 * config is checked: required directives (dev, server, ca, cert, key), combinations, and the
 * certificate, key and tls-auth/tls-crypt files are read and checked.
 *
 * Returns 0, -EINVAL for any configuration problem, or -ENOMEM. On failure errbuf (errbuf_len
 * bytes, may be NULL/0) receives one NUL-terminated line, the first error, e.g.
 * "server.conf:12: port: '70000' is not a port number (1-65535)", cfg->errors holds every error
 * (see there), and cfg holds a partial result that only config_free() may touch. Parsing goes
 * on after a refused line, so one run names all of them. Warnings are in cfg->warnings either
 * way. */
int config_parse_file(struct config *cfg, const char *path, char *errbuf, size_t errbuf_len);

/* Same as config_parse_file() for config text held in memory (NUL-terminated); name stands for
 * the file name in messages and in cfg->source. Meant for tests and for embedding. */
int config_parse_string(struct config *cfg, const char *name, const char *text, char *errbuf,
                        size_t errbuf_len);

/* Same as config_parse_string(), with relative paths resolved against dir (absolute) until a
 * `cd` says otherwise, whatever the process's working directory is: for a reload after start-up
 * chdir()ed into cd_dir, dir being the directory the server started in. dir NULL: the process's
 * working directory, as config_parse_string().
 * running (NULL: none) is the config the server runs with: when it and the new one both have
 * `persist-key`, a key or certificate file (ca, cert, key, extra-certs, dh, tls-auth, tls-crypt,
 * tls-crypt-v2, auth-gen-token-secret) that the process may no longer read (EACCES, EPERM: after
 * `user`/`group`) is taken from running, if it read the same path, with a warning: what
 * persist-key is for. (openvpn 2.6 keeps its keys with persist-key across a SIGUSR1 restart, but
 * its SIGHUP checks the files again and exits: "Options error: --key fails with 'FILE':
 * Permission denied".) The CRL is always read again. */
int config_parse_string_in(struct config *cfg, const char *name, const char *text, const char *dir,
                           const struct config *running, char *errbuf, size_t errbuf_len);

/* management-query-passwords: decrypt cfg's locked key (cfg->tls.is_key_locked) with password
 * (NUL-terminated, borrowed), keep it as unencrypted PEM in memory as an `askpass` password
 * would, and check it against the certificate. Returns 0; -EACCES when the password does not
 * decrypt it (2.6: "private key password verification failed"); -EINVAL when the key does not
 * match the certificate; -ENOMEM. errbuf (errbuf_len bytes) gets the reason. Main thread at
 * start-up, or on a config no other thread uses. */
int config_key_unlock(struct config *cfg, const char *password, char *errbuf, size_t errbuf_len);

/* management-external-cert: pem (the PEM text the management client gave, NUL-terminated,
 * borrowed; or with pkcs11-providers, the token's certificate) becomes cfg's certificate, with
 * extra-certs appended as for `cert`. It must hold a certificate with an RSA or EC key
 * (management-external-key signs with it). Returns 0, -EINVAL (not a certificate; errbuf says why)
 * or -ENOMEM. The same threads as config_key_unlock. */
int config_cert_set_external(struct config *cfg, const char *pem, char *errbuf, size_t errbuf_len);

/* Release everything cfg owns, wiping key material, and zero the struct. The storage itself
 * stays the caller's. config_free(NULL) is a no-op. */
void config_free(struct config *cfg);

/* What a message about the config as a whole names: the first `config FILE` as given (a server
 * started with `--config FILE` reads its lines there), else where the lines came from
 * (cfg->source: a file, or "command line"). Never NULL. */
static inline const char *config_origin(const struct config *cfg)
{
    return cfg->config_file ? cfg->config_file : cfg->source ? cfg->source : "config";
}

/* Cut path, in place, to the directory of the file it names: "a/b" gives "a", "/b" gives "/",
 * and "b" gives "." (so path must have room for 2 bytes). For the start-up checks of files
 * the server will create (log, status). Any thread. */
void config_path_dir(char *path);

#endif /* SERVER_CONFIG_CONFIG_H */
