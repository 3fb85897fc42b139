/* tests/bench/loadgen_config.c: command line, key files, client identity strings. */
#include "tests/bench/loadgen_config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/platform_util.h>

#include "proto/key_method.h"
#include "proto/occ.h"

#define MAX_FILE_LEN (1024 * 1024)

static const char usage_text[] =
    "usage: ovpnd-loadgen --server HOST:PORT --clients N --rate PER_SEC --duration SECS\n"
    "         --ca F --cert F --key F (--tls-crypt F | --tls-auth F [--key-direction 0|1])\n"
    "         [--data-rate PPS_PER_CLIENT] [--payload BYTES] [--server-pid PID] [--json FILE]\n"
    "         [--no-request-push] [--no-ekm] [--cipher NAME] [--bind-range A.B.C.X-Y] [--threads "
    "N]\n"
    "         [--hand-window SECS] [--auth DIGEST] [--concurrency N]\n"
    "         [--barrier FILE --barrier-count K] [--half-open reset|ack] [--comp-lzo] "
    "[--lz4-v2-forge]\n"
    "         [--verbose]\n"
    "         [--username U --password P] [--proto udp|tcp] [--retry [--reconnect]]\n"
    "\n"
    "Plays N OpenVPN 2.6 clients over UDP, or over TCP with --proto tcp (`proto tcp-client`,\n"
    "openvpn's 2-byte length framing, one connection per client; no tun): each connects (tls-crypt "
    "or tls-auth, TLS\n"
    "with the given client certificate, key-method 2, PUSH_REPLY), sends ICMP echo requests from\n"
    "its pushed address to the server's tunnel address and counts the replies, then leaves with\n"
    "an explicit exit. Clients start at --rate per second (0: all at once); once every client is\n"
    "connected (or failed) all of them send data for --duration seconds, then they exit.\n"
    "--concurrency N keeps at most N clients between their start and their connect (a closed\n"
    "loop that measures the server's handshake rate without overloading it). With --barrier\n"
    "FILE --barrier-count K, K load generators started together (each has its own open-file\n"
    "limit) begin the steady phase only once all K have every client connected or failed.\n"
    "--half-open floods with clients that stop after the hard reset (reset) or after ACKing the\n"
    "server's reset (ack); they end as failed \"half-open\" clients.\n"
    "--comp-lzo plays a client with \"comp-lzo\" in its profile that, like clients before 2.4,\n"
    "does not announce IV_COMP_STUBv2: the server then pushes \"comp-lzo no\" (0xFA framing).\n"
    "--lz4-v2-forge plays a client with \"compress lz4-v2\" and \"allow-compression yes\" in its\n"
    "profile (IV_LZ4v2=1): it sends its echo requests LZ4-compressed (50 01), takes compressed\n"
    "replies, and before each request sends one bad compressed payload in turn: a decompression\n"
    "bomb (a block of 60000 zero bytes), a block whose match points before its start, a block cut\n"
    "short, and an unknown 0x50 byte; the server must drop them and carry on.\n"
    "Every client answers the echo requests addressed to its tunnel address (client-to-client).\n"
    "--retry behaves like a stock 2.6 client in a reconnect storm: the hard reset is sent again\n"
    "with the reliability layer's backoff (2 s, doubling), a session not connected within the\n"
    "hand-window starts over with a new session id after connect-retry (1 s, doubled for each\n"
    "failed attempt after the 4th, at most 300 s), and the client fails only when the run ends.\n"
    "The report counts restarts and hard resets sent. UDP only.\n"
    "--reconnect (with --retry): a connected client that hears nothing for the pushed\n"
    "ping-restart starts a new session after connect-retry, from the same socket, as a 2.6\n"
    "client's ping-restart does (counted in restarts), instead of failing.\n"
    "--username and --password go into key-method 2 as given, byte for byte (a stock client\n"
    "drops control characters from its auth-user-pass file; this one does not).\n"
    "Exit status 0 when every client connected and completed its exit, 1 otherwise.\n";

enum {
    OPT_SERVER = 256,
    OPT_CLIENTS,
    OPT_RATE,
    OPT_DURATION,
    OPT_CA,
    OPT_CERT,
    OPT_KEY,
    OPT_TLS_CRYPT,
    OPT_TLS_AUTH,
    OPT_KEY_DIRECTION,
    OPT_DATA_RATE,
    OPT_PAYLOAD,
    OPT_SERVER_PID,
    OPT_JSON,
    OPT_NO_REQUEST_PUSH,
    OPT_NO_EKM,
    OPT_CIPHER,
    OPT_BIND_RANGE,
    OPT_THREADS,
    OPT_HAND_WINDOW,
    OPT_AUTH,
    OPT_VERBOSE,
    OPT_CONCURRENCY,
    OPT_BARRIER,
    OPT_BARRIER_COUNT,
    OPT_HALF_OPEN,
    OPT_COMP_LZO,
    OPT_LZ4V2_FORGE,
    OPT_USERNAME,
    OPT_PASSWORD,
    OPT_PROTO,
    OPT_RETRY,
    OPT_RECONNECT,
    OPT_HELP,
};

