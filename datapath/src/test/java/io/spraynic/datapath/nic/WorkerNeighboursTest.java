package io.spraynic.datapath.nic;

import io.spraynic.datapath.neighbour.NeighbourAgent;
import io.spraynic.datapath.neighbour.NeighbourConfig;
import io.spraynic.datapath.neighbour.NeighbourFrames;
import io.spraynic.datapath.port.InMemoryLink;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PortFrameSink;
import io.spraynic.datapath.transport.FrameSink;
import io.spraynic.datapath.transport.RecordingFrameSink;
import io.spraynic.datapath.wire.ArpHeader;
import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.Ipv4Header;
import io.spraynic.datapath.wire.Wire;
import io.spraynic.pmd.InterfaceAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(10)
final class WorkerNeighboursTest
{
    private static final long SECOND = 1_000_000_000L;
    private static final int OURS = Wire.parseIpv4("10.0.1.10");
    private static final long OUR_MAC = 0x02_00_00_00_01_0AL;
    private static final int PEER = Wire.parseIpv4("10.0.1.20");
    private static final long PEER_MAC = 0x02_00_00_00_01_14L;

    private final NicWorker.WorkerCounters counters = NicWorker.WorkerCounters.unpublished();
    private final WorkerFaults faults = new WorkerFaults(counters.frameFaults(), counters.loopFaults(), "test");

    @Test
    void shouldTellNeighbourFramesFromEverythingElse()
    {
        final MemorySegment arp = NeighbourFrames.arp(ArpHeader.OPERATION_REQUEST, PEER_MAC, PEER, 0, OURS, 0);
        assertTrue(WorkerNeighbours.isNeighbourFrame(arp, 0, 60));
        final MemorySegment echo = NeighbourFrames.echo(OUR_MAC, PEER_MAC, PEER, OURS, 1, 16);
        assertTrue(WorkerNeighbours.isNeighbourFrame(echo, 0, (int)echo.byteSize()));
        final long[] a = {0xFD00_0000_0000_0000L, 1};
        final long[] b = {0xFD00_0000_0000_0000L, 2};
        final byte[] echo6 = NeighbourFrames.echo6(OUR_MAC, PEER_MAC, a, b, 8);
        assertTrue(WorkerNeighbours.isNeighbourFrame(MemorySegment.ofArray(echo6), 0, echo6.length));

        Ipv4Header.protocol(echo, EthernetHeader.LENGTH, 17); // UDP: the transport's, or nobody's
        assertFalse(WorkerNeighbours.isNeighbourFrame(echo, 0, (int)echo.byteSize()));
        echo6[EthernetHeader.LENGTH + 6] = 17; // next header UDP
        assertFalse(WorkerNeighbours.isNeighbourFrame(MemorySegment.ofArray(echo6), 0, echo6.length));
        Ipv4Header.protocol(echo, EthernetHeader.LENGTH, 1);
        assertFalse(WorkerNeighbours.isNeighbourFrame(echo, 0, EthernetHeader.LENGTH + Ipv4Header.LENGTH - 1),
            "an IPv4 header cut short is not read");
        assertFalse(WorkerNeighbours.isNeighbourFrame(arp, 0, EthernetHeader.LENGTH - 1),
            "a frame shorter than an Ethernet header is not read");
    }

