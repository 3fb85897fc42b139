/* server/ops/status.c: the --status file; see status.h. */
#include "server/ops/status.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/log/log.h"

#define ADDR_STR_MAX (INET6_ADDRSTRLEN + 8) /* address, ':' and port */
#define TIME_STR_MAX 80 /* room for any int the compiler can imagine in struct tm */

/* How fields are written: the separator, and whether it is version 3 (no quoting). */
struct fmt {
    FILE *out;
    char sep;
    bool is_tsv;
};

static void time_str(char *buf, size_t cap, time_t t, time_t now)
{
    struct tm tm;

    if (t == 0) {
        t = now;
    }
    if (!localtime_r(&t, &tm)) {
        memset(&tm, 0, sizeof(tm));
    }
    snprintf(buf, cap, "%04d-%02d-%02d %02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

static void real_addr_str(char *buf, size_t cap, const struct sockaddr_storage *ss)
{
    char ip[INET6_ADDRSTRLEN];

    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;
        inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip));
        snprintf(buf, cap, "%s:%u", ip, (unsigned)ntohs(sin->sin_port));
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;
        if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
            /* openvpn prints the port only for mapped IPv4: "v6addr:port" would be ambiguous */
            inet_ntop(AF_INET, &sin6->sin6_addr.s6_addr[12], ip, sizeof(ip));
            snprintf(buf, cap, "%s:%u", ip, (unsigned)ntohs(sin6->sin6_port));
        } else {
            inet_ntop(AF_INET6, &sin6->sin6_addr, buf, (socklen_t)cap);
        }
    } else {
        snprintf(buf, cap, "UNKNOWN");
    }
}

static void virt_addr_str(char *buf, size_t cap, uint32_t addr)
{
    struct in_addr ia = {htonl(addr)};

    buf[0] = '\0';
    if (addr != 0) {
        inet_ntop(AF_INET, &ia, buf, (socklen_t)cap);
    }
}

static void virt_addr6_str(char *buf, size_t cap, const struct in6_addr *a)
{
    buf[0] = '\0';
    if (!IN6_IS_ADDR_UNSPECIFIED(a)) {
        inet_ntop(AF_INET6, a, buf, (socklen_t)cap);
    }
}

static bool needs_quotes(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n') {
            return true;
        }
    }
    return false;
}

/* One field of len bytes, preceded by the separator unless first. */
static void put_field_n(const struct fmt *f, bool is_first, const char *s, size_t len)
{
    if (!is_first) {
        fputc(f->sep, f->out);
    }
    if (f->is_tsv) {
        for (size_t i = 0; i < len; i++) {
            fputc(s[i] == '\t' || s[i] == '\r' || s[i] == '\n' ? ' ' : s[i], f->out);
        }
    } else if (needs_quotes(s, len)) {
        fputc('"', f->out);
        for (size_t i = 0; i < len; i++) {
            if (s[i] == '"') {
                fputc('"', f->out);
            }
            fputc(s[i], f->out);
        }
        fputc('"', f->out);
    } else {
        fwrite(s, 1, len, f->out);
    }
}

static void put_field(const struct fmt *f, bool is_first, const char *s)
{
    put_field_n(f, is_first, s, strlen(s));
}

/* A name field: "" means unknown, which openvpn prints as UNDEF. */
static void put_name(const struct fmt *f, bool is_first, const char *s, size_t cap)
{
    size_t len = strnlen(s, cap);

    if (len == 0) {
        put_field(f, is_first, "UNDEF");
    } else {
        put_field_n(f, is_first, s, len);
    }
}

static void put_u64(const struct fmt *f, uint64_t v)
{
    fprintf(f->out, "%c%" PRIu64, f->sep, v);
}

/* A line of fixed words: the separator goes between them. */
static void put_words(const struct fmt *f, const char *const *words, size_t n_words)
{
    for (size_t i = 0; i < n_words; i++) {
        put_field(f, i == 0, words[i]);
    }
    fputc('\n', f->out);
}

