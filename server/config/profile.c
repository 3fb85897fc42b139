/* server/config/profile.c: `ovpnd profile`, an inline client profile from the server config
 * (see profile.h). Option meanings on the client side: openvpn 2.6 doc/man-sections
 * (client-options.rst, tls-options.rst); OpenVPN Connect takes the same spellings. */
#include "server/config/profile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <mbedtls/oid.h>
#include <mbedtls/pem.h>
#include <mbedtls/pk.h>
#include <mbedtls/platform_util.h>
#include <mbedtls/x509_crl.h>
#include <mbedtls/x509_crt.h>

#include "proto/comp.h"
#include "proto/tls_crypt_v2.h"
#include "server/config/capath.h"
#include "server/config/config.h"
#include "server/config/genkey.h"

#define PROFILE_MAX_REMOTES 8
#define PROFILE_FILE_MAX (1024 * 1024) /* a certificate or key file; more is not one */
#define PROFILE_V2_KEY_MAX 4096        /* a tls-crypt-v2 client key's PEM text */

struct profile_remote {
    const char *host;
    const char *port;  /* NULL: the server's */
    const char *proto; /* NULL: each socket of the server; else "udp" or "tcp" */
};

struct profile_args {
    const char *config;
    struct profile_remote remotes[PROFILE_MAX_REMOTES];
    size_t n_remotes;
    const char *cert, *key, *out, *v2_key, *v2_metadata;
    bool has_auth_user_pass, no_verify_name, no_v2;
};

/* The profile text, grown as it is written; secret (it holds the client key). */
struct text {
    char *p;
    size_t len, cap;
    bool has_failed;
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ovpnd profile [--config] SERVER-CONFIG --remote HOST [PORT [udp|tcp]]...\n"
            "                     [--cert FILE --key FILE] [--out FILE]\n"
            "                     [--tls-crypt-v2-key FILE | --tls-crypt-v2-metadata BASE64]\n"
            "                     [--auth-user-pass] [--no-verify-x509-name] [--no-tls-crypt-v2]\n"
            "\n"
            "Writes an inline client profile (.ovpn) for the server that SERVER-CONFIG runs:\n"
            "proto and port, data-ciphers, compression, fragment and the tls-auth/tls-crypt key\n"
            "come from it, as do the ca; --cert/--key are the client's certificate and key\n"
            "(PEM). With tls-crypt-v2 a new client key is made from the server key (METADATA:\n"
            "base64 user data for tls-crypt-v2-verify; default the creation time) unless\n"
            "--tls-crypt-v2-key names one; --no-tls-crypt-v2 gives the server's\n"
            "tls-auth/tls-crypt key instead where it has both. --out FILE is written with mode\n"
            "0600; default standard output.\n");
}

