package io.spraynic.datapath.port;

import io.spraynic.datapath.wire.FrameClass;
import io.spraynic.datapath.wire.Icrc;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceFrameWriter;
import io.spraynic.datapath.wire.RoceParser;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.ConcurrentCountersManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two {@link UdpSocketPacketPort}s on loopback (127.0.0.1 and 127.0.0.2, one port number), and a plain Java
 * socket playing a peer, or an attacker.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UdpSocketPacketPortTest
{
    static final int A = 0x7F00_0001;
    static final int B = 0x7F00_0002;
    static final int C = 0x7F00_0003;
    private static final int FRAME_ROOM = 1920;

    private UdpSocketPacketPort a;
    private UdpSocketPacketPort b;
    private int udpPort;

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
        if (null != a)
        {
            a.close();
        }
        if (null != b)
        {
            b.close();
        }
    }

    private static RoceFrameWriter writer(final int source, final int destination)
    {
        return new RoceFrameWriter().ethernet(0x0200_0000_00AAL, 0x0200_0000_00BBL).ipv4(source, destination)
            .opcode(Opcode.RC_SEND_ONLY).destQp(0x99);
    }

    private static int receive(final UdpSocketPacketPort port, final PacketBurst burst, final int expected)
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

    @Test
    void shouldCarryABurstWithEcnAcrossEveryoneOfItsSourcePortsWithAValidIcrc()
    {
        final PacketBurst tx = a.newBurst(32);
        final PacketBurst rx = b.newBurst(32);
        assertTrue(a.allocate(tx, 32));
        for (int i = 0; i < 32; i++)
        {
            final int length = writer(A, B).udpSourcePort(49_152 + i).ecn(i % 4).psn(i).writeFrame(tx.memory(), tx.offset(i), 100 + i);
            tx.length(i, length);
        }

        assertEquals(32, a.transmit(tx));
        assertEquals(0, tx.size());
        assertEquals(32, receive(b, rx, 32));

        final RoceParser parser = new RoceParser(new ParseCounters());
        final RoceFrame frame = new RoceFrame();
        final Set<Integer> sourcePorts = new HashSet<>();
        final Set<Integer> psns = new HashSet<>();
        for (int i = 0; i < 32; i++)
        {
            assertEquals(FrameClass.ROCE, parser.parse(rx.memory(), rx.offset(i), rx.length(i), frame), frame.toString());
            assertTrue(frame.icrcValid());
            assertEquals(frame.psn() % 4, frame.ecn(), "the TOS byte travels with each datagram, CE included");
            assertEquals(A, frame.ipv4Source());
            assertEquals(0x99, frame.destQp());
            sourcePorts.add(frame.udpSourcePort());
            psns.add(frame.psn());
        }
        final Set<Integer> expected = new HashSet<>();
        for (final int port : a.sourcePorts())
        {
            expected.add(port);
        }
        assertEquals(8, expected.size());
        assertEquals(expected, sourcePorts, "32 consecutive engine source ports spread over all 8 sockets");
        assertEquals(32, psns.size());
        assertEquals(udpPort, a.sourcePorts()[0]);

        b.release(rx);
        assertEquals(1024, a.freeBuffers());
        assertEquals(1024, b.freeBuffers());
        assertEquals(32, a.counters().txDatagrams());
        assertEquals(32, b.counters().rxDatagrams());
    }

    @Test
    void shouldCountHostileDatagramsAsDropsByReasonAndKeepReceiving() throws Exception
    {
        final PacketBurst rx = b.newBurst(32);
        final InetSocketAddress target = new InetSocketAddress(InetAddress.getByName("127.0.0.2"), udpPort);
        try (DatagramSocket attacker = new DatagramSocket(new InetSocketAddress(InetAddress.getByName("127.0.0.3"), 0)))
        {
            final SplittableRandom random = new SplittableRandom(7);
            final byte[] noise = new byte[3000];
            random.nextBytes(noise);
            noise[1] = 0; // transport version 0: a "BTH" the parser, not the port, must refuse
            attacker.send(new DatagramPacket(noise, 0, target));
            attacker.send(new DatagramPacket(noise, 3, target));
            attacker.send(new DatagramPacket(noise, 15, target));
            attacker.send(new DatagramPacket(noise, 2000, target)); // longer than a buffer
            final byte[] badVersion = noise.clone();
            badVersion[1] = 0x05;
            attacker.send(new DatagramPacket(badVersion, 40, target));
            attacker.send(new DatagramPacket(noise, 500, target)); // random bytes past the port's checks

            // then a genuine frame, CE-marked by the socket itself: the receiver sees the mark and a valid ICRC
            final MemorySegment frame = Arena.ofAuto().allocate(2048, 64);
            final int length = writer(C, B).udpSourcePort(50_000).ecn(2).psn(5).writeFrame(frame, 0, 64);
            final int payload = UdpFrames.canonicalizeForSend(frame, 0, length, C, attacker.getLocalPort(), new Icrc());
            attacker.setTrafficClass(0x03);
            attacker.send(new DatagramPacket(frame.asSlice(UdpFrames.HEADERS_LENGTH, payload).toArray(ValueLayout.JAVA_BYTE),
                payload, target));
        }

        assertEquals(2, receive(b, rx, 2), "the random 500 bytes and the genuine frame");
        final UdpPortCounters c = b.counters();
        assertEquals(3, c.drops(UdpPortCounters.Reason.RX_SHORT), "0, 3 and 15 bytes: no room for a BTH and ICRC");
        assertEquals(1, c.drops(UdpPortCounters.Reason.RX_TOO_LONG));
        assertEquals(1, c.drops(UdpPortCounters.Reason.RX_NOT_BTH));

        final ParseCounters parseCounters = new ParseCounters();
        final RoceParser parser = new RoceParser(parseCounters);
        final RoceFrame parsed = new RoceFrame();
        assertEquals(FrameClass.MALFORMED, parser.parse(rx.memory(), rx.offset(0), rx.length(0), parsed));
        assertEquals(FrameClass.ROCE, parser.parse(rx.memory(), rx.offset(1), rx.length(1), parsed), parsed.toString());
        assertTrue(parsed.icrcValid());
        assertEquals(3, parsed.ecn(), "CE set by the sending socket arrives");
        assertEquals(C, parsed.ipv4Source());
        b.release(rx);
        assertEquals(1024, b.freeBuffers(), "every dropped datagram's buffer is back");
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

    @Test
    void shouldDropUnsendableFramesCountedWithoutWedgingTheBurst()
    {
        final PacketBurst tx = a.newBurst(8);
        assertTrue(a.allocate(tx, 4));
        tx.length(0, writer(B, B).writeFrame(tx.memory(), tx.offset(0), 10)); // not our source address
        tx.length(1, writer(A, 0xFFFF_FFFF).writeFrame(tx.memory(), tx.offset(1), 10)); // broadcast: the kernel says no
        tx.length(2, 20); // garbage
        tx.length(3, writer(A, B).psn(9).writeFrame(tx.memory(), tx.offset(3), 10));

        assertEquals(4, a.transmit(tx), "all taken: three dropped, one sent");
        assertEquals(0, tx.size());
        final UdpPortCounters c = a.counters();
        assertEquals(1, c.drops(UdpPortCounters.Reason.TX_WRONG_SOURCE));
        assertEquals(1, c.drops(UdpPortCounters.Reason.TX_ERROR));
        assertEquals(1, c.drops(UdpPortCounters.Reason.TX_NOT_IP_UDP));
        assertEquals(1, c.txDatagrams());
        assertTrue(a.lastSendErrno() > 0);
        assertEquals(1024, a.freeBuffers());

        final PacketBurst rx = b.newBurst(8);
        assertEquals(1, receive(b, rx, 1));
        final RoceFrame parsed = new RoceFrame();
        assertEquals(FrameClass.ROCE, new RoceParser(new ParseCounters()).parse(rx.memory(), rx.offset(0), rx.length(0), parsed));
        assertEquals(9, parsed.psn());
        b.release(rx);
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

    /** {@code ::1}: the one IPv6 address every host's loopback has. */
    private static final long LOOPBACK6_LOW = 1;
    private static final InetAddress LOOPBACK6 = ipv6Loopback();

    private static InetAddress ipv6Loopback()
    {
        try
        {
            return InetAddress.getByAddress(new byte[]{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1});
        }
        catch (final java.net.UnknownHostException ex)
        {
            throw new IllegalStateException(ex); // never: 16 bytes are an IPv6 address
        }
    }

    /** Two IPv6 ports on ::1, a on {@code udpPort + 1} sending to b on {@code udpPort + 2}. */
    private UdpSocketPacketPort[] ipv6Pair()
    {
        final UdpSocketPacketPort sender = new UdpSocketPacketPort("a6", 0, LOOPBACK6_LOW, udpPort + 1, udpPort + 2, 8, false,
            FRAME_ROOM, 1024, 0x0200_0000_0001L, new UdpPortCounters(counters(), "a6: "));
        try
        {
            return new UdpSocketPacketPort[]{sender, new UdpSocketPacketPort("b6", 0, LOOPBACK6_LOW, udpPort + 2,
                udpPort + 1, 8, false, FRAME_ROOM, 1024, 0x0200_0000_0001L, new UdpPortCounters(counters(), "b6: "))};
        }
        catch (final RuntimeException ex)
        {
            sender.close();
            throw ex;
        }
    }

    private static RoceFrameWriter writer6(final long sourceLow, final long destinationLow)
    {
        return new RoceFrameWriter().ethernet(0x0200_0000_00AAL, 0x0200_0000_00BBL).ipv6(0, sourceLow, 0, destinationLow)
            .flowLabel(0x12345).ttl(9).opcode(Opcode.RC_SEND_ONLY).destQp(0x99);
    }

    @Test
    void shouldCarryAnIpv6BurstWithEcnAcrossEveryoneOfItsSourcePortsAsFramesOfSixtyTwoByteHeadersWithAValidIcrc()
    {
        final UdpSocketPacketPort[] pair = ipv6Pair();
        final UdpSocketPacketPort a6 = pair[0];
        final UdpSocketPacketPort b6 = pair[1];
        try
        {
            assertTrue(a6.isIpv6());
            assertEquals(62, a6.headersLength());
            final PacketBurst tx = a6.newBurst(32);
            final PacketBurst rx = b6.newBurst(32);
            assertTrue(a6.allocate(tx, 32));
            for (int i = 0; i < 32; i++)
            {
                tx.length(i, writer6(1, 1).udpSourcePort(49_152 + i).ecn(i % 4).psn(i).writeFrame(tx.memory(), tx.offset(i),
                    100 + i));
            }
            assertEquals(32, a6.transmit(tx));
            assertEquals(32, receive(b6, rx, 32));

            final RoceParser parser = new RoceParser(new ParseCounters());
            final RoceFrame frame = new RoceFrame();
            final Set<Integer> sourcePorts = new HashSet<>();
            for (int i = 0; i < 32; i++)
            {
                assertEquals(FrameClass.ROCE, parser.parse(rx.memory(), rx.offset(i), rx.length(i), frame), frame.toString());
                assertTrue(frame.icrcValid());
                assertEquals(6, frame.ipVersion());
                assertEquals(62 + 12 + 100 + frame.psn() + frame.padCount() + 4, rx.length(i));
                assertEquals(frame.psn() % 4, frame.ecn(), "the traffic class travels with each datagram, CE included");
                assertEquals(0, frame.ipv6SourceHigh());
                assertEquals(1, frame.ipv6SourceLow());
                sourcePorts.add(frame.udpSourcePort());
            }
            final Set<Integer> expected = new HashSet<>();
            for (final int port : a6.sourcePorts())
            {
                expected.add(port);
            }
            assertEquals(expected, sourcePorts, "32 consecutive engine source ports spread over all 8 sockets");
            b6.release(rx);
            assertEquals(32, a6.counters().txDatagrams());
            assertEquals(32, b6.counters().rxDatagrams());
            assertEquals(1024, b6.freeBuffers());
        }
        finally
        {
            pair[0].close();
            pair[1].close();
        }
    }

    @Test
    void shouldDropIpv4FramesAndForeignSourcesOnAnIpv6PortCounted()
    {
        final UdpSocketPacketPort[] pair = ipv6Pair();
        final UdpSocketPacketPort a6 = pair[0];
        try
        {
            final PacketBurst tx = a6.newBurst(8);
            assertTrue(a6.allocate(tx, 3));
            tx.length(0, writer(A, B).writeFrame(tx.memory(), tx.offset(0), 10)); // IPv4 on an IPv6 port
            tx.length(1, writer6(2, 1).writeFrame(tx.memory(), tx.offset(1), 10)); // ::2 is not the port's address
            tx.length(2, writer6(1, 1).psn(3).writeFrame(tx.memory(), tx.offset(2), 10));
            assertEquals(3, a6.transmit(tx));
            assertEquals(1, a6.counters().drops(UdpPortCounters.Reason.TX_NOT_IP_UDP));
            assertEquals(1, a6.counters().drops(UdpPortCounters.Reason.TX_WRONG_SOURCE));
            assertEquals(1, a6.counters().txDatagrams());
            assertEquals(1024, a6.freeBuffers());

            // and an IPv4 port refuses the IPv6 frame
            final PacketBurst tx4 = a.newBurst(8);
            assertTrue(a.allocate(tx4, 1));
            tx4.length(0, writer6(1, 1).writeFrame(tx4.memory(), tx4.offset(0), 10));
            assertEquals(1, a.transmit(tx4));
            assertEquals(1, a.counters().drops(UdpPortCounters.Reason.TX_NOT_IP_UDP));
        }
        finally
        {
            pair[0].close();
            pair[1].close();
        }
    }

    /**
     * A third socket on ::1 throws what an attacker would at an IPv6 port: empty, truncated, over-long and non-BTH
     * datagrams, random bytes past the port's checks, and an IPv4 socket tries the same port number on 127.0.0.1
     * (V6ONLY: it never reaches the IPv6 socket). Each is counted by reason, no buffer is lost, and a genuine frame
     * from the attacker's socket still arrives with a valid ICRC.
     */
    @Test
    void shouldCountHostileIpv6DatagramsAsDropsByReasonAndKeepReceiving() throws Exception
    {
        final UdpSocketPacketPort[] pair = ipv6Pair();
        final UdpSocketPacketPort b6 = pair[1];
        try
        {
            final PacketBurst rx = b6.newBurst(32);
            final InetSocketAddress target = new InetSocketAddress(LOOPBACK6, udpPort + 2);
            try (DatagramSocket attacker = new DatagramSocket(new InetSocketAddress(LOOPBACK6, 0));
                DatagramSocket ipv4 = new DatagramSocket(new InetSocketAddress(InetAddress.getByName("127.0.0.3"), 0)))
            {
                final SplittableRandom random = new SplittableRandom(7);
                final byte[] noise = new byte[3000];
                random.nextBytes(noise);
                noise[1] = 0;
                ipv4.send(new DatagramPacket(noise, 100, new InetSocketAddress(InetAddress.getByName("127.0.0.1"),
                    udpPort + 2))); // nobody on 127.0.0.1 there: the IPv6 socket is V6ONLY
                attacker.send(new DatagramPacket(noise, 0, target));
                attacker.send(new DatagramPacket(noise, 15, target));
                attacker.send(new DatagramPacket(noise, 2000, target)); // longer than a buffer
                final byte[] badVersion = noise.clone();
                badVersion[1] = 0x05;
                attacker.send(new DatagramPacket(badVersion, 40, target));
                attacker.send(new DatagramPacket(noise, 500, target)); // random bytes past the port's checks

                final MemorySegment frame = Arena.ofAuto().allocate(2048, 64);
                final int length = writer6(1, 1).udpSourcePort(50_000).psn(5).writeFrame(frame, 0, 64);
                final int payload = UdpFrames.canonicalizeIpv6ForSend(frame, 0, length, 0, 1, attacker.getLocalPort(),
                    new Icrc());
                attacker.setTrafficClass(0x03);
                attacker.send(new DatagramPacket(frame.asSlice(UdpFrames.IPV6_HEADERS_LENGTH, payload)
                    .toArray(ValueLayout.JAVA_BYTE), payload, target));
            }
            assertEquals(2, receive(b6, rx, 2), "the random 500 bytes and the genuine frame");
            final UdpPortCounters c = b6.counters();
            assertEquals(2, c.drops(UdpPortCounters.Reason.RX_SHORT));
            assertEquals(1, c.drops(UdpPortCounters.Reason.RX_TOO_LONG));
            assertEquals(1, c.drops(UdpPortCounters.Reason.RX_NOT_BTH));
            assertEquals(0, c.drops(UdpPortCounters.Reason.RX_WRONG_FAMILY), "no IPv4 datagram reached the IPv6 socket");

            final RoceParser parser = new RoceParser(new ParseCounters());
            final RoceFrame parsed = new RoceFrame();
            assertEquals(FrameClass.MALFORMED, parser.parse(rx.memory(), rx.offset(0), rx.length(0), parsed));
            assertEquals(FrameClass.ROCE, parser.parse(rx.memory(), rx.offset(1), rx.length(1), parsed), parsed.toString());
            assertTrue(parsed.icrcValid());
            assertEquals(3, parsed.ecn(), "CE set by the sending socket's traffic class arrives");
            b6.release(rx);
            assertEquals(1024, b6.freeBuffers(), "every dropped datagram's buffer is back");
        }
        finally
        {
            pair[0].close();
            pair[1].close();
        }
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
