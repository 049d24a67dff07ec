package io.spraynic.datapath.fabric;

import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.FrameClass;
import io.spraynic.datapath.wire.Ipv4Header;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceParser;
import org.agrona.collections.IntArrayList;
import org.agrona.collections.LongArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LinkTest
{
    private static final int SOURCE = 0x0A00_0001;
    private static final int DESTINATION = 0x0A00_0102;

    private final Simulator simulator = new Simulator();
    private final FramePool pool = new FramePool(4096, 4352);
    private final TestFrames frames = new TestFrames();
    private final RoceParser parser = new RoceParser(new ParseCounters());
    private final RoceFrame parsed = new RoceFrame();
    private final LongArrayList arrivalTimes = new LongArrayList();
    private final IntArrayList arrivalSequences = new IntArrayList();
    private final IntArrayList arrivalEcns = new IntArrayList();
    private int invalidArrivals;

    private final FrameSink sink = (nowNs, inputPort, slot) ->
    {
        arrivalTimes.addLong(nowNs);
        arrivalSequences.addInt(TestFrames.sequence(pool.memory(), pool.offset(slot)));
        arrivalEcns.addInt(TestFrames.ecn(pool.memory(), pool.offset(slot)));
        if (parser.parse(pool.memory(), pool.offset(slot), pool.length(slot), parsed) != FrameClass.ROCE ||
            !parsed.icrcValid() || (parsed.ipVersion() == 4 &&
            !Ipv4Header.isChecksumValid(pool.memory(), parsed.ipOffset(), parsed.ipHeaderLength())))
        {
            invalidArrivals++;
        }
        pool.free(slot);
    };

    @AfterEach
    void close()
    {
        pool.close();
    }

    private Link link(final LinkConfig config, final long seed)
    {
        final Link link = new Link(0, "test", 0, config, simulator, pool, seed);
        link.connect(sink, 0);
        return link;
    }

    /**
     * Writes an IPv4 frame of exactly {@code frameLength} bytes into a slot: the largest RoCEv2 packet that
     * fits, then Ethernet padding (the IP length bounds the packet, so the padding is ignored).
     */
    private int frame(final int sequence, final int frameLength, final int ecn)
    {
        final int payload = (frameLength - TestFrames.IPV4_PAYLOAD_OFFSET - 4) & ~3;
        final int length = frames.ipv4(SOURCE, DESTINATION, 0xC000, ecn, 1, sequence, payload);
        frames.buffer().asSlice(length, frameLength - length).fill((byte)0);
        return pool.copyIn(frames.buffer(), 0, frameLength);
    }

    @Test
    void shouldDeliverAfterSerialisationPlusPropagationExactToTheNanosecond()
    {
        // 1000 B + 24 B overhead = 8192 bits: 81.92 ns at 100 Gb/s; then 1 µs of propagation
        final Link link = link(LinkConfig.DATA_CENTRE, 1);
        link.offer(0, frame(0, 1000, 0));
        link.offer(0, frame(1, 1000, 0));
        link.offer(0, frame(2, 1000, 0));
        simulator.runUntilIdle();

        // departures at 81.92, 163.84, 245.76 ns: kept in picoseconds, rounded up only for events
        assertEquals(1082, arrivalTimes.getLong(0));
        assertEquals(1164, arrivalTimes.getLong(1));
        assertEquals(1246, arrivalTimes.getLong(2));
        assertEquals(3, link.framesSent());
        assertEquals(3000, link.bytesSent());
        assertEquals(3, link.framesDelivered());
        assertEquals(0, link.queueBytes());
        assertEquals(3000, link.peakQueueBytes());
    }

    @Test
    void shouldStartAnIdleLinkAtTheOfferTime()
    {
        // 10 Gb/s without wire overhead: 1500 B take exactly 1200 ns; 500 ns of propagation
        final Link link = link(LinkConfig.DATA_CENTRE.withRate(10_000_000_000L).withWireOverhead(0)
            .withPropagationDelay(500), 1);
        link.offer(0, frame(0, 1500, 0));
        simulator.runUntil(10_000);
        link.offer(10_000, frame(1, 1500, 0));
        simulator.runUntil(10_600);
        link.offer(10_600, frame(2, 1500, 0));
        simulator.runUntilIdle();

        assertEquals(1700, arrivalTimes.getLong(0));
        assertEquals(11_700, arrivalTimes.getLong(1));
        assertEquals(12_900, arrivalTimes.getLong(2), "waits for the frame still serialising");
    }

    @Test
    void shouldKeepFramesInOrder()
    {
        final Link link = link(LinkConfig.DATA_CENTRE, 1);
        long offerTime = 0;
        for (int i = 0; i < 300; i++)
        {
            simulator.runUntil(offerTime);
            link.offer(offerTime, frame(i, 64 + 4 * (i * 37 % 300), 0));
            offerTime += i % 3 == 0 ? 0 : 20;
        }
        simulator.runUntilIdle();

        assertEquals(300, arrivalSequences.size());
        for (int i = 0; i < 300; i++)
        {
            assertEquals(i, arrivalSequences.getInt(i));
            if (i > 0)
            {
                assertTrue(arrivalTimes.getLong(i) > arrivalTimes.getLong(i - 1), "serialisation spaces frames");
            }
        }
        assertEquals(0, invalidArrivals);
    }

    @Test
    void shouldTailDropWhatDoesNotFitTheQueue()
    {
        final Link link = link(LinkConfig.DATA_CENTRE.withQueue(10_000, 10_000), 1);
        for (int i = 0; i < 20; i++)
        {
            final boolean queued = link.offer(0, frame(i, 1000, 0));
            assertEquals(i < 10, queued, "frame " + i);
        }
        assertEquals(10_000, link.queueBytes());
        assertEquals(10, link.queueFrames());
        assertEquals(10, link.tailDrops());
        assertEquals(10_000, link.peakQueueBytes());
        assertEquals(4096 - 10, pool.available(), "dropped frames go back to the pool");

        simulator.runUntilIdle();
        assertEquals(10, link.framesSent());
        assertEquals(10, arrivalSequences.size());
        assertEquals(9, arrivalSequences.getInt(9));
        assertEquals(4096, pool.available());
    }

    @Test
    void shouldMarkOnlyEcnCapableFramesFindingMoreThanTheThresholdAhead()
    {
        final Link link = link(LinkConfig.DATA_CENTRE.withQueue(100_000, 3_000), 1);
        // frame i finds i * 1000 B ahead of it: marked when that exceeds 3000 B, i.e. from frame 4
        final int[] ecnOf = {2, 1, 2, 1, 2, 1, 0, 2, 3, 0};
        for (int i = 0; i < ecnOf.length; i++)
        {
            link.offer(0, frame(i, 1000, ecnOf[i]));
        }
        simulator.runUntilIdle();

        final int[] expected = {2, 1, 2, 1, 3, 3, 0, 3, 3, 0};
        for (int i = 0; i < expected.length; i++)
        {
            assertEquals(expected[i], arrivalEcns.getInt(i), "ECN of frame " + i);
        }
        assertEquals(3, link.ecnMarked(), "not-ECT and already-CE frames are not marked");
        assertEquals(0, invalidArrivals, "IPv4 checksum and ICRC still valid after marking");
    }

    @Test
    void shouldMarkIpv6TrafficClassWithValidIcrc()
    {
        final Link link = link(LinkConfig.DATA_CENTRE.withQueue(100_000, 0), 1);
        for (int i = 0; i < 3; i++)
        {
            final int length = frames.ipv6(SOURCE, DESTINATION, 0xC000, 1, 1, i, 512);
            link.offer(0, pool.copyIn(frames.buffer(), 0, length));
        }
        simulator.runUntilIdle();

        assertEquals(1, arrivalEcns.getInt(0), "the first finds an empty queue");
        assertEquals(3, arrivalEcns.getInt(1));
        assertEquals(3, arrivalEcns.getInt(2));
        assertEquals(2, link.ecnMarked());
        assertEquals(0, invalidArrivals);
    }

    @ParameterizedTest
    @ValueSource(doubles = {0.01, 0.1, 0.2})
    void shouldLoseFramesAtTheConfiguredRateReproduciblyForASeed(final double probability)
    {
        final int offered = 40_000;
        final IntArrayList firstRun = lostSequences(probability, 7, offered);
        final IntArrayList secondRun = lostSequences(probability, 7, offered);
        final IntArrayList otherSeed = lostSequences(probability, 8, offered);

        assertEquals(firstRun, secondRun, "same seed, same losses");
        assertNotEquals(firstRun, otherSeed);
        final double expected = offered * probability;
        final double sigma = Math.sqrt(offered * probability * (1 - probability));
        assertTrue(Math.abs(firstRun.size() - expected) < 5 * sigma,
            "lost " + firstRun.size() + " of " + offered + ", expected " + expected + " +- 5 sigma " + 5 * sigma);
    }

    private IntArrayList lostSequences(final double probability, final long seed, final int offered)
    {
        arrivalSequences.clear();
        final Link link = new Link(0, "lossy", 0, LinkConfig.DATA_CENTRE.withLoss(probability), simulator, pool, seed);
        link.connect(sink, 0);
        final int length = frames.ipv4(SOURCE, DESTINATION, 0xC000, 0, 1, 0, 64);
        long time = simulator.now();
        for (int i = 0; i < offered; i++)
        {
            final int slot = pool.copyIn(frames.buffer(), 0, length);
            BaseTransportHeader.psn(pool.memory(),
                TestFrames.bthOffset(pool.memory(), pool.offset(slot)), i);
            link.offer(time, slot);
            time += 20;
            simulator.runUntil(time);
        }
        simulator.runUntilIdle();
        final IntArrayList lost = new IntArrayList();
        int next = 0;
        for (int i = 0; i < arrivalSequences.size(); i++)
        {
            final int sequence = arrivalSequences.getInt(i);
            while (next < sequence)
            {
                lost.addInt(next++);
            }
            next = sequence + 1;
        }
        while (next < offered)
        {
            lost.addInt(next++);
        }
        assertEquals(lost.size(), link.randomLossDrops());
        assertEquals(offered - lost.size(), link.framesSent());
        return lost;
    }

    @Test
    void shouldBlackholeEverythingFromTheMomentItStartsUntilRestored()
    {
        final Link link = link(LinkConfig.DATA_CENTRE.withRate(1_000_000_000L), 1);
        // 1 Gb/s: 1000 B + 24 B take 8192 ns each; three queued at 0 finish at 8192, 16384, 24576 ns
        link.offer(0, frame(0, 1000, 0));
        link.offer(0, frame(1, 1000, 0));
        link.offer(0, frame(2, 1000, 0));
        simulator.runUntil(10_000);
        link.blackhole(true);
        assertTrue(link.isUp(), "a blackhole is silent: the link stays up");
        assertFalse(link.offer(10_000, frame(3, 1000, 0)));
        simulator.runUntil(30_000);
        link.blackhole(false);
        assertTrue(link.offer(30_000, frame(4, 1000, 0)));
        simulator.runUntilIdle();

        assertEquals(2, arrivalSequences.size());
        assertEquals(0, arrivalSequences.getInt(0), "left before the blackhole");
        assertEquals(4, arrivalSequences.getInt(1), "sent after it ended");
        assertEquals(3, link.blackholeDrops(), "the two still queued and the one offered");
        assertEquals(4096, pool.available());
    }

    @Test
    void shouldDropEverythingWhileDown()
    {
        final Link link = link(LinkConfig.DATA_CENTRE, 1);
        link.down(true);
        assertFalse(link.isUp());
        assertFalse(link.offer(0, frame(0, 100, 0)));
        link.down(false);
        assertTrue(link.offer(0, frame(1, 100, 0)));
        simulator.runUntilIdle();

        assertEquals(1, link.linkDownDrops());
        assertEquals(1, arrivalSequences.size());
        assertEquals(1, link.drops());
    }

    @Test
    void shouldNotRecallFramesAlreadyOnTheWire()
    {
        final Link link = link(LinkConfig.DATA_CENTRE.withPropagationDelay(5_000), 1);
        link.offer(0, frame(0, 1000, 0));
        simulator.runUntil(100);
        link.down(true);
        simulator.runUntilIdle();

        assertEquals(1, arrivalSequences.size());
        assertEquals(5_082, arrivalTimes.getLong(0));
    }
}