static const struct option long_options[] = {
    {"server", required_argument, NULL, OPT_SERVER},
    {"clients", required_argument, NULL, OPT_CLIENTS},
    {"rate", required_argument, NULL, OPT_RATE},
    {"duration", required_argument, NULL, OPT_DURATION},
    {"ca", required_argument, NULL, OPT_CA},
    {"cert", required_argument, NULL, OPT_CERT},
    {"key", required_argument, NULL, OPT_KEY},
    {"tls-crypt", required_argument, NULL, OPT_TLS_CRYPT},
    {"tls-auth", required_argument, NULL, OPT_TLS_AUTH},
    {"key-direction", required_argument, NULL, OPT_KEY_DIRECTION},
    {"data-rate", required_argument, NULL, OPT_DATA_RATE},
    {"payload", required_argument, NULL, OPT_PAYLOAD},
    {"server-pid", required_argument, NULL, OPT_SERVER_PID},
    {"json", required_argument, NULL, OPT_JSON},
    {"no-request-push", no_argument, NULL, OPT_NO_REQUEST_PUSH},
    {"no-ekm", no_argument, NULL, OPT_NO_EKM},
    {"cipher", required_argument, NULL, OPT_CIPHER},
    {"bind-range", required_argument, NULL, OPT_BIND_RANGE},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"hand-window", required_argument, NULL, OPT_HAND_WINDOW},
    {"auth", required_argument, NULL, OPT_AUTH},
    {"verbose", no_argument, NULL, OPT_VERBOSE},
    {"concurrency", required_argument, NULL, OPT_CONCURRENCY},
    {"barrier", required_argument, NULL, OPT_BARRIER},
    {"barrier-count", required_argument, NULL, OPT_BARRIER_COUNT},
    {"half-open", required_argument, NULL, OPT_HALF_OPEN},
    {"comp-lzo", no_argument, NULL, OPT_COMP_LZO},
    {"lz4-v2-forge", no_argument, NULL, OPT_LZ4V2_FORGE},
    {"username", required_argument, NULL, OPT_USERNAME},
    {"password", required_argument, NULL, OPT_PASSWORD},
    {"proto", required_argument, NULL, OPT_PROTO},
    {"retry", no_argument, NULL, OPT_RETRY},
    {"reconnect", no_argument, NULL, OPT_RECONNECT},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

static int read_file(const char *path, struct loadgen_blob *out, char *errbuf, size_t errbuf_len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t len = 0;

    if (!f) {
        snprintf(errbuf, errbuf_len, "%s: %s", path, strerror(errno));
        return -1;
    }
    buf = malloc(MAX_FILE_LEN + 1);
    if (!buf) {
        fclose(f);
        snprintf(errbuf, errbuf_len, "%s: out of memory", path);
        return -1;
    }
    len = fread(buf, 1, MAX_FILE_LEN + 1, f);
    if (ferror(f) || len > MAX_FILE_LEN) {
        snprintf(errbuf, errbuf_len, "%s: %s", path, ferror(f) ? "read error" : "file too big");
        fclose(f);
        free(buf);
        return -1;
    }
    fclose(f);
    buf[len] = '\0';
    if (out->data) {
        mbedtls_platform_zeroize(out->data, out->len);
        free(out->data);
    }
    out->data = buf;
    out->len = len + 1;
    return 0;
}

static bool parse_double(const char *s, double min, double max, double *out)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (errno || end == s || *end != '\0' || !(v >= min && v <= max)) {
        return false;
    }
    *out = v;
    return true;
}

static bool parse_long(const char *s, long min, long max, long *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < min || v > max) {
        return false;
    }
    *out = v;
    return true;
}

/* "HOST:PORT" with a dotted IPv4 host. */
static bool parse_server(const char *s, struct sockaddr_in *out)
{
    char host[64];
    const char *colon = strrchr(s, ':');
    long port;

    if (!colon || (size_t)(colon - s) >= sizeof(host) || !parse_long(colon + 1, 1, 65535, &port)) {
        return false;
    }
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = '\0';
    memset(out, 0, sizeof(*out));
    out->sin_family = AF_INET;
    out->sin_port = htons((uint16_t)port);
    return inet_pton(AF_INET, host, &out->sin_addr) == 1;
}