static void text_add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void text_add(struct text *t, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (t->has_failed) {
        return;
    }
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        t->has_failed = true;
        return;
    }
    if (t->len + (size_t)n + 1 > t->cap) {
        size_t cap = (t->len + (size_t)n + 1) * 2;
        char *p = malloc(cap);

        if (!p) {
            t->has_failed = true;
            return;
        }
        if (t->p) {
            memcpy(p, t->p, t->len);
            mbedtls_platform_zeroize(t->p, t->cap);
            free(t->p);
        }
        t->p = p;
        t->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

static void text_wipe(struct text *t)
{
    if (t->p) {
        mbedtls_platform_zeroize(t->p, t->cap);
        free(t->p);
    }
    memset(t, 0, sizeof(*t));
}

/* The whole file at path, NUL-terminated, into *data (malloc'd; the caller wipes and frees it),
 * its length without the NUL in *len. */
static int read_file(const char *what, const char *path, char **data, size_t *len)
{
    FILE *f = fopen(path, "re");
    char *buf = malloc(PROFILE_FILE_MAX);
    size_t n;

    if (!f || !buf) {
        fprintf(stderr, "ovpnd profile: %s: cannot read %s: %s\n", what, path,
                f ? "out of memory" : strerror(errno));
        free(buf);
        if (f) {
            fclose(f);
        }
        return -1;
    }
    n = fread(buf, 1, PROFILE_FILE_MAX - 1, f);
    if (ferror(f) || n == PROFILE_FILE_MAX - 1) {
        fprintf(stderr, "ovpnd profile: %s: cannot read %s%s\n", what, path,
                ferror(f) ? "" : ": more than 1 MiB");
        fclose(f);
        mbedtls_platform_zeroize(buf, PROFILE_FILE_MAX);
        free(buf);
        return -1;
    }
    fclose(f);
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return 0;
}

static bool is_pem(const char *data)
{
    return data && strstr(data, "-----BEGIN ") != NULL;
}

/* "<tag>\nDATA\n</tag>\n", with the newline before the closing tag only when DATA lacks it. */
static void add_inline(struct text *t, const char *tag, const char *data, size_t len)
{
    bool has_nl = len > 0 && data[len - 1] == '\n';

    text_add(t, "<%s>\n%.*s%s</%s>\n", tag, (int)len, data, has_nl ? "" : "\n", tag);
}

static int parse_args(int argc, char **argv, struct profile_args *a)
{
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        bool has_arg = i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0;

        if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(o, "--remote") == 0) {
            struct profile_remote *r = &a->remotes[a->n_remotes];

            if (!has_arg || a->n_remotes == PROFILE_MAX_REMOTES) {
                fprintf(stderr, "ovpnd profile: --remote HOST [PORT [udp|tcp]] (at most %d)\n",
                        PROFILE_MAX_REMOTES);
                return -1;
            }
            memset(r, 0, sizeof(*r));
            r->host = argv[++i];
            if (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) {
                char *end;
                long port = strtol(argv[++i], &end, 10);

                if (*end != '\0' || port < 1 || port > 65535) {
                    fprintf(stderr, "ovpnd profile: --remote: '%s' is not a port number\n",
                            argv[i]);
                    return -1;
                }
                r->port = argv[i];
            }
            if (r->port && i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) {
                r->proto = argv[++i];
                if (strcmp(r->proto, "udp") != 0 && strcmp(r->proto, "tcp") != 0) {
                    fprintf(stderr, "ovpnd profile: --remote: protocol '%s' is not udp or tcp\n",
                            r->proto);
                    return -1;
                }
            }
            if (strpbrk(r->host, " \t\"'\\#;") != NULL) {
                fprintf(stderr, "ovpnd profile: --remote: '%s' is not a host name\n", r->host);
                return -1;
            }
            a->n_remotes++;
            continue;
        } else if (strcmp(o, "--auth-user-pass") == 0) {
            a->has_auth_user_pass = true;
            continue;
        } else if (strcmp(o, "--no-verify-x509-name") == 0) {
            a->no_verify_name = true;
            continue;
        } else if (strcmp(o, "--no-tls-crypt-v2") == 0) {
            a->no_v2 = true;
            continue;
        }
        const char **dst = strcmp(o, "--config") == 0                  ? &a->config
                           : strcmp(o, "--cert") == 0                  ? &a->cert
                           : strcmp(o, "--key") == 0                   ? &a->key
                           : strcmp(o, "--out") == 0                   ? &a->out
                           : strcmp(o, "--tls-crypt-v2-key") == 0      ? &a->v2_key
                           : strcmp(o, "--tls-crypt-v2-metadata") == 0 ? &a->v2_metadata
                                                                       : NULL;
        if (!dst && o[0] != '-' && !a->config) {
            a->config = o; /* "ovpnd profile server.conf ..." */
            continue;
        }
        if (!dst) {
            fprintf(stderr, "ovpnd profile: unexpected argument '%s'\n", o);
            return -1;
        }
        if (!has_arg) {
            fprintf(stderr, "ovpnd profile: %s needs an argument\n", o);
            return -1;
        }
        *dst = argv[++i];
    }
    if (!a->config || a->n_remotes == 0) {
        fprintf(stderr, "ovpnd profile: %s is required\n", !a->config ? "--config" : "--remote");
        return -1;
    }
    if (!a->cert != !a->key) {
        fprintf(stderr, "ovpnd profile: --cert and --key go together\n");
        return -1;
    }
    if (a->v2_key && a->v2_metadata) {
        fprintf(stderr, "ovpnd profile: --tls-crypt-v2-metadata is for a new key, not with "
                        "--tls-crypt-v2-key\n");
        return -1;
    }
    return 0;
}

static int parse_config(const char *path, struct config *cfg)
{
    char errbuf[1024] = "";

    config_init(cfg);
    if (config_parse_file(cfg, path, errbuf, sizeof(errbuf)) == 0) {
        return 0;
    }
    for (size_t i = 0; i < cfg->n_errors; i++) {
        fprintf(stderr, "%s\n", cfg->errors[i]);
    }
    if (cfg->n_errors == 0) {
        fprintf(stderr, "%s\n", errbuf);
    }
    fprintf(stderr, "ovpnd profile: %s does not parse (ovpnd --config %s --test-config)\n", path,
            path);
    return -1;
}

