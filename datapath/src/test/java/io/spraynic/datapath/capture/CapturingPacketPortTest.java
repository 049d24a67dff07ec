package io.spraynic.datapath.capture;

import io.spraynic.datapath.port.InMemoryLink;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.port.RawFrames;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CapturingPacketPortTest
{
    @Test
    void shouldRecordEachFrameOnceEvenWhenTransmitIsRetried(@TempDir final Path dir) throws Exception
    {
        final Path txPart = dir.resolve("tx.part");
        final Path rxPart = dir.resolve("rx.part");
        try (InMemoryLink link = new InMemoryLink("cap", 16, 2048);
            PcapWriter txWriter = PcapWriter.pcapng(txPart);
            PcapWriter rxWriter = PcapWriter.pcapng(rxPart))
        {
            final PacketPort sender = new CapturingPacketPort(link.first(), txWriter);
            final PacketPort receiver = new CapturingPacketPort(link.second(), rxWriter);
            final PacketBurst tx = sender.newBurst(32);
            final PacketBurst rx = receiver.newBurst(32);
            assertTrue(sender.allocate(tx, 16));
            for (int i = 0; i < 16; i++)
            {
                RawFrames.write(tx.memory(), tx.offset(i), 100, i);
                tx.length(i, 100);
            }
            assertEquals(16, sender.transmit(tx));

            // 16 more than the wire can hold: the first transmit takes none, the retry after draining takes all.
            final PacketPort plainSender = link.first();
            assertEquals(16, receiver.receive(rx));
            assertTrue(sender.allocate(tx, 0));
            receiver.release(rx);
            final PacketBurst more = sender.newBurst(32);
            while (!plainSender.allocate(more, 16))
            {
                Thread.onSpinWait();
            }
            for (int i = 0; i < 16; i++)
            {
                RawFrames.write(more.memory(), more.offset(i), 80, 16 + i);
                more.length(i, 80);
            }
            assertEquals(16, sender.transmit(more));
            assertEquals(16, receiver.receive(rx));
            receiver.release(rx);
        }

        final Path merged = dir.resolve("all.pcapng");
        assertEquals(64, PcapMerge.merge(List.of(txPart, rxPart), merged));
        final List<CapturedFrame> frames = PcapReader.readAll(merged);
        assertEquals(64, frames.size());
        int tx = 0;
        for (final CapturedFrame frame : frames)
        {
            assertTrue(RawFrames.verify(MemorySegment.ofArray(frame.data()), 0, frame.data().length) >= 0);
            tx += frame.interfaceId() == 0 ? 1 : 0;
        }
        assertEquals(32, tx, "interface 0 is the sender's TX");
    }

    @Test
    void shouldNotRecordUnsentFramesTwice(@TempDir final Path dir) throws Exception
    {
        final Path part = dir.resolve("tx.part");
        try (Arena arena = Arena.ofConfined(); PcapWriter writer = PcapWriter.pcapng(part))
        {
            final TwoAtATimePort port = new TwoAtATimePort(arena.allocate(8 * 128));
            final CapturingPacketPort capturing = new CapturingPacketPort(port, writer);
            final PacketBurst burst = capturing.newBurst(8);
            assertTrue(capturing.allocate(burst, 5));
            for (int i = 0; i < 5; i++)
            {
                RawFrames.write(burst.memory(), burst.offset(i), 64, i);
                burst.length(i, 64);
            }
            assertEquals(2, capturing.transmit(burst));
            assertEquals(5, capturing.framesRecorded(), "all five handed over, recorded once");
            assertEquals(2, capturing.transmit(burst));
            assertEquals(5, capturing.framesRecorded(), "the retry records nothing new");
            assertTrue(capturing.allocate(burst, 1)); // a new frame behind the one still unsent
            RawFrames.write(burst.memory(), burst.offset(1), 64, 5);
            burst.length(1, 64);
            assertEquals(2, capturing.transmit(burst));
            assertEquals(6, capturing.framesRecorded(), "only the new frame is recorded");
        }
        final List<CapturedFrame> frames = PcapReader.readAll(part);
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 5L), frames.stream()
            .map(frame -> RawFrames.verify(MemorySegment.ofArray(frame.data()), 0, frame.data().length)).toList());
    }

    /**
     * A port whose driver takes at most two frames per transmit, over a fixed set of 128-byte slots.
     */
    private static final class TwoAtATimePort implements PacketPort
    {
        private final MemorySegment memory;
        private int nextSlot;

        TwoAtATimePort(final MemorySegment memory)
        {
            this.memory = memory;
        }

        public String name()
        {
            return "two";
        }

        public PacketBurst newBurst(final int capacity)
        {
            return new SlotBurst(memory, capacity);
        }

        public int receive(final PacketBurst burst)
        {
            return 0;
        }

        public boolean allocate(final PacketBurst burst, final int count)
        {
            final SlotBurst slots = (SlotBurst)burst;
            for (int i = 0; i < count; i++)
            {
                slots.slots[slots.size++] = nextSlot++ % 8;
            }
            return true;
        }

        public int transmit(final PacketBurst burst)
        {
            final SlotBurst slots = (SlotBurst)burst;
            final int sent = Math.min(2, slots.size);
            System.arraycopy(slots.slots, sent, slots.slots, 0, slots.size - sent);
            System.arraycopy(slots.lengths, sent, slots.lengths, 0, slots.size - sent);
            slots.size -= sent;
            return sent;
        }

        public void release(final PacketBurst burst)
        {
            ((SlotBurst)burst).size = 0;
        }

        public void close()
        {
        }
    }

    private static final class SlotBurst implements PacketBurst
    {
        private final MemorySegment memory;
        private final int[] slots;
        private final int[] lengths;
        private int size;

        SlotBurst(final MemorySegment memory, final int capacity)
        {
            this.memory = memory;
            this.slots = new int[capacity];
            this.lengths = new int[capacity];
        }

        public int size()
        {
            return size;
        }

        public int capacity()
        {
            return slots.length;
        }

        public MemorySegment memory()
        {
            return memory;
        }

        public long offset(final int index)
        {
            return slots[index] * 128L;
        }

        public int length(final int index)
        {
            return lengths[index];
        }

        public void length(final int index, final int length)
        {
            lengths[index] = length;
        }

        public int room(final int index)
        {
            return 128;
        }

        public void close()
        {
        }
    }
}