#define PUT_WORDS(f, ...)                                                                          \
    do {                                                                                           \
        static const char *const w_[] = {__VA_ARGS__};                                             \
        put_words((f), w_, sizeof(w_) / sizeof(w_[0]));                                            \
    } while (0)

/* One routing-table row for c: virt (an address, or NETWORK/BITS) then c's name, real
 * address and last reference. Version 1 rows have no row tag and no time_t column. */
static void print_route_row(const struct fmt *f, const struct status_client *c, const char *virt,
                            const char *real, const char *when, time_t now, bool is_v1)
{
    if (!is_v1) {
        put_field(f, true, "ROUTING_TABLE");
    }
    put_field(f, is_v1, virt);
    put_name(f, false, c->common_name, sizeof(c->common_name));
    put_field(f, false, real);
    put_field(f, false, when);
    if (!is_v1) {
        put_u64(f, (unsigned int)(c->last_ref ? c->last_ref : now));
    }
    fputc('\n', f->out);
}

/* The client's routing-table rows: its IPv4 then its IPv6 virtual address, each if set, then
 * its iroutes (openvpn 2.6 lists those as NETWORK/BITS); with dev tap its MACs instead. */
static void print_routes(const struct fmt *f, const struct status_client *c, time_t now, bool is_v1)
{
    char when[TIME_STR_MAX], real[ADDR_STR_MAX], virt[INET6_ADDRSTRLEN];
    uint32_t be = htonl(c->virt_addr);

    real_addr_str(real, sizeof(real), &c->real);
    time_str(when, sizeof(when), c->last_ref, now);
    if (c->is_tap) {
        /* dev tap: 2.6 routes by MAC and lists those alone, as "MAC@VID" */
        for (size_t i = 0; i < c->n_macs; i++) {
            const struct status_mac *m = &c->macs[i];

            snprintf(virt, sizeof(virt), "%02x:%02x:%02x:%02x:%02x:%02x@%u", m->mac[0], m->mac[1],
                     m->mac[2], m->mac[3], m->mac[4], m->mac[5], (unsigned)m->vid);
            print_route_row(f, c, virt, real, when, now, is_v1);
        }
        return;
    }
    for (int v6 = 0; v6 < 2; v6++) {
        if (v6) {
            virt_addr6_str(virt, sizeof(virt), &c->virt_addr6);
        } else {
            virt_addr_str(virt, sizeof(virt), c->virt_addr);
        }
        if (virt[0] != '\0') {
            print_route_row(f, c, virt, real, when, now, is_v1);
        }
    }
    for (size_t i = 0; i < c->n_iroutes; i++) {
        const struct vroute_key *k = &c->iroutes[i];
        char net[INET6_ADDRSTRLEN + 8];

        if ((k->family == 4 && k->plen == 32 && c->virt_addr && memcmp(k->addr, &be, 4) == 0) ||
            (k->family == 6 && k->plen == 128 && memcmp(k->addr, &c->virt_addr6, 16) == 0)) {
            continue; /* the client's own address, listed above */
        }
        if (!inet_ntop(k->family == 6 ? AF_INET6 : AF_INET, k->addr, virt, sizeof(virt))) {
            continue;
        }
        if (k->plen == (k->family == 6 ? 128 : 32)) {
            snprintf(net, sizeof(net), "%s", virt);
        } else {
            snprintf(net, sizeof(net), "%s/%u", virt, k->plen);
        }
        print_route_row(f, c, net, real, when, now, is_v1);
    }
}

/* "Worker N sessions" and the other per-worker rows, key then value, as GLOBAL STATS rows. */
static void print_workers(const struct fmt *f, const char *prefix,
                          const struct status_worker *workers, size_t n_workers)
{
    for (size_t i = 0; i < n_workers; i++) {
        const struct status_worker *w = &workers[i];
        const struct {
            const char *name;
            uint64_t value;
        } rows[] = {
            {"sessions", w->sessions},
            {"packets in", w->packets_in},
            {"packets out", w->packets_out},
            {"bytes in", w->bytes_in},
            {"bytes out", w->bytes_out},
            {"handed over", w->handed_over},
            {"client-to-client", w->client_to_client},
            {"dropped", w->dropped},
        };

        for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
            char key[64];

            snprintf(key, sizeof(key), "Worker %zu %s", i, rows[r].name);
            if (prefix) {
                put_field(f, true, prefix);
                put_field(f, false, key);
            } else {
                put_field(f, true, key);
            }
            put_u64(f, rows[r].value);
            fputc('\n', f->out);
        }
    }
}