/* The server certificate's (last) common name into cn (cap bytes) when it is printable ASCII,
 * and whether the certificate carries the serverAuth extended key usage that 2.6's
 * `remote-cert-tls server` asks for. */
static void server_cert_facts(const struct config *cfg, char *cn, size_t cap, bool *has_eku)
{
    mbedtls_x509_crt crt;

    cn[0] = '\0';
    *has_eku = false;
    mbedtls_x509_crt_init(&crt);
    if (mbedtls_x509_crt_parse(&crt, (const unsigned char *)cfg->tls.cert.data,
                               cfg->tls.cert.len + 1) != 0) {
        mbedtls_x509_crt_free(&crt);
        return;
    }
    for (const mbedtls_x509_name *n = &crt.subject; n; n = n->next) {
        if (MBEDTLS_OID_CMP(MBEDTLS_OID_AT_CN, &n->oid) != 0 || n->val.len == 0 ||
            n->val.len >= cap) {
            continue;
        }
        bool is_printable = true;

        for (size_t i = 0; i < n->val.len; i++) {
            if (n->val.p[i] < 0x20 || n->val.p[i] > 0x7e || n->val.p[i] == '"' ||
                n->val.p[i] == '\\') {
                is_printable = false;
            }
        }
        if (is_printable) {
            memcpy(cn, n->val.p, n->val.len);
            cn[n->val.len] = '\0';
        } else {
            cn[0] = '\0';
        }
    }
    *has_eku = (crt.ext_types & MBEDTLS_X509_EXT_EXTENDED_KEY_USAGE) &&
               mbedtls_x509_crt_check_extended_key_usage(
                   &crt, MBEDTLS_OID_SERVER_AUTH, MBEDTLS_OID_SIZE(MBEDTLS_OID_SERVER_AUTH)) == 0;
    mbedtls_x509_crt_free(&crt);
}

/* The client certificate must chain to the server's ca, not be on its CRL, and match the key
 * (unless the key is encrypted: the client asks for its passphrase). */
static int check_client(const struct config *cfg, const struct profile_args *a,
                        mbedtls_x509_crt *ca, const char *crt_pem, size_t crt_len,
                        const char *key_pem, size_t key_len)
{
    mbedtls_x509_crt crt;
    mbedtls_x509_crl crl;
    mbedtls_pk_context pk;
    uint32_t flags = 0;
    char info[512];
    int rc, err = -1;

    mbedtls_x509_crt_init(&crt);
    mbedtls_x509_crl_init(&crl);
    mbedtls_pk_init(&pk);
    if (mbedtls_x509_crt_parse(&crt, (const unsigned char *)crt_pem, crt_len + 1) != 0) {
        fprintf(stderr, "ovpnd profile: --cert %s: not a PEM certificate\n", a->cert);
        goto out;
    }
    if (cfg->tls.crl.data && mbedtls_x509_crl_parse(&crl, (const unsigned char *)cfg->tls.crl.data,
                                                    cfg->tls.crl.len + 1) != 0) {
        mbedtls_x509_crl_free(&crl);
        mbedtls_x509_crl_init(&crl);
    }
    if (mbedtls_x509_crt_verify(&crt, ca, crl.version ? &crl : NULL, NULL, &flags, NULL, NULL) !=
        0) {
        mbedtls_x509_crt_verify_info(info, sizeof(info), "  ", flags);
        fprintf(stderr,
                "ovpnd profile: --cert %s is not a valid client certificate of the server's ca:\n"
                "%s",
                a->cert, info);
        goto out;
    }
    rc = mbedtls_pk_parse_key(&pk, (const unsigned char *)key_pem, key_len + 1, NULL, 0);
    if (rc == MBEDTLS_ERR_PK_PASSWORD_REQUIRED) {
        fprintf(stderr,
                "ovpnd profile: --key %s is encrypted: the client will ask for its "
                "passphrase\n",
                a->key);
    } else if (rc != 0) {
        fprintf(stderr, "ovpnd profile: --key %s: not a PEM private key\n", a->key);
        goto out;
    } else if (mbedtls_pk_check_pair(&crt.pk, &pk) != 0) {
        fprintf(stderr, "ovpnd profile: --key %s is not the key of --cert %s\n", a->key, a->cert);
        goto out;
    }
    err = 0;
out:
    mbedtls_pk_free(&pk);
    mbedtls_x509_crl_free(&crl);
    mbedtls_x509_crt_free(&crt);
    return err;
}

