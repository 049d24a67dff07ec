package io.spraynic.datapath.nic;

import io.spraynic.datapath.capture.CaptureFilter;
import io.spraynic.datapath.capture.CaptureRingLayout;
import io.spraynic.datapath.capture.CaptureRingReader;
import io.spraynic.datapath.capture.MbufReferenceRing;
import io.spraynic.datapath.capture.TappingPacketPort;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.pmd.EalConfig;
import io.spraynic.pmd.MempoolConfig;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PortConfig;
import org.agrona.concurrent.status.AtomicCounter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A live capture by reference on real DPDK mbufs ({@code net_ring}: what a0 transmits, b0 receives): the tap takes a
 * second reference on each received mbuf, the copier copies the frame into the client's ring and frees the reference.
 * What must hold: the frames arrive byte-identical, every mbuf goes back to the pool once the capture stops (or the NIC
 * closes while it runs), and a copier or client that falls behind makes the worker drop (counted) rather than hold
 * more than the capture's share of the pool. One EAL per JVM: one DPDK for the class.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CaptureByReferenceTest
{
    private static final int POOL = 8191;
    private static DpdkNic dpdk;

    @TempDir
    Path dir;

    @BeforeAll
    static void start()
    {
        System.setProperty(CaptureControl.BY_REFERENCE_PROPERTY, "true"); // the NIC close test's capture (own JVM)
        dpdk = DpdkNic.start(NicConfig.of(EalConfig.DEFAULT.withFilePrefix("spraynic-capture-ref-" +
            ProcessHandle.current().pid()).withLogLevels(List.of("lib.eal:warning")), MempoolConfig.DEFAULT.withMbufs(POOL),
            List.of(PortConfig.ringPair("a0", "b0").withDescriptors(1024, 1024),
                PortConfig.ringPair("b0", "a0").withDescriptors(1024, 1024))));
    }

    @AfterAll
    static void stop()
    {
        System.clearProperty(CaptureControl.BY_REFERENCE_PROPERTY);
        dpdk.close();
    }

    /** The tap and its counters, as a worker has them; the test thread plays the worker. */
    private static final class Rig implements AutoCloseable
    {
        final CountersFile counters;
        final AtomicCounter[] tapCounters;
        final CaptureTap tap;
        final PacketPort sender;
        final PacketPort receiver;
        final PacketBurst out;
        final PacketBurst in;
        final List<byte[]> sent = new ArrayList<>();

        Rig(final Path dir) throws Exception
        {
            counters = CountersFile.create(dir, "capture-ref", 64);
            tapCounters = new AtomicCounter[]{counters.newCounter("captured"),
                counters.newCounter("dropped"), counters.newCounter("filtered"),
                counters.newCounter("faults"), counters.newCounter("sampled out")};
            tap = new CaptureTap(0, tapCounters[0], tapCounters[1], tapCounters[2], tapCounters[3], tapCounters[4]);
            sender = dpdk.packetPort("a0", 0);
            receiver = tap.tap(dpdk.packetPort("b0", 0), 0, 0);
            out = sender.newBurst(32);
            in = receiver.newBurst(32);
        }

        /** Sends {@code count} frames of distinct bytes from a0 and receives them on the tapped b0 (as a worker). */
        int sendAndReceive(final int count)
        {
            assertTrue(sender.allocate(out, count), "the pool supplies the frames");
            for (int i = 0; i < count; i++)
            {
                final int length = 60 + (sent.size() * 37) % 400;
                final byte[] frame = new byte[length];
                for (int b = 0; b < length; b++)
                {
                    frame[b] = (byte)(sent.size() * 31 + b * 7);
                }
                MemorySegment.copy(frame, 0, out.memory(), ValueLayout.JAVA_BYTE, out.offset(i), length);
                out.length(i, length);
                sent.add(frame);
            }
            assertEquals(count, sender.transmit(out));
            int received = 0;
            for (int tries = 0; received < count && tries < 1000; tries++)
            {
                received += receiver.receive(in);
                receiver.release(in); // the worker frees its reference right after dispatch, as NicWorker.receive
            }
            assertEquals(count, received);
            return received;
        }

        public void close()
        {
            out.close();
            in.close();
            counters.close();
        }
    }

    private static List<byte[]> drain(final CaptureRingReader reader)
    {
        final List<byte[]> frames = new ArrayList<>();
        reader.poll((plane, queue, direction, timestamp, memory, offset, captured, original) ->
        {
            assertEquals(TappingPacketPort.RX, direction);
            assertEquals(Math.min(original, reader.layout().snapLength()), captured);
            frames.add(memory.asSlice(offset, captured).toArray(ValueLayout.JAVA_BYTE));
        }, 1 << 20);
        return frames;
    }

    @Test
    void shouldCaptureFramesByteIdenticalAndReturnEveryMbufToThePool() throws Exception
    {
        final int inUse = dpdk.pool().inUseCount();
        final CaptureRingLayout layout = CaptureRingLayout.of(1, 1024, 512);
        try (Rig rig = new Rig(dir); Arena arena = Arena.ofShared())
        {
            assertTrue(rig.tap.capturesByReference());
            final MemorySegment memory = arena.allocate(layout.fileLength(), 4096);
            layout.writeHeader(memory, 1, 1, new String[]{"b0"}, "", 0, 0);
            final MbufReferenceRing ring = new MbufReferenceRing(256);
            final long startNanos = System.nanoTime();
            final CaptureCopier copier = new CaptureCopier(new MbufReferenceRing[]{ring}, memory, layout,
                CaptureFilter.ALL, new AtomicCounter[][]{rig.tapCounters}, startNanos);
            copier.start();
            rig.tap.startByReference(ring, startNanos, CaptureFilter.ALL, 1);
            final CaptureRingReader reader = new CaptureRingReader(memory);
            final List<byte[]> captured = new ArrayList<>();
            for (int round = 0; round < 40; round++)
            {
                rig.sendAndReceive(25);
                // the copier's pace is the scheduler's on a shared host: wait for it, so that no frame finds the ring full
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (rig.tapCounters[0].get() < rig.sent.size() && System.nanoTime() < deadline)
                {
                    Thread.onSpinWait();
                }
                captured.addAll(drain(reader));
            }
            rig.tap.stop();
            copier.stop(5_000);
            captured.addAll(drain(reader));
            assertEquals(inUse, dpdk.pool().inUseCount(), "every reference the capture took is freed");
            assertEquals(rig.sent.size(), captured.size(), "a copier that keeps up takes every frame");
            for (int i = 0; i < captured.size(); i++)
            {
                assertArrayEquals(rig.sent.get(i), captured.get(i), "frame " + i);
            }
            assertEquals(1000, rig.tapCounters[0].get());
            assertEquals(0, rig.tapCounters[1].get());
            assertEquals(1000, reader.captured(0));
        }
    }

    @Test
    void shouldSampleOneFrameInNInTheCopierAndStillFreeEveryReference() throws Exception
    {
        final int inUse = dpdk.pool().inUseCount();
        final CaptureRingLayout layout = CaptureRingLayout.of(1, 1024, 512, 3);
        try (Rig rig = new Rig(dir); Arena arena = Arena.ofShared())
        {
            final MemorySegment memory = arena.allocate(layout.fileLength(), 4096);
            layout.writeHeader(memory, 1, 1, new String[]{"b0"}, "", 0, 0);
            final MbufReferenceRing ring = new MbufReferenceRing(256);
            final long startNanos = System.nanoTime();
            final CaptureCopier copier = new CaptureCopier(new MbufReferenceRing[]{ring}, memory, layout,
                CaptureFilter.ALL, new AtomicCounter[][]{rig.tapCounters}, startNanos);
            copier.start();
            rig.tap.startByReference(ring, startNanos, CaptureFilter.ALL, 1);
            final CaptureRingReader reader = new CaptureRingReader(memory);
            final List<byte[]> captured = new ArrayList<>();
            for (int round = 0; round < 40; round++)
            {
                rig.sendAndReceive(25);
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (rig.tapCounters[0].get() + rig.tapCounters[4].get() < rig.sent.size() &&
                    System.nanoTime() < deadline)
                {
                    Thread.onSpinWait();
                }
                captured.addAll(drain(reader));
            }
            rig.tap.stop();
            copier.stop(5_000);
            captured.addAll(drain(reader));
            assertEquals(inUse, dpdk.pool().inUseCount(), "every reference the capture took is freed, sampled or not");
            assertEquals(334, captured.size(), "frames 0, 3, 6... 999");
            for (int i = 0; i < captured.size(); i++)
            {
                assertArrayEquals(rig.sent.get(3 * i), captured.get(i), "frame " + 3 * i);
            }
            assertEquals(334, rig.tapCounters[0].get());
            assertEquals(666, rig.tapCounters[4].get(), "the copier counts the frames it passed over");
            assertEquals(666, reader.sampledOut(0));
        }
    }

    @Test
    void shouldDropAndCountWhenTheCopierFallsBehindHoldingNoMoreThanItsShareOfThePool() throws Exception
    {
        final int inUse = dpdk.pool().inUseCount();
        final CaptureRingLayout layout = CaptureRingLayout.of(1, 1024, 512);
        final int capacity = MbufReferenceRing.capacityFor(POOL, 1);
        assertEquals(1024, capacity, "a quarter of the pool, to a power of two below");
        final int frames = 4 * capacity;
        try (Rig rig = new Rig(dir); Arena arena = Arena.ofShared())
        {
            final MemorySegment memory = arena.allocate(layout.fileLength(), 4096);
            layout.writeHeader(memory, 1, 1, new String[]{"b0"}, "", 0, 0);
            final MbufReferenceRing ring = new MbufReferenceRing(capacity);
            final long startNanos = System.nanoTime();
            // the copier is not running yet: it has fallen as far behind as a copier can
            final CaptureCopier copier = new CaptureCopier(new MbufReferenceRing[]{ring}, memory, layout,
                CaptureFilter.ALL, new AtomicCounter[][]{rig.tapCounters}, startNanos);
            rig.tap.startByReference(ring, startNanos, CaptureFilter.ALL, 1);
            for (int round = 0; round < frames / 32; round++) // four times the ring
            {
                rig.sendAndReceive(32);
                assertTrue(dpdk.pool().inUseCount() - inUse <= capacity, "the capture holds at most its share: " +
                    (dpdk.pool().inUseCount() - inUse));
            }
            assertEquals(capacity, dpdk.pool().inUseCount() - inUse, "the references in flight: the ring, full");
            rig.tap.stop();
            assertEquals(frames - capacity, ring.droppedSoFar(), "the worker dropped what did not fit, and counted it");
            copier.start();
            copier.stop(5_000);
            assertEquals(inUse, dpdk.pool().inUseCount(), "every reference freed once the capture stops");
            final CaptureRingReader reader = new CaptureRingReader(memory);
            assertEquals(capacity, drain(reader).size());
            assertEquals(capacity, reader.captured(0));
            assertEquals(frames - capacity, reader.dropped(0));
            assertEquals(frames - capacity, reader.dropped(0, 0, TappingPacketPort.RX), "by port and direction too");
            assertEquals(capacity, rig.tapCounters[0].get());
            assertEquals(frames - capacity, rig.tapCounters[1].get());
        }
    }

    @Test
    void shouldFreeEveryReferenceWhenTheClientNeverDrainsItsRing() throws Exception
    {
        final int inUse = dpdk.pool().inUseCount();
        final CaptureRingLayout layout = CaptureRingLayout.of(1, CaptureRingLayout.MIN_SLOTS, 64); // a small ring
        try (Rig rig = new Rig(dir); Arena arena = Arena.ofShared())
        {
            final MemorySegment memory = arena.allocate(layout.fileLength(), 4096);
            layout.writeHeader(memory, 1, 1, new String[]{"b0"}, "", 0, 0);
            final MbufReferenceRing ring = new MbufReferenceRing(64);
            final long startNanos = System.nanoTime();
            final CaptureCopier copier = new CaptureCopier(new MbufReferenceRing[]{ring}, memory, layout,
                CaptureFilter.ALL, new AtomicCounter[][]{rig.tapCounters}, startNanos);
            copier.start();
            rig.tap.startByReference(ring, startNanos, CaptureFilter.ALL, 1);
            for (int round = 0; round < 50; round++)
            {
                rig.sendAndReceive(20);
                assertTrue(dpdk.pool().inUseCount() - inUse <= 64);
            }
            rig.tap.stop();
            copier.stop(5_000);
            assertEquals(inUse, dpdk.pool().inUseCount(), "a client that takes nothing holds no mbuf");
            final CaptureRingReader reader = new CaptureRingReader(memory);
            final long captured = reader.captured(0);
            assertTrue(captured > 0 && captured < 1000, "the client's ring filled once: " + captured);
            assertEquals(1000, captured + reader.dropped(0), "every frame either captured or counted dropped");
            assertEquals(1000, rig.tapCounters[0].get() + rig.tapCounters[1].get());
            assertEquals(captured, drain(reader).size());
        }
    }

    @Test
    void shouldReturnEveryMbufWhenTheNicClosesWhileItCapturesByReference() throws Exception
    {
        final int inUse = dpdk.pool().inUseCount();
        final CaptureRingLayout layout = CaptureRingLayout.of(1, 1024, 256);
        try (CountersFile counters = CountersFile.create(dir, "capture-close", 4096); Arena arena = Arena.ofShared())
        {
            final EmbeddedNicConfig config = new EmbeddedNicConfig().workers(1).planes(1).local(0, 0x0A00_0001, 0x02_00_00_00_00_01L);
            final EmbeddedNic nic = EmbeddedNic.start(config, new PacketPort[][]{{dpdk.packetPort("b0", 0)}}, counters);
            final PacketPort sender = dpdk.packetPort("a0", 0);
            final MemorySegment memory = arena.allocate(layout.fileLength(), 4096);
            layout.writeHeader(memory, 1, 1, new String[]{"b0"}, "", 0, 0);
            boolean closed = false;
            try (PacketBurst out = sender.newBurst(32))
            {
                nic.startCapture(memory, layout, CaptureFilter.ALL); // never drained: the ring fills, the copier drops
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (captured(counters) < 2000 && System.nanoTime() < deadline)
                {
                    if (sender.allocate(out, 32))
                    {
                        for (int i = 0; i < 32; i++)
                        {
                            out.memory().asSlice(out.offset(i), 64).fill((byte)i);
                            out.length(i, 64);
                        }
                        sender.transmit(out);
                        sender.release(out); // what the ring did not take
                    }
                }
                assertTrue(captured(counters) >= 2000, "the worker captured: " + captured(counters));
                assertTrue(Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().equals(
                    "spraynic-capture-copier")), "by reference: the copier runs");
                nic.close(Duration.ofSeconds(1));
                closed = true;
            }
            finally
            {
                if (!closed)
                {
                    nic.close(Duration.ofSeconds(1));
                }
            }
            assertTrue(new CaptureRingReader(memory).ended(), "the close ended the capture");
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (dpdk.pool().inUseCount() != inUse && System.nanoTime() < deadline)
            {
                // frames a0 sent that b0's worker never received, and what the NIC sent on b0 (its neighbour
                // announcements), wait in the ring pair's queues: take them out
                for (final String name : new String[]{"b0", "a0"})
                {
                    final PacketPort receiver = dpdk.packetPort(name, 0);
                    try (PacketBurst in = receiver.newBurst(32))
                    {
                        receiver.receive(in);
                        receiver.release(in);
                    }
                }
            }
            assertEquals(inUse, dpdk.pool().inUseCount(), "no mbuf outlives the NIC's capture");
        }
    }

    private static long captured(final CountersFile counters)
    {
        final long[] sum = new long[1];
        counters.counters().forEach((value, id, label) ->
        {
            if (label.endsWith(": capture frames"))
            {
                sum[0] += value;
            }
        });
        return sum[0];
    }
}
