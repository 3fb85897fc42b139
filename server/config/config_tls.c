/* server/config/config_tls.c: handlers for TLS and the data channel: certificates, key files,
 * tls-auth/tls-crypt, digests, cipher lists, replay window, TLS timers and versions. Facts from
 * openvpn 2.6 src/openvpn/options.c (add_option, options_postprocess_cipher), ssl_ncp.c
 * (mutate_ncp_cipher_list), crypto.c (ascii2keydirection), ssl.c (tls_version_parse) and
 * packet_id.h (replay-window bounds).
 */
#include "server/config/config_internal.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "proto/cert_check.h"
#include "proto/errors.h"
#include "proto/tls_session.h"

#define MAX_DATA_CIPHERS_LEN 127 /* ssl_ncp.c: longer --data-ciphers lists are refused */
#define REPLAY_WINDOW_MAX 65536  /* packet_id.h MAX_SEQ_BACKTRACK */
#define REPLAY_TIME_MAX 600      /* packet_id.h MAX_TIME_BACKTRACK */

/* The data-channel ciphers ovpnd implements: AEAD, and CBC + HMAC for clients that cannot
 * negotiate (proto/data_cbc.h). */
static const char *const supported_ciphers[] = {
    "AES-128-GCM", "AES-192-GCM", "AES-256-GCM",      "CHACHA20-POLY1305", "AES-128-CBC",
    "AES-192-CBC", "AES-256-CBC", "CAMELLIA-128-CBC", "CAMELLIA-192-CBC",  "CAMELLIA-256-CBC",
};
bool config_data_cipher_supported(const char *name)
{
    for (size_t i = 0; i < sizeof(supported_ciphers) / sizeof(supported_ciphers[0]); i++) {
        if (strcmp(supported_ciphers[i], name) == 0) {
            return true;
        }
    }
    return false;
}

/* Digests ovpnd can use for tls-auth. */
static const char *const supported_digests[] = {"SHA1", "SHA224", "SHA256", "SHA384", "SHA512"};

static bool in_list(const char *const *list, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(list[i], name) == 0) {
            return true;
        }
    }
    return false;
}

static void upcase(char *s)
{
    for (; *s != '\0'; s++) {
        *s = (char)toupper((unsigned char)*s);
    }
}

int config_h_ca(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    ps->seen_ca = config_here(ps);
    return config_set_file(ps, &ps->ca, &ps->cfg->tls.ca, argv[1]);
}

/* One fingerprint of want bytes (20 for SHA-1, 32 for SHA-256), "AB:CD:..." (pairs of hex
 * digits, either case, ':' between them), text[0..len), into out. 2.6 (options.c,
 * parse_hash_fingerprint) takes the same form. Returns 0 or -EINVAL with the reason in why. */
static int parse_fingerprint(const char *text, size_t len, size_t want, uint8_t out[32],
                             const char **why)
{
    size_t n = 0, i = 0;

    while (i < len) {
        if (n == want) {
            *why = want == 32 ? "more than 32 bytes (a SHA-256 fingerprint has 32)"
                              : "more than 20 bytes (a SHA-1 fingerprint has 20)";
            return -EINVAL;
        }
        if (i + 1 >= len || !isxdigit((unsigned char)text[i]) ||
            !isxdigit((unsigned char)text[i + 1]) || (i + 2 < len && text[i + 2] != ':')) {
            *why = "not of the form AB:CD:... (pairs of hex digits separated by ':')";
            return -EINVAL;
        }
        char pair[3] = {text[i], text[i + 1], '\0'};

        out[n++] = (uint8_t)strtoul(pair, NULL, 16);
        i += 3;
        if (i == len) { /* a trailing ':' */
            *why = "not of the form AB:CD:... (it ends with ':')";
            return -EINVAL;
        }
    }
    if (n < want) {
        *why = want == 32 ? "fewer than 32 bytes (a SHA-256 fingerprint has 32)"
                          : "fewer than 20 bytes (a SHA-1 fingerprint has 20)";
        return -EINVAL;
    }
    return 0;
}