/* The server's trust as the client check needs it (every CA of `ca` and of `capath`, parsed into
 * trust), and the PEM text of the profile's <ca> (*pem, caller frees): the `ca` file as it is, or,
 * for a server with `capath` alone, the CA certificates from that directory that issue the
 * server's certificate, up to its root (a client should trust the CAs of its server, not every CA
 * the server accepts clients from). 0 or -1 (reported on stderr). */
static int server_trust(const struct config *cfg, const struct profile_args *a,
                        mbedtls_x509_crt *trust, char **pem, size_t *pem_len)
{
    mbedtls_x509_crt server;
    const mbedtls_x509_crt *cur;
    struct text out = {0};
    int depth = 0;

    *pem = NULL;
    *pem_len = 0;
    if (cfg->tls.ca.data != NULL &&
        mbedtls_x509_crt_parse(trust, (const unsigned char *)cfg->tls.ca.data,
                               cfg->tls.ca.len + 1) < 0) {
        fprintf(stderr, "ovpnd profile: %s: the ca does not parse\n", a->config);
        return -1;
    }
    if (cfg->cert.capath != NULL) {
        struct capath_stats st;
        char dir[4096];

        snprintf(dir, sizeof(dir), "%s%s", cfg->proc.chroot_dir ? cfg->proc.chroot_dir : "",
                 cfg->cert.capath);
        if (capath_certs(dir, trust, &st) != 0) {
            fprintf(stderr, "ovpnd profile: capath %s: cannot read it\n", dir);
            return -1;
        }
    }
    if (cfg->tls.ca.data != NULL) {
        *pem = strdup(cfg->tls.ca.data);
        *pem_len = cfg->tls.ca.len;
        return *pem ? 0 : -1;
    }
    mbedtls_x509_crt_init(&server);
    if (cfg->tls.cert.data == NULL ||
        mbedtls_x509_crt_parse(&server, (const unsigned char *)cfg->tls.cert.data,
                               cfg->tls.cert.len + 1) != 0) {
        fprintf(stderr, "ovpnd profile: %s: the server's cert does not parse\n", a->config);
        mbedtls_x509_crt_free(&server);
        return -1;
    }
    /* the server's own file may hold intermediates after its certificate: they count as found */
    for (cur = &server; depth < 16; depth++) {
        const mbedtls_x509_crt *issuer = NULL;

        for (const mbedtls_x509_crt *c = trust; c != NULL && c->raw.p != NULL; c = c->next) {
            if (c->subject_raw.len == cur->issuer_raw.len &&
                memcmp(c->subject_raw.p, cur->issuer_raw.p, c->subject_raw.len) == 0) {
                issuer = c;
                break;
            }
        }
        if (issuer == NULL) {
            break;
        }
        {
            unsigned char buf[8192];
            size_t n = 0;

            if (mbedtls_pem_write_buffer("-----BEGIN CERTIFICATE-----\n",
                                         "-----END CERTIFICATE-----\n", issuer->raw.p,
                                         issuer->raw.len, buf, sizeof(buf), &n) != 0) {
                out.has_failed = true;
                break;
            }
            text_add(&out, "%s", (const char *)buf);
        }
        if (issuer->subject_raw.len == issuer->issuer_raw.len &&
            memcmp(issuer->subject_raw.p, issuer->issuer_raw.p, issuer->subject_raw.len) == 0) {
            break; /* the root */
        }
        cur = issuer;
    }
    mbedtls_x509_crt_free(&server);
    if (out.has_failed || out.len == 0) {
        fprintf(stderr,
                out.has_failed ? "ovpnd profile: out of memory\n"
                               : "ovpnd profile: no CA certificate in capath %s issues the "
                                 "server's certificate\n",
                cfg->cert.capath);
        free(out.p);
        return -1;
    }
    *pem = out.p;
    *pem_len = out.len;
    return 0;
}

