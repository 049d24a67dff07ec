package io.spraynic.datapath.port;

import io.spraynic.dpdk.Eal;
import io.spraynic.dpdk.EthPort;
import io.spraynic.dpdk.Mempool;
import io.spraynic.dpdk.PortStats;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Bursts on DPDK's {@code net_null} PMD: TX swallows, RX produces packets of a set size.
 */
class DpdkNetNullTest
{
    private static Eal eal;
    private static Mempool pool;
    private static EthPort ethPort;
    private static DpdkPacketPort port;

    @BeforeAll
    static void start()
    {
        eal = DpdkTestSupport.initEal("netnull");
        eal.registerCurrentThread();
        pool = DpdkTestSupport.createPool("netnull");
        eal.createVdev("net_null0", "size=128");
        ethPort = EthPort.byName("net_null0");
        port = DpdkTestSupport.startSingleQueue(ethPort, pool);
    }

    @AfterAll
    static void stop()
    {
        ethPort.close();
        eal.removeVdev("net_null0");
        pool.close();
        eal.close();
    }

    @Test
    void shouldTransmitWholeBurstsAndCountThem()
    {
        ethPort.resetStats();
        final int before = pool.availableCount();
        final PacketBurst burst = port.newBurst(32);
        for (int round = 0; round < 10; round++)
        {
            DpdkTestSupport.fill(port, burst, 32, 64, round * 32L);
            assertEquals(32, port.transmit(burst));
            assertEquals(0, burst.size());
        }
        burst.close();
        final PortStats stats = ethPort.stats();
        assertEquals(320, stats.txPackets());
        // net_null counts packets only; its byte counters stay 0.
        assertEquals(before, pool.availableCount(), "net_null frees what it transmits");
    }

    @Test
    void shouldReceiveFullBurstsOfConfiguredSize()
    {
        final PacketBurst burst = port.newBurst(32);
        assertEquals(32, port.receive(burst));
        for (int i = 0; i < burst.size(); i++)
        {
            assertEquals(128, burst.length(i));
            assertTrue(burst.room(i) >= 2048);
            assertTrue(burst.offset(i) >= 0 && burst.offset(i) + 128 <= burst.memory().byteSize());
        }
        port.release(burst);
        burst.close();
    }

    @Test
    void shouldReportDeviceInfoLinkMtuAndXstats()
    {
        assertEquals("net_null", ethPort.info().driverName());
        assertTrue(ethPort.link().up());
        assertEquals(1500, ethPort.mtu());
        final Map<String, Long> xstats = ethPort.xstats();
        assertTrue(xstats.containsKey("rx_good_packets"), xstats.keySet().toString());
        assertTrue(xstats.containsKey("tx_good_packets"), xstats.keySet().toString());
        assertEquals(17, ethPort.macAddressText().length());
    }
}
