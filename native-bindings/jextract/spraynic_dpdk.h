/* The DPDK API SprayNIC binds with jextract, plus the SprayNIC shim. */
#include <rte_config.h>
#include <rte_errno.h>
#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_bus_vdev.h>
#include <rte_dev.h>
#include <rte_mempool.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_ether.h>
#include <rte_ethdev.h>
#include <rte_eth_ring.h>
#include "spraynic_shim.h"
