package io.spraynic.datapath.fabric;

import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.FrameClass;
import io.spraynic.datapath.wire.Ipv4Header;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceParser;
import io.spraynic.datapath.wire.UdpHeader;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FrameInspectorTest
{
    private static final int SOURCE = 0x0A01_0001;
    private static final int DESTINATION = 0x0A01_0302;

    private final FrameInspector inspector = new FrameInspector();
    private final TestFrames frames = new TestFrames();

    @Test
    void shouldReadRouteAndFlowOfIpv4RoceFrames()
    {
        final int length = frames.ipv4(SOURCE, DESTINATION, 0xD123, 2, 1, 0, 100);

        assertEquals(FrameInspector.IPV4, inspector.inspect(frames.buffer(), 0, length));
        assertEquals(DESTINATION, inspector.routeAddress());
        assertEquals(Ipv4Header.PROTOCOL_UDP, inspector.protocol());
        assertEquals(0xD123, inspector.sourcePort());
        assertEquals(UdpHeader.ROCE_V2_PORT, inspector.destinationPort());
    }

    @Test
    void shouldRouteIpv6OnTheIpv4MappedDestination()
    {
        final int length = frames.ipv6(SOURCE, DESTINATION, 0xD124, 2, 1, 0, 100);

        assertEquals(FrameInspector.IPV6, inspector.inspect(frames.buffer(), 0, length));
        assertEquals(DESTINATION, inspector.routeAddress());
        assertEquals(0xD124, inspector.sourcePort());
    }

    @Test
    void shouldHashTheSameFlowTheSameAndOtherPortsOtherwise()
    {
        final int length = frames.ipv4(SOURCE, DESTINATION, 0xC000, 0, 1, 0, 64);
        inspector.inspect(frames.buffer(), 0, length);
        final long hash = inspector.flowHash(99);

        final int again = frames.ipv4(SOURCE, DESTINATION, 0xC000, 2, 7, 12345, 1024);
        inspector.inspect(frames.buffer(), 0, again);
        assertEquals(hash, inspector.flowHash(99), "ECN, payload and BTH are not part of the flow");
        assertNotEquals(hash, inspector.flowHash(100), "another seed, another hash");

        final int otherPort = frames.ipv4(SOURCE, DESTINATION, 0xC001, 0, 1, 0, 64);
        inspector.inspect(frames.buffer(), 0, otherPort);
        assertNotEquals(hash, inspector.flowHash(99));
    }

    @Test
    void shouldCallTruncatedAndInconsistentFramesMalformedWithoutThrowing()
    {
        final int length = frames.ipv4(SOURCE, DESTINATION, 0xC000, 0, 1, 0, 64);
        final MemorySegment s = frames.buffer();
        for (int cut = 0; cut < EthernetHeader.LENGTH + Ipv4Header.LENGTH; cut++)
        {
            assertEquals(FrameInspector.MALFORMED, inspector.inspect(s, 0, cut), "cut at " + cut);
        }
        assertEquals(FrameInspector.MALFORMED, inspector.inspect(s, 0, length - 10), "IP length beyond frame");

        Ipv4Header.versionAndHeaderLength(s, EthernetHeader.LENGTH, 16);
        assertEquals(FrameInspector.MALFORMED, inspector.inspect(s, 0, length), "IHL below 5");
        Ipv4Header.versionAndHeaderLength(s, EthernetHeader.LENGTH, 20);
        s.set(io.spraynic.datapath.wire.Wire.BYTE, EthernetHeader.LENGTH, (byte)0x55);
        assertEquals(FrameInspector.MALFORMED, inspector.inspect(s, 0, length), "IPv4 EtherType, version 5");
    }

    @Test
    void shouldHashNonIpAndNonUdpFramesOnWhatIsThere()
    {
        final int length = frames.ipv4(SOURCE, DESTINATION, 0xC000, 0, 1, 0, 64);
        final MemorySegment s = frames.buffer();
        Ipv4Header.protocol(s, EthernetHeader.LENGTH, 6);
        assertEquals(FrameInspector.IPV4, inspector.inspect(s, 0, length));
        assertEquals(0, inspector.sourcePort(), "not UDP: no ports");

        EthernetHeader.etherType(s, 0, 0x88CC);
        assertEquals(FrameInspector.NOT_IP, inspector.inspect(s, 0, length));
        assertEquals(0x88CC, inspector.protocol());
        final long hash = inspector.flowHash(1);
        EthernetHeader.sourceMac(s, 0, 0x0200_0000_0099L);
        inspector.inspect(s, 0, length);
        assertNotEquals(hash, inspector.flowHash(1));
    }

    @Test
    void shouldKeepTheIpv4ChecksumAndIcrcValidWhenMarkingRandomHeaders()
    {
        final SplittableRandom random = new SplittableRandom(2026);
        final RoceParser parser = new RoceParser(new ParseCounters());
        final RoceFrame frame = new RoceFrame();
        for (int i = 0; i < 2_000; i++)
        {
            final int ecn = 1 + random.nextInt(2);
            final int length = frames.ipv4(random.nextInt(), random.nextInt(), random.nextInt(0x10000), ecn,
                random.nextInt(1 << 24), random.nextInt(1 << 24), 4 * random.nextInt(300));
            final MemorySegment s = frames.buffer();
            Ipv4Header.tos(s, EthernetHeader.LENGTH, (random.nextInt(64) << 2) | ecn);
            Ipv4Header.ttl(s, EthernetHeader.LENGTH, random.nextInt(256));
            Ipv4Header.updateChecksum(s, EthernetHeader.LENGTH, Ipv4Header.LENGTH);

            assertTrue(FrameInspector.markCongestionExperienced(s, 0, length));

            assertEquals(3, Ipv4Header.ecn(s, EthernetHeader.LENGTH));
            assertTrue(Ipv4Header.isChecksumValid(s, EthernetHeader.LENGTH, Ipv4Header.LENGTH), "frame " + i);
            assertEquals(FrameClass.ROCE, parser.parse(s, 0, length, frame));
            assertTrue(frame.icrcValid());
            assertFalse(FrameInspector.markCongestionExperienced(s, 0, length), "already CE");
        }
    }

    @Test
    void shouldNotMarkNotEctNonIpOrTruncatedFrames()
    {
        final int length = frames.ipv4(SOURCE, DESTINATION, 0xC000, 0, 1, 0, 64);
        final MemorySegment s = frames.buffer();
        assertFalse(FrameInspector.markCongestionExperienced(s, 0, length));
        assertEquals(0, Ipv4Header.ecn(s, EthernetHeader.LENGTH));
        assertFalse(FrameInspector.markCongestionExperienced(s, 0, 20));
        EthernetHeader.etherType(s, 0, 0x88CC);
        assertFalse(FrameInspector.markCongestionExperienced(s, 0, length));
    }

    @Test
    void shouldSeeThroughOneVlanTag()
    {
        final MemorySegment s = MemorySegment.ofArray(new byte[2048]);
        final int length = new io.spraynic.datapath.wire.RoceFrameWriter().vlan(EthernetHeader.tci(3, false, 100))
            .ipv4(SOURCE, DESTINATION).udpSourcePort(0xC777).ecn(1).writeFrame(s, 0, 128);

        assertEquals(FrameInspector.IPV4, inspector.inspect(s, 0, length));
        assertEquals(DESTINATION, inspector.routeAddress());
        assertEquals(0xC777, inspector.sourcePort());
        assertTrue(FrameInspector.markCongestionExperienced(s, 0, length));
        assertEquals(3, Ipv4Header.ecn(s, EthernetHeader.VLAN_LENGTH));
        assertTrue(Ipv4Header.isChecksumValid(s, EthernetHeader.VLAN_LENGTH, Ipv4Header.LENGTH));
    }
}
