package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.api.SendRequest;
import io.spraynic.datapath.capture.CaptureFilter;
import io.spraynic.datapath.capture.CaptureRingLayout;
import io.spraynic.datapath.capture.CaptureRingReader;
import io.spraynic.datapath.capture.TappingPacketPort;
import io.spraynic.datapath.nic.NicConnection;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.datapath.wire.FrameClass;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceParser;
import io.spraynic.datapath.wire.SprayOpcodes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import static io.spraynic.datapath.nic.ipc.IpcTestBed.WAIT;
import static io.spraynic.datapath.nic.ipc.IpcTestBed.fill;
import static io.spraynic.datapath.nic.ipc.IpcTestBed.mismatch;
import static io.spraynic.datapath.nic.ipc.IpcTestBed.poll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Live capture through the IPC directory, as {@code spraynic capture} takes one: a client starts it, a spray transfer
 * runs through the served NIC, the client drains the workers' rings; and clients that play the attacker: requests out
 * of range, a second capture, a client that never drains, one that tampers with the capture memory, one that dies.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class IpcCaptureTest
{
    private static final ValueLayout.OfShort NETWORK_SHORT =
        ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN);

    private static final int ALL = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;

    @TempDir
    Path base;

    /** Connects the client to the peer and RDMA-WRITEs {@code bytes} in 64 KiB messages, checking every byte. */
    private static void transfer(final IpcTestBed bed, final NicClient client, final MemoryRegion peerRegion,
        final int bytes, final long seed) throws Exception
    {
        final ClientRegion region = client.register(bytes, ALL);
        final CompletableFuture<NicConnection> accepted = CompletableFuture.supplyAsync(() -> bed.peer.accept(WAIT));
        final ClientConnection c = client.connect(new int[]{IpcTestBed.ip(1)}, WAIT);
        assertNotNull(accepted.get(30, TimeUnit.SECONDS), "the peer accepted");
        fill(region.segment(), 0, bytes, seed);
        final SendRequest send = new SendRequest();
        final int messages = bytes / 65536;
        for (int i = 0; i < messages; i++)
        {
            send.reset().wrId(i).opcode(WorkRequestOpcode.RDMA_WRITE).local(region, region.address() + i * 65536L, 65536)
                .remote(peerRegion.address() + i * 65536L, peerRegion.rkey());
            while (c.postSend(i % c.streams(), send) == PostResult.QUEUE_FULL)
            {
                Thread.onSpinWait();
            }
        }
        for (int i = 0; i < messages; i++)
        {
            assertEquals(WorkCompletionStatus.SUCCESS, poll(c.sendCompletionQueue(), "write " + i).status());
        }
        assertEquals(-1, mismatch(peerRegion.segment(), 0, bytes, seed), "every byte arrived");
    }

    @Test
    void shouldCaptureEveryFrameOfAVerifiedTransferAsTheWorkersCountedThem() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.SPRAY, Duration.ofSeconds(5));
            Arena arena = Arena.ofShared();
            NicClient client = NicClient.connect(bed.dir, WAIT))
        {
            final MemoryRegion peerRegion = bed.peer.register(arena.allocate(1 << 20, 4096), ALL);
            final ClientCapture capture = client.startCapture(CaptureFilter.ALL, Duration.ofSeconds(60),
                CaptureRingLayout.DEFAULT_SNAP_LENGTH, 1 << 12);
            assertEquals(1L, bed.counter("ipc: captures started"));
            transfer(bed, client, peerRegion, 1 << 20, 5);
            capture.stop();
            assertTrue(capture.reader().ended(), "ended once STOP_CAPTURE was answered");
            final RoceParser parser = new RoceParser(SprayOpcodes.TABLE, new ParseCounters(), false);
            final RoceFrame frame = new RoceFrame();
            final long[] byDirection = new long[2];
            final long[] sprayWrites = new long[1];
            final long[] arpFrames = new long[1];
            final long[] totals = new long[1];
            int n;
            while ((n = capture.reader().poll((plane, queue, direction, timestamp, memory, offset, captured, original) ->
            {
                assertEquals(captured, original, "whole frames: the snap length is above the MTU");
                if (parser.parse(memory, offset, captured, frame) != FrameClass.ROCE)
                {
                    // besides RoCEv2 frames, only ARP: the NICs resolve each other's MACs as the connection starts
                    assertEquals(0x0806, Short.toUnsignedInt(memory.get(NETWORK_SHORT, offset + 12)), "an ARP frame");
                    arpFrames[0]++;
                    return;
                }
                byDirection[direction]++;
                sprayWrites[0] += frame.opcode() == SprayOpcodes.WRITE && direction == TappingPacketPort.TX ? 1 : 0;
                assertTrue(Math.abs(timestamp - System.currentTimeMillis() * 1_000_000L) < 60_000_000_000L);
            }, 4096)) > 0)
            {
                totals[0] += n;
            }
            assertEquals(bed.counter("worker 0: capture frames"), totals[0], "every frame the worker captured was read");
            assertEquals(totals[0], capture.reader().captured(0));
            assertEquals(0, bed.counter("worker 0: capture drops (ring full)"));
            assertEquals(0, capture.reader().dropped(0));
            assertTrue(sprayWrites[0] >= (1 << 20) / 4096, "the 1 MiB left as spray WRITEs: " + sprayWrites[0]);
            assertTrue(byDirection[TappingPacketPort.RX] > 0, "the peer's ACKs came back");
            assertTrue(arpFrames[0] < totals[0] / 10, "a few ARP frames, not a flood: " + arpFrames[0]);
            assertEquals(0, capture.reader().malformed());
            assertEquals(1L, bed.counter("ipc: captures ended"));
            capture.close();
        }
    }

    @Test
    void shouldEndACaptureAfterItsDurationAndTakeOnlyWhatTheFilterSays() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.SPRAY, Duration.ofSeconds(5));
            Arena arena = Arena.ofShared();
            NicClient client = NicClient.connect(bed.dir, WAIT))
        {
            final MemoryRegion peerRegion = bed.peer.register(arena.allocate(1 << 19, 4096), ALL);
            final ClientCapture capture = client.startCapture(CaptureFilter.parse("rx and udp dst port 53"),
                Duration.ofSeconds(3), 128, 64);
            transfer(bed, client, peerRegion, 1 << 19, 6);
            IpcTestBed.await(() -> capture.reader().ended(), WAIT, "the capture ended after 3 s");
            assertEquals(0, capture.reader().poll((plane, queue, direction, timestamp, memory, offset, captured,
                original) -> { }, 1024), "no frame of the transfer is DNS");
            assertEquals(0, capture.reader().captured(0));
            assertTrue(capture.reader().filtered(0) > 0, "the received frames were checked and turned away");
            assertEquals(capture.reader().filtered(0), bed.counter("worker 0: capture filtered out"));
            capture.stop(); // ended already: nothing to ask
            capture.close();
            // the NIC takes the next capture
            client.startCapture(CaptureFilter.ALL, Duration.ofSeconds(1), 128, 64).close();
        }
    }

    @Test
    void shouldRefuseCaptureRequestsOutOfRangeWithAReason() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.SPRAY, Duration.ofSeconds(5));
            NicClient client = NicClient.connect(bed.dir, WAIT))
        {
            // 64 records of the 128 B snap length (144 B each): 9,216 B a ring
            final Consumer<IpcMessages.StartCapture> good = c -> c.set(1000, 128, 3, -1L, -1L, 0, -1, 0, false, 1, 9216);
            refused(client, good.andThen(c -> c.set(0, 128, 3, -1L, -1L, 0, -1, 0, false, 1, 9216)), IpcMessages.ERR_BAD_VALUE,
                "a capture of 0 ms is not in 1..3600000");
            refused(client, good.andThen(c -> c.set(1000, 1 << 20, 3, -1L, -1L, 0, -1, 0, false, 1, 9216)),
                IpcMessages.ERR_BAD_VALUE, "the snap length must be in 64..9216");
            refused(client, good.andThen(c -> c.set(1000, 128, 0, -1L, -1L, 0, -1, 0, false, 1, 9216)),
                IpcMessages.ERR_BAD_VALUE, "directions must be rx, tx or both");
            refused(client, good.andThen(c -> c.set(1000, 128, 3, 0b10, -1L, 0, -1, 0, false, 1, 9216)),
                IpcMessages.ERR_BAD_VALUE, "port 1 is not one of the NIC's ports 0..0");
            refused(client, good.andThen(c -> c.set(1000, 128, 3, -1L, 1L << 63, 0, -1, 0, false, 1, 9216)),
                IpcMessages.ERR_BAD_VALUE, "queue 63 is not one of the NIC's queues 0..0");
            refused(client, good.andThen(c -> c.set(1000, 128, 3, -1L, -1L, 7, -1, 0, false, 1, 9216)),
                IpcMessages.ERR_BAD_VALUE, "frame kind 7 is not one of 0..2");
            refused(client, good.andThen(c -> c.set(1000, 128, 3, -1L, -1L, 0, 1 << 17, 0, false, 1, 9216)),
                IpcMessages.ERR_BAD_VALUE, "UDP port 131072 is not in 0..65535");
            refused(client, good.andThen(c -> c.putInt(IpcMessages.StartCapture.HAS_HOST_OFFSET, 5)),
                IpcMessages.ERR_BAD_VALUE, "has-host 5 is neither 0 nor 1");
            // the sampling rate: another process's word, checked as every other (0 would divide by nothing, a
            // negative one would count the stride backwards)
            refused(client, good.andThen(c -> c.putInt(IpcMessages.StartCapture.SAMPLE_OFFSET, 0)),
                IpcMessages.ERR_BAD_VALUE, "the sampling rate must be one frame in 1..16777216, not one in 0");
            refused(client, good.andThen(c -> c.putInt(IpcMessages.StartCapture.SAMPLE_OFFSET, -64)),
                IpcMessages.ERR_BAD_VALUE, "not one in -64");
            refused(client, good.andThen(c -> c.putInt(IpcMessages.StartCapture.SAMPLE_OFFSET, Integer.MIN_VALUE)),
                IpcMessages.ERR_BAD_VALUE, "not one in -2147483648");
            refused(client, good.andThen(c -> c.putInt(IpcMessages.StartCapture.SAMPLE_OFFSET, (1 << 24) + 1)),
                IpcMessages.ERR_BAD_VALUE, "not one in 16777217");
            // the ring's bytes, a long of the client's: none, negative, below 16 records of the snap length, not a
            // whole number of records' alignment, more than the memory allowed, and values where rounding up or a
            // product with the workers would wrap (2^63 - 1 rounded up to 16 is negative; 2^62 * 4 workers is 0)
            for (final long bad : new long[]{0, -16, Long.MIN_VALUE, 2303, 2304 - 16})
            {
                refused(client, good.andThen(c -> c.putLong(IpcMessages.StartCapture.RING_BYTES_OFFSET, bad)),
                    IpcMessages.ERR_BAD_VALUE, "a ring of " + bad + " B is not in 2304..1073741824 B (at least 16 records");
            }
            for (final long bad : new long[]{Long.MAX_VALUE, Long.MAX_VALUE - 15, 1L << 62, (1L << 30) + 16})
            {
                refused(client, good.andThen(c -> c.putLong(IpcMessages.StartCapture.RING_BYTES_OFFSET, bad)),
                    IpcMessages.ERR_BAD_VALUE, "a ring of " + bad + " B is not in 2304..1073741824 B");
            }
            refused(client, good.andThen(c -> c.putLong(IpcMessages.StartCapture.RING_BYTES_OFFSET, 9217)),
                IpcMessages.ERR_BAD_VALUE, "a ring of 9217 B is not a multiple of 16 B");
            refused(client, good.andThen(c -> c.putLong(IpcMessages.StartCapture.RING_BYTES_OFFSET, 1L << 30)),
                IpcMessages.ERR_BAD_VALUE, "rings of 1073741824 B for 1 worker(s) need 1073754112 B, more than the " +
                    "1073741824 B allowed");
            // the word that held the slots until rings were sized in bytes: a client that still sends them is refused
            refused(client, good.andThen(c -> c.putInt(IpcMessages.StartCapture.RESERVED_OFFSET, 64)),
                IpcMessages.ERR_BAD_VALUE, "the reserved word at 32 is 64, not 0");
            assertEquals(24L, bed.counter("ipc: captures refused"));
            assertEquals(0L, bed.counter("ipc: captures started"));
            // a START_CAPTURE of capture memory version 3 (76 bytes, slots at 32, no ring bytes) is too short to read
            final NicRefusedException old = assertThrows(NicRefusedException.class,
                () -> client.startCaptureRaw(good, IpcMessages.StartCapture.RING_BYTES_OFFSET));
            assertEquals(IpcMessages.ERR_MALFORMED, old.code(), old.getMessage());

            // a short snap length gets the default ring's bytes, as more records, not a ring cut to its records
            final ClientCapture first = client.startCaptureRing(CaptureFilter.ALL, Duration.ofSeconds(60), 64,
                CaptureRingLayout.defaultRingBytes(64), 1);
            assertEquals(CaptureRingLayout.DEFAULT_RING_BYTES, first.reader().layout().ringCapacity());
            assertEquals(8_421_376L / 80, first.reader().layout().slots(), "records of 64 B frames (80 B each)");

            // one at a time, over every client; a client may stop only its own
            try (NicClient other = NicClient.connect(bed.dir, WAIT))
            {
                refused(other, good, IpcMessages.ERR_LIMIT, "the NIC serves one at a time");
                final NicRefusedException foreign = assertThrows(NicRefusedException.class, () -> other.stopCapture(first.id()));
                assertEquals(IpcMessages.ERR_UNKNOWN_OBJECT, foreign.code());
            }
            assertFalse(first.reader().ended());
            first.stop();
            first.close();
            assertEquals(0, bed.unexpectedErrors());
        }
    }

    @Test
    void shouldRefuseEveryCaptureWhenTheNicDoesNotAllowIt() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.SPRAY, Duration.ofSeconds(5),
            new IpcConductor.Limits(4, 4, 4, false));
            NicClient client = NicClient.connect(bed.dir, WAIT))
        {
            final NicRefusedException ex = assertThrows(NicRefusedException.class,
                () -> client.startCapture(CaptureFilter.ALL, Duration.ofSeconds(1), 128, 64));
            assertEquals(IpcMessages.ERR_NOT_PERMITTED, ex.code());
            assertTrue(ex.getMessage().contains("does not allow live capture"), ex.getMessage());
        }
    }

    private static void refused(final NicClient client, final Consumer<IpcMessages.StartCapture> fields, final int code,
        final String reason)
    {
        final NicRefusedException ex = assertThrows(NicRefusedException.class, () -> client.startCaptureRaw(fields));
        assertEquals(code, ex.code(), ex.getMessage());
        assertTrue(ex.getMessage().contains(reason), ex.getMessage());
    }

    @Test
    void shouldDropAndCountWhatAClientThatNeverDrainsCannotTakeWithoutSlowingTheTransfer() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.SPRAY, Duration.ofSeconds(5));
            Arena arena = Arena.ofShared();
            NicClient client = NicClient.connect(bed.dir, WAIT))
        {
            final MemoryRegion peerRegion = bed.peer.register(arena.allocate(1 << 20, 4096), ALL);
            final ClientCapture capture = client.startCapture(CaptureFilter.ALL, Duration.ofSeconds(60), 128, 16);
            transfer(bed, client, peerRegion, 1 << 20, 7); // never drained meanwhile
            capture.stop();
            // 16 records of the snap length, or more of smaller frames: what one ring holds, never drained
            final long captured = capture.reader().captured(0);
            final CaptureRingLayout layout = capture.reader().layout();
            assertTrue(captured >= 16 && captured <= layout.ringCapacity() / CaptureRingLayout.recordLength(60),
                "the ring filled once, and stayed full: " + captured);
            assertEquals(captured, capture.reader().poll((plane, queue, direction, timestamp, m, offset, length,
                original) -> { }, 1 << 20), "the ring holds every frame counted as captured");
            final long dropped = bed.counter("worker 0: capture drops (ring full)");
            assertTrue(dropped > (1 << 20) / 4096, "every other frame was dropped and counted: " + dropped);
            assertEquals(dropped, capture.reader().dropped(0));
            long perInterface = 0;
            for (int direction = 0; direction < 2; direction++)
            {
                perInterface += capture.reader().dropped(0, 0, direction);
            }
            assertEquals(dropped, perInterface, "drops are told per port and direction");
            assertEquals(0, bed.counter("worker 0: capture faults (tap stopped)"));
            capture.close();
        }
    }

    @Test
    void shouldShrugOffACaptureMemoryTheClientTamperedWith() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.SPRAY, Duration.ofSeconds(5));
            Arena arena = Arena.ofShared();
            NicClient client = NicClient.connect(bed.dir, WAIT))
        {
            final MemoryRegion peerRegion = bed.peer.register(arena.allocate(1 << 20, 4096), ALL);
            final ClientCapture capture = client.startCapture(CaptureFilter.ALL, Duration.ofSeconds(60), 128, 64);
            final MemorySegment memory = capture.memory();
            // the memory cannot be resized under the NIC's mapping (a truncated file would fault the worker's next write)
            // the client holds no descriptor of it (closed once mapped): reach the memfd through this process's mapping
            final String line = java.nio.file.Files.readAllLines(Path.of("/proc/self/maps")).stream()
                .filter(l -> l.contains("memfd:spraynic-capture-")).findFirst().orElseThrow();
            final Path path = Path.of("/proc/self/map_files/" + line.substring(0, line.indexOf(' ')));
            try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE))
            {
                assertThrows(IOException.class, () -> channel.truncate(4096), "sealed against shrinking");
                assertThrows(IOException.class, () -> channel.write(java.nio.ByteBuffer.allocate(1), memory.byteSize() + 4096),
                    "and growing");
            }
            // everything the client can write it overwrites: header, statistics, head and tail, slots
            memory.fill((byte)0x5A);
            final CaptureRingLayout layout = CaptureRingLayout.of(1, 64, 128);
            memory.set(ValueLayout.JAVA_LONG_UNALIGNED, layout.ringOffset(0) + CaptureRingLayout.HEAD_OFFSET, -5L);
            transfer(bed, client, peerRegion, 1 << 20, 8);
            IpcTestBed.await(() -> bed.counter("worker 0: capture faults (tap stopped)") == 1, WAIT,
                "the tap stopped at the corrupt head");
            // the head is read once the ring is full: at most a ring of the smallest frames went in before
            assertTrue(bed.counter("worker 0: capture frames") <= layout.ringCapacity() / CaptureRingLayout.recordLength(60));
            assertEquals(0L, bed.counter("worker 0: frame faults (exception handling a frame, dropped)"));
            assertEquals(0L, bed.counter("worker 0: loop faults (exception in a command, poller, post or tick)"));
            capture.stop();
            capture.close();
            // the NIC serves on, and captures again
            final ClientCapture next = client.startCapture(CaptureFilter.ALL, Duration.ofSeconds(60), 128, 64);
            IpcTestBed.await(() -> next.reader().poll((plane, queue, direction, timestamp, m, offset, captured,
                original) -> { }, 64) >= 0 && bed.counter("ipc: captures started") == 2, WAIT, "second capture");
            next.stop();
            next.close();
            assertEquals(0, bed.unexpectedErrors());
        }
    }

    @Test
    void shouldEndTheCaptureOfAClientThatDies() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.SPRAY, Duration.ofMillis(300)))
        {
            final NicClient client = NicClient.connect(bed.dir, WAIT);
            final ClientCapture capture = client.startCapture(CaptureFilter.ALL, Duration.ofSeconds(60), 128, 64);
            client.stopKeepalives(); // as a process that hangs or died
            IpcTestBed.await(() -> bed.counter("ipc: clients timed out") == 1 && capture.reader().ended(), WAIT,
                "the NIC ended the dead client's capture");
            assertEquals(1L, bed.counter("ipc: captures ended"));
            IpcTestBed.await(() -> captureMappings() == 1, WAIT, "the NIC unmapped the capture memory, the client not yet");
            capture.close();
            try (NicClient other = NicClient.connect(bed.dir, WAIT))
            {
                other.startCapture(CaptureFilter.ALL, Duration.ofSeconds(1), 128, 64).close();
            }
        }
    }

    /** @return mappings of capture memory in this process (the NIC's and the client's: both run here). */
    private static long captureMappings()
    {
        try
        {
            return java.nio.file.Files.readAllLines(Path.of("/proc/self/maps")).stream()
                .filter(line -> line.contains("memfd:spraynic-capture-")).count();
        }
        catch (final IOException ex)
        {
            throw new java.io.UncheckedIOException(ex);
        }
    }
}