/* "A.B.C.X-Y" (last octet range) or a single "A.B.C.D". */
static bool parse_bind_range(const char *s, uint32_t *first, uint32_t *last)
{
    char buf[64];
    const char *dash = strchr(s, '-');
    struct in_addr a;
    long y;

    if (strlen(s) >= sizeof(buf)) {
        return false;
    }
    strcpy(buf, s);
    if (dash) {
        buf[dash - s] = '\0';
    }
    if (inet_pton(AF_INET, buf, &a) != 1) {
        return false;
    }
    *first = ntohl(a.s_addr);
    *last = *first;
    if (dash) {
        if (!parse_long(dash + 1, (long)(*first & 0xFF), 255, &y)) {
            return false;
        }
        *last = (*first & 0xFFFFFF00u) | (uint32_t)y;
    }
    return true;
}

static int load_wrap_key(struct loadgen_config *cfg, const char *path, enum tls_wrap_mode mode,
                         char *errbuf, size_t errbuf_len)
{
    struct loadgen_blob b = {NULL, 0};
    int err;

    if (cfg->wrap_mode != TLS_WRAP_NONE) {
        snprintf(errbuf, errbuf_len, "give only one of --tls-crypt and --tls-auth");
        return -1;
    }
    if (read_file(path, &b, errbuf, errbuf_len)) {
        return -1;
    }
    err = static_key_parse((const char *)b.data, b.len - 1, cfg->wrap_key);
    mbedtls_platform_zeroize(b.data, b.len);
    free(b.data);
    if (err) {
        snprintf(errbuf, errbuf_len, "%s: not an OpenVPN static key file", path);
        return -1;
    }
    cfg->wrap_mode = mode;
    return 0;
}