/* Append one fingerprint to *list (*n entries, 32 bytes each; a SHA-1 one is zero-padded). */
static int add_fingerprint(struct config_parser *ps, uint8_t (**list)[32], size_t *n, size_t want,
                           const char *text, size_t len, int block_line)
{
    uint8_t(*grown)[32];
    const char *why = NULL;
    uint8_t fp[32] = {0};

    if (parse_fingerprint(text, len, want, fp, &why)) {
        if (block_line > 0) {
            return config_error(ps, "line %d of the block: '%.*s': %s", block_line,
                                (int)(len > 100 ? 100 : len), text, why);
        }
        return config_error(ps, "'%.*s': %s", (int)(len > 100 ? 100 : len), text, why);
    }
    grown = realloc(*list, (*n + 1) * sizeof(*grown));
    if (!grown) {
        return config_nomem(ps);
    }
    *list = grown;
    memcpy((*list)[(*n)++], fp, sizeof(fp));
    return 0;
}

/* One fingerprint on the line, or one per line of an inline block, skipping blank lines and
 * lines starting with '#' or ';' after leading blanks (2.6 options.c,
 * parse_hash_fingerprint_multiline). */
static int add_fingerprints(struct config_parser *ps, uint8_t (**list)[32], size_t *n, size_t want,
                            const char *arg)
{
    const char *p = arg;
    int line = 0, err;

    if (!ps->is_inline) {
        return add_fingerprint(ps, list, n, want, arg, strlen(arg), 0);
    }
    while (*p != '\0') {
        size_t len = strcspn(p, "\n");
        const char *next = p[len] == '\n' ? p + len + 1 : p + len;

        line++;
        while (len > 0 && isspace((unsigned char)*p)) {
            p++;
            len--;
        }
        while (len > 0 && isspace((unsigned char)p[len - 1])) {
            len--;
        }
        if (len > 0 && *p != '#' && *p != ';') {
            err = add_fingerprint(ps, list, n, want, p, len, line);
            if (err) {
                return err;
            }
        }
        p = next;
    }
    return 0;
}

/* `peer-fingerprint FP` adds one SHA-256 fingerprint; a <peer-fingerprint> block adds one per
 * line. Every occurrence adds to the list. verify-hash and peer-fingerprint exclude each other
 * (2.6 options.c). */
int config_h_peer_fingerprint(struct config_parser *ps, int argc, char **argv)
{
    struct config_tls *tls = &ps->cfg->tls;

    (void)argc;
    if (tls->n_verify_hashes > 0) {
        return config_error(ps, "verify-hash and peer-fingerprint are mutually exclusive");
    }
    ps->seen_peer_fingerprint = config_here(ps);
    return add_fingerprints(ps, &tls->peer_fingerprints, &tls->n_peer_fingerprints, 32, argv[1]);
}

/* `verify-hash HASH [SHA1|SHA256]` or a <verify-hash> block (2.6 options.c: deprecated; the
 * fingerprint of the certificate at depth 1, the CA that signed the client's; SHA-1 unless
 * SHA256 is named, and SHA-256 for a block without an algorithm). */
int config_h_verify_hash(struct config_parser *ps, int argc, char **argv)
{
    struct config_tls *tls = &ps->cfg->tls;
    size_t want = ps->is_inline ? 32 : 20;
    int err;

    if (argc == 3 && strcmp(argv[2], "SHA1") == 0) {
        want = 20;
    } else if (argc == 3 && strcmp(argv[2], "SHA256") == 0) {
        want = 32;
    } else if (argc == 3) {
        return config_error(ps,
                            "invalid or unsupported hashing algorithm: %s (only SHA1 and SHA256 "
                            "are supported)",
                            argv[2]);
    }
    if (tls->n_peer_fingerprints > 0) {
        return config_error(ps, "verify-hash and peer-fingerprint are mutually exclusive");
    }
    if (tls->n_verify_hashes > 0 && tls->verify_hash_len != want) {
        return config_error(ps, "all verify-hash lines must use one algorithm");
    }
    err = config_warn(ps, NULL,
                      "verify-hash is deprecated (as in openvpn 2.6): name that CA with 'ca', or "
                      "use peer-fingerprint");
    if (err) {
        return err;
    }
    tls->verify_hash_len = want;
    return add_fingerprints(ps, &tls->verify_hashes, &tls->n_verify_hashes, want, argv[1]);
}

/* `ns-cert-type client|server` (2.6 built with OpenSSL; deprecated there in favour of
 * remote-cert-tls): the client certificate's fitness for TLS client or server use
 * (cert_check_ns_cert_type). */
