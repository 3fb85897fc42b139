/* proto/ncp.c: server-side data-channel cipher choice. */
#include "proto/ncp.h"

#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "proto/errors.h"
#include "proto/occ.h"
#include "proto/peer_info.h"

/* Is the name (len bytes) one of the ':'-separated entries of list? Exact compare, empty entries
 * never match (2.6 tls_item_in_cipher_list splits with strtok). */
static bool in_list(const char *list, const char *name, size_t len)
{
    const char *p = list;

    while (*p != '\0') {
        const char *end = strchr(p, ':');
        size_t n = end != NULL ? (size_t)(end - p) : strlen(p);
        if (n == len && len > 0 && memcmp(p, name, len) == 0) {
            return true;
        }
        if (end == NULL) {
            break;
        }
        p = end + 1;
    }
    return false;
}

/* The client's list as 2.6 tls_peer_ncp_list builds it. */
static const char *client_list(const struct peer_info *pi)
{
    if (pi != NULL && pi->has_ciphers) {
        return pi->ciphers;
    }
    if (pi != NULL && pi->ncp >= 2) {
        return "AES-256-GCM:AES-128-GCM"; /* IV_NCP=2 promises both AES-GCM ciphers */
    }
    return "";
}

static int put_name(const char *name, size_t len, char *out, size_t out_cap)
{
    if (len >= out_cap) {
        return -PE_NOSPACE;
    }
    memcpy(out, name, len);
    out[len] = '\0';
    return 0;
}

/* One --data-ciphers entry as 2.6 stores it after options parsing: no '?', canonical case. */
static int normalise(const char *tok, size_t len, char *norm, size_t *norm_len)
{
    if (len > 0 && tok[0] == '?') {
        tok++;
        len--;
    }
    if (len >= NCP_CIPHER_NAME_MAX) {
        return -PE_MALFORMED;
    }
    if (len == 4 && strncasecmp(tok, "none", 4) == 0) {
        memcpy(norm, "none", 4);
    } else {
        for (size_t i = 0; i < len; i++) {
            char ch = tok[i];
            norm[i] = (ch >= 'a' && ch <= 'z') ? (char)(ch - 'a' + 'A') : ch;
        }
    }
    norm[len] = '\0';
    *norm_len = len;
    return 0;
}

int ncp_select(const char *server_ciphers, const struct peer_info *pi, const char *client_options,
               const char *fallback, char *out, size_t out_cap)
{
    const char *peer_list = client_list(pi);
    char remote[512] = ""; /* options strings are at most 512 bytes, so any value fits */
    bool has_remote = occ_options_get(client_options, "cipher", remote, sizeof(remote));

    if (server_ciphers == NULL) {
        return -PE_MALFORMED;
    }
    if (has_remote && strcmp(remote, "[null-cipher]") == 0) {
        memcpy(remote, "none", sizeof("none"));
    }
    /* a client that sends IV_CIPHERS may not accept its --cipher: ignore the OCC cipher then */
    bool use_remote = has_remote && !(pi != NULL && pi->has_ciphers) && remote[0] != '\0';

    for (const char *p = server_ciphers; *p != '\0';) {
        const char *end = strchr(p, ':');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        char norm[NCP_CIPHER_NAME_MAX];
        size_t norm_len;
        int err = normalise(p, len, norm, &norm_len);

        if (err) {
            return err;
        }
        if (norm_len > 0 &&
            (in_list(peer_list, norm, norm_len) || (use_remote && strcmp(norm, remote) == 0))) {
            return put_name(norm, norm_len, out, out_cap);
        }
        if (end == NULL) {
            break;
        }
        p = end + 1;
    }
    /* multi.c: fall back only for clients that told us nothing about ciphers */
    if (peer_list[0] == '\0' && !has_remote && fallback != NULL && fallback[0] != '\0') {
        return put_name(fallback, strlen(fallback), out, out_cap);
    }
    return -PE_UNSUPPORTED;
}