static void print_v1(const struct fmt *f, time_t now, const struct status_client *clients,
                     size_t n_clients, const struct status_worker *workers, size_t n_workers)
{
    char when[TIME_STR_MAX], real[ADDR_STR_MAX];

    fputs("OpenVPN CLIENT LIST\n", f->out);
    time_str(when, sizeof(when), now, now);
    fprintf(f->out, "Updated,%s\n", when);
    PUT_WORDS(f, "Common Name", "Real Address", "Bytes Received", "Bytes Sent", "Connected Since");
    for (size_t i = 0; i < n_clients; i++) {
        const struct status_client *c = &clients[i];

        real_addr_str(real, sizeof(real), &c->real);
        time_str(when, sizeof(when), c->connected_since, now);
        put_name(f, true, c->common_name, sizeof(c->common_name));
        put_field(f, false, real);
        put_u64(f, c->bytes_rx);
        put_u64(f, c->bytes_tx);
        put_field(f, false, when);
        fputc('\n', f->out);
    }
    fputs("ROUTING TABLE\n", f->out);
    PUT_WORDS(f, "Virtual Address", "Common Name", "Real Address", "Last Ref");
    for (size_t i = 0; i < n_clients; i++) {
        print_routes(f, &clients[i], now, true);
    }
    fputs("GLOBAL STATS\n", f->out);
    /* No broadcast/multicast queue here: openvpn reports its maximum depth, 0 in tun mode. */
    fputs("Max bcast/mcast queue length,0\n", f->out);
    print_workers(f, NULL, workers, n_workers);
    fputs("END\n", f->out);
}

static void print_client_v2(const struct fmt *f, const struct status_client *c, time_t now)
{
    char when[TIME_STR_MAX], real[ADDR_STR_MAX], virt[INET6_ADDRSTRLEN];

    real_addr_str(real, sizeof(real), &c->real);
    put_field(f, true, "CLIENT_LIST");
    put_name(f, false, c->common_name, sizeof(c->common_name));
    put_field(f, false, real);
    virt_addr_str(virt, sizeof(virt), c->virt_addr);
    put_field(f, false, virt);
    virt_addr6_str(virt, sizeof(virt), &c->virt_addr6);
    put_field(f, false, virt);
    put_u64(f, c->bytes_rx);
    put_u64(f, c->bytes_tx);
    time_str(when, sizeof(when), c->connected_since, now);
    put_field(f, false, when);
    /* openvpn casts time_t to unsigned int here */
    put_u64(f, (unsigned int)(c->connected_since ? c->connected_since : now));
    put_name(f, false, c->username, sizeof(c->username));
    put_u64(f, c->client_id);
    put_u64(f, c->peer_id);
    put_field_n(f, false, c->cipher, strnlen(c->cipher, sizeof(c->cipher)));
    fputc('\n', f->out);
}

