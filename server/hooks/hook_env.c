/* server/hooks/hook_env.c: see hook_env.h. */
#include "server/hooks/hook_env.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/bignum.h>
#include <mbedtls/oid.h>
#include <mbedtls/sha1.h>
#include <mbedtls/sha256.h>

int hook_env_base(const struct config *cfg, struct script_env *env)
{
    char verb[16];
    int err = 0;

    snprintf(verb, sizeof(verb), "%d", cfg->proc.verb);
    for (size_t i = 0; i < cfg->hooks.n_setenv && err == 0; i++) {
        err = script_env_add_raw(env, cfg->hooks.setenv[i]);
    }
    err = err ? err
              : script_env_add(env, "config",
                               cfg->config_file ? cfg->config_file
                                                : (cfg->source ? cfg->source : ""));
    err = err ? err : script_env_add(env, "verb", verb);
    err = err ? err : script_env_add(env, "daemon", cfg->proc.daemonize ? "1" : "0");
    err = err ? err : script_env_add(env, "daemon_log_redirect", cfg->proc.log_file ? "1" : "0");
    return err;
}

static bool is_name_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

int hook_env_peer_info(struct script_env *env, const char *pi)
{
    while (*pi != '\0') {
        const char *end = strchr(pi, '\n');
        size_t len = end != NULL ? (size_t)(end - pi) : strlen(pi);
        char line[512];
        const char *eq;
        bool is_ok = true;

        if (len < sizeof(line) && (strncmp(pi, "IV_", 3) == 0 || strncmp(pi, "UV_", 3) == 0)) {
            memcpy(line, pi, len);
            line[len] = '\0';
            eq = strchr(line, '=');
            for (const char *p = line; eq != NULL && p < eq; p++) {
                is_ok = is_ok && is_name_char(*p);
            }
            if (eq != NULL && is_ok && strchr(line, '\r') == NULL &&
                script_env_add_raw(env, line) != 0) {
                return -ENOMEM;
            }
        }
        pi += len;
        if (*pi == '\n') {
            pi++;
        }
    }
    return 0;
}

int hook_env_addr(struct script_env *env, const char *prefix, const union udp_addr *addr)
{
    char ip[INET6_ADDRSTRLEN], port[8], name[64];
    union udp_addr plain;
    bool is_ipv6;
    int err;

    udp_addr_plain(addr, &plain);
    is_ipv6 = plain.sa.sa_family == AF_INET6;
    if (is_ipv6) {
        inet_ntop(AF_INET6, &plain.in6.sin6_addr, ip, sizeof(ip));
        snprintf(port, sizeof(port), "%u", (unsigned)ntohs(plain.in6.sin6_port));
    } else {
        inet_ntop(AF_INET, &plain.in4.sin_addr, ip, sizeof(ip));
        snprintf(port, sizeof(port), "%u", (unsigned)ntohs(plain.in4.sin_port));
    }
    snprintf(name, sizeof(name), "%s_%s", prefix, is_ipv6 ? "ip6" : "ip");
    err = script_env_add(env, name, ip);
    snprintf(name, sizeof(name), "%s_port", prefix);
    return err ? err : script_env_add(env, name, port);
}

int hook_env_time(struct script_env *env, time_t t)
{
    char num[32], text[64];
    struct tm tm;
    int err;

    snprintf(num, sizeof(num), "%" PRId64, (int64_t)t);
    if (localtime_r(&t, &tm) == NULL ||
        strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S", &tm) == 0) {
        snprintf(text, sizeof(text), "%s", num);
    }
    err = script_env_add(env, "time_unix", num);
    return err ? err : script_env_add(env, "time_ascii", text);
}

/* Control characters (and C1 controls) become '?', as 2.6's x509_setenv does. */
static void printable(char *s)
{
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;

        if (c < 32 || c == 127 || (c > 128 && c < 160)) {
            *s = '?';
        }
    }
}

int hook_cert_subject(const mbedtls_x509_crt *crt, char *buf, size_t buf_len)
{
    if (mbedtls_x509_dn_gets(buf, buf_len, &crt->subject) < 0) {
        buf[0] = '\0';
        return -EINVAL;
    }
    printable(buf);
    return 0;
}

static void hex_colon(const uint8_t *p, size_t n, bool is_upper, char *out, size_t cap)
{
    size_t o = 0;

    out[0] = '\0';
    for (size_t i = 0; i < n && o + 4 <= cap; i++) {
        o += (size_t)snprintf(out + o, cap - o, is_upper ? "%s%02X" : "%s%02x", i ? ":" : "", p[i]);
    }
}

