/* proto/push.c: control-channel messages, PUSH_REPLY and the per-client pushed options. */
#include "proto/push.h"

#include <arpa/inet.h>
#include <stdio.h>

#include <string.h>

#include "proto/errors.h"
#include "proto/occ.h"
#include "proto/peer_info.h"

#define PUSH_REPLY_CMD "PUSH_REPLY"
#define CONTINUATION_MORE ",push-continuation 2"
#define CONTINUATION_LAST ",push-continuation 1"
#define AUTH_FAILED_CMD "AUTH_FAILED"
#define PEER_ID_MAX 0xfffffeu /* 0xffffff means "no peer-id"; openvpn3 rejects larger values */

_Static_assert(PUSH_REPLY_SAFE_CAP + sizeof(CONTINUATION_MORE) <= PUSH_REPLY_MAX,
               "a full message plus its continuation marker must fit the 2.6 bundle size");

/* 2.6 char_class CC_PRINT: anything from 0x20 up except DEL (UTF-8 is fine). */
static bool is_print(unsigned char ch)
{
    return ch >= 0x20 && ch != 0x7f;
}

static bool is_crlf(char ch)
{
    return ch == '\r' || ch == '\n';
}

/* --- reading client messages --------------------------------------------------------------- */

int control_msg_next(const uint8_t *buf, size_t len, size_t *consumed, char *out, size_t cap,
                     size_t *out_len)
{
    const uint8_t *nul = memchr(buf, 0, len);

    if (nul == NULL) {
        *consumed = len;
        return -PE_SHORT;
    }
    size_t n = (size_t)(nul - buf);
    *consumed = n + 1;
    while (n > 0 && is_crlf((char)buf[n - 1])) {
        n--;
    }
    for (size_t i = 0; i < n; i++) {
        if (!is_print(buf[i])) {
            return -PE_MALFORMED;
        }
    }
    if (n >= cap) {
        return -PE_NOSPACE;
    }
    memcpy(out, buf, n);
    out[n] = '\0';
    *out_len = n;
    return 0;
}

static bool has_prefix(const char *msg, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);

    return len >= n && memcmp(msg, prefix, n) == 0;
}

enum control_msg control_msg_classify(const char *msg, size_t len)
{
    static const struct {
        const char *prefix;
        enum control_msg type;
    } table[] = {
        /* order matters: the first prefix that matches wins, as in 2.6 */
        {"AUTH_FAILED", CONTROL_MSG_AUTH_FAILED},
        {"PUSH_REQUEST", CONTROL_MSG_PUSH_REQUEST},
        {"PUSH_REPLY", CONTROL_MSG_PUSH_REPLY},
        {"PUSH_", CONTROL_MSG_UNKNOWN},
        {"RESTART", CONTROL_MSG_RESTART},
        {"HALT", CONTROL_MSG_HALT},
        {"INFO_PRE", CONTROL_MSG_INFO_PRE},
        {"INFO", CONTROL_MSG_INFO},
        {"CR_RESPONSE", CONTROL_MSG_CR_RESPONSE},
        {"AUTH_PENDING", CONTROL_MSG_AUTH_PENDING},
        {"EXIT", CONTROL_MSG_EXIT},
    };
    const char *nul = memchr(msg, '\0', len);

    if (nul != NULL) {
        len = (size_t)(nul - msg);
    }
    while (len > 0 && is_crlf(msg[len - 1])) {
        len--;
    }
    for (size_t i = 0; i < len; i++) {
        if (!is_print((unsigned char)msg[i])) {
            return CONTROL_MSG_INVALID;
        }
    }
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        if (has_prefix(msg, len, table[i].prefix)) {
            return table[i].type;
        }
    }
    return CONTROL_MSG_UNKNOWN;
}

/* --- bounded string building --------------------------------------------------------------- */

struct sb {
    char *p;
    size_t cap, len;
    bool overflow;
};

