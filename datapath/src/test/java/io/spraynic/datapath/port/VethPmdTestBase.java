package io.spraynic.datapath.port;

import io.spraynic.dpdk.Eal;
import io.spraynic.dpdk.EthPort;
import io.spraynic.dpdk.Mempool;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static io.spraynic.datapath.port.DpdkTestSupport.KernelPeer;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A DPDK PMD over a kernel interface (net_af_packet, net_af_xdp) on one end of a veth pair whose other end
 * lives in a network namespace the test creates (and removes, also on failure): frames both ways. A subclass
 * per PMD starts it in its {@code @BeforeAll} (one EAL per JVM: one class per PMD). Needs root (CI is root).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
abstract class VethPmdTestBase
{
    private static final String NETNS = TestNetwork.name("spvns");
    private static final String LOCAL = TestNetwork.name("spvva");
    private static final String REMOTE = TestNetwork.name("spvvb");

    private static TestNetwork network;
    private static Eal eal;
    private static Mempool pool;
    private static EthPort ethPort;
    private static DpdkPacketPort port;

    private static String vdev;

    /**
     * Creates the namespace and veth pair, starts EAL and the PMD on the local end.
     *
     * @param name    for EAL's file prefix and the pool, e.g. {@code afpacket}.
     * @param device  the vdev, e.g. {@code net_af_packet0}.
     * @param devargs the vdev's arguments after {@code iface=<local end>,}.
     */
    static void start(final String name, final String device, final String devargs)
    {
        network = TestNetwork.create(device + " over veth in a network namespace", NETNS).disableIpv6(NETNS)
            .veth(null, LOCAL, NETNS, REMOTE);

        eal = DpdkTestSupport.initEal(name);
        eal.registerCurrentThread();
        pool = DpdkTestSupport.createPool(name);
        vdev = device;
        eal.createVdev(device, "iface=" + LOCAL + "," + devargs);
        ethPort = EthPort.byName(device);
        port = DpdkTestSupport.startSingleQueue(ethPort, pool);
    }

    @AfterAll
    static void stop()
    {
        try
        {
            if (null != ethPort)
            {
                ethPort.close();
                eal.removeVdev(vdev);
            }
            if (null != eal)
            {
                pool.close();
                eal.close();
            }
        }
        finally
        {
            if (null != network)
            {
                network.close();
            }
        }
    }

    @Test
    void shouldDeliverTransmittedFramesIntoNamespace()
    {
        try (KernelPeer sniffer = KernelPeer.sniff(NETNS, REMOTE, 96, 20))
        {
            final PacketBurst burst = port.newBurst(32);
            for (int round = 0; round < 3; round++)
            {
                DpdkTestSupport.fill(port, burst, 32, 60 + round * 500, round * 32L);
                while (burst.size() > 0)
                {
                    port.transmit(burst);
                }
            }
            burst.close();
            assertEquals(DpdkTestSupport.sequenceList(0, 96), sniffer.sequences());
        }
    }

    @Test
    void shouldReceiveFramesSentFromNamespace()
    {
        KernelPeer.send(NETNS, REMOTE, 64, 1000, 77);
        assertEquals(DpdkTestSupport.sequenceList(77, 64), DpdkTestSupport.toList(DpdkTestSupport.receive(port, 64, 10_000)));
    }
}
