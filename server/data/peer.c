/* server/data/peer.c: thread messages. */
#include "server/data/peer.h"

#include <stdlib.h>
#include <string.h>

#include "server/thread/pktpool.h"

struct msg *msg_new(enum msg_type type, struct peer *peer, const void *data, size_t len)
{
    struct msg *m = calloc(1, sizeof(*m) + len);

    if (!m) {
        return NULL;
    }
    m->type = type;
    m->peer = peer;
    m->len = len;
    if (data && len) {
        memcpy(m->data, data, len);
    }
    return m;
}

void msg_free(struct msg *m)
{
    if (!m) {
        return;
    }
    if (m->pool) {
        pktpool_put(m);
    } else {
        free(m);
    }
}