static void sb_putn(struct sb *b, const char *s, size_t n)
{
    if (b->overflow || n >= b->cap - b->len) {
        b->overflow = true;
        return;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_put(struct sb *b, const char *s)
{
    sb_putn(b, s, strlen(s));
}

static void sb_put_uint(struct sb *b, uint32_t v)
{
    char tmp[11];
    size_t i = sizeof(tmp);

    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    sb_putn(b, tmp + i, sizeof(tmp) - i);
}

static void sb_put_hex16(struct sb *b, unsigned v)
{
    static const char digits[] = "0123456789abcdef";
    char tmp[4];
    size_t i = sizeof(tmp);

    do {
        tmp[--i] = digits[v & 0xf];
        v >>= 4;
    } while (v != 0);
    sb_putn(b, tmp + i, sizeof(tmp) - i);
}

/* host-order IPv4 as dotted quad */
static void sb_put_ipv4(struct sb *b, uint32_t a)
{
    for (int shift = 24; shift >= 0; shift -= 8) {
        sb_put_uint(b, (a >> shift) & 0xff);
        if (shift > 0) {
            sb_put(b, ".");
        }
    }
}

/* IPv6 text as glibc inet_ntop writes it (2.6 print_in6_addr uses that): lower-case hex, the
 * first longest run of two or more zero groups as "::", IPv4-mapped/compatible tails dotted. */
static void sb_put_ipv6(struct sb *b, const uint8_t a[16])
{
    unsigned words[8];
    int best = -1, best_len = 0;

    for (int i = 0; i < 8; i++) {
        words[i] = (unsigned)a[2 * i] << 8 | a[2 * i + 1];
    }
    for (int i = 0; i < 8;) {
        int j = i;
        while (j < 8 && words[j] == 0) {
            j++;
        }
        if (j - i > best_len) {
            best = i;
            best_len = j - i;
        }
        i = j > i ? j : i + 1;
    }
    if (best_len < 2) {
        best = -1;
    }
    for (int i = 0; i < 8; i++) {
        if (best >= 0 && i >= best && i < best + best_len) {
            if (i == best) {
                sb_put(b, ":");
            }
            continue;
        }
        if (i != 0) {
            sb_put(b, ":");
        }
        if (i == 6 && best == 0 && (best_len == 6 || (best_len == 5 && words[5] == 0xffff))) {
            uint32_t v4 = (uint32_t)a[12] << 24 | (uint32_t)a[13] << 16 | (uint32_t)a[14] << 8 |
                          (uint32_t)a[15];
            sb_put_ipv4(b, v4);
            return;
        }
        sb_put_hex16(b, words[i]);
    }
    if (best >= 0 && best + best_len == 8) {
        sb_put(b, ":");
    }
}

/* --- PUSH_REPLY ---------------------------------------------------------------------------- */

static bool option_ok(const char *opt)
{
    if (opt == NULL) {
        return false;
    }
    size_t n = strnlen(opt, PUSH_OPTION_MAX + 1);
    if (n == 0 || n > PUSH_OPTION_MAX) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (opt[i] == ',' || !is_print((unsigned char)opt[i])) {
            return false;
        }
    }
    return true;
}

int push_reply_build(const char *const *options, size_t n_options, push_emit_fn emit, void *ctx)
{
    char msg[PUSH_REPLY_MAX];
    struct sb b = {msg, sizeof(msg), 0, false};
    bool multi = false;
    int err;

    for (size_t i = 0; i < n_options; i++) {
        if (!option_ok(options[i])) {
            return -PE_MALFORMED;
        }
    }
    sb_put(&b, PUSH_REPLY_CMD);
    for (size_t i = 0; i < n_options; i++) {
        size_t opt_len = strlen(options[i]);
        if (b.len + opt_len >= PUSH_REPLY_SAFE_CAP) {
            sb_put(&b, CONTINUATION_MORE);
            err = emit(ctx, msg, b.len);
            if (err) {
                return err;
            }
            multi = true;
            b.len = 0;
            sb_put(&b, PUSH_REPLY_CMD);
        }
        sb_put(&b, ",");
        sb_putn(&b, options[i], opt_len);
    }
    if (multi) {
        sb_put(&b, CONTINUATION_LAST);
    }
    if (n_options == 0) {
        sb_put(&b, ",");
    }
    return b.overflow ? -PE_NOSPACE : emit(ctx, msg, b.len);
}

/* --- per-client options -------------------------------------------------------------------- */

bool push_uses_peer_id(const struct push_client_params *p)
{
    return (p->iv_proto & IV_PROTO_DATA_V2) != 0;
}

bool push_uses_ekm(const struct push_client_params *p)
{
    return p->use_ekm && (p->iv_proto & IV_PROTO_TLS_KEY_EXPORT) != 0;
}

bool push_uses_cc_exit(const struct push_client_params *p)
{
    return p->cc_exit && (p->iv_proto & IV_PROTO_CC_EXIT_NOTIFY) != 0;
}

bool push_uses_dyn_tls_crypt(const struct push_client_params *p)
{
    return p->dyn_tls_crypt && (p->iv_proto & IV_PROTO_DYN_TLS_CRYPT) != 0;
}

/* A single word that may follow an option name: no comma, space or control character. */
static bool word_ok(const char *s)
{
    if (s[0] == '\0') {
        return false;
    }
    for (; *s != '\0'; s++) {
        if (*s == ',' || *s == ' ' || !is_print((unsigned char)*s)) {
            return false;
        }
    }
    return true;
}

/* Opens the next option slot; the caller fills it through the returned builder. */
static int next_slot(char opts[][256], size_t max_opts, size_t *n, struct sb *b)
{
    if (*n >= max_opts) {
        return -PE_NOSPACE;
    }
    b->p = opts[*n];
    b->cap = 256;
    b->len = 0;
    b->overflow = false;
    b->p[0] = '\0';
    return 0;
}

static int close_slot(struct sb *b, size_t *n)
{
    if (b->overflow) {
        b->p[0] = '\0';
        return -PE_NOSPACE;
    }
    (*n)++;
    return 0;
}

static int put_ifconfig(const struct push_client_params *p, char opts[][256], size_t max_opts,
                        size_t *n)
{
    struct sb b;
    int err;

    if (p->has_ifconfig_ipv6) {
        err = next_slot(opts, max_opts, n, &b);
        if (err) {
            return err;
        }
        sb_put(&b, "ifconfig-ipv6 ");
        sb_put_ipv6(&b, p->ifconfig_ipv6_local);
        sb_put(&b, "/");
        sb_put_uint(&b, p->ifconfig_ipv6_netbits);
        sb_put(&b, " ");
        sb_put_ipv6(&b, p->ifconfig_ipv6_remote);
        err = close_slot(&b, n);
        if (err) {
            return err;
        }
    }
    if (p->ifconfig_local != 0 && p->ifconfig_netmask != 0) {
        err = next_slot(opts, max_opts, n, &b);
        if (err) {
            return err;
        }
        sb_put(&b, "ifconfig ");
        sb_put_ipv4(&b, p->ifconfig_local);
        sb_put(&b, " ");
        sb_put_ipv4(&b, p->ifconfig_netmask);
        return close_slot(&b, n);
    }
    return 0;
}

/* "name value" where value is a single word */
static int put_word_option(const char *name, const char *value, char opts[][256], size_t max_opts,
                           size_t *n)
{
    struct sb b;
    int err = next_slot(opts, max_opts, n, &b);

    if (err) {
        return err;
    }
    sb_put(&b, name);
    sb_put(&b, " ");
    sb_put(&b, value);
    return close_slot(&b, n);
}

static int put_protocol_words(const struct push_client_params *p, char opts[][256], size_t max_opts,
                              size_t *n)
{
    char flags[64] = "";
    struct sb f = {flags, sizeof(flags), 0, false};
    int err;

    if (push_uses_cc_exit(p)) {
        sb_put(&f, " cc-exit");
        if (push_uses_ekm(p)) {
            sb_put(&f, " tls-ekm"); /* a cc-exit client also reads tls-ekm in protocol-flags */
        }
    } else if (push_uses_ekm(p)) {
        err = put_word_option("key-derivation", "tls-ekm", opts, max_opts, n);
        if (err) {
            return err;
        }
    }
    if (push_uses_dyn_tls_crypt(p)) {
        sb_put(&f, " dyn-tls-crypt");
    }
    if (f.len == 0) {
        return 0;
    }
    return put_word_option("protocol-flags", flags + 1, opts, max_opts, n);
}

int push_client_options(const struct push_client_params *p, char opts[][256], size_t max_opts,
                        size_t *n_opts)
{
    char num[16];
    struct sb nb = {num, sizeof(num), 0, false};
    size_t n = 0;
    int err;

    *n_opts = 0;
    if ((push_uses_peer_id(p) && p->peer_id > PEER_ID_MAX) ||
        (p->auth_token != NULL && !word_ok(p->auth_token)) ||
        (p->auth_token_user != NULL && !word_ok(p->auth_token_user)) ||
        (p->ncp && p->cipher != NULL && !word_ok(p->cipher))) {
        return -PE_MALFORMED;
    }
    err = put_ifconfig(p, opts, max_opts, &n);
    if (!err && push_uses_peer_id(p)) {
        sb_put_uint(&nb, p->peer_id);
        err = put_word_option("peer-id", num, opts, max_opts, &n);
    }
    if (!err && p->auth_token != NULL) {
        err = put_word_option("auth-token", p->auth_token, opts, max_opts, &n);
    }
    if (!err && p->auth_token != NULL && p->auth_token_user != NULL) {
        err = put_word_option("auth-token-user", p->auth_token_user, opts, max_opts, &n);
    }
    if (!err && p->ncp && p->cipher != NULL) {
        err = put_word_option("cipher", p->cipher, opts, max_opts, &n);
    }
    if (!err) {
        err = put_protocol_words(p, opts, max_opts, &n);
    }
    if (!err && p->has_iv_mtu && p->tun_mtu > 0) {
        nb.len = 0;
        sb_put_uint(&nb, (uint32_t)p->tun_mtu);
        err = put_word_option("tun-mtu", num, opts, max_opts, &n);
    }
    if (err) {
        return err;
    }
    *n_opts = n;
    return 0;
}

const char *push_compress_migrate(const struct peer_info *pi, const char *client_options)
{
    if (!occ_options_has_comp(client_options)) {
        return NULL;
    }
    return (pi != NULL && pi->comp_stubv2) ? "compress stub-v2" : "comp-lzo no";
}

/* --- AUTH_FAILED, AUTH_PENDING ------------------------------------------------------------- */

int push_auth_failed_build(const char *reason, char *out, size_t cap, size_t *out_len)
{
    size_t len = sizeof(AUTH_FAILED_CMD) - 1;
    size_t rlen = reason != NULL ? strlen(reason) : 0;

    if (cap < sizeof(AUTH_FAILED_CMD)) {
        return -PE_NOSPACE;
    }
    size_t limit = (cap < PUSH_REPLY_MAX ? cap : PUSH_REPLY_MAX) - 1; /* chars, excl. NUL */
    memcpy(out, AUTH_FAILED_CMD, len);
    while (rlen > 0 &&
           (is_crlf(reason[rlen - 1]) || reason[rlen - 1] == ' ' || reason[rlen - 1] == '\t')) {
        rlen--;
    }
    size_t room = limit > len + 1 ? limit - len - 1 : 0;
    size_t take = rlen < room ? rlen : room;
    if (take < rlen) {
        /* do not end inside a UTF-8 sequence: drop continuation bytes and their lead byte */
        while (take > 0 && ((unsigned char)reason[take] & 0xc0) == 0x80) {
            take--;
        }
    }
    if (take > 0) {
        out[len++] = ',';
        for (size_t i = 0; i < take; i++) {
            unsigned char ch = (unsigned char)reason[i];
            out[len++] = is_print(ch) ? (char)ch : ' ';
        }
    }
    out[len] = '\0';
    *out_len = len;
    return 0;
}

int push_auth_pending_build(uint32_t iv_proto, uint32_t timeout_s, char *out, size_t cap,
                            size_t *out_len)
{
    struct sb b = {out, cap, 0, false};

    if (cap == 0) {
        return -PE_NOSPACE;
    }
    out[0] = '\0';
    sb_put(&b, "AUTH_PENDING");
    if (iv_proto & IV_PROTO_AUTH_PENDING_KW) {
        sb_put(&b, ",timeout ");
        sb_put_uint(&b, timeout_s);
    }
    if (b.overflow) {
        out[0] = '\0';
        return -PE_NOSPACE;
    }
    *out_len = b.len;
    return 0;
}

/* --- dns for clients that do not know it ------------------------------------------------------ */

bool push_client_knows_dns(uint32_t iv_proto)
{
    return (iv_proto & (IV_PROTO_DNS_OPTION | IV_PROTO_DNS_OPTION_V2)) != 0;
}

/* Copy the address part of a `dns server N address` word (ADDR, ADDR:PORT, [ADDR6]:PORT) into
 * out and tell its family. false when it is neither. */
static bool dns_address(const char *word, char *out, size_t cap, bool *is_ipv6)
{
    uint8_t bin[16];
    const char *end;
    size_t len;

    if (word[0] == '[') {
        end = strchr(word, ']');
        if (!end) {
            return false;
        }
        word++;
        len = (size_t)(end - word);
    } else if (strchr(word, '.') && strchr(word, ':')) {
        len = (size_t)(strchr(word, ':') - word); /* IPv4:PORT */
    } else {
        len = strlen(word);
    }
    if (len == 0 || len >= cap) {
        return false;
    }
    memcpy(out, word, len);
    out[len] = '\0';
    if (inet_pton(AF_INET, out, bin) == 1) {
        *is_ipv6 = false;
        return true;
    }
    if (inet_pton(AF_INET6, out, bin) == 1) {
        *is_ipv6 = true;
        return true;
    }
    return false;
}

int push_dns_as_dhcp_option(const char *opt, char out[][256], size_t max_out, size_t *n_out)
{
    char copy[256], *words[64], *save = NULL, *w;
    size_t n_words = 0, n = 0;

    *n_out = 0;
    if (strlen(opt) >= sizeof(copy)) {
        return -PE_NOSPACE;
    }
    strcpy(copy, opt);
    for (w = strtok_r(copy, " \t", &save); w && n_words < 64; w = strtok_r(NULL, " \t", &save)) {
        words[n_words++] = w;
    }
    if (n_words < 2 || strcmp(words[0], "dns") != 0) {
        return 0;
    }
    if (strcmp(words[1], "search-domains") == 0) {
        for (size_t i = 2; i < n_words; i++) {
            if (n >= max_out) {
                return -PE_NOSPACE;
            }
            if ((size_t)snprintf(out[n], 256, "dhcp-option DOMAIN-SEARCH %s", words[i]) >= 256) {
                return -PE_NOSPACE;
            }
            n++;
        }
    } else if (strcmp(words[1], "server") == 0 && n_words >= 4 &&
               strcmp(words[3], "address") == 0) {
        for (size_t i = 4; i < n_words; i++) {
            char addr[64];
            bool is_ipv6;

            if (!dns_address(words[i], addr, sizeof(addr), &is_ipv6)) {
                continue;
            }
            if (n >= max_out) {
                return -PE_NOSPACE;
            }
            snprintf(out[n++], 256, "dhcp-option %s %s", is_ipv6 ? "DNS6" : "DNS", addr);
        }
    }
    *n_out = n;
    return 0;
}
