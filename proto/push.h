/* proto/push.h: text messages on the control channel and the PUSH_REPLY.
 *
 * After key-method 2 the TLS application data is a sequence of ASCII messages, each ending in one
 * NUL and each sent in its own TLS record (openvpn 2.6 forward.c, push.c, ssl_pkt.c). This module
 * splits and classifies what the client sends and builds what the server sends: PUSH_REPLY (split
 * with push-continuation), the per-client pushed options, AUTH_FAILED and AUTH_PENDING.
 * Pure functions, any thread.
 */
#ifndef PROTO_PUSH_H
#define PROTO_PUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct peer_info;

#define PUSH_REPLY_MAX 1024 /* PUSH_BUNDLE_SIZE: longest message incl. NUL that 2.6 builds */
/* 2.6 send_push_reply keeps 84 bytes spare: an option is appended while the message so far plus
 * the option is shorter than 940 bytes, so a message is at most 940 bytes + ",push-continuation 2".
 */
#define PUSH_REPLY_SAFE_CAP 940
#define PUSH_OPTION_MAX                                                                            \
    255                      /* a pushed option line, excl. NUL (the client reads 256-byte lines)  \
                              */
#define CONTROL_MSG_MAX 2048 /* TLS_CHANNEL_BUF_SIZE: the 2.6 reader's buffer for one message */

enum control_msg {
    CONTROL_MSG_UNKNOWN,      /* empty or unknown: log and ignore */
    CONTROL_MSG_INVALID,      /* control characters (other than a trailing CR/LF): 2.6 drops it */
    CONTROL_MSG_PUSH_REQUEST, /* "PUSH_REQUEST" (c->s) */
    CONTROL_MSG_PUSH_REPLY,   /* "PUSH_REPLY" (s->c) */
    CONTROL_MSG_EXIT,         /* "EXIT": explicit exit notify, after protocol-flags cc-exit */
    CONTROL_MSG_CR_RESPONSE,  /* "CR_RESPONSE,<base64>" (c->s) */
    CONTROL_MSG_AUTH_FAILED,  /* s->c */
    CONTROL_MSG_AUTH_PENDING, /* s->c */
    CONTROL_MSG_INFO_PRE,     /* s->c */
    CONTROL_MSG_INFO,         /* s->c */
    CONTROL_MSG_RESTART,      /* s->c */
    CONTROL_MSG_HALT,         /* s->c */
};

/* Take the next message off TLS plaintext buf (len bytes), as 2.6 ssl_pkt.c extract_command_buffer:
 * the message runs to the first NUL; trailing CR/LF are dropped. Sets *consumed to the number of
 * bytes to drop from the front of buf (always > 0 when len > 0) and copies the message,
 * NUL-terminated, into out (cap bytes; CONTROL_MSG_MAX is enough for anything 2.6 accepts).
 * Returns 0; -PE_SHORT when there is no NUL (2.6 throws those bytes away: *consumed = len);
 * -PE_MALFORMED for a message with control characters (dropped, *consumed covers it);
 * -PE_NOSPACE when it does not fit in out (dropped). */
int control_msg_next(const uint8_t *buf, size_t len, size_t *consumed, char *out, size_t cap,
                     size_t *out_len);

/* Classify one message (len bytes, with or without its trailing NUL; anything after a NUL is
 * ignored) by prefix, in 2.6's order (forward.c parse_incoming_control_channel_command,
 * push.c process_incoming_push_msg): so "EXITX" is EXIT and "INFO_PRE,..." is not INFO.
 * "PUSH_" followed by anything but REQUEST/REPLY is UNKNOWN. Trailing CR/LF are ignored. */
enum control_msg control_msg_classify(const char *msg, size_t len);

/* Called once per PUSH_REPLY message; msg is NUL-terminated, len excludes the NUL (so len + 1
 * bytes go into the TLS record). Return 0 to go on; a non-zero return stops push_reply_build,
 * which returns that value. */
typedef int (*push_emit_fn)(void *ctx, const char *msg, size_t len);