/* NAME, or NAME_1, NAME_2 ... when NAME is taken (2.6 setenv_str_incr). */
static int add_incr(struct script_env *env, const char *name, const char *value)
{
    char unique[128];

    snprintf(unique, sizeof(unique), "%.96s", name);
    for (int i = 1; hook_env_get(env, unique) != NULL && i < 100; i++) {
        snprintf(unique, sizeof(unique), "%.96s_%d", name, i);
    }
    return script_env_add(env, unique, value);
}

static int add_fields(struct script_env *env, int depth, const mbedtls_x509_crt *crt)
{
    for (const mbedtls_x509_name *n = &crt->subject; n != NULL; n = n->next) {
        const char *short_name = NULL;
        char name[96], value[128];
        size_t len = n->val.len < sizeof(value) - 1 ? n->val.len : sizeof(value) - 1;
        int err;

        if (n->oid.p == NULL) {
            continue;
        }
        if (mbedtls_oid_get_attr_short_name(&n->oid, &short_name) != 0) {
            short_name = "??"; /* as 2.6 names a field it does not know */
        }
        snprintf(name, sizeof(name), "X509_%d_%s", depth, short_name);
        memcpy(value, n->val.p, len);
        value[len] = '\0';
        for (size_t i = 0; i < len; i++) {
            if (value[i] == '\0') {
                value[i] = '?';
            }
        }
        printable(value);
        err = add_incr(env, name, value);
        if (err) {
            return err;
        }
    }
    return 0;
}

int hook_env_cert(struct script_env *env, int depth, const mbedtls_x509_crt *crt)
{
    int err = add_fields(env, depth, crt);

    return err ? err : hook_env_cert_info(env, depth, crt);
}

int hook_env_cert_info(struct script_env *env, int depth, const mbedtls_x509_crt *crt)
{
    char name[64], subject[HOOK_SUBJECT_MAX], text[200];
    uint8_t digest[32];
    mbedtls_mpi serial;
    size_t olen = 0;
    int err = hook_cert_subject(crt, subject, sizeof(subject));

    snprintf(name, sizeof(name), "tls_id_%d", depth);
    err = err ? err : script_env_add(env, name, subject);
    if (err == 0) {
        (void)mbedtls_sha1_ret(crt->raw.p, crt->raw.len, digest);
        hex_colon(digest, 20, false, text, sizeof(text));
        snprintf(name, sizeof(name), "tls_digest_%d", depth);
        err = script_env_add(env, name, text);
    }
    if (err == 0) {
        (void)mbedtls_sha256_ret(crt->raw.p, crt->raw.len, digest, 0);
        hex_colon(digest, 32, false, text, sizeof(text));
        snprintf(name, sizeof(name), "tls_digest_sha256_%d", depth);
        err = script_env_add(env, name, text);
    }
    if (err == 0) {
        mbedtls_mpi_init(&serial);
        if (mbedtls_mpi_read_binary(&serial, crt->serial.p, crt->serial.len) != 0 ||
            mbedtls_mpi_write_string(&serial, 10, text, sizeof(text), &olen) != 0) {
            err = -EINVAL;
        }
        mbedtls_mpi_free(&serial);
        snprintf(name, sizeof(name), "tls_serial_%d", depth);
        err = err ? err : script_env_add(env, name, text);
    }
    if (err == 0) {
        if (mbedtls_x509_serial_gets(text, sizeof(text), &crt->serial) < 0) {
            return -EINVAL;
        }
        snprintf(name, sizeof(name), "tls_serial_hex_%d", depth);
        err = script_env_add(env, name, text);
    }
    return err;
}

static bool same_buf(const mbedtls_x509_buf *a, const mbedtls_x509_buf *b)
{
    return a->len == b->len && a->p != NULL && b->p != NULL && memcmp(a->p, b->p, a->len) == 0;
}

static const mbedtls_x509_crt *find_issuer(const mbedtls_x509_crt *c, const mbedtls_x509_crt *list)
{
    for (const mbedtls_x509_crt *i = list; i != NULL && i->raw.p != NULL; i = i->next) {
        if (i != c && same_buf(&c->issuer_raw, &i->subject_raw)) {
            return i;
        }
    }
    return NULL;
}

size_t hook_cert_chain(const mbedtls_x509_crt *leaf, const mbedtls_x509_crt *trusted,
                       const mbedtls_x509_crt **out, size_t cap)
{
    const mbedtls_x509_crt *c = leaf;
    size_t n = 0;

    if (cap > HOOK_CERT_DEPTH_MAX) {
        cap = HOOK_CERT_DEPTH_MAX;
    }
    while (c != NULL && c->raw.p != NULL && n < cap) {
        const mbedtls_x509_crt *next;

        out[n++] = c;
        if (same_buf(&c->issuer_raw, &c->subject_raw)) {
            break; /* self-signed: the root */
        }
        next = find_issuer(c, leaf->next);
        c = next != NULL ? next : find_issuer(c, trusted);
    }
    return n;
}

