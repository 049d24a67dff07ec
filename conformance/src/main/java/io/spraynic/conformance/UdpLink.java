package io.spraynic.conformance;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.zip.CRC32;

/**
 * The suite's wire to a target over kernel UDP sockets (RoCEv2 over UDP port 4791, S2.1), IPv4 or IPv6: each
 * datagram is a UDP payload, BTH to ICRC. A socket carries no IP header, so the ICRC (S2.6) of what it sends and
 * receives is computed over the IP and UDP headers the datagram would have had: IPv4 without options,
 * identification 0, DF (the form SprayNIC's udp ports synthesize and check), or the 40-byte IPv6 header without
 * extension headers (traffic class, flow label and hop limit masked, as S2.6 says), the addresses and ports of the
 * datagram, destination port 4791 whatever port the receiving socket is bound to. The socket shows the ECN field of each datagram received
 * and sends with the one a check chooses (ECT(0) unless told, S2.3). Control path: allocates.
 */
final class UdpLink implements AutoCloseable
{
    /** Wrong ICRCs diagnosed ({@link #identificationNote}) per link: a target sending many costs no more. */
    static final int MAX_IDENTIFICATION_NOTES = 16;

    private int identificationNotes;
    /** The target's packets a wait skipped: shorter than the fields its condition read of them. */
    private int truncatedPackets;
    /** Datagrams from other addresses a {@link #receive} reads past its deadline before it gives up. */
    static final int MAX_OTHERS_PAST_DEADLINE = 64;

    /** The RoCEv2 destination port of every packet's UDP header (S2.1). */
    static final int ROCE_V2_PORT = 4791;
    /** IP ECN codepoints (RFC 3168): the low two bits of the IPv4 TOS byte. */
    static final int NOT_ECT = 0;
    static final int ECT_0 = 2;
    static final int CE = 3;

    private final EcnSocket socket;
    private final InetSocketAddress local;
    private final InetSocketAddress remote;

    /**
     * @param local  the address and port the suite binds (the target sends its answers there).
     * @param remote the target's address and port.
     */
    UdpLink(final InetSocketAddress local, final InetSocketAddress remote) throws IOException
    {
        if (local.getAddress() instanceof Inet4Address != remote.getAddress() instanceof Inet4Address)
        {
            throw new IllegalArgumentException("the udp link's ends are of one IP version: " + local + " to " + remote);
        }
        this.local = local;
        this.remote = remote;
        socket = new EcnSocket(local, 4 << 20);
    }

    InetSocketAddress local()
    {
        return local;
    }

    /**
     * Sends a packet: {@code body} (BTH to pad) and its ICRC, computed as S2.6 says, or that ICRC with one bit
     * flipped when {@code corruptIcrc}.
     */
    void send(final byte[] body, final boolean corruptIcrc) throws IOException
    {
        send(body, corruptIcrc, ECT_0);
    }

    /** Sends a packet as {@link #send(byte[], boolean)} does, with IP ECN field {@code ecn}. */
    void send(final byte[] body, final boolean corruptIcrc, final int ecn) throws IOException
    {
        send(body, corruptIcrc, ecn, 0);
    }

    /**
     * Sends a packet whose ICRC is computed over an IPv4 header with {@code identification} (0 as S2.4 says; another
     * to play a sender that breaks it: the socket itself still sends 0).
     */
    void send(final byte[] body, final boolean corruptIcrc, final int ecn, final int identification) throws IOException
    {
        final byte[] covered = pseudoHeader(body, ip(local), local.getPort(), ip(remote));
        if (covered[8] == IPV4_VERSION_IHL)
        {
            covered[8 + 4] = (byte)(identification >>> 8);
            covered[8 + 5] = (byte)identification;
        }
        final CRC32 crc = new CRC32();
        crc.update(covered);
        final int icrc = (int)crc.getValue() ^ (corruptIcrc ? 0x0100_0000 : 0);
        final byte[] datagram = Arrays.copyOf(body, body.length + SprayWire.ICRC_LENGTH);
        for (int i = 0; i < 4; i++)
        {
            datagram[body.length + i] = (byte)(icrc >>> (8 * i)); // least significant byte first (S2.6)
        }
        socket.send(datagram, remote, ecn & 3);
    }

    /**
     * @return the next datagram from the target within {@code timeoutNanos}, or null; datagrams from any other
     * address are ignored.
     */
    Packet receive(final long timeoutNanos) throws IOException
    {
        final long deadline = System.nanoTime() + timeoutNanos;
        int othersPastDeadline = 0;
        while (true)
        {
            final EcnSocket.Datagram d = socket.receive(Math.max(0, deadline - System.nanoTime()));
            if (null == d)
            {
                return null;
            }
            if (d.from().getAddress().equals(remote.getAddress()))
            {
                final boolean valid = icrcValid(d.bytes(), ip(d.from()), d.from().getPort());
                final Packet p = new Packet(d.bytes(), valid, d.tos());
                p.sourcePort = d.from().getPort();
                p.arrivalNanos = d.arrivalNanos();
                if (!valid && d.from().getAddress() instanceof Inet4Address && identificationNotes < MAX_IDENTIFICATION_NOTES)
                {
                    identificationNotes++; // 65,535 CRCs over the datagram each: a diagnosis for the first few only
                    p.icrcNote = identificationNote(d.bytes(), ip(d.from()), d.from().getPort());
                }
                return p;
            }
            if (System.nanoTime() - deadline >= 0 && ++othersPastDeadline > MAX_OTHERS_PAST_DEADLINE)
            {
                return null; // others' datagrams keep coming: the wait ends all the same, a few reads late at most
            }
        }
    }

