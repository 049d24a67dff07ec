package io.spraynic.datapath.port;

import org.junit.jupiter.api.BeforeAll;

/**
 * DPDK's {@code net_af_xdp} PMD on one end of a veth pair whose other end lives in a network
 * namespace this test creates (and removes, also on failure): the PMD loads its XDP program on the veth
 * (native XDP; veth has one queue), binds an AF_XDP socket to queue 0 and moves frames through its UMEM.
 * Needs root (CAP_NET_ADMIN, CAP_BPF, CAP_IPC_LOCK for the UMEM); CI is root.
 */
class DpdkAfXdpVethTest extends VethPmdTestBase
{
    @BeforeAll
    static void start()
    {
        start("afxdp", "net_af_xdp0", "start_queue=0,queue_count=1");
    }
}
