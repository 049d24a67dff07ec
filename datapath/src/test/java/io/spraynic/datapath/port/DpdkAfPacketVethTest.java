package io.spraynic.datapath.port;

import org.junit.jupiter.api.BeforeAll;

/**
 * DPDK's {@code net_af_packet} PMD on one end of a veth pair whose other end lives in a network
 * namespace this test creates (and removes, also on failure). Needs root (CI is root).
 */
class DpdkAfPacketVethTest extends VethPmdTestBase
{
    @BeforeAll
    static void start()
    {
        start("afpacket", "net_af_packet0", "qpairs=1");
    }
}