int config_h_ns_cert_type(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    if (strcmp(argv[1], "client") == 0) {
        ps->cfg->tls.ns_cert_type = CONFIG_NS_CERT_TYPE_CLIENT;
    } else if (strcmp(argv[1], "server") == 0) {
        ps->cfg->tls.ns_cert_type = CONFIG_NS_CERT_TYPE_SERVER;
    } else {
        return config_error(ps, "--ns-cert-type must be 'client' or 'server'");
    }
    return config_warn(ps, NULL,
                       "ns-cert-type is deprecated (as in openvpn 2.6): use 'remote-cert-tls "
                       "client'");
}

/* `verify-x509-name NAME [subject|name|name-prefix]` (2.6 options.c: NAME must not be empty,
 * the type defaults to subject). */
int config_h_verify_x509_name(struct config_parser *ps, int argc, char **argv)
{
    int type = CERT_CHECK_X509_SUBJECT;

    if (argv[1][0] == '\0') {
        return config_error(ps, "the name is empty");
    }
    if (argc > 2) {
        if (strcmp(argv[2], "subject") == 0) {
            type = CERT_CHECK_X509_SUBJECT;
        } else if (strcmp(argv[2], "name") == 0) {
            type = CERT_CHECK_X509_NAME;
        } else if (strcmp(argv[2], "name-prefix") == 0) {
            type = CERT_CHECK_X509_NAME_PREFIX;
        } else {
            return config_error(ps, "unknown X.509 name type '%s' (subject, name or name-prefix)",
                                argv[2]);
        }
    }
    ps->cfg->tls.verify_x509_type = type;
    return config_set_str(ps, &ps->cfg->tls.verify_x509_name, argv[1]);
}

int config_h_cert(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    ps->seen_cert = config_here(ps);
    return config_set_file(ps, &ps->cert, &ps->cfg->tls.cert, argv[1]);
}

int config_h_key(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    ps->seen_key = config_here(ps);
    return config_set_file(ps, &ps->key, &ps->cfg->tls.key, argv[1]);
}

/* `dh FILE|none` or <dh>: the file is read and checked after the last line (config_auth.c
 * check_dh); its group serves the DHE suites, as in 2.6 (ssl_openssl.c tls_ctx_load_dh_params). */
int config_h_dh(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    if (!ps->is_inline && strcmp(argv[1], "none") == 0) {
        ps->cfg->tls.dh_none = true;
        config_blob_clear(&ps->cfg->tls.dh);
        free(ps->dh.path);
        ps->dh.path = NULL;
        return 0;
    }
    ps->cfg->tls.dh_none = false;
    return config_set_file(ps, &ps->dh, &ps->cfg->tls.dh, argv[1]);
}

static int parse_key_direction(struct config_parser *ps, const char *s)
{
    if (strcmp(s, "0") == 0) {
        ps->cfg->tls.key_direction = CONFIG_KEY_DIRECTION_NORMAL;
    } else if (strcmp(s, "1") == 0) {
        ps->cfg->tls.key_direction = CONFIG_KEY_DIRECTION_INVERSE;
    } else {
        return config_error(ps, "unknown key direction '%s' (0 or 1)", s);
    }
    return 0;
}

int config_h_tls_auth(struct config_parser *ps, int argc, char **argv)
{
    int err;

    ps->seen_tls_auth = config_here(ps);
    if (argc == 3) {
        err = parse_key_direction(ps, argv[2]);
        if (err) {
            return err;
        }
    }
    ps->cfg->tls.tls_wrap_mode = CONFIG_TLS_WRAP_AUTH;
    return config_set_file(ps, &ps->tls_wrap_key, &ps->cfg->tls.tls_wrap_key, argv[1]);
}

/* `tls-crypt FILE [DIRECTION]`: tls-crypt keys have no direction; 2.6 reads the line and
 * ignores the extra word (options.c), so ovpnd does too, with a warning. */
