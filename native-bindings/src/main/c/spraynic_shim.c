/*
 * SprayNIC C shim. See spraynic_shim.h for the contract.
 */
#include "spraynic_shim.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <rte_config.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_mempool.h>

_Static_assert(sizeof(struct rte_mbuf) == 128, "rte_mbuf is expected to be two cache lines");

int64_t spraynic_layout_probe(uint32_t probe)
{
    switch ((enum spraynic_probe)probe) {
    case SPRAYNIC_PROBE_ABI_VERSION: return SPRAYNIC_SHIM_ABI_VERSION;
    case SPRAYNIC_PROBE_MBUF_SIZEOF: return sizeof(struct rte_mbuf);
    case SPRAYNIC_PROBE_MBUF_BUF_ADDR: return offsetof(struct rte_mbuf, buf_addr);
    case SPRAYNIC_PROBE_MBUF_DATA_OFF: return offsetof(struct rte_mbuf, data_off);
    case SPRAYNIC_PROBE_MBUF_REFCNT: return offsetof(struct rte_mbuf, refcnt);
    case SPRAYNIC_PROBE_MBUF_NB_SEGS: return offsetof(struct rte_mbuf, nb_segs);
    case SPRAYNIC_PROBE_MBUF_PORT: return offsetof(struct rte_mbuf, port);
    case SPRAYNIC_PROBE_MBUF_OL_FLAGS: return offsetof(struct rte_mbuf, ol_flags);
    case SPRAYNIC_PROBE_MBUF_PACKET_TYPE: return offsetof(struct rte_mbuf, packet_type);
    case SPRAYNIC_PROBE_MBUF_PKT_LEN: return offsetof(struct rte_mbuf, pkt_len);
    case SPRAYNIC_PROBE_MBUF_DATA_LEN: return offsetof(struct rte_mbuf, data_len);
    case SPRAYNIC_PROBE_MBUF_VLAN_TCI: return offsetof(struct rte_mbuf, vlan_tci);
    case SPRAYNIC_PROBE_MBUF_HASH: return offsetof(struct rte_mbuf, hash);
    case SPRAYNIC_PROBE_MBUF_BUF_LEN: return offsetof(struct rte_mbuf, buf_len);
    case SPRAYNIC_PROBE_MBUF_POOL: return offsetof(struct rte_mbuf, pool);
    case SPRAYNIC_PROBE_MBUF_NEXT: return offsetof(struct rte_mbuf, next);
    case SPRAYNIC_PROBE_PKTMBUF_HEADROOM: return RTE_PKTMBUF_HEADROOM;
    case SPRAYNIC_PROBE_ETH_STATS_SIZEOF: return sizeof(struct rte_eth_stats);
    case SPRAYNIC_PROBE_ETH_DEV_INFO_SIZEOF: return sizeof(struct rte_eth_dev_info);
    case SPRAYNIC_PROBE_ETH_CONF_SIZEOF: return sizeof(struct rte_eth_conf);
    case SPRAYNIC_PROBE_ETH_LINK_SIZEOF: return sizeof(struct rte_eth_link);
    case SPRAYNIC_PROBE_ETH_XSTAT_SIZEOF: return sizeof(struct rte_eth_xstat);
    case SPRAYNIC_PROBE_ETH_XSTAT_NAME_SIZEOF: return sizeof(struct rte_eth_xstat_name);
    case SPRAYNIC_PROBE_ETHER_ADDR_SIZEOF: return sizeof(struct rte_ether_addr);
    case SPRAYNIC_PROBE_MAX_ETHPORTS: return RTE_MAX_ETHPORTS;
    case SPRAYNIC_PROBE_MAX_LCORE: return RTE_MAX_LCORE;
    case SPRAYNIC_PROBE_COUNT: break;
    }
    return -1;
}

uint16_t spraynic_rx_burst(uint16_t port_id, uint16_t queue_id, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
    return rte_eth_rx_burst(port_id, queue_id, pkts, nb_pkts);
}

uint16_t spraynic_tx_burst(uint16_t port_id, uint16_t queue_id, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
    return rte_eth_tx_burst(port_id, queue_id, pkts, nb_pkts);
}

