/* server/data/moderation.h: when a worker stops waking for each datagram and polls its UDP
 * socket from a timer instead (adaptive interrupt moderation), decided apart from its I/O.
 *
 * Like a NIC's adaptive interrupt coalescing: the worker polls only while bulk data (long
 * datagrams) comes in batches, where a batch per wakeup is what
 * recvmmsg, the TCP coalescing for the TUN device and UDP GSO need. A stream of short datagrams
 * (TCP ACKs of a download, pings, a call's voice packets) or a sparse one keeps waking the worker
 * at once: holding those back only adds latency (batched ACKs also let the inner TCP sender keep
 * more data in flight, hence longer queues; docs/benchmarks.md, "Latency under load").
 *
 * No I/O, no clock reads, no lock, no allocation: time comes in as now_us. Worker thread only
 * (each worker has its own struct moderation). */
#ifndef SERVER_DATA_MODERATION_H
#define SERVER_DATA_MODERATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MODERATION_BULK_LEN 576 /* bytes: a datagram this long or longer is bulk data */
#define MODERATION_MIN_BULK 2   /* bulk datagrams one wakeup must find to start polling */

struct moderation {
    uint32_t period_us;    /* polling period; 0: never poll (OVPND_MODERATION_US=0) */
    uint32_t bulk_len;     /* bytes; MODERATION_BULK_LEN, 0 counts every datagram as bulk */
    bool is_polling;       /* true between moderation_on_wakeup() and moderation_on_poll()
                            * saying so */
    uint64_t last_bulk_us; /* when a wakeup last found bulk data; 0: never */
};

/* Counts of one receive batch, for the functions below. */
struct moderation_batch {
    unsigned n;      /* datagrams received */
    unsigned n_bulk; /* of them at least bulk_len bytes long */
};

/* Start event-driven with the given period (microseconds, 0 off) and bulk length (bytes, 0:
 * every datagram counts). Cannot fail. */
void moderation_init(struct moderation *m, uint32_t period_us, uint32_t bulk_len);

/* Count one received datagram of len bytes into b (b zeroed by the caller before the batch). */
static inline void moderation_count(const struct moderation *m, struct moderation_batch *b,
                                    size_t len)
{
    b->n++;
    b->n_bulk += len >= m->bulk_len;
}

/* The socket woke the worker at now_us and it received b. True when the worker should switch to
 * polling every period_us: the wakeup found MODERATION_MIN_BULK bulk datagrams or more, or bulk
 * data again less than two periods after the last wakeup that found some. Sets is_polling. */
bool moderation_on_wakeup(struct moderation *m, const struct moderation_batch *b, uint64_t now_us);

/* A polling period ended at now_us and the poll received b. True when the worker should go back
 * to waking for each datagram: the poll found no bulk datagram (the bulk stream ended; short
 * datagrams left alone must not wait). A stream of one bulk datagram per period keeps polling,
 * so a steady moderate upload does not switch modes on every datagram. Clears is_polling then. */
bool moderation_on_poll(struct moderation *m, const struct moderation_batch *b, uint64_t now_us);

#endif /* SERVER_DATA_MODERATION_H */
