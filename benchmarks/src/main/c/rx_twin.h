/*
 * The C receive twin: the Java receive path's per-packet work (RoceParser + Icrc + placement of an RDMA WRITE's
 * payload into a registered region) in C, through the same shim, on the same port, pool and mbufs. Built into
 * libspraynic_rxtwin.so, which io.spraynic.bench.raw.CReceiveTwin loads into the Java process; the Java twin is
 * io.spraynic.bench.raw.ReceiveTwin.
 */
#ifndef SPRAYNIC_RX_TWIN_H
#define SPRAYNIC_RX_TWIN_H

#include <stdint.h>

#include <rte_mbuf.h>

#define SPRAYNIC_RXTWIN_MAX_BURST 512

/* What one frame came to; the counters array is indexed by these. */
enum spraynic_rxtwin_outcome {
    RXTWIN_PLACED = 0,      /* an RDMA WRITE Only whose payload went into the region */
    RXTWIN_ACCEPTED = 1,    /* a well-formed RoCEv2 frame of another opcode: parsed, checked, not placed */
    RXTWIN_NOT_OURS = 2,    /* not IP, not UDP, another UDP port, an IP fragment */
    RXTWIN_MALFORMED = 3,   /* every refusal of RoceParser but the ICRC's */
    RXTWIN_BAD_ICRC = 4,
    RXTWIN_OUT_OF_REGION = 5, /* R_Key or address range outside the region */
    RXTWIN_OUTCOMES = 6
};

/* How the twin computes the CRC after the masked headers (always the Ethernet polynomial of java.util.zip.CRC32;
 * SSE4.2's crc32 instruction is the Castagnoli one and cannot serve). */
enum spraynic_rxtwin_crc {
    RXTWIN_CRC_TABLES = 0,  /* slicing-by-8 tables */
    RXTWIN_CRC_PCLMUL = 1,  /* 128-bit PCLMULQDQ folding, 64 bytes a step */
    RXTWIN_CRC_VPCLMUL = 2  /* AVX-512 VPCLMULQDQ folding, 256 bytes a step, from 256 bytes up */
};

struct spraynic_rxtwin {
    uint16_t port;
    uint32_t burst_size;
    uint32_t held;              /* mbufs the burst holds between calls: sent back first on the next one */
    uint8_t *region;
    uint64_t region_base;       /* the virtual address of region[0], as RETHs name it */
    uint64_t region_length;
    uint32_t rkey;
    int32_t crc;                /* enum spraynic_rxtwin_crc: how the ICRC's CRC runs */
    uint64_t counters[RXTWIN_OUTCOMES];
    struct rte_mbuf *burst[SPRAYNIC_RXTWIN_MAX_BURST];
};

/* A twin on queue 0 of a started port, placing into [region, region + region_length) which RETHs address as
 * [region_base, region_base + region_length) with R_Key rkey; NULL (rte_errno EINVAL or ENOMEM) on bad arguments.
 * crc_folding: the fastest enum spraynic_rxtwin_crc to use, if the CPU has it. */
struct spraynic_rxtwin *spraynic_rxtwin_create(uint16_t port, uint32_t burst_size, uint8_t *region,
                                               uint64_t region_base, uint64_t region_length, uint32_t rkey,
                                               int32_t crc_folding);

/* Runs `bursts` times: one spraynic_tx_rx_burst sends back what the last burst held and receives the next, then
 * every frame is parsed, its ICRC checked and its payload placed. Returns the frames received. */
uint64_t spraynic_rxtwin_bursts(struct spraynic_rxtwin *twin, uint64_t bursts);

/* Classifies (and places) one frame of `length` bytes: an enum spraynic_rxtwin_outcome, also counted. */
int32_t spraynic_rxtwin_frame(struct spraynic_rxtwin *twin, const uint8_t *frame, uint32_t length);

/* The ICRC of the RoCEv2 packet whose IP header starts at `ip` (version from its first nibble, IPv4 header length
 * from its IHL), ICRC at `icrc`: the value whose little-endian bytes go on the wire, as Java's Icrc.compute. */
uint32_t spraynic_rxtwin_icrc(const struct spraynic_rxtwin *twin, const uint8_t *ip, const uint8_t *icrc);

/* Sends back what the twin holds, so that the other loop circulates the same frames. */
void spraynic_rxtwin_flush(struct spraynic_rxtwin *twin);

/* The counters (RXTWIN_OUTCOMES of them), to read from Java. */
const uint64_t *spraynic_rxtwin_counters(const struct spraynic_rxtwin *twin);

/* The enum spraynic_rxtwin_crc this twin uses. */
int32_t spraynic_rxtwin_crc_folding(const struct spraynic_rxtwin *twin);

/* spraynic_rxtwin_flush, then frees the twin. */
void spraynic_rxtwin_free(struct spraynic_rxtwin *twin);

#endif