static const char *comp_line(const struct comp_config *c)
{
    switch (c->alg) {
    case COMP_FRAMING_LZO_STUB:
        return "comp-lzo no";
    case COMP_FRAMING_STUB_V2:
        return "compress stub-v2";
    case COMP_FRAMING_STUB:
        return "compress";
    case COMP_FRAMING_LZO:
        return "comp-lzo yes";
    case COMP_FRAMING_LZ4:
        return "compress lz4";
    case COMP_FRAMING_LZ4_V2:
        return "compress lz4-v2";
    case COMP_FRAMING_NONE:
        break;
    }
    return NULL;
}

/* The remote lines: each --remote once per server socket (UDP first), or as given. Sets
 * *is_all_udp. */
static void add_remotes(struct text *t, const struct config *cfg, const struct profile_args *a,
                        bool *is_all_udp)
{
    int protos[CONFIG_MAX_SOCKETS];
    unsigned ports[CONFIG_MAX_SOCKETS];
    int n = 0;

    if (cfg->net.n_sockets >= 2) {
        for (int pass = 0; pass < 2; pass++) { /* UDP, then TCP */
            for (int i = 0; i < cfg->net.n_sockets; i++) {
                if (config_proto_is_tcp(cfg->net.sockets[i].proto) == (pass == 1)) {
                    protos[n] = cfg->net.sockets[i].proto;
                    ports[n++] = cfg->net.sockets[i].port;
                }
            }
        }
    } else {
        protos[n] = cfg->net.proto;
        ports[n++] = cfg->net.port;
    }
    *is_all_udp = true;
    for (size_t r = 0; r < a->n_remotes; r++) {
        const struct profile_remote *rm = &a->remotes[r];

        if (rm->proto) {
            text_add(t, "remote %s %s %s\n", rm->host, rm->port, rm->proto);
            *is_all_udp = *is_all_udp && strcmp(rm->proto, "udp") == 0;
            continue;
        }
        for (int i = 0; i < n; i++) {
            bool is_tcp = config_proto_is_tcp(protos[i]);
            char port[8];

            snprintf(port, sizeof(port), "%u", ports[i]);
            text_add(t, "remote %s %s %s\n", rm->host, rm->port ? rm->port : port,
                     is_tcp ? "tcp" : "udp");
            *is_all_udp = *is_all_udp && !is_tcp;
        }
    }
}

/* The server's tls-auth or tls-crypt key, shared by all clients. */
static void add_shared_key(struct text *t, const struct config *cfg)
{
    switch (cfg->tls.tls_wrap_mode) {
    case CONFIG_TLS_WRAP_AUTH:
        if (cfg->tls.key_direction != CONFIG_KEY_DIRECTION_NONE) {
            /* the client's direction is the server's inverse */
            text_add(t, "key-direction %d\n",
                     cfg->tls.key_direction == CONFIG_KEY_DIRECTION_NORMAL ? 1 : 0);
        }
        add_inline(t, "tls-auth", cfg->tls.tls_wrap_key.data, cfg->tls.tls_wrap_key.len);
        break;
    case CONFIG_TLS_WRAP_CRYPT:
        add_inline(t, "tls-crypt", cfg->tls.tls_wrap_key.data, cfg->tls.tls_wrap_key.len);
        break;
    default:
        break;
    }
}

/* A tls-crypt-v2 client key: the one of --tls-crypt-v2-key, or a new one made from the
 * server key. */
static int add_v2_key(struct text *t, const struct config *cfg, const struct profile_args *a)
{
    char v2[PROFILE_V2_KEY_MAX], errbuf[256];
    size_t v2_len = 0;
    int err = 0;

    if (a->v2_key) {
        char *data = NULL;
        size_t len = 0;
        uint8_t kc[TLS_CRYPT_V2_CLIENT_KEY_LEN], wkc[TLS_CRYPT_V2_MAX_WKC_LEN];
        size_t wkc_len = 0;

        if (read_file("--tls-crypt-v2-key", a->v2_key, &data, &len) != 0) {
            return -1;
        }
        if (tls_crypt_v2_client_key_parse(data, len, kc, wkc, sizeof(wkc), &wkc_len) != 0) {
            fprintf(stderr,
                    "ovpnd profile: --tls-crypt-v2-key %s is not a tls-crypt-v2 client "
                    "key\n",
                    a->v2_key);
            err = -1;
        } else {
            add_inline(t, "tls-crypt-v2", data, len);
        }
        mbedtls_platform_zeroize(kc, sizeof(kc));
        mbedtls_platform_zeroize(data, len);
        free(data);
        return err;
    }
    if (genkey_tls_crypt_v2_client_text(cfg->tls.tls_crypt_v2_key.data,
                                        cfg->tls.tls_crypt_v2_key.len, a->v2_metadata, v2,
                                        sizeof(v2), &v2_len, errbuf, sizeof(errbuf)) != 0) {
        fprintf(stderr, "ovpnd profile: tls-crypt-v2 client key: %s\n", errbuf);
        return -1;
    }
    add_inline(t, "tls-crypt-v2", v2, v2_len);
    mbedtls_platform_zeroize(v2, sizeof(v2));
    return 0;
}

