package io.spraynic.datapath.port;

import io.spraynic.dpdk.Eal;
import io.spraynic.dpdk.Mempool;
import io.spraynic.dpdk.PortStats;
import io.spraynic.dpdk.RingPortPair;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.ConcurrentCountersManager;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;

import static io.spraynic.datapath.port.DpdkTestSupport.fill;
import static io.spraynic.datapath.port.DpdkTestSupport.receive;
import static io.spraynic.datapath.port.DpdkTestSupport.sequenceList;
import static io.spraynic.datapath.port.DpdkTestSupport.toList;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Bursts over a crossed pair of DPDK {@code net_ring} ports ({@code rte_eth_from_rings}).
 */
class DpdkRingPairTest
{
    private static Eal eal;
    private static Mempool pool;
    private static RingPortPair pair;
    private static DpdkPacketPort a;
    private static DpdkPacketPort b;

    @BeforeAll
    static void start()
    {
        eal = DpdkTestSupport.initEal("ringpair");
        eal.registerCurrentThread();
        pool = DpdkTestSupport.createPool("ringpair");
        pair = RingPortPair.create("t", 1, 1024);
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

    @ParameterizedTest
    @ValueSource(ints = {60, 64, 512, 1514, 2048})
    void shouldDeliverBurstIntactBothWays(final int length)
    {
        final PacketBurst tx = a.newBurst(32);
        fill(a, tx, 32, length, 5000);
        assertEquals(32, a.transmit(tx));
        assertEquals(sequenceList(5000, 32), toList(receive(b, 32, 5000)));

        fill(b, tx, 32, length, 9000);
        assertEquals(32, b.transmit(tx));
        assertEquals(sequenceList(9000, 32), toList(receive(a, 32, 5000)));
        tx.close();
    }

    @Test
    void shouldReturnEveryMbufToThePool()
    {
        final int before = pool.availableCount();
        final PacketBurst tx = a.newBurst(32);
        for (int round = 0; round < 100; round++)
        {
            fill(a, tx, 32, 64, round * 32L);
            assertEquals(32, a.transmit(tx));
            assertEquals(32, receive(b, 32, 5000).length);
        }
        tx.close();
        assertEquals(before, pool.availableCount());
    }

    @Test
    void shouldGiveBackOnlyTheLastPacketOfABurst()
    {
        final int before = pool.availableCount();
        final PacketBurst tx = a.newBurst(8);
        fill(a, tx, 3, 64, 7000);
        a.releaseLast(tx); // a buffer claimed for a frame that was never written
        assertEquals(2, tx.size());
        assertEquals(2, a.transmit(tx));
        assertEquals(sequenceList(7000, 2), toList(receive(b, 2, 5000)));
        tx.close();
        assertEquals(before, pool.availableCount());
    }

    @Test
    void shouldClaimASinksBuffersInBulkAndGiveEveryOneBackAtClose()
    {
        final int before = pool.availableCount();
        final PortFrameSink sink = new PortFrameSink(a, 8, 2048);
        sink.onStart();
        long sequence = 0;
        for (int round = 0; round < 60; round++)
        {
            final long first = sequence;
            final int frames = 1 + round % 11; // over 8: the sink transmits a full burst within the claims
            for (int i = 0; i < frames; i++)
            {
                assertTrue(sink.claim(0, 64));
                RawFrames.write(sink.buffer(), sink.offset(), 64, sequence++);
                sink.commit(64);
                if (0 == round && 0 == i)
                {
                    assertEquals(8, before - pool.availableCount(), "the first claim took the burst's room at once");
                }
                assertTrue(before - pool.availableCount() <= 8 + i, "the sink holds at most a burst, beyond what " +
                    "the ring holds: " + (before - pool.availableCount()));
            }
            sink.flush();
            assertEquals(sequenceList(first, frames), toList(receive(b, frames, 5000)), "round " + round);
            assertTrue(before - pool.availableCount() <= 8, "spare buffers only: " + (before - pool.availableCount()));
        }
        assertEquals(sequence, sink.transmitted());
        sink.close();
        assertEquals(before, pool.availableCount(), "close gives the spare buffers back");
    }

    @Test
    void shouldCommitEachFramesLengthToItsOwnMbufAcrossPlanesAndAbandonedClaims()
    {
        // the sink looks a claimed mbuf up once and keeps it for the frame's offset and commit: a claim abandoned on
        // plane 0 (its writer threw), a frame on plane 1, then plane 0's claim again (the same mbuf) must each
        // commit their own length into their own mbuf
        final int before = pool.availableCount();
        final PortFrameSink sink = new PortFrameSink(new PacketPort[]{a, b}, 8, 2048);
        sink.onStart();
        final java.util.List<Long> toA = new java.util.ArrayList<>();
        final java.util.List<Long> toB = new java.util.ArrayList<>();
        long sequence = 1_000;
        for (int round = 0; round < 40; round++)
        {
            assertTrue(sink.claim(0, 64));
            final int length1 = RawFrames.MIN_LENGTH + (round * 97) % 1_900;
            assertTrue(sink.claim(1, length1));
            RawFrames.write(sink.buffer(), sink.offset(), length1, sequence);
            sink.commit(length1);
            toA.add(sequence++); // b's TX arrives at a
            final int length0 = RawFrames.MIN_LENGTH + (round * 131) % 1_900;
            assertTrue(sink.claim(0, length0));
            RawFrames.write(sink.buffer(), sink.offset(), length0, sequence);
            sink.commit(length0);
            toB.add(sequence++);
        }
        sink.flush();
        assertEquals(toB, toList(receive(b, 40, 5000)), "plane 0's frames, each intact at its own length");
        assertEquals(toA, toList(receive(a, 40, 5000)), "plane 1's frames");
        sink.close();
        assertEquals(before, pool.availableCount());
    }

    @Test
    void shouldCountInPortStats()
    {
        pair.first().resetStats();
        pair.second().resetStats();
        final PacketBurst tx = a.newBurst(16);
        fill(a, tx, 16, 100, 1);
        assertEquals(16, a.transmit(tx));
        assertEquals(16, receive(b, 16, 5000).length);
        tx.close();

        final PortStats sent = pair.first().stats();
        final PortStats got = pair.second().stats();
        assertEquals(16, sent.txPackets());
        // net_ring counts packets only; byte counters stay 0 on this PMD.
        assertEquals(16, got.rxPackets());
        assertTrue(pair.first().link().up());
        assertEquals("net_ring_ta", pair.first().name());
    }

    @Test
    void shouldForwardThroughPollAgentOnItsOwnLcore() throws Exception
    {
        // b echoes everything back to a, on an Agrona AgentRunner thread registered as an lcore.
        final ConcurrentCountersManager counters = new ConcurrentCountersManager(
            new UnsafeBuffer(ByteBuffer.allocateDirect(64 * 1024)), new UnsafeBuffer(ByteBuffer.allocateDirect(8 * 1024)));
        final AtomicCounter echoed = counters.newCounter("echoed");
        final PortPollAgent echo = new PortPollAgent("echo", b, 32, (port, burst) ->
        {
            final int n = burst.size();
            while (burst.size() > 0)
            {
                port.transmit(burst);
            }
            return n;
        }, echoed);
        final AgentRunner runner = new AgentRunner(new BusySpinIdleStrategy(), Throwable::printStackTrace, null, echo);
        AgentRunner.startOnThread(runner);
        try
        {
            final PacketBurst tx = a.newBurst(32);
            for (int round = 0; round < 50; round++)
            {
                fill(a, tx, 32, 256, round * 32L);
                while (tx.size() > 0)
                {
                    a.transmit(tx);
                }
                assertEquals(sequenceList(round * 32L, 32), toList(receive(a, 32, 5000)));
            }
            tx.close();
        }
        finally
        {
            runner.close();
        }
        assertEquals(50 * 32, echoed.get());
    }
}