static void print_v2(const struct fmt *f, const char *title, time_t now,
                     const struct status_client *clients, size_t n_clients,
                     const struct status_worker *workers, size_t n_workers)
{
    char when[TIME_STR_MAX];

    put_field(f, true, "TITLE");
    put_field(f, false, title ? title : "ovpnd");
    fputc('\n', f->out);
    time_str(when, sizeof(when), now, now);
    put_field(f, true, "TIME");
    put_field(f, false, when);
    put_u64(f, (unsigned int)now);
    fputc('\n', f->out);
    PUT_WORDS(f, "HEADER", "CLIENT_LIST", "Common Name", "Real Address", "Virtual Address",
              "Virtual IPv6 Address", "Bytes Received", "Bytes Sent", "Connected Since",
              "Connected Since (time_t)", "Username", "Client ID", "Peer ID",
              "Data Channel Cipher");
    for (size_t i = 0; i < n_clients; i++) {
        print_client_v2(f, &clients[i], now);
    }
    PUT_WORDS(f, "HEADER", "ROUTING_TABLE", "Virtual Address", "Common Name", "Real Address",
              "Last Ref", "Last Ref (time_t)");
    for (size_t i = 0; i < n_clients; i++) {
        print_routes(f, &clients[i], now, false);
    }
    PUT_WORDS(f, "GLOBAL_STATS", "Max bcast/mcast queue length", "0");
    PUT_WORDS(f, "GLOBAL_STATS", "dco_enabled", "0");
    print_workers(f, "GLOBAL_STATS", workers, n_workers);
    PUT_WORDS(f, "END");
}

int status_print(FILE *out, int version, const char *title, time_t now,
                 const struct status_client *clients, size_t n_clients,
                 const struct status_worker *workers, size_t n_workers)
{
    struct fmt f = {out, version == 3 ? '\t' : ',', version == 3};

    if (version == 1) {
        print_v1(&f, now, clients, n_clients, workers, n_workers);
    } else if (version == 2 || version == 3) {
        print_v2(&f, title, now, clients, n_clients, workers, n_workers);
    } else {
        return -EINVAL;
    }
    if (fflush(out) != 0 || ferror(out)) {
        return -EIO;
    }
    return 0;
}

/* Create path for writing with the permission bits of `like` if it exists, else 0600. */
static int open_tmp(const char *tmp, const char *like)
{
    struct stat st;
    int fd;

    unlink(tmp); /* a stale one from a crash, or a symlink someone planted */
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        return -errno;
    }
    if (stat(like, &st) == 0 && fchmod(fd, st.st_mode & 07777) != 0) {
        int err = -errno;
        close(fd);
        unlink(tmp);
        return err;
    }
    return fd;
}

int status_write(const char *path, int version, const char *title, time_t now,
                 const struct status_client *clients, size_t n_clients,
                 const struct status_worker *workers, size_t n_workers)
{
    char tmp[PATH_MAX];
    FILE *out;
    int fd, n, err;

    if (version < 1 || version > 3) {
        return -EINVAL;
    }
    n = snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    if (n < 0 || (size_t)n >= sizeof(tmp)) {
        return -ENAMETOOLONG;
    }
    fd = open_tmp(tmp, path);
    if (fd < 0) {
        return fd;
    }
    out = fdopen(fd, "w");
    if (!out) {
        err = -errno;
        close(fd);
        goto out_unlink;
    }
    err = status_print(out, version, title, now, clients, n_clients, workers, n_workers);
    if (fclose(out) != 0 && !err) {
        err = -errno;
    }
    if (!err && rename(tmp, path) != 0) {
        err = -errno;
    }
    if (!err) {
        return 0;
    }
out_unlink:
    unlink(tmp);
    return err;
}

int status_probe_file(const char *path, int oflags)
{
    int fd = open(path, oflags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);

    if (fd >= 0) {
        close(fd);
        return 0;
    }
    if (errno != ENOENT || (oflags & O_ACCMODE) == O_RDONLY) {
        return errno == ENOENT ? 0 : -errno;
    }
    fd = open(path, oflags | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        return -errno;
    }
    close(fd);
    unlink(path);
    return 0;
}

void status_warn_unopened(const char *directive, const char *path, int oflags, int err,
                          bool is_retried)
{
    log_msg(LOG_WARN, "%s: cannot open %s for %s: %s (ovpnd runs without it%s)", directive, path,
            (oflags & O_ACCMODE) == O_RDWR     ? "reading and writing"
            : (oflags & O_ACCMODE) == O_WRONLY ? "writing"
                                               : "reading",
            strerror(-err),
            is_retried ? " and tries again at each write"
                       : " and does not write it until it is started again: the chroot hides it");
}
