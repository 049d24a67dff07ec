package io.spraynic.datapath.port;

import io.spraynic.datapath.capture.CapturedFrame;
import io.spraynic.datapath.capture.CapturingPacketPort;
import io.spraynic.datapath.capture.PcapReader;
import io.spraynic.datapath.capture.PcapWriter;
import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.FrameClass;
import io.spraynic.datapath.wire.Icrc;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceFrameWriter;
import io.spraynic.datapath.wire.RoceParser;
import io.spraynic.datapath.wire.Tshark;
import io.spraynic.datapath.wire.UdpHeader;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.ConcurrentCountersManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two {@link UdpSocketPacketPort}s on loopback, IPv4 (127.0.0.1 and 127.0.0.2, one port number) or IPv6 (both on
 * {@code ::1}, told apart by their port numbers), and a plain Java socket playing a peer, or an attacker. What both
 * families do is one parameterised case ({@link Family}).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UdpSocketPacketPortTest
{
    static final int A = 0x7F00_0001;
    static final int B = 0x7F00_0002;
    static final int C = 0x7F00_0003;
    private static final int FRAME_ROOM = 1920;

    /** {@code ::1}: the one IPv6 address every host's loopback has. */
    private static final long LOOPBACK6_LOW = 1;

    private UdpSocketPacketPort a;
    private UdpSocketPacketPort b;
    private int udpPort;
    private final List<UdpSocketPacketPort> ipv6Ports = new ArrayList<>();

    static Function<String, AtomicCounter> counters()
    {
        final ConcurrentCountersManager manager = new ConcurrentCountersManager(
            new UnsafeBuffer(ByteBuffer.allocateDirect(64 * 1024)), new UnsafeBuffer(ByteBuffer.allocateDirect(16 * 1024)));
        return manager::newCounter;
    }

    /** A free port number on both addresses: picked at random, retried when taken (other tests run beside). */
    @BeforeEach
    void open()
    {
        final SplittableRandom random = new SplittableRandom();
        for (int attempt = 0; ; attempt++)
        {
            udpPort = 20_000 + random.nextInt(40_000);
            try
            {
                a = new UdpSocketPacketPort("a", A, udpPort, udpPort, 8, false, FRAME_ROOM, 1024, 0x0200_7F00_0001L,
                    new UdpPortCounters(counters(), "a: "));
                b = new UdpSocketPacketPort("b", B, udpPort, udpPort, 8, false, FRAME_ROOM, 1024, 0x0200_7F00_0002L,
                    new UdpPortCounters(counters(), "b: "));
                return;
            }
            catch (final IllegalStateException ex)
            {
                if (null != a)
                {
                    a.close();
                    a = null;
                }
                if (attempt > 20)
                {
                    throw ex;
                }
            }
        }
    }

    @AfterEach
    void close()
    {
        ipv6Ports.forEach(UdpSocketPacketPort::close);
        if (null != a)
        {
            a.close();
        }
        if (null != b)
        {
            b.close();
        }
    }

    /** What differs between the families: addresses, writers and the pair of ports; each behaviour is tested once. */
    enum Family
    {
        IPV4(42)
        {
            RoceFrameWriter fromSender()
            {
                return writer(A, B);
            }

            RoceFrameWriter fromElsewhere()
            {
                return writer(B, B);
            }

            RoceFrameWriter toWhereTheKernelWillNotSend()
            {
                return writer(A, 0xFFFF_FFFF); // broadcast without SO_BROADCAST: EACCES
            }

            RoceFrameWriter fromAttacker()
            {
                return writer(C, B);
            }

            int canonicalizeFromAttacker(final MemorySegment frame, final int length, final int port)
            {
                return UdpFrames.canonicalizeForSend(frame, 0, length, C, port, new Icrc());
            }

            InetAddress attackerAddress() throws Exception
            {
                return InetAddress.getByName("127.0.0.3");
            }

            InetAddress otherFamilyLoopback() throws Exception
            {
                return InetAddress.getByAddress(new byte[]{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1});
            }

            void assertSource(final RoceFrame frame, final boolean fromAttacker)
            {
                assertEquals(4, frame.ipVersion());
                assertEquals(fromAttacker ? C : A, frame.ipv4Source());
            }
        },

        IPV6(62)
        {
            RoceFrameWriter fromSender()
            {
                return writer6(LOOPBACK6_LOW, LOOPBACK6_LOW);
            }

            RoceFrameWriter fromElsewhere()
            {
                return writer6(2, LOOPBACK6_LOW); // ::2 is not the port's address
            }

            RoceFrameWriter toWhereTheKernelWillNotSend()
            {
                return writer6(LOOPBACK6_LOW, 0x0000_FFFF_0102_0304L); // IPv4-mapped on a V6ONLY socket: ENETUNREACH
            }

            RoceFrameWriter fromAttacker()
            {
                return writer6(LOOPBACK6_LOW, LOOPBACK6_LOW);
            }

            int canonicalizeFromAttacker(final MemorySegment frame, final int length, final int port)
            {
                return UdpFrames.canonicalizeIpv6ForSend(frame, 0, length, 0, LOOPBACK6_LOW, port, new Icrc());
            }

            InetAddress attackerAddress() throws Exception
            {
                return otherFamily().otherFamilyLoopback();
            }

            InetAddress otherFamilyLoopback() throws Exception
            {
                return InetAddress.getByName("127.0.0.1");
            }

            void assertSource(final RoceFrame frame, final boolean fromAttacker)
            {
                assertEquals(6, frame.ipVersion());
                assertEquals(0, frame.ipv6SourceHigh());
                assertEquals(LOOPBACK6_LOW, frame.ipv6SourceLow());
            }
        };

        final int headers;

        Family(final int headers)
        {
            this.headers = headers;
        }

        abstract RoceFrameWriter fromSender();

        abstract RoceFrameWriter fromElsewhere();

        abstract RoceFrameWriter toWhereTheKernelWillNotSend();

        abstract RoceFrameWriter fromAttacker();

        abstract int canonicalizeFromAttacker(MemorySegment frame, int length, int port);

        abstract InetAddress attackerAddress() throws Exception;

        /** @return the other family's loopback address, where the receiving port's number must not be reachable. */
        abstract InetAddress otherFamilyLoopback() throws Exception;

        abstract void assertSource(RoceFrame frame, boolean fromAttacker);

        Family otherFamily()
        {
            return this == IPV4 ? IPV6 : IPV4;
        }

        long udp()
        {
            return headers - UdpHeader.LENGTH;
        }
    }

    /** @return the sending and the receiving port of {@code family}: a and b, or two IPv6 ports on ::1. */
    private UdpSocketPacketPort[] ports(final Family family)
    {
        if (family == Family.IPV4)
        {
            return new UdpSocketPacketPort[]{a, b};
        }
        // a6 on udpPort + 1 sends to b6 on udpPort + 2
        ipv6Ports.add(new UdpSocketPacketPort("a6", 0, LOOPBACK6_LOW, udpPort + 1, udpPort + 2, 8, false, FRAME_ROOM, 1024,
            0x0200_0000_0001L, new UdpPortCounters(counters(), "a6: ")));
        ipv6Ports.add(new UdpSocketPacketPort("b6", 0, LOOPBACK6_LOW, udpPort + 2, udpPort + 1, 8, false, FRAME_ROOM, 1024,
            0x0200_0000_0001L, new UdpPortCounters(counters(), "b6: ")));
        return new UdpSocketPacketPort[]{ipv6Ports.get(0), ipv6Ports.get(1)};
    }

    private InetSocketAddress receiverAddress(final Family family) throws Exception
    {
        return family == Family.IPV4 ? new InetSocketAddress(InetAddress.getByName("127.0.0.2"), udpPort) :
            new InetSocketAddress(Family.IPV4.otherFamilyLoopback(), udpPort + 2);
    }

    private static RoceFrameWriter writer(final int source, final int destination)
    {
        return new RoceFrameWriter().ethernet(0x0200_0000_00AAL, 0x0200_0000_00BBL).ipv4(source, destination)
            .opcode(Opcode.RC_SEND_ONLY).destQp(0x99);
    }

    private static RoceFrameWriter writer6(final long sourceLow, final long destinationLow)
    {
        return new RoceFrameWriter().ethernet(0x0200_0000_00AAL, 0x0200_0000_00BBL).ipv6(0, sourceLow, 0, destinationLow)
            .flowLabel(0x12345).ttl(9).opcode(Opcode.RC_SEND_ONLY).destQp(0x99);
    }

    private static int receive(final PacketPort port, final PacketBurst burst, final int expected)
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (burst.size() < expected && System.nanoTime() < deadline)
        {
            if (port.receive(burst) == 0)
            {
                Thread.onSpinWait();
            }
        }
        return burst.size();
    }

    /** Sends 32 frames of consecutive engine source ports and ECN 0 to 3 from the first port: they leave it. */
    private static void send32(final UdpSocketPacketPort sender, final Family family)
    {
        final PacketBurst tx = sender.newBurst(32);
        assertTrue(sender.allocate(tx, 32));
        for (int i = 0; i < 32; i++)
        {
            tx.length(i, family.fromSender().udpSourcePort(49_152 + i).ecn(i % 4).psn(i).writeFrame(tx.memory(), tx.offset(i),
                100 + i));
        }
        assertEquals(32, sender.transmit(tx));
        assertEquals(0, tx.size());
    }

    @ParameterizedTest
    @EnumSource(Family.class)
    void shouldCarryABurstWithEcnAcrossEveryoneOfItsSourcePortsWithAValidIcrc(final Family family)
    {
        final UdpSocketPacketPort[] pair = ports(family);
        final UdpSocketPacketPort sender = pair[0];
        final UdpSocketPacketPort receiver = pair[1];
        assertEquals(family == Family.IPV6, sender.isIpv6());
        assertEquals(family.headers, sender.headersLength());
        final PacketBurst rx = receiver.newBurst(32);
        send32(sender, family);
        assertEquals(32, receive(receiver, rx, 32));

        final RoceParser parser = new RoceParser(new ParseCounters());
        final RoceFrame frame = new RoceFrame();
        final Set<Integer> sourcePorts = new HashSet<>();
        final Set<Integer> psns = new HashSet<>();
        for (int i = 0; i < 32; i++)
        {
            assertEquals(FrameClass.ROCE, parser.parse(rx.memory(), rx.offset(i), rx.length(i), frame), frame.toString());
            assertTrue(frame.icrcValid());
            assertEquals(family.headers + 12 + 100 + frame.psn() + frame.padCount() + 4, rx.length(i));
            assertEquals(frame.psn() % 4, frame.ecn(), "the TOS byte / traffic class travels with each datagram, CE included");
            family.assertSource(frame, false);
            assertEquals(0x99, frame.destQp());
            assertEquals(0, frame.udpChecksum(), "none (IPv4), or left out until a capture looks (IPv6)");
            sourcePorts.add(frame.udpSourcePort());
            psns.add(frame.psn());
        }
        final Set<Integer> expected = new HashSet<>();
        for (final int port : sender.sourcePorts())
        {
            expected.add(port);
        }
        assertEquals(8, expected.size());
        assertEquals(expected, sourcePorts, "32 consecutive engine source ports spread over all 8 sockets");
        assertEquals(32, psns.size());

        receiver.release(rx);
        assertEquals(1024, sender.freeBuffers());
        assertEquals(1024, receiver.freeBuffers());
        assertEquals(32, sender.counters().txDatagrams());
        assertEquals(32, receiver.counters().rxDatagrams());
    }

    @Test
    void shouldSendEachFrameFromTheSocketItsEngineSourcePortMapsToAcrossTheMostSocketsAPortHolds()
    {
        final UdpSocketPacketPort receiver = ports(Family.IPV6)[1];
        final int socketCount = UdpSocketPacketPort.MAX_SOURCE_PORTS;
        final UdpSocketPacketPort sender = new UdpSocketPacketPort("w6", 0, LOOPBACK6_LOW, udpPort + 3, udpPort + 2,
            socketCount, false, FRAME_ROOM, 1024, 0x0200_0000_0003L, new UdpPortCounters(counters(), "w6: "));
        ipv6Ports.add(sender);
        final int[] socketPorts = sender.sourcePorts();
        assertEquals(socketCount, socketPorts.length);
        assertEquals(socketCount, Arrays.stream(socketPorts).distinct().count(), "a distinct port per socket");

        // three full bursts whose engine ports map to every socket once and then to a few sockets many times: a
        // burst's grouping must start from empty groups each time
        final Set<Integer> seen = new HashSet<>();
        final RoceParser parser = new RoceParser(new ParseCounters());
        final RoceFrame frame = new RoceFrame();
        final int burst = UdpSocketPacketPort.MAX_BURST;
        for (int round = 0; round < 3; round++)
        {
            final PacketBurst tx = sender.newBurst(burst);
            assertTrue(sender.allocate(tx, burst));
            for (int i = 0; i < burst; i++)
            {
                final int psn = round * burst + i;
                final int enginePort = round < 2 ? 49_152 + psn : 49_152 + 7 * (i % 3);
                tx.length(i, Family.IPV6.fromSender().udpSourcePort(enginePort).psn(psn)
                    .writeFrame(tx.memory(), tx.offset(i), 64));
            }
            assertEquals(burst, sender.transmit(tx));
            final PacketBurst rx = receiver.newBurst(burst);
            assertEquals(burst, receive(receiver, rx, burst));
            for (int i = 0; i < burst; i++)
            {
                assertEquals(FrameClass.ROCE, parser.parse(rx.memory(), rx.offset(i), rx.length(i), frame));
                assertTrue(frame.icrcValid(), "the ICRC recomputed for the socket's port");
                final int psn = frame.psn();
                final int enginePort = psn < 2 * burst ? 49_152 + psn : 49_152 + 7 * ((psn - 2 * burst) % 3);
                assertEquals(socketPorts[enginePort % socketCount], frame.udpSourcePort(), "PSN " + psn);
                seen.add(frame.udpSourcePort());
            }
            receiver.release(rx);
        }
        assertEquals(socketCount, seen.size(), "every socket carried frames");
        assertEquals(3L * burst, sender.counters().txDatagrams());
        assertEquals(1024, sender.freeBuffers());
    }

    /**
     * A capture of the receiving port holds valid frames: an IPv6 frame's UDP checksum, which the port leaves out, is
     * written for the frames the tap takes ({@link PacketPort#completeReceived}), and tshark, checking checksums,
     * flags nothing; an IPv4 frame keeps 0, "no checksum". Without the completion every IPv6 frame would be flagged
     * "Illegal checksum value (0)".
     */
    @ParameterizedTest
    @EnumSource(Family.class)
    void shouldCaptureReceivedFramesWithTheUdpChecksumsTheirFamilyRequires(final Family family, @TempDir final Path dir)
        throws Exception
    {
        final UdpSocketPacketPort[] pair = ports(family);
        final Path capture = dir.resolve("rx.pcapng");
        try (PcapWriter writer = PcapWriter.pcapng(capture))
        {
            final PacketPort captured = new CapturingPacketPort(pair[1], writer);
            final PacketBurst rx = captured.newBurst(32);
            send32(pair[0], family);
            assertEquals(32, receive(captured, rx, 32));
            for (int i = 0; i < 32; i++)
            {
                final int checksum = UdpHeader.checksum(rx.memory(), rx.offset(i) + family.udp());
                if (family == Family.IPV6)
                {
                    assertEquals(UdpHeader.computeIpv6Checksum(rx.memory(), rx.offset(i) + EthernetHeader.LENGTH,
                        rx.offset(i) + family.udp(), rx.length(i) - family.headers + UdpHeader.LENGTH), checksum);
                }
                else
                {
                    assertEquals(0, checksum);
                }
            }
            captured.release(rx);
        }

        final List<CapturedFrame> frames = PcapReader.readAll(capture);
        assertEquals(32, frames.size());
        for (final CapturedFrame frame : frames)
        {
            final MemorySegment data = MemorySegment.ofArray(frame.data());
            final int checksum = UdpHeader.checksum(data, family.udp());
            if (family == Family.IPV6)
            {
                assertNotEquals(0, checksum, "mandatory over IPv6 (RFC 8200 8.1)");
                assertEquals(UdpHeader.computeIpv6Checksum(data, EthernetHeader.LENGTH, family.udp(),
                    frame.data().length - family.headers + UdpHeader.LENGTH), checksum);
            }
            else
            {
                assertEquals(0, checksum);
            }
        }
        if (Tshark.available())
        {
            final Path config = Files.createDirectory(dir.resolve("wireshark"));
            final List<Map<String, String>> decoded = Tshark.fields(capture, config);
            assertEquals(32, decoded.size());
            for (final Map<String, String> t : decoded)
            {
                final String where = family + " frame " + t.get("frame.number");
                assertEquals("", t.get("_ws.expert"), where);
                assertEquals("", t.get("_ws.malformed"), where);
                assertEquals(family == Family.IPV6 ? "1" : "3", t.get("udp.checksum.status"), where + ": good / none");
            }
        }
    }

    /**
     * The UDP port writes its own UDP checksums ({@link PacketPort#writesUdpChecksum}: the kernel's), so an engine
     * sending through it leaves them out over IPv6; a capture of what it sends still shows each frame with the
     * checksum RFC 8200 requires, and the datagrams arrive.
     */
    @Test
    void shouldCaptureSentIpv6FramesWithTheUdpChecksumTheWriterLeftToTheKernel(@TempDir final Path dir) throws Exception
    {
        final UdpSocketPacketPort[] pair = ports(Family.IPV6);
        assertTrue(pair[0].writesUdpChecksum());
        final Path capture = dir.resolve("tx.pcapng");
        try (PcapWriter writer = PcapWriter.pcapng(capture))
        {
            final PacketPort captured = new CapturingPacketPort(pair[0], writer);
            assertTrue(captured.writesUdpChecksum(), "the tap says what its port does");
            final PacketBurst tx = captured.newBurst(32);
            assertTrue(captured.allocate(tx, 32));
            final RoceFrameWriter frames = Family.IPV6.fromSender().ipv6UdpChecksum(false);
            for (int i = 0; i < 32; i++)
            {
                tx.length(i, frames.psn(i).writeFrame(tx.memory(), tx.offset(i), 100 + i));
                assertEquals(0, UdpHeader.checksum(tx.memory(), tx.offset(i) + Family.IPV6.udp()), "left out");
            }
            assertEquals(32, captured.transmit(tx));
        }
        final PacketBurst rx = pair[1].newBurst(32);
        assertEquals(32, receive(pair[1], rx, 32));
        pair[1].release(rx);
        final List<CapturedFrame> sent = PcapReader.readAll(capture);
        assertEquals(32, sent.size());
        for (final CapturedFrame frame : sent)
        {
            final MemorySegment data = MemorySegment.ofArray(frame.data());
            assertEquals(UdpHeader.computeIpv6Checksum(data, EthernetHeader.LENGTH, Family.IPV6.udp(),
                frame.data().length - Family.IPV6.headers + UdpHeader.LENGTH), UdpHeader.checksum(data, Family.IPV6.udp()));
        }
    }

    /**
     * An attacker's socket throws what it would at the receiving port: empty, truncated, over-long and non-BTH
     * datagrams, random bytes past the port's checks, and a socket of the other family tries the same port number on
     * its loopback (an IPv6 port is V6ONLY: nothing arrives). Each is counted by reason, no buffer is lost, and a
     * genuine frame from the attacker's socket, CE-marked by the socket itself, still arrives with a valid ICRC.
     */
    @ParameterizedTest
    @EnumSource(Family.class)
    void shouldCountHostileDatagramsAsDropsByReasonAndKeepReceiving(final Family family) throws Exception
    {
        final UdpSocketPacketPort receiver = ports(family)[1];
        final PacketBurst rx = receiver.newBurst(32);
        final InetSocketAddress target = receiverAddress(family);
        try (DatagramSocket attacker = new DatagramSocket(new InetSocketAddress(family.attackerAddress(), 0));
            DatagramSocket otherFamily = new DatagramSocket(new InetSocketAddress(family.otherFamilyLoopback(), 0)))
        {
            final SplittableRandom random = new SplittableRandom(7);
            final byte[] noise = new byte[3000];
            random.nextBytes(noise);
            noise[1] = 0; // transport version 0: a "BTH" the parser, not the port, must refuse
            otherFamily.send(new DatagramPacket(noise, 100, new InetSocketAddress(family.otherFamilyLoopback(),
                target.getPort())));
            attacker.send(new DatagramPacket(noise, 0, target));
            attacker.send(new DatagramPacket(noise, 3, target));
            attacker.send(new DatagramPacket(noise, 15, target));
            attacker.send(new DatagramPacket(noise, 2000, target)); // longer than a buffer
            final byte[] badVersion = noise.clone();
            badVersion[1] = 0x05;
            attacker.send(new DatagramPacket(badVersion, 40, target));
            attacker.send(new DatagramPacket(noise, 500, target)); // random bytes past the port's checks

            final MemorySegment frame = Arena.ofAuto().allocate(2048, 64);
            final int length = family.fromAttacker().udpSourcePort(50_000).ecn(2).psn(5).writeFrame(frame, 0, 64);
            final int payload = family.canonicalizeFromAttacker(frame, length, attacker.getLocalPort());
            attacker.setTrafficClass(0x03);
            attacker.send(new DatagramPacket(frame.asSlice(family.headers, payload).toArray(ValueLayout.JAVA_BYTE), payload,
                target));
        }

        assertEquals(2, receive(receiver, rx, 2), "the random 500 bytes and the genuine frame");
        final UdpPortCounters c = receiver.counters();
        assertEquals(3, c.drops(UdpPortCounters.Reason.RX_SHORT), "0, 3 and 15 bytes: no room for a BTH and ICRC");
        assertEquals(1, c.drops(UdpPortCounters.Reason.RX_TOO_LONG));
        assertEquals(1, c.drops(UdpPortCounters.Reason.RX_NOT_BTH));
        assertEquals(0, c.drops(UdpPortCounters.Reason.RX_WRONG_FAMILY), "nothing of the other family reached the socket");

        final RoceParser parser = new RoceParser(new ParseCounters());
        final RoceFrame parsed = new RoceFrame();
        assertEquals(FrameClass.MALFORMED, parser.parse(rx.memory(), rx.offset(0), rx.length(0), parsed));
        assertEquals(FrameClass.ROCE, parser.parse(rx.memory(), rx.offset(1), rx.length(1), parsed), parsed.toString());
        assertTrue(parsed.icrcValid());
        assertEquals(3, parsed.ecn(), "CE set by the sending socket arrives");
        family.assertSource(parsed, true);
        receiver.release(rx);
        assertEquals(1024, receiver.freeBuffers(), "every dropped datagram's buffer is back");
    }

    @Test
    void shouldCountWhatTheKernelDroppedWhenTheReceiveBufferOverflowed() throws Exception
    {
        final InetSocketAddress target = new InetSocketAddress(InetAddress.getByName("127.0.0.2"), udpPort);
        final byte[] bth = new byte[20]; // transport version 0: past the port's checks
        final int flood = 60_000;
        final PacketBurst rx = b.newBurst(64);
        long received = 0;
        try (DatagramSocket sender = new DatagramSocket(new InetSocketAddress(InetAddress.getByName("127.0.0.3"), 0)))
        {
            for (int i = 0; i < flood; i++)
            {
                sender.send(new DatagramPacket(bth, bth.length, target)); // nobody receives meanwhile
            }
            received += drain(rx);
            sender.send(new DatagramPacket(bth, bth.length, target)); // carries the kernel's final count
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (received + b.counters().rxKernelDrops() < flood + 1 && System.nanoTime() < deadline)
            {
                received += drain(rx);
            }
        }
        assertTrue(b.counters().rxKernelDrops() > 0, "a buffer of " + flood + " datagrams overflowed");
        assertEquals(flood + 1, received + b.counters().rxKernelDrops(), "each datagram received or counted dropped");
        assertEquals(received, b.counters().rxDatagrams());
    }

    private long drain(final PacketBurst rx)
    {
        long received = 0;
        int n;
        while ((n = b.receive(rx)) > 0)
        {
            received += n;
            b.release(rx);
        }
        return received;
    }

    @ParameterizedTest
    @EnumSource(Family.class)
    void shouldDropUnsendableFramesCountedWithoutWedgingTheBurst(final Family family)
    {
        final UdpSocketPacketPort[] pair = ports(family);
        final UdpSocketPacketPort sender = pair[0];
        final PacketBurst tx = sender.newBurst(8);
        assertTrue(sender.allocate(tx, 5));
        tx.length(0, family.fromElsewhere().writeFrame(tx.memory(), tx.offset(0), 10)); // not our source address
        tx.length(1, family.toWhereTheKernelWillNotSend().writeFrame(tx.memory(), tx.offset(1), 10));
        tx.length(2, 20); // garbage
        tx.length(3, family.otherFamily().fromSender().writeFrame(tx.memory(), tx.offset(3), 10));
        tx.length(4, family.fromSender().psn(9).writeFrame(tx.memory(), tx.offset(4), 10));

        assertEquals(5, sender.transmit(tx), "all taken: four dropped, one sent");
        assertEquals(0, tx.size());
        final UdpPortCounters c = sender.counters();
        assertEquals(1, c.drops(UdpPortCounters.Reason.TX_WRONG_SOURCE));
        assertEquals(1, c.drops(UdpPortCounters.Reason.TX_ERROR));
        assertEquals(2, c.drops(UdpPortCounters.Reason.TX_NOT_IP_UDP), "the garbage and the other family's frame");
        assertEquals(1, c.txDatagrams());
        assertTrue(sender.lastSendErrno() > 0);
        assertEquals(1024, sender.freeBuffers());

        final PacketBurst rx = pair[1].newBurst(8);
        assertEquals(1, receive(pair[1], rx, 1));
        final RoceFrame parsed = new RoceFrame();
        assertEquals(FrameClass.ROCE, new RoceParser(new ParseCounters()).parse(rx.memory(), rx.offset(0), rx.length(0), parsed));
        assertEquals(9, parsed.psn());
        pair[1].release(rx);
    }

    @Test
    void shouldRefuseWhatItCannotServe()
    {
        assertThrows(IllegalArgumentException.class, () -> a.newBurst(UdpSocketPacketPort.MAX_BURST + 1));
        final IllegalStateException taken = assertThrows(IllegalStateException.class, () -> new UdpSocketPacketPort("c", A,
            udpPort, udpPort, 1, false, FRAME_ROOM, 1024, 0, new UdpPortCounters(counters(), "c: ")));
        assertTrue(taken.getMessage().contains("Address already in use"), taken.getMessage());
        final IllegalStateException notLocal = assertThrows(IllegalStateException.class, () -> new UdpSocketPacketPort("d",
            0x0A0B_0C0D, udpPort, udpPort, 1, false, FRAME_ROOM, 1024, 0, new UdpPortCounters(counters(), "d: ")));
        assertTrue(notLocal.getMessage().contains("bind"), notLocal.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new UdpSocketPacketPort("e", A, udpPort + 1, udpPort, 0, false,
            FRAME_ROOM, 1024, 0, new UdpPortCounters(counters(), "e: ")));
    }

    @Test
    void shouldRefuseIpv6AddressesAPortCannotBind()
    {
        final UdpPortCounters c = new UdpPortCounters(counters(), "x: ");
        for (final long[] address : new long[][]{{0, 0}, {0xFE80_0000_0000_0000L, 1}, {0, 0x0000_FFFF_7F00_0001L}})
        {
            assertThrows(IllegalArgumentException.class, () -> new UdpSocketPacketPort("x", address[0], address[1], udpPort,
                udpPort, 1, false, FRAME_ROOM, 1024, 0, c), java.util.Arrays.toString(address));
        }
        final IllegalStateException notLocal = assertThrows(IllegalStateException.class, () -> new UdpSocketPacketPort("x",
            0xFD00_0000_0000_0000L, 0x99, udpPort, udpPort, 1, false, FRAME_ROOM, 1024, 0, c));
        assertTrue(notLocal.getMessage().contains("bind([fd00::99]"), notLocal.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new UdpSocketPacketPort("x", 0, 1, udpPort, udpPort, 1, false,
            61 + UdpFrames.MIN_PAYLOAD_LENGTH, 1024, 0, c), "room for 62 bytes of headers");
    }
}
