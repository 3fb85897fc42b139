/* server/addr/vroute.c: longest-prefix routes from tunnel prefixes to clients (see vroute.h). */
#include "server/addr/vroute.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

struct vroute_entry {
    struct vroute_key key;
    uint32_t peer_id;
    UT_hash_handle hh;
};

static int family_index(int family)
{
    return family == 6 ? 1 : 0;
}

static int max_plen(int family)
{
    return family == 6 ? 128 : 32;
}

static void mask_to(uint8_t *addr, int addr_len, int plen)
{
    for (int i = 0; i < addr_len; i++) {
        int bits = plen - 8 * i;

        if (bits >= 8) {
            continue;
        }
        addr[i] = bits <= 0 ? 0 : (uint8_t)(addr[i] & (0xFF << (8 - bits)));
    }
}

int vroute_key_make(struct vroute_key *key, int family, const uint8_t *addr, int plen)
{
    int len = family == 6 ? 16 : 4;

    if ((family != 4 && family != 6) || plen < 0 || plen > max_plen(family)) {
        return -EINVAL;
    }
    memset(key, 0, sizeof(*key));
    key->family = (uint8_t)family;
    key->plen = (uint8_t)plen;
    memcpy(key->addr, addr, (size_t)len);
    mask_to(key->addr, len, plen);
    return 0;
}

const char *vroute_prefix_str(int family, const uint8_t *addr, int plen, char *buf, size_t buf_len)
{
    char text[INET6_ADDRSTRLEN];

    if (!inet_ntop(family == 6 ? AF_INET6 : AF_INET, addr, text, sizeof(text))) {
        snprintf(text, sizeof(text), "?");
    }
    snprintf(buf, buf_len, "%s/%d", text, plen);
    return buf;
}

const char *vroute_key_str(const struct vroute_key *key, char *buf, size_t buf_len)
{
    return vroute_prefix_str(key->family, key->addr, key->plen, buf, buf_len);
}

void vroute_table_init(struct vroute_table *t)
{
    memset(t, 0, sizeof(*t));
}

void vroute_table_free(struct vroute_table *t)
{
    struct vroute_entry *e, *tmp;

    HASH_ITER(hh, t->head, e, tmp)
    {
        HASH_DEL(t->head, e);
        free(e);
    }
    memset(t, 0, sizeof(*t));
}

static struct vroute_entry *find(const struct vroute_table *t, const struct vroute_key *key)
{
    struct vroute_entry *e = NULL;

    HASH_FIND(hh, t->head, key, sizeof(*key), e);
    return e;
}

int vroute_add(struct vroute_table *t, const struct vroute_key *key, uint32_t peer_id)
{
    struct vroute_entry *e = find(t, key);

    if (e) {
        e->peer_id = peer_id;
        return 0;
    }
    e = calloc(1, sizeof(*e));
    if (!e) {
        return -ENOMEM;
    }
    e->key = *key;
    e->peer_id = peer_id;
    HASH_ADD(hh, t->head, key, sizeof(e->key), e);
    if (!find(t, key)) { /* uthash reports a failed bucket expansion only by not adding */
        free(e);
        return -ENOMEM;
    }
    t->n_by_plen[family_index(key->family)][key->plen]++;
    t->n_entries++;
    return 0;
}

void vroute_del(struct vroute_table *t, const struct vroute_key *key, uint32_t peer_id)
{
    struct vroute_entry *e = find(t, key);

    if (!e || e->peer_id != peer_id) {
        return;
    }
    HASH_DEL(t->head, e);
    t->n_by_plen[family_index(key->family)][key->plen]--;
    t->n_entries--;
    free(e);
}

uint32_t vroute_get(const struct vroute_table *t, const struct vroute_key *key)
{
    const struct vroute_entry *e = find(t, key);

    return e ? e->peer_id : VROUTE_NONE;
}

uint32_t vroute_lookup(const struct vroute_table *t, int family, const uint8_t *addr)
{
    const uint32_t *counts;
    struct vroute_key key;

    if (t->n_entries == 0 || (family != 4 && family != 6)) {
        return VROUTE_NONE;
    }
    counts = t->n_by_plen[family_index(family)];
    for (int plen = max_plen(family); plen >= 0; plen--) {
        const struct vroute_entry *e;

        if (counts[plen] == 0) {
            continue;
        }
        vroute_key_make(&key, family, addr, plen);
        e = find(t, &key);
        if (e) {
            return e->peer_id;
        }
    }
    return VROUTE_NONE;
}