/* One option; returns 0, -1 (error written) or 1 (--help). */
static int apply_option(struct loadgen_config *cfg, int opt, const char *arg, char *errbuf,
                        size_t errbuf_len)
{
    long l;

    switch (opt) {
    case OPT_SERVER:
        if (!parse_server(arg, &cfg->server)) {
            snprintf(errbuf, errbuf_len, "--server %s: want IPV4:PORT", arg);
            return -1;
        }
        return 0;
    case OPT_CLIENTS:
        if (!parse_long(arg, 1, LOADGEN_MAX_CLIENTS, &l)) {
            snprintf(errbuf, errbuf_len, "--clients %s: want 1..%d", arg, LOADGEN_MAX_CLIENTS);
            return -1;
        }
        cfg->n_clients = (size_t)l;
        return 0;
    case OPT_RATE:
        if (!parse_double(arg, 0, 1e6, &cfg->rate_per_s)) {
            snprintf(errbuf, errbuf_len, "--rate %s: want a number >= 0", arg);
            return -1;
        }
        return 0;
    case OPT_DURATION:
        if (!parse_double(arg, 0, 86400, &cfg->duration_s)) {
            snprintf(errbuf, errbuf_len, "--duration %s: want 0..86400 seconds", arg);
            return -1;
        }
        return 0;
    case OPT_CA:
        return read_file(arg, &cfg->ca, errbuf, errbuf_len);
    case OPT_CERT:
        return read_file(arg, &cfg->cert, errbuf, errbuf_len);
    case OPT_KEY:
        return read_file(arg, &cfg->key, errbuf, errbuf_len);
    case OPT_TLS_CRYPT:
        return load_wrap_key(cfg, arg, TLS_WRAP_CRYPT, errbuf, errbuf_len);
    case OPT_TLS_AUTH:
        return load_wrap_key(cfg, arg, TLS_WRAP_AUTH, errbuf, errbuf_len);
    case OPT_KEY_DIRECTION:
        if (!parse_long(arg, 0, 1, &l)) {
            snprintf(errbuf, errbuf_len, "--key-direction %s: want 0 or 1", arg);
            return -1;
        }
        cfg->key_direction = (int)l;
        return 0;
    case OPT_DATA_RATE:
        if (!parse_double(arg, 0, 1e6, &cfg->data_pps)) {
            snprintf(errbuf, errbuf_len, "--data-rate %s: want a number >= 0", arg);
            return -1;
        }
        return 0;
    case OPT_PAYLOAD:
        if (!parse_long(arg, 8, 1400, &l)) {
            snprintf(errbuf, errbuf_len, "--payload %s: want 8..1400 bytes", arg);
            return -1;
        }
        cfg->payload_len = (size_t)l;
        return 0;
    case OPT_SERVER_PID:
        if (!parse_long(arg, 1, 1L << 30, &cfg->server_pid)) {
            snprintf(errbuf, errbuf_len, "--server-pid %s: not a pid", arg);
            return -1;
        }
        return 0;
    case OPT_JSON:
        cfg->json_path = arg;
        return 0;
    case OPT_NO_REQUEST_PUSH:
        cfg->no_request_push = true;
        return 0;
    case OPT_NO_EKM:
        cfg->no_ekm = true;
        return 0;
    case OPT_CIPHER:
        if (strlen(arg) == 0 || strlen(arg) > 60 || strpbrk(arg, ",: \t\r\n")) {
            snprintf(errbuf, errbuf_len, "--cipher %s: want one cipher name", arg);
            return -1;
        }
        cfg->cipher = arg;
        return 0;
    case OPT_BIND_RANGE:
        if (!parse_bind_range(arg, &cfg->bind_first, &cfg->bind_last)) {
            snprintf(errbuf, errbuf_len, "--bind-range %s: want A.B.C.X-Y", arg);
            return -1;
        }
        return 0;
    case OPT_THREADS:
        if (!parse_long(arg, 1, LOADGEN_MAX_THREADS, &l)) {
            snprintf(errbuf, errbuf_len, "--threads %s: want 1..%d", arg, LOADGEN_MAX_THREADS);
            return -1;
        }
        cfg->n_threads = (int)l;
        return 0;
    case OPT_HAND_WINDOW:
        if (!parse_long(arg, 1, 3600, &l)) {
            snprintf(errbuf, errbuf_len, "--hand-window %s: want 1..3600 seconds", arg);
            return -1;
        }
        cfg->hand_window_s = (int)l;
        return 0;
    case OPT_AUTH:
        cfg->auth = arg;
        return 0;
    case OPT_VERBOSE:
        cfg->verbose = true;
        return 0;
    case OPT_CONCURRENCY:
        if (!parse_long(arg, 0, LOADGEN_MAX_CLIENTS, &l)) {
            snprintf(errbuf, errbuf_len, "--concurrency %s: want 0..%d", arg, LOADGEN_MAX_CLIENTS);
            return -1;
        }
        cfg->concurrency = (size_t)l;
        return 0;
    case OPT_BARRIER:
        cfg->barrier_path = arg;
        return 0;
    case OPT_BARRIER_COUNT:
        if (!parse_long(arg, 1, 1000, &l)) {
            snprintf(errbuf, errbuf_len, "--barrier-count %s: want 1..1000", arg);
            return -1;
        }
        cfg->barrier_count = l;
        return 0;
    case OPT_HALF_OPEN:
        if (strcmp(arg, "reset") == 0) {
            cfg->half_open = LOADGEN_HALF_OPEN_RESET;
        } else if (strcmp(arg, "ack") == 0) {
            cfg->half_open = LOADGEN_HALF_OPEN_ACK;
        } else {
            snprintf(errbuf, errbuf_len, "--half-open %s: want reset or ack", arg);
            return -1;
        }
        return 0;
    case OPT_COMP_LZO:
        cfg->comp_lzo = true;
        return 0;
    case OPT_PROTO:
        if (strcmp(arg, "udp") != 0 && strcmp(arg, "tcp") != 0) {
            snprintf(errbuf, errbuf_len, "--proto %s: want udp or tcp", arg);
            return -1;
        }
        cfg->is_tcp = strcmp(arg, "tcp") == 0;
        return 0;
    case OPT_LZ4V2_FORGE:
        cfg->lz4v2_forge = true;
        return 0;
    case OPT_RETRY:
        cfg->retry = true;
        return 0;
    case OPT_RECONNECT:
        cfg->reconnect = true;
        return 0;
    case OPT_USERNAME:
    case OPT_PASSWORD:
        if (strlen(arg) >= KEY_METHOD2_USERPASS_MAX) {
            snprintf(errbuf, errbuf_len, "--%s: at most %d bytes",
                     opt == OPT_USERNAME ? "username" : "password", KEY_METHOD2_USERPASS_MAX - 1);
            return -1;
        }
        *(opt == OPT_USERNAME ? &cfg->username : &cfg->password) = arg;
        return 0;
    case OPT_HELP:
        fputs(usage_text, stdout);
        return 1;
    default:
        snprintf(errbuf, errbuf_len, "unknown option (see --help)");
        return -1;
    }
}

