/* tests/bench/loadgen_push.c: PUSH_REPLY options as a 2.6 client reads them. */
#include "tests/bench/loadgen_push.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PUSH_PREFIX "PUSH_REPLY"
#define MAX_WORDS 8
#define OPTION_MAX 256 /* 2.6 reads pushed lines into 256-byte buffers */

void loadgen_push_init(struct loadgen_push *p)
{
    memset(p, 0, sizeof(*p));
}

static bool parse_ipv4(const char *s, uint32_t *out)
{
    struct in_addr a;

    if (!s || inet_pton(AF_INET, s, &a) != 1) {
        return false;
    }
    *out = ntohl(a.s_addr);
    return true;
}

static bool parse_uint(const char *s, unsigned long max, unsigned long *out)
{
    char *end;
    unsigned long v;

    if (!s || *s < '0' || *s > '9') {
        return false;
    }
    v = strtoul(s, &end, 10);
    if (*end != '\0' || v > max) {
        return false;
    }
    *out = v;
    return true;
}

/* Split line (modified in place) into at most MAX_WORDS space-separated words. */
static size_t split_words(char *line, char *words[MAX_WORDS])
{
    size_t n = 0;
    char *save = NULL;

    for (char *w = strtok_r(line, " \t", &save); w && n < MAX_WORDS;
         w = strtok_r(NULL, " \t", &save)) {
        words[n++] = w;
    }
    return n;
}

static int apply_comp(struct loadgen_push *p, char **w, size_t n)
{
    if (strcmp(w[0], "comp-lzo") == 0) {
        if (n >= 2 && strcmp(w[1], "no") == 0) {
            p->comp = LOADGEN_COMP_LZO_STUB;
            return 0;
        }
        return -2;
    }
    /* "compress" alone means the stub with swap framing (options.c). */
    if (n == 1 || strcmp(w[1], "stub") == 0) {
        p->comp = LOADGEN_COMP_STUB;
        return 0;
    }
    if (strcmp(w[1], "stub-v2") == 0) {
        p->comp = LOADGEN_COMP_STUB_V2;
        return 0;
    }
    return -2;
}

/* One option line; words[0] is the name. */
static int apply_option(struct loadgen_push *p, char **w, size_t n)
{
    unsigned long v;

    p->n_options++;
    if (strcmp(w[0], "ifconfig") == 0) {
        if (n < 3 || !parse_ipv4(w[1], &p->ifconfig_local) ||
            !parse_ipv4(w[2], &p->ifconfig_remote)) {
            return -1;
        }
        p->has_ifconfig = true;
    } else if (strcmp(w[0], "route-gateway") == 0) {
        if (n < 2 || !parse_ipv4(w[1], &p->route_gateway)) {
            return -1;
        }
        p->has_route_gateway = true;
    } else if (strcmp(w[0], "route") == 0) {
        uint32_t addr, mask = 0xFFFFFFFFu;

        if (!p->has_host_route && n >= 2 && parse_ipv4(w[1], &addr) &&
            (n < 3 || parse_ipv4(w[2], &mask)) && mask == 0xFFFFFFFFu) {
            p->has_host_route = true;
            p->host_route = addr;
        }
    } else if (strcmp(w[0], "topology") == 0) {
        p->is_subnet = n >= 2 && strcmp(w[1], "subnet") == 0;
    } else if (strcmp(w[0], "peer-id") == 0) {
        if (n < 2 || !parse_uint(w[1], 0xFFFFFE, &v)) {
            return -1;
        }
        p->has_peer_id = true;
        p->peer_id = (uint32_t)v;
    } else if (strcmp(w[0], "cipher") == 0) {
        if (n < 2 || strlen(w[1]) >= sizeof(p->cipher)) {
            return -1;
        }
        strcpy(p->cipher, w[1]);
    } else if (strcmp(w[0], "key-derivation") == 0) {
        p->tls_ekm = n >= 2 && strcmp(w[1], "tls-ekm") == 0;
    } else if (strcmp(w[0], "protocol-flags") == 0) {
        for (size_t i = 1; i < n; i++) {
            if (strcmp(w[i], "tls-ekm") == 0) {
                p->tls_ekm = true;
            } else if (strcmp(w[i], "cc-exit") == 0) {
                p->cc_exit = true;
            }
        }
    } else if (strcmp(w[0], "ping") == 0) {
        if (n >= 2 && parse_uint(w[1], 86400, &v)) {
            p->ping_s = (int)v;
        }
    } else if (strcmp(w[0], "ping-restart") == 0) {
        if (n >= 2 && parse_uint(w[1], 86400, &v)) {
            p->ping_restart_s = (int)v;
        }
    } else if (strcmp(w[0], "comp-lzo") == 0 || strcmp(w[0], "compress") == 0) {
        return apply_comp(p, w, n);
    } else if (strcmp(w[0], "push-continuation") == 0) {
        p->is_complete = !(n >= 2 && strcmp(w[1], "2") == 0);
    }
    return 0;
}

int loadgen_push_apply(struct loadgen_push *p, const char *msg)
{
    size_t plen = strlen(PUSH_PREFIX);
    const char *s = msg;

    if (strncmp(msg, PUSH_PREFIX, plen) != 0 ||
        (msg[plen] != ',' && msg[plen] != '\0' && msg[plen] != '\r' && msg[plen] != '\n')) {
        return -1;
    }
    p->is_complete = true; /* unless a "push-continuation 2" says otherwise */
    s += plen;
    while (*s) {
        char line[OPTION_MAX], *words[MAX_WORDS];
        size_t len, n;
        int err;

        if (*s == ',') {
            s++;
        }
        len = strcspn(s, ",");
        if (len >= sizeof(line)) { /* 2.6 drops over-long lines; so do we */
            s += len;
            continue;
        }
        memcpy(line, s, len);
        line[len] = '\0';
        s += len;
        line[strcspn(line, "\r\n")] = '\0';
        n = split_words(line, words);
        if (n == 0) {
            continue;
        }
        err = apply_option(p, words, n);
        if (err) {
            return err;
        }
    }
    return 0;
}

uint32_t loadgen_push_gateway(const struct loadgen_push *p)
{
    if (p->has_route_gateway) {
        return p->route_gateway;
    }
    if (p->has_host_route) {
        return p->host_route;
    }
    if (p->has_ifconfig && !p->is_subnet) {
        return p->ifconfig_remote;
    }
    return 0;
}
