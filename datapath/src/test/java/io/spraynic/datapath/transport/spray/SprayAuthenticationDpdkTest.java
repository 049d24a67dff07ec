package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.port.DpdkPacketPort;
import io.spraynic.datapath.port.DpdkTestSupport;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.dpdk.Eal;
import io.spraynic.dpdk.Mempool;
import io.spraynic.dpdk.RingPortPair;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;


import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The attacks of {@link SprayAuthenticationTest} over a crossed pair of real DPDK {@code net_ring} ports: the
 * hostile frames are put into A's (or B's) TX ring beside the genuine ones, in mbufs of DPDK's pool, and reach the
 * other engine through its RX burst and the parser, as from a wire. One plane, MTU 1024 (2 KiB mbufs). EAL starts
 * once in this class's JVM.
 */
@Timeout(120)
class SprayAuthenticationDpdkTest
{
    private static Eal eal;
    private static Mempool pool;
    private static RingPortPair pair;
    private static DpdkPacketPort a;
    private static DpdkPacketPort b;

    @BeforeAll
    static void start()
    {
        eal = DpdkTestSupport.initEal("spray-auth");
        eal.registerCurrentThread();
        pool = Mempool.createPacketPool("sprayauth", 16383, 256, 2048 + 128, -1);
        pair = RingPortPair.create("sprayauth", 1, 1024);
        a = DpdkTestSupport.startSingleQueue(pair.first(), pool);
        b = DpdkTestSupport.startSingleQueue(pair.second(), pool);
    }

    @AfterAll
    static void stop()
    {
        pair.close();
        pool.close();
        eal.close();
    }

    @AfterEach
    void drainAndCount()
    {
        eal.registerCurrentThread(); // the agents' close gave the lcore back
        drain(a);
        drain(b);
        assertEquals(pool.size(), pool.availableCount(), "mbufs leaked");
    }

    private static void drain(final PacketPort port)
    {
        final PacketBurst burst = port.newBurst(32);
        while (port.receive(burst) > 0)
        {
            port.release(burst);
        }
        burst.close();
    }

    private static SprayTestBed.Options options()
    {
        final SprayTestBed.Options options = new SprayTestBed.Options().planes(1).mtu(1024)
            .wrapA((plane, port) -> a).wrapB((plane, port) -> b);
        options.injectTowardsB = new PacketPort[] {a};
        options.injectTowardsA = new PacketPort[] {b};
        return options;
    }

    @Test
    void shouldRefuseForgedCloseProbeAndMessageStartsOverNetRingS123S124S125S126S127()
    {
        SprayAuthenticationTest.receiverSideForgeries(options(), (plane, port) -> a);
    }

    @Test
    void shouldIgnoreForgedNacksAndAcksAndReplayedAcksOverNetRingS123S128()
    {
        SprayAuthenticationTest.senderSideForgeries(options(), (plane, port) -> b);
    }
}