int config_h_tls_crypt(struct config_parser *ps, int argc, char **argv)
{
    if (argc == 3) {
        int err = config_warn(ps, NULL,
                              "tls-crypt: the key direction '%s' is ignored: tls-crypt keys "
                              "have no direction (as openvpn 2.6)",
                              argv[2]);

        if (err) {
            return err;
        }
    }
    ps->seen_tls_crypt = config_here(ps);
    ps->cfg->tls.tls_wrap_mode = CONFIG_TLS_WRAP_CRYPT;
    return config_set_file(ps, &ps->tls_wrap_key, &ps->cfg->tls.tls_wrap_key, argv[1]);
}

/* `tls-crypt-v2 FILE [force-cookie|allow-noncookie]` (2.6 options.c). ovpnd always answers
 * with the stateless cookie, so both words are accepted and force-cookie is what it does. */
int config_h_tls_crypt_v2(struct config_parser *ps, int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[2], "force-cookie") != 0 &&
        strcmp(argv[2], "allow-noncookie") != 0) {
        return config_error(ps, "unsupported tls-crypt-v2 argument: %s", argv[2]);
    }
    ps->seen_tls_crypt_v2 = config_here(ps);
    ps->cfg->tls.has_tls_crypt_v2 = true;
    return config_set_file(ps, &ps->tls_crypt_v2_key, &ps->cfg->tls.tls_crypt_v2_key, argv[1]);
}

/* `tls-crypt-v2-max-age DAYS` (openvpn 2.7): refuse client keys whose timestamp metadata is
 * older, and keys without one. */
int config_h_tls_crypt_v2_max_age(struct config_parser *ps, int argc, char **argv)
{
    char *end;
    long v;

    (void)argc;
    errno = 0;
    v = strtol(argv[1], &end, 10);
    if (errno || *end != '\0' || end == argv[1] || v < 1 || v > 1000000) {
        return config_error(ps, "tls-crypt-v2-max-age must be a number of days (1 or more)");
    }
    ps->cfg->tls.tls_crypt_v2_max_age_days = (int)v;
    return 0;
}

int config_h_key_direction(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    return parse_key_direction(ps, argv[1]);
}

int config_h_auth(struct config_parser *ps, int argc, char **argv)
{
    char name[64];

    (void)argc;
    ps->seen_auth = config_here(ps);
    if (strcmp(argv[1], "none") == 0) {
        return config_set_str(ps, &ps->cfg->tls.auth, "none");
    }
    if (strlen(argv[1]) >= sizeof(name)) {
        return config_error(ps, "unknown digest '%s'", argv[1]);
    }
    strcpy(name, argv[1]);
    upcase(name);
    if (in_list(supported_digests, sizeof(supported_digests) / sizeof(supported_digests[0]),
                name)) {
        return config_set_str(ps, &ps->cfg->tls.auth, name);
    }
    if (EVP_get_digestbyname(argv[1]) != NULL) {
        return config_not_implemented(ps, "digest %s; use SHA1, SHA256 or SHA512", argv[1]);
    }
    return config_error(ps, "unknown digest '%s'", argv[1]);
}

/* Check one cipher name (already upper case): 0 if ovpnd implements it, otherwise an error
 * reported for the current line, or only a warning when is_optional ("?NAME" in a list). */
static int check_cipher(struct config_parser *ps, const char *name, bool is_optional, bool *ok)
{
    const EVP_CIPHER *evp;
    const char *why;

    *ok =
        in_list(supported_ciphers, sizeof(supported_ciphers) / sizeof(supported_ciphers[0]), name);
    if (*ok) {
        return 0;
    }
    evp = EVP_get_cipherbyname(name);
    if (strcmp(name, "NONE") == 0) {
        why = "cipher 'none' (no encryption)";
    } else if (evp != NULL && EVP_CIPHER_get_block_size(evp) == 8) {
        /* 2.6 still takes them, with a warning; OpenSSL 3 needs its legacy provider for most */
        why = "a 64-bit block cipher (SWEET32, CVE-2016-6329) is not offered; use AES-256-CBC "
              "or AES-128-CBC for clients that cannot negotiate";
    } else if (evp != NULL && (EVP_CIPHER_get_mode(evp) == EVP_CIPH_CFB_MODE ||
                               EVP_CIPHER_get_mode(evp) == EVP_CIPH_OFB_MODE)) {
        why = "CFB and OFB modes are not implemented (CBC and AEAD ciphers are)";
    } else if (evp != NULL && EVP_CIPHER_get_mode(evp) == EVP_CIPH_CBC_MODE) {
        why = "Mbed TLS 2.28, ovpnd's other data-channel backend, lacks it; the AES and "
              "CAMELLIA CBC ciphers are offered";
    } else if (evp != NULL) {
        why = "only AES-256-GCM, AES-192-GCM, AES-128-GCM, CHACHA20-POLY1305 and the AES and "
              "CAMELLIA CBC ciphers are";
    } else {
        if (is_optional) {
            return config_warn(ps, NULL, "%s: unknown optional cipher '%s' dropped", ps->name,
                               name);
        }
        return config_error(ps, "unknown cipher '%s'", name);
    }
    if (is_optional) {
        return config_warn(ps, NULL,
                           "%s: optional cipher '%s' dropped: not implemented yet in "
                           "ovpnd",
                           ps->name, name);
    }
    return config_not_implemented(ps, "cipher %s: %s", name, why);
}