static int add_in4(struct script_env *env, const char *name, uint32_t host_order)
{
    struct in_addr in = {.s_addr = htonl(host_order)};
    char text[INET_ADDRSTRLEN];

    inet_ntop(AF_INET, &in, text, sizeof(text));
    return script_env_add(env, name, text);
}

static int add_in6(struct script_env *env, const char *name, const uint8_t addr[16])
{
    char text[INET6_ADDRSTRLEN];

    inet_ntop(AF_INET6, addr, text, sizeof(text));
    return script_env_add(env, name, text);
}

static int add_int(struct script_env *env, const char *name, int64_t v)
{
    char text[32];

    snprintf(text, sizeof(text), "%" PRId64, v);
    return script_env_add(env, name, text);
}

int hook_env_global(struct script_env *env, const struct config *cfg, const struct hook_server *s)
{
    int err = hook_env_base(cfg, env);

    err = err ? err : add_int(env, "daemon_start_time", (int64_t)s->start_time);
    err = err ? err : add_int(env, "daemon_pid", s->pid);
    err = err ? err : script_env_add(env, "proto_1", "udp");
    if (err == 0 && cfg->net.local != NULL) {
        err = script_env_add(env, "local_1", cfg->net.local);
    }
    err = err ? err : add_int(env, "local_port_1", s->port);
    err = err ? err : add_int(env, "remote_port_1", s->port);
    err = err ? err : script_env_add(env, "dev", s->dev);
    err = err ? err : script_env_add(env, "dev_type", cfg->net.is_tap ? "tap" : "tun");
    err = err ? err : add_int(env, "tun_mtu", s->tun_mtu);
    /* tun.c do_ifconfig_setenv: a point-to-point topology names the peer, not a netmask; a tap
     * device of server-bridge has no address (local 0): neither is set */
    if (err == 0 && s->local != 0) {
        err = add_in4(env, "ifconfig_local", s->local);
        err = err ? err
                  : add_in4(env, s->is_p2p ? "ifconfig_remote" : "ifconfig_netmask",
                            s->remote_netmask);
    }
    if (err == 0 && s->has_ipv6) {
        err = add_in6(env, "ifconfig_ipv6_local", s->local6);
        err = err ? err : add_int(env, "ifconfig_ipv6_netbits", s->ipv6_bits);
    }
    err = err ? err : script_env_add(env, "redirect_gateway", "0");
    return err ? err : script_env_add(env, "script_context", "init");
}

int hook_env_client(struct script_env *env, const struct hook_client *c)
{
    int err = script_env_add(env, "common_name", c->common_name);

    if (err == 0 && c->username != NULL) {
        err = script_env_add(env, "username", c->username);
    }
    err = err ? err : hook_env_addr(env, "untrusted", &c->remote);
    err = err ? err : hook_env_addr(env, "trusted", &c->remote);
    /* multi.c multi_set_virtual_addr_env: net30/p2p give the client's peer instead; nothing
     * for a client without an address (dev tap without a pool) */
    if (err == 0 && c->vaddr != 0) {
        err = add_in4(env, "ifconfig_pool_remote_ip", c->vaddr);
        err = err ? err
                  : add_in4(env, c->is_p2p ? "ifconfig_pool_local_ip" : "ifconfig_pool_netmask",
                            c->vaddr_netmask);
    }
    if (err == 0 && c->has_ipv6) {
        err = add_in6(env, "ifconfig_pool_remote_ip6", c->vaddr6);
        err = err ? err : add_in6(env, "ifconfig_pool_local_ip6", c->remote_addr6);
        err = err ? err : add_int(env, "ifconfig_pool_ip6_netbits", c->vaddr6_bits);
    }
    return err ? err : hook_env_time(env, c->connected_since);
}

int hook_env_disconnect(struct script_env *env, uint64_t bytes_received, uint64_t bytes_sent,
                        int64_t duration_s)
{
    char text[32];
    int err;

    snprintf(text, sizeof(text), "%" PRIu64, bytes_received);
    err = script_env_add(env, "bytes_received", text);
    snprintf(text, sizeof(text), "%" PRIu64, bytes_sent);
    err = err ? err : script_env_add(env, "bytes_sent", text);
    return err ? err : add_int(env, "time_duration", duration_s);
}

int hook_env_append(struct script_env *to, const struct script_env *from)
{
    for (size_t i = 0; i < from->n; i++) {
        int err = script_env_add_raw(to, from->vars[i]);

        if (err) {
            return err;
        }
    }
    return 0;
}

const char *hook_env_get(const struct script_env *env, const char *name)
{
    size_t len = strlen(name);

    for (size_t i = 0; i < env->n; i++) {
        if (strncmp(env->vars[i], name, len) == 0 && env->vars[i][len] == '=') {
            return env->vars[i] + len + 1;
        }
    }
    return NULL;
}
