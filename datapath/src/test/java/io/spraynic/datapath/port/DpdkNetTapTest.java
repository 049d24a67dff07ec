package io.spraynic.datapath.port;

import io.spraynic.dpdk.Eal;
import io.spraynic.dpdk.EthPort;
import io.spraynic.dpdk.Mempool;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static io.spraynic.datapath.port.DpdkTestSupport.KernelPeer;
import static io.spraynic.datapath.port.DpdkTestSupport.run;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * DPDK's {@code net_tap} PMD: frames we transmit are seen by the kernel on the tap interface,
 * and frames the kernel sends on it are received by us. Needs root (CI is root).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DpdkNetTapTest
{
    private static final String IFACE = "spntap" + (ProcessHandle.current().pid() % 100_000);

    private static Eal eal;
    private static Mempool pool;
    private static EthPort ethPort;
    private static DpdkPacketPort port;

    @BeforeAll
    static void start()
    {
        DpdkTestSupport.assumeRoot("net_tap");
        eal = DpdkTestSupport.initEal("nettap");
        eal.registerCurrentThread();
        pool = DpdkTestSupport.createPool("nettap");
        eal.createVdev("net_tap0", "iface=" + IFACE);
        ethPort = EthPort.byName("net_tap0");
        port = DpdkTestSupport.startSingleQueue(ethPort, pool);
        // Keep the kernel quiet on the tap: no IPv6 autoconfiguration chatter.
        run(false, "sysctl", "-qw", "net.ipv6.conf." + IFACE + ".disable_ipv6=1");
        run("ip", "link", "set", IFACE, "up");
    }

    @AfterAll
    static void stop()
    {
        if (null != ethPort)
        {
            ethPort.close(); // removes the kernel interface
            eal.removeVdev("net_tap0");
        }
        if (null != eal)
        {
            pool.close();
            eal.close();
        }
        run(false, "ip", "link", "del", IFACE);
    }

    @Test
    void shouldDeliverTransmittedFramesToKernel()
    {
        try (KernelPeer sniffer = KernelPeer.sniff(null, IFACE, 64, 20))
        {
            final PacketBurst burst = port.newBurst(32);
            for (int round = 0; round < 2; round++)
            {
                DpdkTestSupport.fill(port, burst, 32, 200, 100 + round * 32L);
                while (burst.size() > 0)
                {
                    port.transmit(burst);
                }
            }
            burst.close();
            assertEquals(DpdkTestSupport.sequenceList(100, 64), sniffer.sequences());
        }
    }

    @Test
    void shouldReceiveFramesSentByKernel()
    {
        KernelPeer.send(null, IFACE, 50, 300, 4000);
        assertEquals(DpdkTestSupport.sequenceList(4000, 50), DpdkTestSupport.toList(DpdkTestSupport.receive(port, 50, 10_000)));
    }
}