    private boolean icrcValid(final byte[] datagram, final byte[] source, final int sourcePort)
    {
        if (datagram.length < SprayWire.BTH_LENGTH + SprayWire.ICRC_LENGTH)
        {
            return false;
        }
        final int bodyLength = datagram.length - SprayWire.ICRC_LENGTH;
        final int expected = icrc(Arrays.copyOf(datagram, bodyLength), source, sourcePort, ip(local));
        return expected == Packet.u32(reverse(datagram, bodyLength), 0);
    }

    /**
     * A wrong ICRC may be a right one over another IPv4 header than S2.4's (identification 0): the socket does not
     * show the header, so this tries every identification, to say which the sender used.
     *
     * @return a note naming the identification whose header the ICRC matches, or "" when none does.
     */
    private String identificationNote(final byte[] datagram, final byte[] source, final int sourcePort)
    {
        if (datagram.length < SprayWire.BTH_LENGTH + SprayWire.ICRC_LENGTH)
        {
            return "";
        }
        final int bodyLength = datagram.length - SprayWire.ICRC_LENGTH;
        final byte[] pseudo = pseudoHeader(Arrays.copyOf(datagram, bodyLength), source, sourcePort, ip(local));
        final int received = Packet.u32(reverse(datagram, bodyLength), 0);
        final CRC32 crc = new CRC32();
        for (int id = 1; id <= 0xFFFF; id++)
        {
            pseudo[8 + 4] = (byte)(id >>> 8);
            pseudo[8 + 5] = (byte)id;
            crc.reset();
            crc.update(pseudo);
            if ((int)crc.getValue() == received)
            {
                return "its ICRC is right over an IPv4 header with identification " + id + ", which S2.4 requires to be 0";
            }
        }
        return "";
    }

    private static byte[] reverse(final byte[] b, final int at)
    {
        return new byte[]{b[at + 3], b[at + 2], b[at + 1], b[at]};
    }

    /**
     * S2.6: CRC-32 over 8 bytes of 0xFF, the IPv4 header (TOS, TTL, checksum as ones), the UDP header (checksum as
     * ones), the BTH with byte 4 as ones, and the rest of {@code body}.
     */
    static int icrc(final byte[] body, final int source, final int sourcePort, final int destination)
    {
        return icrc(body, ByteBuffer.allocate(4).putInt(source).array(), sourcePort,
            ByteBuffer.allocate(4).putInt(destination).array());
    }

    /**
     * S2.6 for either IP version ({@code source} and {@code destination} of 4 or 16 bytes): over IPv6 the header is
     * the 40-byte fixed one, traffic class, flow label and hop limit as ones, payload length the UDP length.
     */
    static int icrc(final byte[] body, final byte[] source, final int sourcePort, final byte[] destination)
    {
        final CRC32 crc = new CRC32();
        crc.update(pseudoHeader(body, source, sourcePort, destination));
        return (int)crc.getValue();
    }

    private static final byte IPV4_VERSION_IHL = 0x45;
    private static final int IPV6_HEADER_LENGTH = 40;
    private static final int UDP = 17;

    /**
     * @return the bytes S2.6's CRC covers, variant fields as ones; for IPv4 identification 0 (at offset 8 + 4).
     */
    private static byte[] pseudoHeader(final byte[] body, final byte[] source, final int sourcePort,
        final byte[] destination)
    {
        final int udpLength = 8 + body.length + SprayWire.ICRC_LENGTH;
        final boolean ipv6 = source.length == 16;
        final ByteBuffer pseudo = ByteBuffer.allocate(8 + (ipv6 ? IPV6_HEADER_LENGTH : 20) + 8 + body.length);
        pseudo.putLong(-1L);
        if (ipv6)
        {
            // version 6, then traffic class and flow label all ones; payload length; next header; hop limit as one
            pseudo.putInt(0x6FFF_FFFF).putShort((short)udpLength).put((byte)UDP).put((byte)0xFF).put(source)
                .put(destination);
        }
        else
        {
            pseudo.put(IPV4_VERSION_IHL).put((byte)0xFF).putShort((short)(20 + udpLength)).putShort((short)0)
                .putShort((short)0x4000).put((byte)0xFF).put((byte)UDP).putShort((short)0xFFFF).put(source)
                .put(destination);
        }
        pseudo.putShort((short)sourcePort).putShort((short)ROCE_V2_PORT).putShort((short)udpLength).putShort((short)0xFFFF);
        final int bth = pseudo.position();
        pseudo.put(body);
        final byte[] all = pseudo.array();
        all[bth + 4] = (byte)0xFF;
        return all;
    }

    private static byte[] ip(final InetSocketAddress address)
    {
        return address.getAddress().getAddress();
    }

    /** Counts a packet a wait skipped for being shorter than the fields its condition read. */
    void countTruncated()
    {
        truncatedPackets++;
    }

    /** @return the packets of the target skipped so far for being too short for the fields read of them. */
    int truncatedPackets()
    {
        return truncatedPackets;
    }

    @Override
    public void close() throws IOException
    {
        socket.close();
    }
}
