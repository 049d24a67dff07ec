/*
 * SprayNIC C shim: DPDK's static-inline fast path exported at burst granularity, plus
 * sizeof/offsetof probes the Java side checks against its jextract layouts at start-up.
 *
 * Every function here is short and never calls back into Java, so the Java side may bind the
 * burst functions with Linker.Option.critical(false). Pointers cross as plain addresses.
 */
#ifndef SPRAYNIC_SHIM_H
#define SPRAYNIC_SHIM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rte_mbuf;
struct rte_mempool;

/* Version of this shim's ABI; bumped whenever a signature or probe changes. */
#define SPRAYNIC_SHIM_ABI_VERSION 1

/* Identifiers for spraynic_layout_probe(). Keep in step with Java's ShimLayoutCheck. */
enum spraynic_probe {
    SPRAYNIC_PROBE_ABI_VERSION = 0,
    SPRAYNIC_PROBE_MBUF_SIZEOF = 1,
    SPRAYNIC_PROBE_MBUF_BUF_ADDR = 2,
    SPRAYNIC_PROBE_MBUF_DATA_OFF = 3,
    SPRAYNIC_PROBE_MBUF_REFCNT = 4,
    SPRAYNIC_PROBE_MBUF_NB_SEGS = 5,
    SPRAYNIC_PROBE_MBUF_PORT = 6,
    SPRAYNIC_PROBE_MBUF_OL_FLAGS = 7,
    SPRAYNIC_PROBE_MBUF_PACKET_TYPE = 8,
    SPRAYNIC_PROBE_MBUF_PKT_LEN = 9,
    SPRAYNIC_PROBE_MBUF_DATA_LEN = 10,
    SPRAYNIC_PROBE_MBUF_VLAN_TCI = 11,
    SPRAYNIC_PROBE_MBUF_HASH = 12,
    SPRAYNIC_PROBE_MBUF_BUF_LEN = 13,
    SPRAYNIC_PROBE_MBUF_POOL = 14,
    SPRAYNIC_PROBE_MBUF_NEXT = 15,
    SPRAYNIC_PROBE_PKTMBUF_HEADROOM = 16,
    SPRAYNIC_PROBE_ETH_STATS_SIZEOF = 17,
    SPRAYNIC_PROBE_ETH_DEV_INFO_SIZEOF = 18,
    SPRAYNIC_PROBE_ETH_CONF_SIZEOF = 19,
    SPRAYNIC_PROBE_ETH_LINK_SIZEOF = 20,
    SPRAYNIC_PROBE_ETH_XSTAT_SIZEOF = 21,
    SPRAYNIC_PROBE_ETH_XSTAT_NAME_SIZEOF = 22,
    SPRAYNIC_PROBE_ETHER_ADDR_SIZEOF = 23,
    SPRAYNIC_PROBE_MAX_ETHPORTS = 24,
    SPRAYNIC_PROBE_MAX_LCORE = 25,
    SPRAYNIC_PROBE_COUNT = 26
};

/* Layout probe: the value of one enum spraynic_probe entry, or -1 for an unknown id. */
int64_t spraynic_layout_probe(uint32_t probe);

/* rte_eth_rx_burst / rte_eth_tx_burst on (port, queue); pkts is an array of mbuf pointers. */
uint16_t spraynic_rx_burst(uint16_t port_id, uint16_t queue_id, struct rte_mbuf **pkts, uint16_t nb_pkts);
uint16_t spraynic_tx_burst(uint16_t port_id, uint16_t queue_id, struct rte_mbuf **pkts, uint16_t nb_pkts);

/*
 * rte_pktmbuf_pool_create, with one difference: without hugepages (and so with IOVA as VA), the
 * mbufs are packed one after another instead of one per 4 KiB page. DPDK's default keeps every
 * object inside one page so that it stays IOVA-contiguous; with IOVA as VA any VA-contiguous object
 * already is, and one mbuf per page puts every mbuf header in the same L1 set (all 4096 B apart).
 * With hugepages it is exactly rte_pktmbuf_pool_create. NULL and rte_errno set on failure.
 */
struct rte_mempool *spraynic_pktmbuf_pool_create(const char *name, uint32_t count, uint32_t cache_size,
                                                 uint16_t priv_size, uint16_t data_room_size, int32_t socket_id);

/*
 * One crossing for a loop that transmits then polls: rte_eth_tx_burst of pkts[0..count), what the
 * driver did not take moved to the front of pkts, then rte_eth_rx_burst into the rest of the
 * array, up to capacity entries in all. Returns sent | (entries now held) << 16; the caller still
 * owns the unsent packets (at the front) and the received ones (after them).
 */
uint32_t spraynic_tx_rx_burst(uint16_t port_id, uint16_t queue_id, struct rte_mbuf **pkts, uint16_t count,
                              uint16_t capacity);

/* Allocates count mbufs, all or none (0 on success, negative errno otherwise); each is reset. */
int spraynic_mbuf_alloc_bulk(struct rte_mempool *pool, struct rte_mbuf **pkts, uint32_t count);

/* Frees count mbufs (NULL entries are skipped). */
void spraynic_mbuf_free_bulk(struct rte_mbuf **pkts, uint32_t count);

/* Sets data_len and pkt_len of count single-segment mbufs to the same length. */
void spraynic_mbuf_set_lengths(struct rte_mbuf **pkts, uint32_t count, uint16_t length);

/* Registers the calling (non-EAL) thread as a DPDK lcore: returns its lcore id, or -rte_errno. */
int spraynic_thread_register(void);
void spraynic_thread_unregister(void);

/* rte_lcore_id() of the calling thread (UINT32_MAX when not an lcore). */
uint32_t spraynic_lcore_id(void);

/* rte_errno of the calling thread. */
int spraynic_errno(void);

/* Reads the link of a port without waiting: speed in Mbps, status/duplex/autoneg bits. */
int spraynic_link_get(uint16_t port_id, uint32_t *speed_mbps, uint32_t *status, uint32_t *full_duplex, uint32_t *autoneg);

/* Smallest possible downcall, for measuring the cost of the call itself. */
int32_t spraynic_noop(int32_t value);

#ifdef __cplusplus
}
#endif

#endif /* SPRAYNIC_SHIM_H */