int loadgen_config_parse(struct loadgen_config *cfg, int argc, char **argv, char *errbuf,
                         size_t errbuf_len)
{
    bool has_rate = false, has_duration = false;
    int opt;

    memset(cfg, 0, sizeof(*cfg));
    cfg->data_pps = 1;
    cfg->payload_len = 56; /* what ping sends by default */
    cfg->n_threads = 1;
    cfg->hand_window_s = 60; /* 2.6 --hand-window default */
    cfg->key_direction = -1;
    optind = 0; /* glibc: full re-initialisation, so the parser can run more than once */
    while ((opt = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
        int ret = apply_option(cfg, opt == 'h' ? OPT_HELP : opt, optarg, errbuf, errbuf_len);

        if (ret) {
            return ret;
        }
        has_rate |= opt == OPT_RATE;
        has_duration |= opt == OPT_DURATION;
    }
    if (optind < argc) {
        snprintf(errbuf, errbuf_len, "unexpected argument '%s' (see --help)", argv[optind]);
        return -1;
    }
    if (!cfg->server.sin_port || !cfg->n_clients || !has_rate || !has_duration) {
        snprintf(errbuf, errbuf_len, "--server, --clients, --rate and --duration are required");
        return -1;
    }
    if (!cfg->ca.data || !cfg->cert.data || !cfg->key.data) {
        snprintf(errbuf, errbuf_len, "--ca, --cert and --key are required");
        return -1;
    }
    if (cfg->wrap_mode == TLS_WRAP_NONE) {
        snprintf(errbuf, errbuf_len, "one of --tls-crypt and --tls-auth is required");
        return -1;
    }
    if (cfg->reconnect && !cfg->retry) {
        snprintf(errbuf, errbuf_len, "--reconnect goes with --retry");
        return -1;
    }
    if (cfg->retry && (cfg->is_tcp || cfg->half_open != LOADGEN_HALF_OPEN_NONE)) {
        snprintf(errbuf, errbuf_len, "--retry goes with UDP clients that are not --half-open");
        return -1;
    }
    if (!cfg->barrier_path != !cfg->barrier_count) {
        snprintf(errbuf, errbuf_len, "--barrier and --barrier-count go together");
        return -1;
    }
    if ((size_t)cfg->n_threads > cfg->n_clients) {
        cfg->n_threads = (int)cfg->n_clients;
    }
    return 0;
}

static void blob_free(struct loadgen_blob *b)
{
    if (b->data) {
        mbedtls_platform_zeroize(b->data, b->len);
    }
    free(b->data);
    b->data = NULL;
    b->len = 0;
}

void loadgen_config_clear(struct loadgen_config *cfg)
{
    blob_free(&cfg->ca);
    blob_free(&cfg->cert);
    blob_free(&cfg->key);
    mbedtls_platform_zeroize(cfg->wrap_key, sizeof(cfg->wrap_key));
}

int loadgen_peer_info(const struct loadgen_config *cfg, char *out, size_t cap)
{
    int n = snprintf(out, cap,
                     "IV_VER=2.6.14\nIV_PLAT=linux\nIV_TCPNL=1\nIV_MTU=1600\nIV_NCP=2\n"
                     "IV_CIPHERS=%s\nIV_PROTO=%u\n%sIV_LZO_STUB=1\nIV_COMP_STUB=1\n%s",
                     cfg->cipher ? cfg->cipher : LOADGEN_DEFAULT_CIPHERS,
                     (cfg->no_request_push ? LOADGEN_IV_PROTO & ~4u : LOADGEN_IV_PROTO) &
                         (cfg->no_ekm ? ~8u : ~0u),
                     cfg->lz4v2_forge ? "IV_LZ4=1\nIV_LZ4v2=1\n" : "",
                     cfg->comp_lzo ? "" : "IV_COMP_STUBv2=1\n");

    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

int loadgen_options_string(const struct loadgen_config *cfg, char *out, size_t cap)
{
    struct occ_options o;

    occ_options_init(&o);
    o.is_server = false;
    o.tls_auth = cfg->wrap_mode == TLS_WRAP_AUTH;
    o.keydir = o.tls_auth ? cfg->key_direction : -1;
    o.auth = cfg->auth;
    o.comp = o.comp_v1_framing = cfg->comp_lzo; /* ",comp-lzo", one framing byte in link-mtu */
    o.is_tcp = cfg->is_tcp;                     /* "proto TCPv4_CLIENT" */
    if (cfg->lz4v2_forge) {
        o.comp = true; /* 2.6 writes ",comp-lzo" for any compression option */
    }
    if (cfg->cipher) {
        o.cipher = cfg->cipher;
        o.cipher_in_data_ciphers = true;
    }
    return occ_options_string(&o, out, cap);
}
