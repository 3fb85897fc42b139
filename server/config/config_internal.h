/* server/config/config_internal.h: what the config_*.c files share: the parser state, the directive
 * table and the helpers handlers use to report errors and store values. Not for other modules.
 */
#ifndef SERVER_CONFIG_CONFIG_INTERNAL_H
#define SERVER_CONFIG_CONFIG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/config/config.h"

#define CONFIG_MAX_ARGS 16        /* words on one line, name included (openvpn MAX_PARMS) */
#define CONFIG_MAX_ARG_LEN 256    /* characters in one word (openvpn OPTION_PARM_SIZE) */
#define CONFIG_MAX_DEPTH 10       /* nested `config` files (openvpn read_config_file) */
#define CONFIG_MAX_FILE (4 << 20) /* bytes in a config file */
#define CONFIG_MAX_BLOB (1 << 20) /* bytes in a certificate/key file or an inline block */
#define CONFIG_MAX_PUSH 1024      /* `push` lines */
#define CONFIG_MAX_ROUTES 1024    /* `route` and `route-ipv6` lines */

/* Where a directive was seen, for checks made after the last line. file points into
 * config_parser.files and lives as long as the parser. */
struct config_where {
    const char *file;
    int line; /* 0 = not seen */
};

/* A file named by a directive, read once the whole config is known (openvpn reads them at
 * start-up, after every `cd` has run). */
struct config_pending {
    char *path; /* as written; NULL when the value came inline or was not given */
    struct config_where where;
};

/* The certificate options' files, read after the last line (config_cert.c). */
struct config_cert_pending {
    struct config_pending extra_certs, pkcs12, crl_dir, export_cert, capath;
    struct config_pending askpass;    /* path NULL: the terminal; where.line 0: not given */
    struct config_blob pkcs12_inline; /* <pkcs12> block: the file in base64 */
};

#define CONFIG_REFUSED_MAX 32      /* refused directive names remembered (more are not) */
#define CONFIG_REFUSED_NAME_LEN 40 /* longer names are not remembered */

struct config_parser {
    struct config *cfg;
    const struct config *running; /* at a reload, the config the server runs with (persist-key:
                                   * config_parse_string_in); NULL otherwise */
    char *errbuf;
    size_t errbuf_len;
    const char *last_error_file; /* where the last error was reported: one per line */
    int last_error_line;
    bool has_line_errors; /* some line was refused */
    /* directives refused on some line (config_refused): a whole-config check does not say a
     * directive is missing when its line was refused already */
    char refused[CONFIG_REFUSED_MAX][CONFIG_REFUSED_NAME_LEN];
    size_t n_refused;

    /* The line being handled */
    const char *file;
    int line;
    const char *name; /* directive name, for messages */
    bool is_inline;   /* the value is the text of a <name> block */

    char *cd; /* directory relative paths are resolved against; NULL = the process's */
    int depth;
    char **files; /* every file name used in messages; freed with the parser */
    size_t n_files;
    char **ignore_unknown; /* names from ignore-unknown-option */
    size_t n_ignore_unknown;
    bool is_forward_compatible; /* `setenv FORWARD_COMPATIBLE 1`: unknown directives only warn */