static int write_out(const char *path, const struct text *t)
{
    int fd = path ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600)
                  : STDOUT_FILENO;
    size_t done = 0;

    if (fd < 0) {
        fprintf(stderr, "ovpnd profile: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (path && fchmod(fd, 0600) != 0) { /* an existing file keeps its mode otherwise */
        fprintf(stderr, "ovpnd profile: %s: chmod: %s\n", path, strerror(errno));
        close(fd);
        return -1;
    }
    while (done < t->len) {
        ssize_t n = write(fd, t->p + done, t->len - done);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            fprintf(stderr, "ovpnd profile: cannot write %s: %s\n", path ? path : "the profile",
                    strerror(errno));
            if (path) {
                close(fd);
            }
            return -1;
        }
        done += (size_t)n;
    }
    if (path && close(fd) != 0) {
        fprintf(stderr, "ovpnd profile: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

int profile_main(int argc, char **argv)
{
    struct profile_args a;
    struct config cfg;
    struct text t = {0};
    char *crt = NULL, *key = NULL, *ca_pem = NULL, cn[65];
    size_t crt_len = 0, key_len = 0, ca_len = 0;
    bool has_eku, is_all_udp, needs_cert, needs_password;
    mbedtls_x509_crt trust;
    const char *comp;
    int rc = 1;

    memset(&a, 0, sizeof(a));
    if (parse_args(argc, argv, &a) != 0) {
        usage(stderr);
        return 2;
    }
    if (parse_config(a.config, &cfg) != 0) {
        config_free(&cfg);
        return 1;
    }
    mbedtls_x509_crt_init(&trust);
    if (cfg.tls.ca.data == NULL && cfg.cert.capath == NULL) {
        fprintf(stderr,
                "ovpnd profile: %s: no ca or capath: the profile needs the CA that issued "
                "the server's certificate\n",
                a.config);
        goto out;
    }
    if (cfg.tls.ca.data != NULL && !is_pem(cfg.tls.ca.data)) {
        fprintf(stderr, "ovpnd profile: %s: the ca must be PEM (openssl x509 -inform der)\n",
                a.config);
        goto out;
    }
    if (server_trust(&cfg, &a, &trust, &ca_pem, &ca_len) != 0) {
        goto out;
    }
    if (a.no_v2 && (!cfg.tls.has_tls_crypt_v2 || cfg.tls.tls_wrap_mode == CONFIG_TLS_WRAP_NONE)) {
        fprintf(stderr, "ovpnd profile: --no-tls-crypt-v2 is for a server with tls-crypt-v2 and "
                        "a tls-auth or tls-crypt key beside it\n");
        goto out;
    }
    needs_cert = cfg.tls.verify_client_cert == CONFIG_VERIFY_REQUIRE;
    needs_password = cfg.tls.verify_client_cert != CONFIG_VERIFY_REQUIRE ||
                     cfg.auth.auth_user_pass_verify != NULL || cfg.mgmt.client_auth ||
                     a.has_auth_user_pass;
    if (needs_cert && !a.cert) {
        fprintf(stderr, "ovpnd profile: the server asks for a client certificate: --cert FILE "
                        "--key FILE\n");
        goto out;
    }
    if (a.cert) {
        if (read_file("--cert", a.cert, &crt, &crt_len) != 0 ||
            read_file("--key", a.key, &key, &key_len) != 0) {
            goto out;
        }
        if (!is_pem(crt) || !is_pem(key)) {
            fprintf(stderr, "ovpnd profile: --cert and --key must be PEM files\n");
            goto out;
        }
        if (check_client(&cfg, &a, &trust, crt, crt_len, key, key_len) != 0) {
            goto out;
        }
    }
    server_cert_facts(&cfg, cn, sizeof(cn), &has_eku);

    time_t now = time(NULL);
    struct tm tm;
    char when[32] = "";

    if (gmtime_r(&now, &tm)) {
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
    }
    text_add(&t, "# client profile made by ovpnd profile %s from %s, %s\n", OVPND_VERSION, a.config,
             when);
    text_add(&t, "client\ndev %s\n", cfg.net.is_tap ? "tap" : "tun"); /* the same type */
    add_remotes(&t, &cfg, &a, &is_all_udp);
    /* (OpenVPN Connect warns about persist-tun, explicit-exit-notify and data-ciphers and
     * ignores them; 2.6 uses them. persist-key would only matter for a client that drops
     * root.) */
    text_add(&t, "nobind\npersist-tun\n");
    if (has_eku) {
        text_add(&t, "remote-cert-tls server\n");
    } else if (cfg.pkcs11.n_providers > 0) {
        /* (opening the token would ask for its PIN) */
        fprintf(stderr, "ovpnd profile: warning: the server certificate is on the PKCS#11 token "
                        "and is not read here: the profile has no `remote-cert-tls server` and "
                        "no `verify-x509-name`; add them if the certificate allows\n");
    } else {
        fprintf(stderr, "ovpnd profile: warning: the server certificate has no serverAuth "
                        "extended key usage, so the profile has no `remote-cert-tls server`\n");
    }
    if (cn[0] && !a.no_verify_name) {
        bool needs_quotes = strpbrk(cn, " \t#;'") != NULL;

        text_add(&t, "verify-x509-name %s%s%s name\n", needs_quotes ? "\"" : "", cn,
                 needs_quotes ? "\"" : "");
    }
    /* 2.6 clients offer AES-256-GCM:AES-128-GCM:CHACHA20-POLY1305 by default */
    if (cfg.tls.data_ciphers && strcmp(cfg.tls.data_ciphers, CONFIG_DEFAULT_DATA_CIPHERS) != 0) {
        text_add(&t, "data-ciphers %s\n", cfg.tls.data_ciphers);
    }
    if (cfg.net.tun_mtu != 1500) {
        text_add(&t, "tun-mtu %d\n", cfg.net.tun_mtu);
    }
    comp = comp_line(&cfg.net.comp);
    if (comp) {
        text_add(&t, "%s\n", comp);
    }
    if (needs_password) {
        text_add(&t, "auth-user-pass\n");
    }
    /* `auth` is the digest of tls-auth and of a CBC data channel's HMAC (2.6 options.c);
     * elsewhere the client ignores it */
    if (cfg.tls.auth && strcmp(cfg.tls.auth, "SHA1") != 0) {
        text_add(&t, "auth %s\n", cfg.tls.auth);
    }
    if (is_all_udp) {
        text_add(&t, "explicit-exit-notify 1\n");
    }
    /* the server's `fragment` must be the client's too: it is not pushed (2.6), and a client
     * takes it only with UDP remotes */
    if (cfg.net.fragment > 0 && is_all_udp) {
        text_add(&t, "fragment %d%s\n", cfg.net.fragment, cfg.net.fragment_mtu ? " mtu" : "");
    } else if (cfg.net.fragment > 0) {
        fprintf(stderr,
                "ovpnd profile: warning: the server has `fragment %d`, which the profile "
                "cannot give a TCP remote; a UDP client needs the same line\n",
                cfg.net.fragment);
    }
    text_add(&t, "verb 3\n");
    add_inline(&t, "ca", ca_pem, ca_len);
    if (crt) {
        add_inline(&t, "cert", crt, crt_len);
        add_inline(&t, "key", key, key_len);
    }
    /* A server with tls-crypt-v2 beside tls-auth/tls-crypt takes either kind of client
     * (2.6); the profile gets a key of its own unless --no-tls-crypt-v2. */
    if (cfg.tls.has_tls_crypt_v2 && !a.no_v2) {
        if (add_v2_key(&t, &cfg, &a) != 0) {
            goto out;
        }
    } else {
        add_shared_key(&t, &cfg);
    }
    if (t.has_failed) {
        fprintf(stderr, "ovpnd profile: out of memory\n");
        goto out;
    }
    rc = write_out(a.out, &t) == 0 ? 0 : 1;
out:
    text_wipe(&t);
    if (key) {
        mbedtls_platform_zeroize(key, key_len);
    }
    free(key);
    free(crt);
    free(ca_pem);
    mbedtls_x509_crt_free(&trust);
    config_free(&cfg);
    return rc;
}
