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
 * DPDK's {@code net_af_xdp} PMD on one end of a veth pair whose other end lives in a network
 * namespace this test creates (and removes, also on failure): the PMD loads its XDP program on the veth
 * (native XDP; veth has one queue), binds an AF_XDP socket to queue 0 and moves frames through its UMEM.
 * Needs root (CAP_NET_ADMIN, CAP_BPF, CAP_IPC_LOCK for the UMEM); CI is root.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DpdkAfXdpVethTest
{
    private static final long ID = ProcessHandle.current().pid() % 100_000;
    private static final String NETNS = "spxns" + ID;
    private static final String LOCAL = "spxva" + ID;
    private static final String REMOTE = "spxvb" + ID;

    private static Thread cleanupHook;
    private static Eal eal;
    private static Mempool pool;
    private static EthPort ethPort;
    private static DpdkPacketPort port;

    @BeforeAll
    static void start()
    {
        DpdkTestSupport.assumeRoot("net_af_xdp over veth in a network namespace");
        cleanupHook = new Thread(DpdkAfXdpVethTest::removeNetwork, "veth-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanupHook); // also when the JVM is killed by a timeout
        removeNetwork();
        run("ip", "netns", "add", NETNS);
        run("ip", "link", "add", LOCAL, "type", "veth", "peer", "name", REMOTE, "netns", NETNS);
        run(false, "sysctl", "-qw", "net.ipv6.conf." + LOCAL + ".disable_ipv6=1");
        run("ip", "netns", "exec", NETNS, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1");
        run("ip", "link", "set", LOCAL, "up");
        run("ip", "netns", "exec", NETNS, "ip", "link", "set", REMOTE, "up");

        eal = DpdkTestSupport.initEal("afxdp");
        eal.registerCurrentThread();
        pool = DpdkTestSupport.createPool("afxdp");
        eal.createVdev("net_af_xdp0", "iface=" + LOCAL + ",start_queue=0,queue_count=1");
        ethPort = EthPort.byName("net_af_xdp0");
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
                eal.removeVdev("net_af_xdp0");
            }
            if (null != eal)
            {
                pool.close();
                eal.close();
            }
        }
        finally
        {
            removeNetwork();
            if (null != cleanupHook)
            {
                Runtime.getRuntime().removeShutdownHook(cleanupHook);
            }
        }
    }

    private static void removeNetwork()
    {
        run(false, "ip", "link", "del", LOCAL);
        run(false, "ip", "netns", "del", NETNS);
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