    struct config_pending ca, cert, key, tls_wrap_key, tls_crypt_v2_key, crl, dh;
    struct config_pending ccd, tmp_dir; /* client-config-dir, tmp-dir: resolved at the end */
    struct config_where seen_chroot;
    struct config_where seen_management; /* config_mgmt.c */
    struct config_cert_pending certp;
    struct config_pending auth_token_secret; /* `auth-gen-token-secret FILE` */
    struct config_where seen_auth_gen_token;
    struct config_where seen_ca, seen_cert, seen_key, seen_tls_auth, seen_tls_crypt,
        seen_tls_crypt_v2, seen_tls_crypt_v2_verify, seen_peer_fingerprint;
    struct config_where seen_topology, seen_dev_type, seen_dev, seen_keepalive, seen_ping,
        seen_ping_restart, seen_ping_exit, seen_verify_client_cert, seen_cipher,
        seen_tls_version_min, seen_tls_version_max, seen_auth, seen_ccd_exclusive, seen_route_ipv6,
        seen_block_ipv6, seen_auth_user_pass_verify, seen_script_security, seen_local,
        seen_port_share, seen_tls_verify, seen_client_connect, seen_client_disconnect,
        seen_learn_address, seen_client_crresponse, seen_username_as_cn,
        seen_auth_user_pass_optional, seen_up, seen_down, seen_route_up, seen_server, seen_ifconfig,
        seen_ifconfig_pool, seen_ifconfig_ipv6, seen_ifconfig_ipv6_pool, seen_server_ipv6,
        seen_ifconfig_pool_persist, seen_tun_mtu, seen_link_mtu, seen_proto_force, seen_fragment,
        seen_socket_flags_nodelay;
    int link_mtu;    /* `link-mtu N` / `udp-mtu N`: the tun MTU is derived after the last line */
    int proto_force; /* `proto-force P`: CONFIG_PROTO_UDP or CONFIG_PROTO_TCP; 0 = none */
    struct config_where seen_compat_mode;
    unsigned compat_version; /* `compat-mode X.Y.Z` as X * 10000 + Y * 100 + Z; 0 = none */
    bool seen_compression;   /* compress, comp-lzo, comp-noadapt or allow-compression */
    bool is_mssfix_default;  /* no `mssfix N` (yet): filled in from tun-mtu after the last line */
    bool is_dev_type_tun;
    bool is_dev_type_tap;
    struct config_where seen_server_bridge, seen_lladdr, seen_vlan_tagging, seen_vlan_accept,
        seen_vlan_pvid;
    struct config_where seen_pkcs11_providers, seen_pkcs11_id, seen_pkcs11_pin_cache,
        seen_pkcs11_id_management; /* config_pkcs11.c */
};

#define TUN_MTU_MIN 100 /* openvpn mtu.h */

/* The kinds of table rows. */
enum config_kind {
    CONFIG_KIND_SET,     /* implemented: the handler stores the value */
    CONFIG_KIND_IGNORE,  /* accepted; warns with note (no warning when note is NULL) */
    CONFIG_KIND_TODO,    /* understood, refused: "not implemented yet in ovpnd" (+ note) */
    CONFIG_KIND_CLIENT,  /* a client directive: refused (+ note) */
    CONFIG_KIND_REFUSED, /* refused with note as the whole reason (removed, command modes) */
};

/* Where a directive may appear (openvpn OPT_P_* permission classes, simplified). */
#define CONFIG_F_GLOBAL 0x1        /* in the server config */
#define CONFIG_F_CCD 0x2           /* in a client-config-dir file (not read yet) */
#define CONFIG_F_INLINE 0x4        /* the value may be a <name> block */
#define CONFIG_F_CLIENT_OPTION 0x8 /* IGNORE row: a client option 2.6 accepts in a server */

/* A handler gets the directive's words, argv[0] being the name; argc is within the row's
 * bounds and, for inline values, argv[1] is the block text. Returns 0 or the result of
 * config_error() / -ENOMEM. */
typedef int (*config_handler_fn)(struct config_parser *ps, int argc, char **argv);

struct config_directive {
    const char *name;
    uint8_t min_args, max_args; /* not counting the name; checked for SET and IGNORE rows */
    uint8_t kind;               /* enum config_kind */
    uint8_t flags;              /* CONFIG_F_* */
    config_handler_fn handler;  /* SET rows only */
    const char *note;
};

/* The row for name, or NULL. */
const struct config_directive *config_directive_find(const char *name);

/* How many rows the directive table has (for tests that walk documentation against it). */
size_t config_directive_count(void);

/* Split one line into words the way openvpn's parse_line does. line is line_len bytes with no
 * newline. scratch must hold line_len + CONFIG_MAX_ARGS bytes; argv[] (CONFIG_MAX_ARGS
 * entries) points into it. *argc = 0 for blank and comment lines. Returns 0, or -EINVAL with a
 * reason in why (why_len bytes, no file/line prefix). */
int config_split_line(const char *line, size_t line_len, char *scratch, char **argv, int *argc,
                      char *why, size_t why_len);