/* value with its first item spelled exactly DEFAULT replaced by the default list, as openvpn
 * 2.7 does (ssl_ncp.c options_postprocess_setdefault_ncpciphers: only the first, and only in
 * capitals; a second DEFAULT, or "default", is then refused). A new string the caller
 * frees, or NULL when out of memory. */
static char *expand_default_ciphers(const char *value)
{
    const size_t def_len = strlen("DEFAULT");
    const char *item = value;
    size_t len = strlen(value);
    char *out;

    while (item != NULL) {
        const char *end = strchr(item, ':');
        size_t item_len = end != NULL ? (size_t)(end - item) : strlen(item);

        if (item_len == def_len && strncmp(item, "DEFAULT", def_len) == 0) {
            break;
        }
        item = end != NULL ? end + 1 : NULL;
    }
    if (item == NULL) {
        return strdup(value);
    }
    out = malloc(len - def_len + strlen(CONFIG_DEFAULT_DATA_CIPHERS) + 1);
    if (out != NULL) {
        sprintf(out, "%.*s%s%s", (int)(item - value), value, CONFIG_DEFAULT_DATA_CIPHERS,
                item + def_len);
    }
    return out;
}

/* data-ciphers / ncp-ciphers: colon list, "?" marks a cipher that may be missing, DEFAULT
 * stands for the default list (2.7). */
int config_h_data_ciphers(struct config_parser *ps, int argc, char **argv)
{
    char *list, *out, *save = NULL;
    size_t out_len = 0;
    int err = 0;

    (void)argc;
    list = expand_default_ciphers(argv[1]);
    out = list != NULL ? malloc(strlen(list) + 1) : NULL;
    if (list == NULL || out == NULL) {
        free(list);
        free(out);
        return config_nomem(ps);
    }
    out[0] = '\0';
    upcase(list);
    for (char *tok = strtok_r(list, ":", &save); tok != NULL && err == 0;
         tok = strtok_r(NULL, ":", &save)) {
        bool is_optional = tok[0] == '?', ok;

        if (!is_optional && strcmp(tok, "DEFAULT") == 0) {
            err = config_error(ps, "DEFAULT stands for the default ciphers once, in capitals "
                                   "(as in openvpn 2.7)");
            break;
        }
        err = check_cipher(ps, tok + (is_optional ? 1 : 0), is_optional, &ok);
        if (err == 0 && ok) {
            out_len += (size_t)sprintf(out + out_len, "%s%s", out_len ? ":" : "",
                                       tok + (is_optional ? 1 : 0));
        }
    }
    if (err == 0 && out_len == 0) {
        err = config_error(ps, "no usable cipher in '%s'", argv[1]);
    } else if (err == 0 && out_len > MAX_DATA_CIPHERS_LEN) {
        err = config_error(ps, "the list is longer than %d characters", MAX_DATA_CIPHERS_LEN);
    }
    if (err == 0) {
        free(ps->cfg->tls.data_ciphers);
        ps->cfg->tls.data_ciphers = out;
        out = NULL;
    }
    free(list);
    free(out);
    return err;
}

static int set_cipher_name(struct config_parser *ps, char **dst, const char *value,
                           bool must_be_supported)
{
    char *name = strdup(value);
    bool ok;
    int err;

    if (name == NULL) {
        return config_nomem(ps);
    }
    upcase(name);
    if (must_be_supported) {
        err = check_cipher(ps, name, false, &ok);
    } else if (strcmp(name, "NONE") != 0 && EVP_get_cipherbyname(name) == NULL) {
        err = config_error(ps, "unknown cipher '%s'", value);
    } else {
        err = 0;
    }
    if (err) {
        free(name);
        return err;
    }
    free(*dst);
    *dst = name;
    return 0;
}