/* Build the PUSH_REPLY messages for options[0..n_options) in order (global push list first, then
 * push_client_options(), as 2.6 send_push_reply does). Each message is "PUSH_REPLY,opt,opt,...";
 * an option goes into the current message while the message so far plus the option is shorter
 * than PUSH_REPLY_SAFE_CAP (2.6 send_push_options), otherwise the current message gets
 * ",push-continuation 2" and a new one starts. When more than one message was needed the last one
 * ends with ",push-continuation 1". No message exceeds PUSH_REPLY_MAX incl. NUL. With no options
 * the single message is "PUSH_REPLY," (2.6 sends "PUSH_REPLY"; openvpn3 needs the comma).
 * All options are checked before anything is emitted. Returns 0, -PE_MALFORMED (an option is NULL,
 * empty, longer than PUSH_OPTION_MAX, or contains ',' or a control character), or the first
 * non-zero value returned by emit. */
int push_reply_build(const char *const *options, size_t n_options, push_emit_fn emit, void *ctx);

/* The server's decisions that shape the per-client part of the push. */
struct push_client_params {
    uint32_t iv_proto;         /* client's IV_PROTO bits */
    bool ncp;                  /* peer_info_supports_ncp(): push "cipher" */
    bool has_iv_mtu;           /* client sent IV_MTU: push "tun-mtu" */
    uint32_t peer_id;          /* pushed when the client has IV_PROTO_DATA_V2; <= 0xfffffe */
    const char *cipher;        /* ncp_select() result; NULL: no "cipher" */
    bool use_ekm;              /* server can derive data keys with the TLS exporter */
    bool cc_exit;              /* server handles the EXIT control message */
    bool dyn_tls_crypt;        /* server supports dynamic tls-crypt on renegotiation */
    int tun_mtu;               /* server's --tun-mtu */
    uint32_t ifconfig_local;   /* host order; 0: no "ifconfig" */
    uint32_t ifconfig_netmask; /* host order: netmask (topology subnet) or the remote end
                                  address (net30/p2p), as 2.6 push_ifconfig_remote_netmask */
    bool has_ifconfig_ipv6;    /* push "ifconfig-ipv6 local/netbits remote" */
    uint8_t ifconfig_ipv6_local[16];
    unsigned ifconfig_ipv6_netbits;
    uint8_t ifconfig_ipv6_remote[16];
    const char *auth_token; /* NULL: no "auth-token" */
    /* base64 of the client's username after override-username, for the client to send with its
     * token from now on (2.7 prepare_auth_token_push_reply); only with auth_token. NULL: none */
    const char *auth_token_user;
};

/* Rules both sides must agree on: what the push says is what the server must then do. */
/* P_DATA_V2 with a pushed peer-id: the client set IV_PROTO_DATA_V2. */
bool push_uses_peer_id(const struct push_client_params *p);
/* Data keys from the TLS exporter: p->use_ekm and the client set IV_PROTO_TLS_KEY_EXPORT. */
bool push_uses_ekm(const struct push_client_params *p);
/* EXIT on the control channel: p->cc_exit and the client set IV_PROTO_CC_EXIT_NOTIFY. */
bool push_uses_cc_exit(const struct push_client_params *p);
/* Dynamic tls-crypt for key_id > 0: p->dyn_tls_crypt and the client set IV_PROTO_DYN_TLS_CRYPT. */
bool push_uses_dyn_tls_crypt(const struct push_client_params *p);