    @Test
    void shouldStartAnswerAndCloseThroughThePlaneOfEachAgent() throws Exception
    {
        try (InMemoryLink link = new InMemoryLink("plane1", 16, 2048))
        {
            final PortFrameSink sink = new PortFrameSink(link.first(), 8);
            final NeighbourAgent agent = new NeighbourAgent(1, InterfaceAddress.parse("10.0.1.10/24", null), OUR_MAC,
                sink, NeighbourConfig.defaults().withCapacity(8), (plane, high, low, mac) -> { });
            final WorkerNeighbours neighbours = new WorkerNeighbours(
                new NeighbourAgent[]{null, agent}, new PortFrameSink[]{null, sink}, faults);
            assertNull(neighbours.agent(0), "plane 0 has no address");
            assertSame(agent, neighbours.agent(1));
            assertNull(neighbours.agent(2), "a plane out of range is no plane");
            assertNull(neighbours.agent(-1));

            neighbours.start(0);
            final PacketBurst burst = link.second().newBurst(8);
            assertEquals(1, link.second().receive(burst), "the gratuitous ARP, flushed at start");
            assertEquals(ArpHeader.ETHER_TYPE_ARP, EthernetHeader.etherType(burst.memory(), burst.offset(0)));
            link.second().release(burst);

            final MemorySegment request = NeighbourFrames.arp(ArpHeader.OPERATION_REQUEST, PEER_MAC, PEER, 0, OURS, 0);
            neighbours.onFrame(0, request, 0, 60, 1); // plane 0 has no agent: nothing
            neighbours.onFrame(1, request, 0, 60, 1);
            neighbours.tick(2);
            assertEquals(1, link.second().receive(burst), "the reply, flushed by the tick");
            assertEquals(ArpHeader.OPERATION_REPLY, ArpHeader.operation(burst.memory(),
                burst.offset(0) + EthernetHeader.LENGTH));
            link.second().release(burst);
            burst.close();
            neighbours.close();
            assertEquals(0, counters.loopFaults().get());
        }
    }

    @Test
    void shouldCountAnAgentThatThrowsAndGoOnWithTheOtherPlanes() throws Exception
    {
        try (InMemoryLink link = new InMemoryLink("plane1", 16, 2048))
        {
            final PortFrameSink sink0 = new PortFrameSink(link.first(), 8);
            final PortFrameSink sink1 = new PortFrameSink(link.first(), 8);
            final NeighbourConfig config = NeighbourConfig.defaults().withCapacity(8)
                .withTimers(30 * SECOND, SECOND, 3, 5 * SECOND);
            final BreakingSink broken = new BreakingSink();
            final NeighbourAgent failing = new NeighbourAgent(0, InterfaceAddress.parse("10.0.1.10/24", null),
                OUR_MAC, broken, config, (plane, high, low, mac) -> { });
            final NeighbourAgent working = new NeighbourAgent(1, InterfaceAddress.parse("10.0.2.10/24", null),
                OUR_MAC, sink1, config, (plane, high, low, mac) -> { });
            final WorkerNeighbours neighbours = new WorkerNeighbours(
                new NeighbourAgent[]{failing, working}, new PortFrameSink[]{sink0, sink1}, faults);
            failing.resolve(PEER, 0);
            broken.broken = true; // its retry will throw
            working.resolve(Wire.parseIpv4("10.0.2.20"), 0);
            sink1.flush();
            final PacketBurst burst = link.second().newBurst(8);
            assertEquals(1, link.second().receive(burst));
            link.second().release(burst);

            neighbours.tick(2 * SECOND); // both retry: plane 0's throws, plane 1's goes out
            assertEquals(1, counters.loopFaults().get());
            assertEquals(1L, faults.counts().get("neighbours " + IllegalStateException.class.getName()));
            assertEquals(1, link.second().receive(burst), "plane 1's retry, after plane 0's agent threw");
            link.second().release(burst);
            burst.close();
            neighbours.close();
        }
    }

    @Test
    void shouldRefuseAgentsAndSinksOfDifferentPlaneCounts()
    {
        assertThrows(IllegalArgumentException.class,
            () -> new WorkerNeighbours(new NeighbourAgent[2], new PortFrameSink[1], faults));
    }

    // records frames until broken, then throws on every claim
    private static final class BreakingSink implements FrameSink
    {
        private final RecordingFrameSink frames = new RecordingFrameSink(1500);
        boolean broken;

        public int maxFrameLength()
        {
            return frames.maxFrameLength();
        }

        public boolean claim(final int plane, final int maxLength)
        {
            if (broken)
            {
                throw new IllegalStateException("no buffers, and a bug");
            }
            return frames.claim(plane, maxLength);
        }

        public MemorySegment buffer()
        {
            return frames.buffer();
        }

        public long offset()
        {
            return frames.offset();
        }

        public void commit(final int length)
        {
            frames.commit(length);
        }
    }
}