/* The directive name of a line that does not split into words, for its error: the first word
 * as written (blanks before it and a leading "--" skipped, up to a blank or quote). Returns its
 * length (0: none, or 64 bytes or more); *start points at it. */
size_t config_first_word(const char *line, size_t line_len, const char **start);

/* Report an error for the current line: "FILE:LINE: NAME: " + the formatted text, appended to
 * cfg->errors (one per line), and into the error buffer unless an error is already there.
 * Returns -EINVAL. */
int config_error(struct config_parser *ps, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Whether a line of directive name was refused (with config_error) while parsing: the
 * whole-config checks use it not to report "NAME is required" after the line that gave NAME
 * was refused. */
bool config_refused(const struct config_parser *ps, const char *name);

/* The same for a directive seen earlier (where), or for the file as a whole when where is NULL
 * ("FILE: text"). name may be NULL. Returns -EINVAL. */
int config_error_at(struct config_parser *ps, const struct config_where *where, const char *name,
                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* "not implemented yet in ovpnd", optionally followed by " (detail)". Returns -EINVAL. */
int config_not_implemented(struct config_parser *ps, const char *detail_fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Append a warning for the current line (where NULL) or for where. Returns 0 or -ENOMEM. */
int config_warn(struct config_parser *ps, const struct config_where *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Out of memory: set the message and return -ENOMEM. */
int config_nomem(struct config_parser *ps);

/* The current line as a config_where. */
struct config_where config_here(const struct config_parser *ps);

/* Replace *dst with a copy of src (NULL allowed). Returns 0 or -ENOMEM. */
int config_set_str(struct config_parser *ps, char **dst, const char *src);

/* Parse a decimal integer in [min, max]. label names the argument in messages (NULL for a
 * directive with one value). Returns 0 or -EINVAL with an error reported. */
int config_parse_int(struct config_parser *ps, const char *label, const char *s, long min, long max,
                     int *out);

/* Remember path (relative to the final directory) to be read into a blob after the last line;
 * or, for an inline value, store text now. Replaces any earlier value. Returns 0 or -ENOMEM. */
int config_set_file(struct config_parser *ps, struct config_pending *pending,
                    struct config_blob *blob, const char *value);

/* Read the file at path (joined to ps->cd when relative) into blob. On failure reports
 * "NAME: cannot read 'path': reason" at where and returns -EINVAL (or -ENOMEM). */
int config_read_blob(struct config_parser *ps, const struct config_where *where, const char *name,
                     const char *path, struct config_blob *blob);

/* path joined to ps->cd when relative; caller frees. NULL when memory is short. */
char *config_resolve(const struct config_parser *ps, const char *path);

/* Read and parse the config file at path (an include when ps->depth > 0). */
int config_parse_include(struct config_parser *ps, const char *path);

/* Free a blob, wiping its data first. */
void config_blob_clear(struct config_blob *blob);

/* Checks and defaults after the last line (config_check.c). Returns 0, -EINVAL or -ENOMEM. */
int config_finish(struct config_parser *ps);

/* Handlers, by area. */
/* config_cert.c: certificate options (x509-username-field, x509-track, tls-export-cert,
 * extra-certs, pkcs12, askpass, crl-verify DIR dir, capath) */
int config_h_x509_username_field(struct config_parser *ps, int argc, char **argv);
int config_h_extra_certs(struct config_parser *ps, int argc, char **argv);
int config_h_pkcs12(struct config_parser *ps, int argc, char **argv);
int config_h_askpass(struct config_parser *ps, int argc, char **argv);
int config_h_x509_track(struct config_parser *ps, int argc, char **argv);
int config_h_tls_export_cert(struct config_parser *ps, int argc, char **argv);
int config_h_capath(struct config_parser *ps, int argc, char **argv);
/* `crl-verify DIR dir` for config_h_crl_verify. 0 or -ENOMEM. */
int config_crl_verify_dir(struct config_parser *ps, const char *dir);
/* After the last line, before ca/cert/key are read: pkcs12 fills them. 0, -EINVAL, -ENOMEM. */
int config_cert_before_files(struct config_parser *ps);
/* After ca/cert/key are read, before they are checked: an encrypted key decrypted (askpass),
 * extra-certs appended to the cert chain, the crl-verify and capath directories checked. */
int config_cert_after_files(struct config_parser *ps);
/* Free what struct config_cert / struct config_cert_pending hold. */
void config_cert_clear(struct config_cert *c);
void config_cert_pending_clear(struct config_cert_pending *p);
/* config_auth_token.c */
int config_h_auth_gen_token(struct config_parser *ps, int argc, char **argv);
int config_h_auth_gen_token_secret(struct config_parser *ps, int argc, char **argv);
/* auth-gen-token after the last line: its renewal default and checks, and the secret file read
 * and parsed. 0, -EINVAL or -ENOMEM. */
int config_check_auth_token(struct config_parser *ps);
/* config_net.c */
/* Check a `push` option text as openvpn and its clients read it (push.c push_option_ex, options.c
 * apply_push_options): no comma, at most CONFIG_PUSH_MAX_LEN characters, splits into at least one
 * word by the config-line rules. 0, -EINVAL or -ENOMEM with the reason in why (why_len bytes). */
int config_push_text_check(const char *text, char *why, size_t why_len);

/* Prefix length of a contiguous IPv4 netmask (host byte order), or -1 if not contiguous. */
int config_netmask_bits(uint32_t mask);

/* Parse "ADDRESS/BITS" (IPv6, BITS 0..128) into addr (network order) and *bits; on error
 * reports it for the current line and returns -EINVAL. */
int config_parse_ipv6_prefix(struct config_parser *ps, const char *s, uint8_t addr[16], int *bits);

/* The directory value names (relative to the last `cd`), made absolute with realpath() into
 * *out (malloc'd, the caller's); reports "cannot use" / "is not a directory" for the current
 * line otherwise. 0, -EINVAL or -ENOMEM. */
int config_real_dir(struct config_parser *ps, const char *value, char **out);

int config_h_client_config_dir(struct config_parser *ps, int argc, char **argv);
int config_h_ccd_exclusive(struct config_parser *ps, int argc, char **argv);
int config_h_client_to_client(struct config_parser *ps, int argc, char **argv);
int config_h_route(struct config_parser *ps, int argc, char **argv);
int config_h_route_table(struct config_parser *ps, int argc, char **argv);
int config_h_route_ipv6(struct config_parser *ps, int argc, char **argv);
int config_h_route_metric(struct config_parser *ps, int argc, char **argv);
int config_h_route_gateway(struct config_parser *ps, int argc, char **argv);
int config_h_ifconfig_noexec(struct config_parser *ps, int argc, char **argv);
int config_h_block_ipv6(struct config_parser *ps, int argc, char **argv);
int config_h_passtos(struct config_parser *ps, int argc, char **argv);
int config_h_client_nat(struct config_parser *ps, int argc, char **argv);
int config_h_route_noexec(struct config_parser *ps, int argc, char **argv);
int config_h_dev_node(struct config_parser *ps, int argc, char **argv);
int config_h_server_ipv6(struct config_parser *ps, int argc, char **argv);
int config_h_port(struct config_parser *ps, int argc, char **argv);
int config_h_proto(struct config_parser *ps, int argc, char **argv);
int config_h_tcp_queue_limit(struct config_parser *ps, int argc, char **argv);
int config_h_port_share(struct config_parser *ps, int argc, char **argv);
int config_h_local(struct config_parser *ps, int argc, char **argv);
int config_h_dev(struct config_parser *ps, int argc, char **argv);
int config_h_dev_type(struct config_parser *ps, int argc, char **argv);
int config_h_topology(struct config_parser *ps, int argc, char **argv);
int config_h_ifconfig(struct config_parser *ps, int argc, char **argv);
int config_h_ifconfig_pool(struct config_parser *ps, int argc, char **argv);
int config_h_ifconfig_pool_persist(struct config_parser *ps, int argc, char **argv);
int config_h_ifconfig_push_constraint(struct config_parser *ps, int argc, char **argv);
int config_h_ifconfig_ipv6(struct config_parser *ps, int argc, char **argv);
int config_h_ifconfig_ipv6_pool(struct config_parser *ps, int argc, char **argv);
int config_h_server(struct config_parser *ps, int argc, char **argv);
int config_h_server_bridge(struct config_parser *ps, int argc, char **argv);
int config_h_lladdr(struct config_parser *ps, int argc, char **argv);
int config_h_vlan_tagging(struct config_parser *ps, int argc, char **argv);
int config_h_vlan_accept(struct config_parser *ps, int argc, char **argv);
int config_h_vlan_pvid(struct config_parser *ps, int argc, char **argv);
int config_h_mode(struct config_parser *ps, int argc, char **argv);
int config_h_tun_mtu(struct config_parser *ps, int argc, char **argv);
int config_h_mssfix(struct config_parser *ps, int argc, char **argv);
int config_h_link_mtu(struct config_parser *ps, int argc, char **argv);
int config_h_max_packet_size(struct config_parser *ps, int argc, char **argv);
int config_h_fragment(struct config_parser *ps, int argc, char **argv);
int config_h_proto_force(struct config_parser *ps, int argc, char **argv);

/* After the last line: the tun MTU from `link-mtu` (server/config/config_mtu.c). Returns 0 or
 * -EINVAL with the error reported. */
int config_check_mtu(struct config_parser *ps);

/* After the last line and the sockets' checks: `fragment` needs a UDP socket, and 2.6's
 * warnings about it and mssfix (server/config/config_mtu.c). Returns 0 or -EINVAL with the error
 * reported. */
int config_check_fragment(struct config_parser *ps);

int config_h_keying_material_exporter(struct config_parser *ps, int argc, char **argv);
int config_h_force_tls_key_material_export(struct config_parser *ps, int argc, char **argv);
int config_h_compat_mode(struct config_parser *ps, int argc, char **argv);

/* After the last line, once data-ciphers has its final value and before the other defaults:
 * the defaults `compat-mode` brings back (server/config/config_compat.c). Returns 0, -EINVAL
 * with the error reported, or -ENOMEM. */
int config_apply_compat_mode(struct config_parser *ps);

/* Whether name is one of the entries of the colon-separated list (exact, case-sensitive). */
bool config_in_colon_list(const char *list, const char *name);

/* Whether ovpnd's data channel offers the cipher name (upper case, OpenVPN's spelling). */
bool config_data_cipher_supported(const char *name);
int config_h_keepalive(struct config_parser *ps, int argc, char **argv);
int config_h_ping(struct config_parser *ps, int argc, char **argv);
int config_h_ping_restart(struct config_parser *ps, int argc, char **argv);
int config_h_ping_exit(struct config_parser *ps, int argc, char **argv);
int config_h_socket_flags(struct config_parser *ps, int argc, char **argv);
int config_h_tcp_nodelay(struct config_parser *ps, int argc, char **argv);
int config_h_push(struct config_parser *ps, int argc, char **argv);
int config_h_max_clients(struct config_parser *ps, int argc, char **argv);
int config_h_connect_freq(struct config_parser *ps, int argc, char **argv);
int config_h_connect_freq_initial(struct config_parser *ps, int argc, char **argv);
int config_h_duplicate_cn(struct config_parser *ps, int argc, char **argv);
int config_h_explicit_exit_notify(struct config_parser *ps, int argc, char **argv);
int config_h_comp_lzo(struct config_parser *ps, int argc, char **argv);
int config_h_compress(struct config_parser *ps, int argc, char **argv);

int config_h_comp_noadapt(struct config_parser *ps, int argc, char **argv);
/* What ovpnd does with `comp-lzo no` and `compress [stub|stub-v2|migrate]`. */
#define COMP_MIGRATE_NOTE                                                                          \
    "clients configured with compression get 'compress stub-v2' (or 'comp-lzo no') pushed, as "    \
    "with 'compress migrate', unless a push line sets their compression; others get no framing"
int config_h_allow_compression(struct config_parser *ps, int argc, char **argv);
/* config_tls.c */
int config_h_ca(struct config_parser *ps, int argc, char **argv);
int config_h_peer_fingerprint(struct config_parser *ps, int argc, char **argv);
int config_h_verify_hash(struct config_parser *ps, int argc, char **argv);
int config_h_ns_cert_type(struct config_parser *ps, int argc, char **argv);
int config_h_verify_x509_name(struct config_parser *ps, int argc, char **argv);
int config_h_cert(struct config_parser *ps, int argc, char **argv);
int config_h_key(struct config_parser *ps, int argc, char **argv);
int config_h_dh(struct config_parser *ps, int argc, char **argv);
int config_h_tls_auth(struct config_parser *ps, int argc, char **argv);
int config_h_tls_crypt(struct config_parser *ps, int argc, char **argv);
int config_h_tls_crypt_v2(struct config_parser *ps, int argc, char **argv);
int config_h_tls_crypt_v2_max_age(struct config_parser *ps, int argc, char **argv);
int config_h_key_direction(struct config_parser *ps, int argc, char **argv);
int config_h_auth(struct config_parser *ps, int argc, char **argv);
int config_h_data_ciphers(struct config_parser *ps, int argc, char **argv);
int config_h_data_ciphers_fallback(struct config_parser *ps, int argc, char **argv);
int config_h_cipher(struct config_parser *ps, int argc, char **argv);
int config_h_replay_window(struct config_parser *ps, int argc, char **argv);
int config_h_no_replay(struct config_parser *ps, int argc, char **argv);
int config_h_hand_window(struct config_parser *ps, int argc, char **argv);
int config_h_inactive(struct config_parser *ps, int argc, char **argv);
int config_h_mlock(struct config_parser *ps, int argc, char **argv);
int config_h_multihome(struct config_parser *ps, int argc, char **argv);
int config_h_mark(struct config_parser *ps, int argc, char **argv);
int config_h_nice(struct config_parser *ps, int argc, char **argv);
int config_h_remap_usr1(struct config_parser *ps, int argc, char **argv);
int config_h_txqueuelen(struct config_parser *ps, int argc, char **argv);
int config_h_bind_dev(struct config_parser *ps, int argc, char **argv);
int config_h_down_pre(struct config_parser *ps, int argc, char **argv);
int config_h_session_timeout(struct config_parser *ps, int argc, char **argv);
int config_h_stale_routes_check(struct config_parser *ps, int argc, char **argv);
int config_h_max_routes_per_client(struct config_parser *ps, int argc, char **argv);
int config_h_tran_window(struct config_parser *ps, int argc, char **argv);
int config_h_tls_timeout(struct config_parser *ps, int argc, char **argv);
int config_h_reneg_sec(struct config_parser *ps, int argc, char **argv);
int config_h_reneg_traffic(struct config_parser *ps, int argc, char **argv);
int config_h_remote_cert_ku(struct config_parser *ps, int argc, char **argv);
int config_h_remote_cert_eku(struct config_parser *ps, int argc, char **argv);
int config_h_tls_version_min(struct config_parser *ps, int argc, char **argv);
int config_h_tls_version_max(struct config_parser *ps, int argc, char **argv);
int config_h_tls_groups(struct config_parser *ps, int argc, char **argv);
int config_h_tls_cipher(struct config_parser *ps, int argc, char **argv);
int config_h_tls_cert_profile(struct config_parser *ps, int argc, char **argv);
int config_h_verify_client_cert(struct config_parser *ps, int argc, char **argv);
int config_h_remote_cert_tls(struct config_parser *ps, int argc, char **argv);
int config_h_tls_server(struct config_parser *ps, int argc, char **argv);
/* config_auth.c */
int config_h_auth_user_pass_verify(struct config_parser *ps, int argc, char **argv);
int config_h_auth_user_pass_optional(struct config_parser *ps, int argc, char **argv);
int config_h_username_as_common_name(struct config_parser *ps, int argc, char **argv);
int config_h_script_security(struct config_parser *ps, int argc, char **argv);
int config_h_tmp_dir(struct config_parser *ps, int argc, char **argv);
int config_h_setenv(struct config_parser *ps, int argc, char **argv);
int config_h_plugin(struct config_parser *ps, int argc, char **argv);
int config_h_hook_script(struct config_parser *ps, int argc, char **argv);
int config_h_crl_verify(struct config_parser *ps, int argc, char **argv);
/* Checks of the authentication directives after the last line. Returns 0 or -EINVAL. */
int config_check_auth(struct config_parser *ps);
/* Free a NULL-terminated string vector and its strings. NULL is a no-op. */
void config_strv_free(char **v);
/* config_daemon.c */
int config_h_config(struct config_parser *ps, int argc, char **argv);
int config_h_cd(struct config_parser *ps, int argc, char **argv);
int config_h_chroot(struct config_parser *ps, int argc, char **argv);

/* A path that is used after the chroot (client-config-dir, crl-verify, tls-export-cert, tmp-dir,
 * the scripts run for clients), as written at line `where`: *runtime is what the server uses
 * (without chroot: resolved against `cd`; with it: the path inside the jail, relative ones from
 * its root, as 2.6 after its chdir("/")), *host the same file seen from outside the jail, for
 * start-up checks. Either out-pointer may be NULL. Returns 0 or -ENOMEM. */
int config_jail_path(struct config_parser *ps, const char *path, char **host, char **runtime);

/* After the last line: the chroot directory must exist; client-config-dir and tmp-dir are
 * resolved (inside the jail with chroot) and checked. 0, -EINVAL or -ENOMEM. */
int config_check_jail(struct config_parser *ps);
int config_h_user(struct config_parser *ps, int argc, char **argv);
int config_h_group(struct config_parser *ps, int argc, char **argv);
int config_h_daemon(struct config_parser *ps, int argc, char **argv);
int config_h_syslog(struct config_parser *ps, int argc, char **argv);
int config_h_writepid(struct config_parser *ps, int argc, char **argv);
int config_h_log(struct config_parser *ps, int argc, char **argv);
int config_h_log_append(struct config_parser *ps, int argc, char **argv);
int config_h_suppress_timestamps(struct config_parser *ps, int argc, char **argv);
int config_h_machine_readable_output(struct config_parser *ps, int argc, char **argv);
int config_h_verb(struct config_parser *ps, int argc, char **argv);
int config_h_mute(struct config_parser *ps, int argc, char **argv);
int config_h_management(struct config_parser *ps, int argc, char **argv);
int config_h_management_client_user(struct config_parser *ps, int argc, char **argv);
int config_h_management_client_group(struct config_parser *ps, int argc, char **argv);
int config_h_management_log_cache(struct config_parser *ps, int argc, char **argv);
int config_h_management_external_key(struct config_parser *ps, int argc, char **argv);
int config_h_management_external_cert(struct config_parser *ps, int argc, char **argv);

/* config_pkcs11.c: pkcs11-providers, pkcs11-id and the others (2.6 options.c) */
int config_h_pkcs11_providers(struct config_parser *ps, int argc, char **argv);
int config_h_pkcs11_list(struct config_parser *ps, int argc, char **argv);
int config_h_pkcs11_pin_cache(struct config_parser *ps, int argc, char **argv);
int config_h_pkcs11_id(struct config_parser *ps, int argc, char **argv);
int config_h_pkcs11_id_management(struct config_parser *ps, int argc, char **argv);

/* After the last line: what 2.6 checks of the pkcs11-* directives, and what ovpnd cannot do
 * with them (options.c options_postprocess_verify_ce). 0 or -EINVAL with the errors reported. */
int config_check_pkcs11(struct config_parser *ps);
int config_h_management_flag(struct config_parser *ps, int argc, char **argv);
/* After the last line: management-* modifiers need `management`, client user/group a unix
 * socket; a TCP listener without a password file is warned about. 0 or -EINVAL. */
int config_check_mgmt(struct config_parser *ps);
int config_h_metrics(struct config_parser *ps, int argc, char **argv);
int config_h_metrics_per_client(struct config_parser *ps, int argc, char **argv);
int config_check_metrics(struct config_parser *ps);
int config_h_status(struct config_parser *ps, int argc, char **argv);
int config_h_status_version(struct config_parser *ps, int argc, char **argv);
int config_h_persist_key(struct config_parser *ps, int argc, char **argv);
int config_h_persist_tun(struct config_parser *ps, int argc, char **argv);
int config_h_workers(struct config_parser *ps, int argc, char **argv);
int config_h_ignore_unknown_option(struct config_parser *ps, int argc, char **argv);

#endif /* SERVER_CONFIG_CONFIG_INTERNAL_H */