int config_h_data_ciphers_fallback(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    return set_cipher_name(ps, &ps->cfg->tls.data_ciphers_fallback, argv[1], true);
}

/* 2.6 options.c, "keying-material-exporter": the label must begin with EXPORTER and must not
 * be the one the data-channel keys come from. */
int config_h_keying_material_exporter(struct config_parser *ps, int argc, char **argv)
{
    struct config_tls *tls = &ps->cfg->tls;
    int err;

    (void)argc;
    if (strncmp(argv[1], "EXPORTER", 8) != 0) {
        return config_error(ps, "the label must begin with \"EXPORTER\"");
    }
    if (strcmp(argv[1], "EXPORTER-OpenVPN-datakeys") == 0) {
        return config_error(ps, "the label must not be 'EXPORTER-OpenVPN-datakeys' (the data "
                                "channel's own keys)");
    }
    err = config_parse_int(ps, "length", argv[2], 16, 4095, &tls->ekm_len);
    return err ? err : config_set_str(ps, &tls->ekm_label, argv[1]);
}

int config_h_force_tls_key_material_export(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    ps->cfg->tls.force_ekm = true;
    return 0;
}

/* For a 2.6 server `cipher` takes no part in negotiation; whether it is in data-ciphers is
 * checked after the last line, when the final list is known. */
int config_h_cipher(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    ps->seen_cipher = config_here(ps);
    return set_cipher_name(ps, &ps->cfg->tls.cipher, argv[1], false);
}

int config_h_replay_window(struct config_parser *ps, int argc, char **argv)
{
    int err = config_parse_int(ps, "window size", argv[1], 0, REPLAY_WINDOW_MAX,
                               &ps->cfg->tls.replay_window);

    if (err == 0 && argc == 3) {
        err = config_parse_int(ps, "time window", argv[2], 0, REPLAY_TIME_MAX,
                               &ps->cfg->tls.replay_time_s);
    }
    return err;
}

int config_h_no_replay(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    /* crypto.c, check_replay_consistency: fatal with any AEAD cipher; 2.6 still takes it with
     * CBC ones (deprecated), ovpnd always keeps the replay window. */
    return config_error(ps, "turning replay protection off is not supported (fatal in openvpn "
                            "2.6 with AEAD ciphers, deprecated there with CBC ones)");
}

int config_h_hand_window(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    return config_parse_int(ps, NULL, argv[1], 1, 86400, &ps->cfg->timers.hand_window_s);
}

/* `inactive N [BYTES]` (2.6 options.c: N and BYTES not negative; 0 turns it off). */
int config_h_inactive(struct config_parser *ps, int argc, char **argv)
{
    struct config_clients *c = &ps->cfg->clients;
    int err = config_parse_int(ps, NULL, argv[1], 0, INT_MAX, &c->inactive_s);

    c->inactive_bytes = 0;
    if (err == 0 && argc > 2) {
        char *end;

        errno = 0;
        c->inactive_bytes = strtoull(argv[2], &end, 10);
        if (errno || end == argv[2] || *end || argv[2][0] == '-') {
            return config_error(ps, "'%s' is not a number of bytes", argv[2]);
        }
    }
    return err;
}

int config_h_session_timeout(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    return config_parse_int(ps, NULL, argv[1], 0, INT_MAX, &ps->cfg->clients.session_timeout_s);
}

/* `stale-routes-check N [T]`: both at least 1, T defaults to N (2.6 options.c). */
int config_h_stale_routes_check(struct config_parser *ps, int argc, char **argv)
{
    struct config_clients *c = &ps->cfg->clients;
    int err = config_parse_int(ps, NULL, argv[1], 1, INT_MAX, &c->stale_routes_s);

    c->stale_routes_interval_s = c->stale_routes_s;
    if (err == 0 && argc > 2) {
        err = config_parse_int(ps, NULL, argv[2], 1, INT_MAX, &c->stale_routes_interval_s);
    }
    return err;
}