/* The per-client options in 2.6's order (push.c prepare_push_reply):
 *   "ifconfig-ipv6 <local>/<bits> <remote>"  if has_ifconfig_ipv6
 *   "ifconfig <local> <netmask|remote>"      if ifconfig_local != 0 and ifconfig_netmask != 0
 *   "peer-id N"                              if push_uses_peer_id
 *   "auth-token T"                           if auth_token
 *   "auth-token-user B64"                    if auth_token and auth_token_user
 *   "cipher X"                               if ncp and cipher
 *   "protocol-flags cc-exit[ tls-ekm][ dyn-tls-crypt]"  if push_uses_cc_exit (tls-ekm if
 *                                            push_uses_ekm, dyn-tls-crypt if
 * push_uses_dyn_tls_crypt) else "key-derivation tls-ekm"            if push_uses_ekm and
 * "protocol-flags dyn-tls-crypt"  if push_uses_dyn_tls_crypt "tun-mtu N" if has_iv_mtu and tun_mtu
 * > 0 For IV_PROTO=990 with IV_MTU this is, as captured from 2.6.14: ifconfig 10.99.0.2
 * 255.255.255.0, peer-id 0, cipher AES-256-GCM, protocol-flags cc-exit tls-ekm dyn-tls-crypt,
 * tun-mtu 1500 Writes NUL-terminated options into opts[0..*n_opts). Returns 0, -PE_NOSPACE (more
 * than max_opts options, or one longer than 255 characters, e.g. a huge auth-token), -PE_MALFORMED
 * (peer_id above 0xfffffe, or cipher/auth_token containing ',', a space or a control character). */
int push_client_options(const struct push_client_params *p, char opts[][256], size_t max_opts,
                        size_t *n_opts);

/* The compression option to push (section 7, 2.6 multi.c multi_client_connect_compress_migrate
 * with "compress migrate"): if the client's options string shows compression (",comp-lzo,"),
 * "compress stub-v2" when its peer-info has IV_COMP_STUBv2=1, else "comp-lzo no"; NULL (push
 * nothing) otherwise. 2.6 appends it to the end of the global push list. The server must then use
 * the matching framing (stub-v2 or the 0xFA stub) for this client. pi may be NULL. */
const char *push_compress_migrate(const struct peer_info *pi, const char *client_options);

/* "AUTH_FAILED" or "AUTH_FAILED,<reason>" (reason NULL or "" gives the bare word). Trailing
 * whitespace (CR, LF, space, tab) of the reason is dropped and any other control character
 * replaced by a space, so the 2.6 client never discards the message; the result is cut to fit
 * min(cap, PUSH_REPLY_MAX) incl. NUL without splitting a UTF-8 sequence (2.6 send_auth_failed caps
 * at PUSH_BUNDLE_SIZE). Writes a NUL-terminated message to out; *out_len excludes the NUL.
 * Returns 0 or -PE_NOSPACE (cap < 12: not even "AUTH_FAILED"). */
int push_auth_failed_build(const char *reason, char *out, size_t cap, size_t *out_len);

/* "AUTH_PENDING,timeout <timeout_s>" if the client set IV_PROTO_AUTH_PENDING_KW, else
 * "AUTH_PENDING" (push.c send_auth_pending_messages). Writes a NUL-terminated message to out;
 * *out_len excludes the NUL. Returns 0 or -PE_NOSPACE (32 bytes always suffice). */
int push_auth_pending_build(uint32_t iv_proto, uint32_t timeout_s, char *out, size_t cap,
                            size_t *out_len);

/* Whether the client reads the 2.6 `dns` push option: IV_PROTO bit 6 (2.6) or bit 11 (2.7,
 * openvpn3). Clients without it (2.5 and older, older openvpn3) log it as an unknown option. */
bool push_client_knows_dns(uint32_t iv_proto);

/* The dhcp-option equivalents of one `dns ...` option text, for clients that do not know `dns`
 * (the same mapping a 2.6 client makes for its scripts, options.c tuntap_options_copy_dns):
 *   dns server N address A [A ...]  ->  "dhcp-option DNS A" / "dhcp-option DNS6 A" per address
 *                                       (a :port suffix is dropped; dhcp-option has no port)
 *   dns search-domains D [D ...]    ->  "dhcp-option DOMAIN-SEARCH D" per domain
 * Other `dns` forms (resolve-domains, dnssec, transport, sni) have no equivalent: *n_out = 0.
 * Options that are not `dns` also give *n_out = 0. Writes up to max_out NUL-terminated texts
 * into out. Returns 0 or -PE_NOSPACE (opt longer than 255, or more than max_out results). */
int push_dns_as_dhcp_option(const char *opt, char out[][256], size_t max_out, size_t *n_out);

#endif /* PROTO_PUSH_H */
