/* The C raw loop: see raw_loop_core.h. Every shim call and per-frame access mirrors RawLoop.java. */
#include "raw_loop_core.h"

#include <errno.h>
#include <stdlib.h>

#include <rte_errno.h>

#include "spraynic_shim.h"

struct spraynic_rawloop *spraynic_rawloop_create(struct rte_mempool *pool, uint16_t port, int32_t ring, int32_t mode,
                                                 int32_t touch, uint32_t burst_size, uint16_t length)
{
    if (pool == NULL || mode < RAWLOOP_RX || mode > RAWLOOP_TXRX || burst_size < 1 ||
        burst_size > SPRAYNIC_RAWLOOP_MAX_BURST) {
        rte_errno = EINVAL;
        return NULL;
    }
    struct spraynic_rawloop *loop = calloc(1, sizeof *loop);
    if (loop == NULL) {
        rte_errno = ENOMEM;
        return NULL;
    }
    loop->pool = pool;
    loop->port = port;
    loop->length = length;
    loop->ring = ring != 0;
    loop->mode = mode;
    loop->touch = touch != 0;
    loop->burst_size = burst_size;
    return loop;
}

/* Reads the length of the first `count` frames of the burst (RawLoop.sumLengths). */
static inline void sum_lengths(struct spraynic_rawloop *loop, unsigned count)
{
    struct rte_mbuf **burst = loop->burst;
    uint64_t bytes = 0;
    for (unsigned i = 0; i < count; i++) {
        bytes += burst[i]->data_len;
    }
    loop->sink += bytes;
}

static unsigned transmit_once(struct spraynic_rawloop *loop)
{
    struct rte_mbuf **burst = loop->burst;
    unsigned n = loop->burst_size;
    if (spraynic_mbuf_alloc_bulk(loop->pool, burst, n) != 0) {
        return 0;
    }
    if (loop->touch) {
        uint16_t length = loop->length;
        for (unsigned i = 0; i < n; i++) {
            burst[i]->data_len = length;
            burst[i]->pkt_len = length;
        }
    }
    unsigned sent = spraynic_tx_burst(loop->port, 0, burst, (uint16_t)n);
    if (sent < n) {
        spraynic_mbuf_free_bulk(burst + sent, n - sent);
    }
    return sent;
}

static unsigned receive_once(struct spraynic_rawloop *loop)
{
    struct rte_mbuf **burst = loop->burst;
    unsigned received = spraynic_rx_burst(loop->port, 0, burst, (uint16_t)loop->burst_size);
    if (loop->touch) {
        sum_lengths(loop, received);
    }
    spraynic_mbuf_free_bulk(burst, received);
    return received;
}

static unsigned forward_once(struct spraynic_rawloop *loop)
{
    struct rte_mbuf **burst = loop->burst;
    unsigned received = spraynic_rx_burst(loop->port, 0, burst, (uint16_t)loop->burst_size);
    if (loop->touch) {
        sum_lengths(loop, received);
    }
    unsigned sent = spraynic_tx_burst(loop->port, 0, burst, (uint16_t)received);
    if (sent < received) {
        spraynic_mbuf_free_bulk(burst + sent, received - sent);
    }
    return sent;
}

/* txrx: one shim call transmits what the burst holds and receives the next (spraynic_tx_rx_burst,
 * as Java's PacketPort.transmitAndReceive), then every length is read. */
static unsigned forward_in_one_call(struct spraynic_rawloop *loop)
{
    struct rte_mbuf **burst = loop->burst;
    uint32_t result = spraynic_tx_rx_burst(loop->port, 0, burst, (uint16_t)loop->held, (uint16_t)loop->burst_size);
    unsigned held = result >> 16;
    loop->held = held;
    if (loop->touch) {
        sum_lengths(loop, held);
    }
    return result & 0xFFFF;
}

uint64_t spraynic_rawloop_bursts(struct spraynic_rawloop *loop, uint64_t bursts)
{
    uint64_t counted = 0;
    for (uint64_t i = 0; i < bursts; i++) {
        switch (loop->mode) {
        case RAWLOOP_IO:
            counted += forward_once(loop);
            break;
        case RAWLOOP_TXRX:
            counted += forward_in_one_call(loop);
            break;
        case RAWLOOP_TX:
            if (loop->ring) {
                unsigned sent = transmit_once(loop);
                receive_once(loop);
                counted += sent;
            } else {
                counted += transmit_once(loop);
            }
            break;
        default:
            if (loop->ring) {
                transmit_once(loop);
            }
            counted += receive_once(loop);
            break;
        }
    }
    return counted;
}

uint32_t spraynic_rawloop_prime(struct spraynic_rawloop *loop, uint32_t frames)
{
    int32_t touch = loop->touch;
    loop->touch = 1; /* primed frames always carry their length, as Java's */
    uint32_t sent = 0;
    for (uint32_t primed = 0; primed < frames; primed += loop->burst_size) {
        sent += transmit_once(loop);
    }
    loop->touch = touch;
    return sent;
}

void spraynic_rawloop_flush(struct spraynic_rawloop *loop)
{
    if (loop->held > 0) {
        unsigned sent = spraynic_tx_burst(loop->port, 0, loop->burst, (uint16_t)loop->held);
        if (sent < loop->held) {
            spraynic_mbuf_free_bulk(loop->burst + sent, loop->held - sent);
        }
        loop->held = 0;
    }
}

void spraynic_rawloop_free(struct spraynic_rawloop *loop)
{
    if (loop == NULL) {
        return;
    }
    spraynic_rawloop_flush(loop);
    free(loop);
}

const char *spraynic_rawloop_mode_name(int32_t mode)
{
    static const char *const names[] = {"rx", "tx", "io", "txrx"};
    return mode >= RAWLOOP_RX && mode <= RAWLOOP_TXRX ? names[mode] : NULL;
}

void *spraynic_rawloop_shim_entry(void)
{
    return (void *)&spraynic_tx_rx_burst;
}
