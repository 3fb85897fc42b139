/* tests/bench/loadgen_config.h: the load generator's command line, key files and the strings its
 * simulated clients send (options string and peer-info, like an openvpn 2.6.14 client).
 *
 * Main thread only while parsing; the finished struct is read-only and shared by all workers.
 */
#ifndef TESTS_BENCH_LOADGEN_CONFIG_H
#define TESTS_BENCH_LOADGEN_CONFIG_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/static_key.h"
#include "proto/tls_wrap.h"

#define LOADGEN_MAX_CLIENTS 100000
#define LOADGEN_MAX_THREADS 64
#define LOADGEN_PEER_INFO_MAX 512
/* What openvpn 2.6.14 announces by default (ssl.c push_peer_info, captured). */
#define LOADGEN_DEFAULT_CIPHERS "AES-256-GCM:AES-128-GCM:CHACHA20-POLY1305"
#define LOADGEN_IV_PROTO 990u /* bits 1,2,3,4,6,7,8,9 */

/* A file read whole, NUL-terminated; len includes the NUL (what mbedtls_x509_crt_parse wants). */
struct loadgen_blob {
    uint8_t *data;
    size_t len;
};

/* --half-open: clients that stop part-way, to flood a server with half-open sessions. */
enum loadgen_half_open {
    LOADGEN_HALF_OPEN_NONE = 0,
    LOADGEN_HALF_OPEN_RESET, /* send the hard reset only; never answer the server's reset */
    LOADGEN_HALF_OPEN_ACK,   /* ACK the server's reset (the server creates a session), no TLS */
};

struct loadgen_config {
    struct sockaddr_in server;
    size_t n_clients;
    double rate_per_s;  /* clients started per second; 0: all at once */
    double duration_s;  /* steady phase: every client connected, sending data */
    double data_pps;    /* echo requests per second and client; 0: none */
    size_t payload_len; /* ICMP payload bytes per echo request */
    long server_pid;    /* 0: no RSS measurement */
    const char *json_path;
    bool no_request_push; /* IV_PROTO without REQUEST_PUSH; PUSH_REQUEST right away */
    bool no_ekm;          /* IV_PROTO without TLS_KEY_EXPORT: data keys from the OpenVPN PRF */
    const char *cipher;   /* --cipher: the only data cipher offered; NULL: 2.6's default list */
    uint32_t bind_first, bind_last; /* host order source addresses; 0: kernel's choice */
    int n_threads;
    int hand_window_s; /* a client that is not connected this long after its start fails */
    /* --retry: as a stock client, a session not connected within hand_window_s starts over
     * after connect-retry (1 s, doubling after the 4th failed attempt, at most 300 s) instead
     * of failing; UDP only */
    bool retry;
    /* --reconnect (with retry): ping-restart starts a new session instead of failing */
    bool reconnect;
    size_t concurrency;       /* at most this many clients between start and connect; 0: no limit */
    const char *barrier_path; /* --barrier: shared with other processes of one run, or NULL */
    long barrier_count;       /* processes that must reach the barrier before the steady phase */
    enum loadgen_half_open half_open;
    bool comp_lzo; /* --comp-lzo: ",comp-lzo" in the options, no IV_COMP_STUBv2 in the peer info */
    bool is_tcp;   /* --proto tcp: one TCP connection per client, 2-byte length framing */
    bool lz4v2_forge; /* --lz4-v2-forge: a "compress lz4-v2" client that also sends bad blocks */
    bool verbose;
    struct loadgen_blob ca, cert, key;
    enum tls_wrap_mode wrap_mode;
    uint8_t wrap_key[STATIC_KEY_LEN];
    int key_direction; /* tls-auth: -1 none, 0 or 1 */
    const char *auth;  /* tls-auth digest, NULL: SHA1 */

    /* --username, --password: key-method 2's, byte for byte; NULL: "" (argv's, not copied) */
    const char *username, *password;
};

/* Parse argv into *cfg (zeroed first) and read the files it names. On a bad command line or an
 * unreadable/invalid file writes a message to errbuf and returns -1; for --help prints the usage
 * to stdout and returns 1; 0 on success. Call loadgen_config_clear() in every case. */
int loadgen_config_parse(struct loadgen_config *cfg, int argc, char **argv, char *errbuf,
                         size_t errbuf_len);

/* Free the file contents and wipe the key material. */
void loadgen_config_clear(struct loadgen_config *cfg);

/* The peer-info text a 2.6.14 client with a plain "client" config sends (captured):
 * IV_VER=2.6.14, IV_PLAT=linux, IV_TCPNL=1, IV_MTU=1600, IV_NCP=2, IV_CIPHERS=<list>,
 * IV_PROTO=990 (986 with no_request_push), IV_LZO_STUB=1, IV_COMP_STUB=1, IV_COMP_STUBv2=1
 * (left out with comp_lzo, as by clients older than 2.4), each line ending in '\n'. Writes a
 * NUL-terminated string to out (cap bytes). Returns 0 or -1 when it does not fit. */
int loadgen_peer_info(const struct loadgen_config *cfg, char *out, size_t cap);

/* The OCC options string of a 2.6 client with this configuration (proto/occ.h), e.g.
 * "V4,dev-type tun,link-mtu 1541,tun-mtu 1500,proto UDPv4,auth SHA1,keysize 128,key-method 2,
 * tls-client" without --cipher. Returns 0 or a -PE_* from occ_options_string(). */
int loadgen_options_string(const struct loadgen_config *cfg, char *out, size_t cap);

#endif /* TESTS_BENCH_LOADGEN_CONFIG_H */
