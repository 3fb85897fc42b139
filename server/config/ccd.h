/* server/config/ccd.h: per-client configuration files (`client-config-dir DIR`).
 *
 * When a client connects, openvpn 2.6 reads DIR/<common name>, or DIR/DEFAULT when there is no
 * such file (multi.c, multi_client_connect_source_ccd), and applies the directives allowed in a
 * client instance (options.c, OPT_P_INSTANCE and friends). ovpnd reads the same files with the
 * same line syntax (server/config/config_lex.c) and implements:
 *
 *   ifconfig-push LOCAL NETMASK|REMOTE  this client's IPv4 address, and the netmask (topology
 *                                       subnet) or the server end (net30, p2p) pushed with it
 *   ifconfig-ipv6-push ADDR/BITS [REMOTE]  its IPv6 address
 *   iroute NETWORK [NETMASK]            an IPv4 subnet behind the client
 *   iroute-ipv6 NETWORK/BITS            an IPv6 subnet behind the client
 *   push "OPTION"                       pushed to this client after the global push list
 *   push-reset                          drop the global push list for this client
 *   push-remove TEXT                    drop global pushed options starting with TEXT
 *   disable                             refuse this client
 *   vlan-pvid VID                       its VLAN with vlan-tagging (proto/vlan.h)
 *
 * Other directives openvpn allows there are refused as not implemented yet; server-only and
 * client directives are refused as not allowed. A refused or malformed file refuses the client
 * (the caller logs "FILE:LINE: directive: reason") and nobody else is affected.
 *
 * The files are read on each connect (a few small reads on the acceptor thread, as openvpn does
 * on its one thread), so edits apply to the next connection without a restart.
 */
#ifndef SERVER_CONFIG_CCD_H
#define SERVER_CONFIG_CCD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/addr/vroute.h"

#define CCD_MAX_FILE (64 << 10) /* bytes in one client-config-dir file */
#define CCD_MAX_ITEMS 1024      /* push, push-remove and iroute lines, each */

enum ccd_push_kind { CCD_PUSH, CCD_PUSH_RESET, CCD_PUSH_REMOVE };

struct ccd_push_op {
    enum ccd_push_kind kind;
    char *text; /* CCD_PUSH: the option; CCD_PUSH_REMOVE: the prefix; CCD_PUSH_RESET: NULL */
};

/* The parsed content of one file. Owned by the caller; free with ccd_free(). */
struct ccd {
    char *path;      /* the file that was read, for messages; NULL when none was found */
    bool is_default; /* the DEFAULT file was read, not one named after the client */
    bool is_disabled;
    bool has_ifconfig_push;
    uint32_t ifconfig_local, ifconfig_netmask; /* host byte order; netmask or remote end */
    int ifconfig_push_line;                    /* its line in the file, for messages */
    bool has_ifconfig_ipv6_push;
    uint8_t ifconfig_ipv6[16]; /* network byte order */
    int ifconfig_ipv6_bits;
    bool has_ifconfig_ipv6_remote;
    uint8_t ifconfig_ipv6_remote[16];
    struct vroute_key *iroutes;
    size_t n_iroutes;
    struct ccd_push_op *push_ops; /* push, push-reset, push-remove in file order */
    size_t n_push_ops;
    /* `inactive N [BYTES]`, `session-timeout N`, `max-routes-per-client N`: override the
     * server's for this client (2.6 takes them in a client instance) */
    bool has_inactive, has_session_timeout, has_max_routes;
    int inactive_s;
    uint64_t inactive_bytes;
    int session_timeout_s;
    int max_routes;
    /* `compress [ALG]` / `comp-lzo [MODE]`: this client's compression instead of the server's
     * (2.6 takes them in a client instance, OPT_P_COMP); comp_alg is an enum comp_framing */
    bool has_comp;
    int comp_alg;
    bool comp_is_adaptive;
    /* `vlan-pvid VID` (1..4094): this client's VLAN with vlan-tagging (2.6 takes it in a client
     * instance); without vlan-tagging it has no effect, as in 2.6 */
    bool has_vlan_pvid;
    uint16_t vlan_pvid;
    /* `override-username NAME` (openvpn 2.7, multi.c override_locked_username): the client's
     * username from now on (admit.c); a later output's wins. NULL when not given. */
    char *override_username;
};

