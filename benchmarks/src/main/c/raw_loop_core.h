/*
 * The C raw loop, shared by the spraynic-rawloop program (a process of its own) and
 * libspraynic_rawloop.so (loaded into the Java loop's process, so that both languages alternate on the
 * same port, pool and mbufs). The Java twin is io.spraynic.bench.raw.RawLoop.
 */
#ifndef SPRAYNIC_RAW_LOOP_CORE_H
#define SPRAYNIC_RAW_LOOP_CORE_H

#include <stdint.h>

#include <rte_mbuf.h>

#define SPRAYNIC_RAWLOOP_MAX_BURST 512

enum spraynic_rawloop_mode { RAWLOOP_RX = 0, RAWLOOP_TX = 1, RAWLOOP_IO = 2, RAWLOOP_TXRX = 3 };

struct spraynic_rawloop {
    struct rte_mempool *pool;
    uint16_t port;
    uint16_t length;     /* frame length tx sets when touch is on */
    int32_t ring;        /* net_ring: tx and rx run as allocate-transmit-receive-free */
    int32_t mode;        /* enum spraynic_rawloop_mode */
    int32_t touch;       /* 1: read (rx, io, txrx) or set (tx) every frame's length; 0: never touch an mbuf */
    uint32_t burst_size;
    uint32_t held;       /* txrx: mbufs the burst holds between calls */
    uint64_t sink;       /* the length reads' sum, so that they are not optimised away */
    struct rte_mbuf *burst[SPRAYNIC_RAWLOOP_MAX_BURST];
};

/* A loop on queue 0 of a started port; NULL (rte_errno EINVAL or ENOMEM) on bad arguments. */
struct spraynic_rawloop *spraynic_rawloop_create(struct rte_mempool *pool, uint16_t port, int32_t ring, int32_t mode,
                                                 int32_t touch, uint32_t burst_size, uint16_t length);

/* Transmits `frames` fresh frames (a net_ring loop's circulating set); the number sent. */
uint32_t spraynic_rawloop_prime(struct spraynic_rawloop *loop, uint32_t frames);

/* Runs `bursts` iterations of the loop; the packets counted (sent for tx, io, txrx; received for rx). */
uint64_t spraynic_rawloop_bursts(struct spraynic_rawloop *loop, uint64_t bursts);

/* Transmits what the loop holds (txrx keeps a burst between calls) back into the port, freeing what is not taken. */
void spraynic_rawloop_flush(struct spraynic_rawloop *loop);

/* spraynic_rawloop_flush, then frees the loop. */
void spraynic_rawloop_free(struct spraynic_rawloop *loop);

/* "rx", "tx", "io" or "txrx", or NULL: lets the Java side check that its mode numbers are these. */
const char *spraynic_rawloop_mode_name(int32_t mode);

/* The address this library calls spraynic_tx_rx_burst at, to check that it shares the caller's shim. */
void *spraynic_rawloop_shim_entry(void);

#endif
