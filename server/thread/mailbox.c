/* server/thread/mailbox.c: the boxes of the acceptor and the workers (mailbox.h). */
#include "server/thread/mailbox.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>

static struct mailbox_box *box(struct mailbox *mb, int who)
{
    return &mb->boxes[who + 1]; /* MAILBOX_ACCEPTOR is -1 */
}

int mailbox_init(struct mailbox *mb, int n_workers)
{
    mb->n_workers = n_workers;
    mb->boxes = calloc((size_t)n_workers + 1, sizeof(*mb->boxes));
    if (!mb->boxes) {
        return -ENOMEM;
    }
    for (int i = 0; i <= n_workers; i++) {
        msgq_init(&mb->boxes[i].q);
    }
    return 0;
}

void mailbox_free(struct mailbox *mb)
{
    free(mb->boxes);
    mb->boxes = NULL;
}

void mailbox_attach(struct mailbox *mb, int who, uv_async_t *wake)
{
    box(mb, who)->wake = wake;
}

void mailbox_post(struct mailbox *mb, int to, struct msg *m)
{
    struct mailbox_box *b = box(mb, to);

    /* (sequentially consistent with mailbox_close: either it sees this post under way and waits
     * for it, or this post sees the box closed) */
    atomic_fetch_add(&b->n_posting, 1);
    if (atomic_load(&b->is_closed)) {
        atomic_fetch_sub(&b->n_posting, 1);
        msg_discard(m);
        return;
    }
    msgq_push(&b->q, &m->node);
    uv_async_send(b->wake);
    atomic_fetch_sub(&b->n_posting, 1);
}

void mailbox_close(struct mailbox *mb, int who)
{
    struct mailbox_box *b = box(mb, who);

    atomic_store(&b->is_closed, true);
    while (atomic_load(&b->n_posting) > 0) {
        sched_yield(); /* a post is between its check and its wake-up: a few instructions */
    }
}

int mailbox_post_workers(struct mailbox *mb, enum msg_type type, uint32_t peer_id, const void *data,
                         size_t len)
{
    int n_missed = 0;

    for (int i = 0; i < mb->n_workers; i++) {
        struct msg *m = msg_new(type, NULL, data, len);

        if (!m) {
            n_missed++;
            continue;
        }
        m->peer_id = peer_id;
        mailbox_post(mb, i, m);
    }
    return n_missed;
}

struct msg *mailbox_take(struct mailbox *mb, int who)
{
    return (struct msg *)msgq_pop(&box(mb, who)->q);
}