int config_h_max_routes_per_client(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    return config_parse_int(ps, NULL, argv[1], 1, INT_MAX, &ps->cfg->clients.max_routes_per_client);
}

/* 2.6 takes any number (negative ones become 0); 0 retires the old key as soon as a
 * renegotiation starts, a data gap 2.6 has as well. */
int config_h_tran_window(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    return config_parse_int(ps, NULL, argv[1], 0, 31536000, &ps->cfg->timers.tran_window_s);
}

int config_h_tls_timeout(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    return config_parse_int(ps, NULL, argv[1], 1, 600, &ps->cfg->timers.tls_timeout_s);
}

int config_h_reneg_sec(struct config_parser *ps, int argc, char **argv)
{
    struct config *cfg = ps->cfg;
    int err = config_parse_int(ps, NULL, argv[1], 0, 31536000, &cfg->timers.reneg_sec);

    if (err == 0 && argc == 3) {
        err = config_parse_int(ps, "minimum", argv[2], 0, 31536000, &cfg->timers.reneg_sec_min);
        if (err == 0 && cfg->timers.reneg_sec_min > cfg->timers.reneg_sec) {
            err = config_error(ps, "the minimum (%d) is above the maximum (%d)",
                               cfg->timers.reneg_sec_min, cfg->timers.reneg_sec);
        }
    } else if (err == 0) {
        cfg->timers.reneg_sec_min = -1;
    }
    return err;
}

/* `reneg-bytes N` / `reneg-pkts N` (2.6 options.c: positive_atoi, so a negative N is 0, no
 * limit). */
int config_h_reneg_traffic(struct config_parser *ps, int argc, char **argv)
{
    int *dst = strcmp(argv[0], "reneg-bytes") == 0 ? &ps->cfg->timers.reneg_bytes
                                                   : &ps->cfg->timers.reneg_pkts;

    (void)argc;
    return config_parse_int(ps, NULL, argv[1], 0, INT_MAX, dst);
}

/* `remote-cert-ku [HEX...]`: each value is read as hex like 2.6's sscanf("%x"); without values
 * only the presence of the extension is required (OPENVPN_KU_REQUIRED). */
int config_h_remote_cert_ku(struct config_parser *ps, int argc, char **argv)
{
    struct config_tls *tls = &ps->cfg->tls;

    for (int i = 1; i < argc; i++) {
        char *end;
        unsigned long v;

        errno = 0;
        v = strtoul(argv[i], &end, 16);
        if (argv[i][0] == '\0' || argv[i][0] == '-' || *end != '\0' || errno || v > 0xFFFF) {
            return config_error(ps, "'%s' is not a key usage in hex (e.g. a0 or 88)", argv[i]);
        }
        tls->remote_cert_ku[i - 1] = (unsigned)v;
    }
    tls->n_remote_cert_ku = (size_t)argc - 1;
    tls->has_remote_cert_ku = true;
    return 0;
}

/* `remote-cert-eku OID|NAME`: an OID in dotted form or its name ("TLS Web Client
 * Authentication"), compared as 2.6 does (ssl_verify_mbedtls.c, x509_verify_cert_eku). */
int config_h_remote_cert_eku(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    return config_set_str(ps, &ps->cfg->tls.remote_cert_eku, argv[1]);
}

/* mbed TLS 2.28 offers TLS 1.2 at most, so "1.3" only passes with "or-highest". */
static int parse_tls_version(struct config_parser *ps, const char *v, const char *extra, char **dst)
{
    if (strcmp(v, "1.0") == 0 || strcmp(v, "1.1") == 0 || strcmp(v, "1.2") == 0) {
        return config_set_str(ps, dst, v);
    }
    if (extra != NULL) {
        return config_set_str(ps, dst, "1.2");
    }
    if (strcmp(v, "1.3") == 0) {
        return config_error(ps, "TLS 1.3 is not available (the TLS library does 1.2 at most); "
                                "append 'or-highest' to use the highest available");
    }
    return config_error(ps, "unknown TLS version '%s' (1.0, 1.1, 1.2)", v);
}

int config_h_tls_version_min(struct config_parser *ps, int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[2], "or-highest") != 0) {
        return config_error(ps, "unknown flag '%s' (only 'or-highest')", argv[2]);
    }
    ps->seen_tls_version_min = config_here(ps);
    return parse_tls_version(ps, argv[1], argc == 3 ? argv[2] : NULL,
                             &ps->cfg->tls.tls_version_min);
}

