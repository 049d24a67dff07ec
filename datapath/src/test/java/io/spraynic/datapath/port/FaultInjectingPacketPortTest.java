package io.spraynic.datapath.port;

import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.Ipv4Header;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceFrameWriter;
import io.spraynic.datapath.wire.RoceParser;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FaultInjectingPacketPortTest
{
    private final InMemoryLink link = new InMemoryLink("f", 256, 2048);

    @AfterEach
    void close()
    {
        link.close();
    }

    private static void send(final PacketPort port, final int count, final long first)
    {
        final PacketBurst burst = port.newBurst(16);
        for (long sequence = first; sequence < first + count; sequence += 16)
        {
            final int n = (int)Math.min(16, first + count - sequence);
            assertTrue(port.allocate(burst, n));
            for (int i = 0; i < n; i++)
            {
                RawFrames.write(burst.memory(), burst.offset(i), 100, sequence + i);
                burst.length(i, 100);
            }
            assertEquals(n, port.transmit(burst));
        }
        burst.close();
    }

    private static List<Long> drain(final PacketPort port)
    {
        final List<Long> sequences = new ArrayList<>();
        final PacketBurst burst = port.newBurst(32);
        while (port.receive(burst) > 0)
        {
            for (int i = 0; i < burst.size(); i++)
            {
                sequences.add(RawFrames.verify(burst.memory(), burst.offset(i), burst.length(i)));
            }
            port.release(burst);
        }
        burst.close();
        return sequences;
    }

    @Test
    void shouldDropAndDuplicateExactPositions()
    {
        final FaultInjectingPacketPort port = FaultInjectingPacketPort.exact(link.first(),
            FaultInjectingPacketPort.Selector.ALL).dropAt(4, 5).duplicateAt(0, 9);
        send(port, 12, 0);
        assertEquals(List.of(0L, 0L, 1L, 2L, 3L, 6L, 7L, 8L, 9L, 9L, 10L, 11L), drain(link.second()));
        assertEquals(2, port.dropped());
        assertEquals(2, port.duplicated());
        assertEquals(12, port.eligible());
        assertEquals(link.first().freeBuffers(), 256, "every buffer back");
    }

    @Test
    void shouldCountOnlySelectedPackets()
    {
        final FaultInjectingPacketPort port = FaultInjectingPacketPort.exact(link.first(),
            (memory, offset, length) -> RawFrames.verify(memory, offset, length) % 2 == 1).dropAt(0, 2);
        send(port, 8, 0);
        assertEquals(List.of(0L, 2L, 3L, 4L, 6L, 7L), drain(link.second()), "odd packets 1 and 5 dropped");
        assertEquals(4, port.eligible());
    }

    @Test
    void shouldDropAtTheSeededRateReproducibly()
    {
        final FaultInjectingPacketPort port = new FaultInjectingPacketPort(link.first(), 42, 0.1, 0, 0,
            FaultInjectingPacketPort.Selector.ALL);
        final List<Long> first = new ArrayList<>();
        for (int round = 0; round < 50; round++)
        {
            send(port, 100, round * 100L);
            first.addAll(drain(link.second()));
        }
        assertEquals(5000 - port.dropped(), first.size());
        assertTrue(port.dropped() > 400 && port.dropped() < 600, "about 10 %: " + port.dropped());

        final FaultInjectingPacketPort again = new FaultInjectingPacketPort(link.first(), 42, 0.1, 0, 0,
            FaultInjectingPacketPort.Selector.ALL);
        final List<Long> second = new ArrayList<>();
        for (int round = 0; round < 50; round++)
        {
            send(again, 100, round * 100L);
            second.addAll(drain(link.second()));
        }
        assertEquals(first, second);
    }

    @Test
    void shouldMarkCeKeepingIpChecksumAndIcrcValid()
    {
        final FaultInjectingPacketPort port = new FaultInjectingPacketPort(link.first(), 1, 0, 0, 1.0,
            FaultInjectingPacketPort.Selector.ALL);
        final RoceFrameWriter writer = new RoceFrameWriter().ipv4(0x0A000001, 0x0A000002).ecn(2)
            .opcode(Opcode.RC_SEND_ONLY).destQp(5).psn(9);
        final PacketBurst burst = port.newBurst(1);
        assertTrue(port.allocate(burst, 1));
        burst.length(0, writer.writeFrame(burst.memory(), burst.offset(0), 0));
        assertEquals(1, port.transmit(burst));
        final PacketBurst rx = link.second().newBurst(1);
        assertEquals(1, link.second().receive(rx));
        final ParseCounters counters = new ParseCounters();
        final RoceFrame frame = new RoceFrame();
        assertTrue(new RoceParser(counters).parse(rx.memory(), rx.offset(0), rx.length(0), frame) ==
            io.spraynic.datapath.wire.FrameClass.ROCE, frame::toString);
        assertEquals(3, frame.ecn());
        assertEquals(3, Ipv4Header.ecn(rx.memory(), rx.offset(0) + EthernetHeader.LENGTH));
        assertEquals(1, port.ceMarked());
        link.second().release(rx);
    }
}