uint32_t spraynic_tx_rx_burst(uint16_t port_id, uint16_t queue_id, struct rte_mbuf **pkts, uint16_t count,
                              uint16_t capacity)
{
    uint16_t sent = rte_eth_tx_burst(port_id, queue_id, pkts, count);
    uint16_t held = count - sent;
    if (held > 0 && sent > 0) {
        memmove(pkts, pkts + sent, held * sizeof(*pkts));
    }
    held += rte_eth_rx_burst(port_id, queue_id, pkts + held, capacity - held);
    return (uint32_t)sent | (uint32_t)held << 16;
}

struct rte_mempool *spraynic_pktmbuf_pool_create(const char *name, uint32_t count, uint32_t cache_size,
                                                 uint16_t priv_size, uint16_t data_room_size, int32_t socket_id)
{
    if (rte_eal_has_hugepages() || rte_eal_iova_mode() != RTE_IOVA_VA) {
        return rte_pktmbuf_pool_create(name, count, cache_size, priv_size, data_room_size, socket_id);
    }
    /* rte_pktmbuf_pool_create_by_ops, step by step, with RTE_MEMPOOL_F_NO_IOVA_CONTIG added. */
    if (RTE_ALIGN(priv_size, RTE_MBUF_PRIV_ALIGN) != priv_size) {
        rte_errno = EINVAL;
        return NULL;
    }
    struct rte_pktmbuf_pool_private private_data = {
        .mbuf_data_room_size = data_room_size,
        .mbuf_priv_size = priv_size,
    };
    unsigned element_size = (unsigned)sizeof(struct rte_mbuf) + priv_size + data_room_size;
    struct rte_mempool *pool = rte_mempool_create_empty(name, count, element_size, cache_size,
        sizeof(struct rte_pktmbuf_pool_private), socket_id, RTE_MEMPOOL_F_NO_IOVA_CONTIG);
    if (pool == NULL) {
        return NULL;
    }
    int rc = rte_mempool_set_ops_byname(pool, rte_mbuf_best_mempool_ops(), NULL);
    if (rc != 0) {
        rte_mempool_free(pool);
        rte_errno = -rc;
        return NULL;
    }
    rte_pktmbuf_pool_init(pool, &private_data);
    rc = rte_mempool_populate_default(pool);
    if (rc < 0) {
        rte_mempool_free(pool);
        rte_errno = -rc;
        return NULL;
    }
    rte_mempool_obj_iter(pool, rte_pktmbuf_init, NULL);
    return pool;
}

int spraynic_mbuf_alloc_bulk(struct rte_mempool *pool, struct rte_mbuf **pkts, uint32_t count)
{
    return rte_pktmbuf_alloc_bulk(pool, pkts, count);
}

void spraynic_mbuf_free_bulk(struct rte_mbuf **pkts, uint32_t count)
{
    rte_pktmbuf_free_bulk(pkts, count);
}

void spraynic_mbuf_set_lengths(struct rte_mbuf **pkts, uint32_t count, uint16_t length)
{
    for (uint32_t i = 0; i < count; i++) {
        pkts[i]->data_len = length;
        pkts[i]->pkt_len = length;
    }
}

int spraynic_thread_register(void)
{
    if (rte_lcore_id() != LCORE_ID_ANY) {
        return (int)rte_lcore_id();
    }
    if (rte_thread_register() != 0) {
        return rte_errno > 0 ? -rte_errno : -EINVAL;
    }
    return (int)rte_lcore_id();
}

void spraynic_thread_unregister(void)
{
    if (rte_lcore_id() != LCORE_ID_ANY && rte_lcore_id() != rte_get_main_lcore()) {
        rte_thread_unregister();
    }
}

uint32_t spraynic_lcore_id(void)
{
    return rte_lcore_id();
}

int spraynic_errno(void)
{
    return rte_errno;
}

int spraynic_link_get(uint16_t port_id, uint32_t *speed_mbps, uint32_t *status, uint32_t *full_duplex, uint32_t *autoneg)
{
    struct rte_eth_link link;
    int rc = rte_eth_link_get_nowait(port_id, &link);
    if (rc != 0) {
        return rc;
    }
    *speed_mbps = link.link_speed;
    *status = link.link_status;
    *full_duplex = link.link_duplex;
    *autoneg = link.link_autoneg;
    return 0;
}

int32_t spraynic_noop(int32_t value)
{
    return value;
}