/* Parse text (NUL-terminated) as the content of the file called name into c (zeroed by this
 * function). Returns 0, -EINVAL with "NAME:LINE: directive: reason" in errbuf, or -ENOMEM.
 * On failure c holds a partial result for ccd_free(). */
int ccd_parse_string(struct ccd *c, const char *name, const char *text, char *errbuf,
                     size_t errbuf_len);

/* Read DIR/common_name, or DIR/DEFAULT if that does not exist, and parse it into c. A common
 * name that cannot be a file name (empty, ".", "..", containing '/') is looked up as DEFAULT,
 * like openvpn's platform_gen_path refusal. Returns 0 with *found telling whether a file was
 * read (c->path names it), -EINVAL (bad content, errbuf as for ccd_parse_string) or -errno for
 * a file that exists but cannot be read (errbuf names the file and the reason). */
int ccd_load(struct ccd *c, const char *dir, const char *common_name, bool *found, char *errbuf,
             size_t errbuf_len);

/* Read path (a file a client-connect script or plugin wrote; at most CCD_MAX_FILE bytes) and
 * parse it like a client-config-dir file, naming it name in messages; c->path becomes a copy of
 * name. A missing or empty file gives an empty c with *found false. Returns 0, -EINVAL (errbuf
 * as for ccd_parse_string), -ENOMEM, or -errno when it cannot be read. */
int ccd_load_path(struct ccd *c, const char *path, const char *name, bool *found, char *errbuf,
                  size_t errbuf_len);

/* Called by ccd_scan_dir for each file: path is its path; c its content, or NULL when it
 * cannot be read or parsed, with error giving the reason (else error is NULL). Neither
 * outlives the call. */
typedef void (*ccd_scan_fn)(void *ctx, const char *path, const struct ccd *c, const char *error);

/* Read and parse every regular file in dir whose name a common name can have (DEFAULT
 * included) and hand each to fn, in directory order. For start-up, on the main thread (reads
 * the whole directory). Returns the number of files handed over, -ENOMEM, or -errno when dir
 * cannot be opened. */
int ccd_scan_dir(const char *dir, ccd_scan_fn fn, void *ctx);

/* For --test-config: read every file ccd_scan_dir would hand over, parse it as a connect does
 * (ccd_parse_string), and call report once per problem: each bad line ("PATH:LINE: directive:
 * reason"; parsing goes on after it) and each file that cannot be read ("PATH: cannot read:
 * reason"). msg does not outlive the call. Main thread. Returns how many files had a problem
 * (0: all good), -ENOMEM, or -errno when dir cannot be opened. */
int ccd_check_dir(const char *dir, void (*report)(void *ctx, const char *msg), void *ctx);

/* Apply from after into, as openvpn 2.6 applies the client-connect outputs after the
 * client-config-dir file (multi.c, client_connect_handlers): a later ifconfig-push or
 * ifconfig-ipv6-push replaces an earlier one, `disable` sticks, iroutes and push, push-reset and
 * push-remove lines are appended in order. into->path becomes "INTO, FROM" when both are set,
 * for messages. Takes what from holds (from is left empty, for ccd_free). Returns 0 or -ENOMEM
 * (into is then unchanged, from still owns its items). */
int ccd_merge(struct ccd *into, struct ccd *from);

/* This client's push list: the global list in (n_in texts, not copied), changed by c's
 * push, push-reset and push-remove lines in file order, as openvpn applies them to its
 * per-client copy of the list (push.c: push_option, push_reset, push_remove_option:
 * push-reset empties the list, derived route-gateway/topology/ping included; push-remove drops
 * every option starting with the text, except that "ifconfig" and "ifconfig-ipv6" match only
 * exactly and stop the per-client ifconfig / ifconfig-ipv6 option instead). c may be NULL.
 * out (out_cap pointers) receives pointers into in[] and c; *n_out their number.
 * Returns 0 or -ENOSPC when out is too small. */
int ccd_push_list(const struct ccd *c, const char *const *in, size_t n_in, const char **out,
                  size_t out_cap, size_t *n_out, bool *is_ifconfig_blocked,
                  bool *is_ifconfig_ipv6_blocked);

/* Release what c owns and zero it. NULL is a no-op. */
void ccd_free(struct ccd *c);

#endif /* SERVER_CONFIG_CCD_H */