int config_h_tls_version_max(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    ps->seen_tls_version_max = config_here(ps);
    return parse_tls_version(ps, argv[1], NULL, &ps->cfg->tls.tls_version_max);
}

/* tls-groups LIST: checked here so a bad name stops start-up with its line (openvpn 2.6 with
 * OpenSSL fails on it too); the acceptor applies it (tls_server_conf_set_groups). */
int config_h_tls_groups(struct config_parser *ps, int argc, char **argv)
{
    mbedtls_ecp_group_id groups[TLS_MAX_GROUPS + 1];
    char bad[80];
    int err;

    (void)argc;
    err = tls_groups_parse(argv[1], groups, bad, sizeof(bad));
    if (err == -PE_NOSPACE) {
        return config_error(ps, "more than %d groups", TLS_MAX_GROUPS);
    }
    if (err) {
        return config_error(ps,
                            "unknown group '%s' (names like X25519, secp256r1, P-384, "
                            "brainpoolP256r1, separated by ':')",
                            bad);
    }
    return config_set_str(ps, &ps->cfg->tls.tls_groups, argv[1]);
}

/* tls-cipher LIST (TLS 1.2 suites): unknown names are skipped with a warning, as OpenSSL skips
 * them for openvpn 2.6; a list with none usable stops start-up. */
int config_h_tls_cipher(struct config_parser *ps, int argc, char **argv)
{
    int suites[TLS_MAX_CIPHERSUITES + 1];
    char skipped[80];
    int n;

    (void)argc;
    n = tls_ciphers_parse(argv[1], suites, skipped, sizeof(skipped));
    if (n == -PE_NOSPACE) {
        return config_error(ps, "more than %d cipher suites", TLS_MAX_CIPHERSUITES);
    }
    if (n < 0) {
        return config_error(ps,
                            "no cipher suite ovpnd knows in '%s' (TLS 1.2 names like "
                            "TLS-ECDHE-ECDSA-WITH-AES-256-GCM-SHA384 or "
                            "ECDHE-ECDSA-AES256-GCM-SHA384, separated by ':')",
                            argv[1]);
    }
    if (skipped[0]) {
        config_warn(ps, NULL, "%s: skipping '%s' and any other name Mbed TLS does not know",
                    argv[0], skipped);
    }
    return config_set_str(ps, &ps->cfg->tls.tls_cipher, argv[1]);
}

int config_h_tls_cert_profile(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    if (!tls_cert_profile_by_name(argv[1])) {
        return config_error(ps, "unknown profile '%s' (legacy, insecure, preferred or suiteb)",
                            argv[1]);
    }
    return config_set_str(ps, &ps->cfg->tls.tls_cert_profile, argv[1]);
}

int config_h_verify_client_cert(struct config_parser *ps, int argc, char **argv)
{
    struct config *cfg = ps->cfg;

    ps->seen_verify_client_cert = config_here(ps);
    if (argc == 1 || strcmp(argv[1], "require") == 0) {
        cfg->tls.verify_client_cert = CONFIG_VERIFY_REQUIRE;
    } else if (strcmp(argv[1], "optional") == 0) {
        cfg->tls.verify_client_cert = CONFIG_VERIFY_OPTIONAL;
    } else if (strcmp(argv[1], "none") == 0) {
        cfg->tls.verify_client_cert = CONFIG_VERIFY_NONE;
    } else {
        return config_error(ps, "'%s' must be none, optional or require", argv[1]);
    }
    return 0;
}

int config_h_remote_cert_tls(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    if (strcmp(argv[1], "client") == 0) {
        ps->cfg->tls.remote_cert_tls_client = true;
        return 0;
    }
    if (strcmp(argv[1], "server") == 0) {
        return config_error(ps, "'server' is a client setting (it checks the server's "
                                "certificate); a server config wants 'remote-cert-tls client'");
    }
    return config_error(ps, "'%s' must be client or server", argv[1]);
}

int config_h_tls_server(struct config_parser *ps, int argc, char **argv)
{
    (void)ps;
    (void)argc;
    (void)argv;
    return 0; /* ovpnd is always the TLS server */
}
