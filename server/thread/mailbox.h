/* server/thread/mailbox.h: the one way threads hand each other messages.
 *
 * Every thread that receives messages (the acceptor and each worker) has a box here: a
 * lock-free multi-producer single-consumer queue (server/thread/msgq.h) and the uv_async handle
 * that wakes its loop. Any thread posts to any box by its address (MAILBOX_ACCEPTOR or a worker
 * index); only the owner takes from its box. A posted message belongs to the receiver, which
 * releases it with msg_free() (server/thread/msg.h).
 *
 * Built by the main thread before any thread starts; each owner attaches its wake handle at
 * its init, before the threads start; freed by the main thread after every thread is joined
 * and has drained its box.
 */
#ifndef SERVER_THREAD_MAILBOX_H
#define SERVER_THREAD_MAILBOX_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "server/thread/msg.h"
#include "server/thread/msgq.h"

#define MAILBOX_ACCEPTOR (-1) /* the acceptor's address; workers are 0 .. n_workers - 1 */

struct mailbox_box {
    struct msgq q;
    uv_async_t *wake;       /* the owner's wake-up, or NULL until it attaches */
    _Atomic bool is_closed; /* the owner is gone: posts are released at once */
    _Atomic int n_posting;  /* posts under way: mailbox_close waits for them */
};

struct mailbox {
    int n_workers;
    struct mailbox_box *boxes; /* [0] the acceptor, [1 + i] worker i */
};

/* Boxes for the acceptor and n_workers workers (n_workers >= 1), all empty. Main thread, before
 * the threads start. 0 or -ENOMEM (mb is then safe to mailbox_free). */
int mailbox_init(struct mailbox *mb, int n_workers);

/* Free the boxes. Main thread, after every owner is joined and has drained its box (messages
 * still queued are not released: their owner knows what they carry). Safe on a zeroed or failed
 * mailbox, and twice. */
void mailbox_free(struct mailbox *mb);

/* Box who's owner wakes through wake (an initialised uv_async_t of its loop, alive until the
 * owner is joined). Called by the owner's init, before any thread posts to it. */
void mailbox_attach(struct mailbox *mb, int who, uv_async_t *wake);

/* Hand m to the box of `to` (MAILBOX_ACCEPTOR or a worker index below n_workers) and wake its
 * owner. Any thread; ownership of m passes to the receiver. Never allocates or blocks. After
 * mailbox_close(to) m is released with msg_discard() instead (so nothing that needs more than
 * that, such as key material, may be posted to a thread that may have stopped). */
void mailbox_post(struct mailbox *mb, int to, struct msg *m);

/* who's owner has stopped (joined, or its loop is about to close): later posts to it are
 * released at once (msg_discard), and posts under way have finished when this returns, so no
 * thread touches the owner's wake handle afterwards. Main thread. */
void mailbox_close(struct mailbox *mb, int who);

/* A copy of a message (type, peer_id, len bytes of data) for every worker, each posted to it.
 * Any thread. Returns how many workers got nothing (out of memory); the caller logs it. */
int mailbox_post_workers(struct mailbox *mb, enum msg_type type, uint32_t peer_id, const void *data,
                         size_t len);

/* The oldest message in who's box, or NULL when it is empty (a post still in progress wakes
 * the owner again). The owner's thread only, or the main thread once the owner is joined. */
struct msg *mailbox_take(struct mailbox *mb, int who);

#endif /* SERVER_THREAD_MAILBOX_H */
