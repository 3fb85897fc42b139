/* server/addr/pool_persist.h: the `ifconfig-pool-persist FILE [SECONDS]` file.
 *
 * openvpn 2.6's format (pool.c ifconfig_pool_read / ifconfig_pool_list): one line per pool
 * entry that remembers a common name, "CN,IPv4,IPv6", where IPv4 is the entry's address (with
 * topology net30 the /30 block, not the client's address) and IPv6 its IPv6 address; either
 * may be empty ("CN,IPv4," without an IPv6 pool). Reading skips empty lines and lines starting
 * with '#' or ';'. A line whose addresses fit no entry is skipped with a warning; when both
 * are given and name different entries, the IPv4 one wins. ovpnd names the file and line in
 * each warning (2.6 names the common name only) and also warns about lines without an address
 * (2.6 skips those silently).
 *
 * Common names are the clients' choice (a CA signs them; with username-as-common-name the
 * client types them). 2.6 writes them raw, so a CN "x,198.19.0.9" reads back as the name "x"
 * with the address 198.19.0.9. Here a name that would not read back as itself is written as a
 * quoted field as RFC 4180 has it ('"' around it, '""' for each '"' in it): one that holds a
 * ',' or '"', starts with '#' or ';', or starts or ends with a space. Other names are written
 * as 2.6 writes them. Reading takes both forms. (2.6 reading a quoted line splits it at its
 * first comma as ever: it skips the line, or keeps an address for a name that starts with '"',
 * which is not the client's.) A name with a control character (below 0x20, or 0x7f) is not
 * written at all: it cannot come from a client, whose names have those as '_'
 * (proto/client_name.h), and a line break would make two lines.
 *
 * The file is read once at start-up. With SECONDS > 0 it is written every SECONDS and when the
 * server stops; with 0 it is never written and its entries go to their common names only
 * ("fixed"). With duplicate-cn openvpn 2.6 ignores it in effect; ovpnd neither reads nor writes
 * it then (the config check says so at start-up).
 *
 * Acceptor thread (it owns the pool); the writes are a few kilobytes at most per 100 clients.
 * The server runs as root when it opens the file: a symbolic link there is refused (ELOOP).
 */
#ifndef SERVER_ADDR_POOL_PERSIST_H
#define SERVER_ADDR_POOL_PERSIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/addr/pool.h"

#define POOL_PERSIST_CN_MAX 256 /* bytes of a common name, NUL included */

/* One parsed line. */
struct pool_persist_line {
    char cn[POOL_PERSIST_CN_MAX];
    bool has_ipv4, has_ipv6;
    uint32_t ipv4;    /* host byte order */
    uint8_t ipv6[16]; /* network byte order */
};

/* Parse one line (without its newline; a trailing '\r' is ignored). Returns 1 with *out filled,
 * 0 for a line to skip silently (empty, comment), or -1 with the reason in why (why_len bytes)
 * for a malformed one: no common name, a quoted one without its closing quote or with text
 * after it, no address, an address that is not one. */
int pool_persist_parse_line(const char *line, struct pool_persist_line *out, char *why,
                            size_t why_len);

/* Called with one warning ("NAME:LINE: reason"). */
typedef void (*pool_persist_warn_fn)(void *ctx, const char *text);

/* Apply the file content text (NUL-terminated; name names it in warnings) to pool p, as openvpn
 * pool.c ifconfig_pool_read: each good line marks its entry as that common name's (fixed when
 * is_fixed). Bad lines go to warn. Returns the number of entries set. */
size_t pool_persist_apply(struct ip_pool *p, const char *name, const char *text, bool is_fixed,
                          pool_persist_warn_fn warn, void *ctx);

/* Read path and apply it as pool_persist_apply does, warnings to the log (LOG_WARN). Returns the
 * number of entries set, 0 when the file does not exist, or -errno when it cannot be read (the
 * caller logs; -ELOOP for a symbolic link). Start-up only (blocks on disk). */
int pool_persist_load(struct ip_pool *p, const char *path, bool is_fixed);

/* The file text for p: one line per entry with a common name, in entry order. *text is
 * malloc'd (caller frees), *len its length. 0 or -ENOMEM. */
int pool_persist_format(const struct ip_pool *p, char **text, size_t *len);

/* Write p to path: into "<path>.tmp" and renamed over path (readers see the old or the new
 * file), or, when fd >= 0 (opened before privileges were dropped), rewritten in place through
 * fd. Returns 0 or -errno; path is untouched on error. */
int pool_persist_write(const struct ip_pool *p, const char *path, int fd);

#endif /* SERVER_ADDR_POOL_PERSIST_H */
