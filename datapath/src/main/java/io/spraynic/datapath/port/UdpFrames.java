package io.spraynic.datapath.port;

import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.Icrc;
import io.spraynic.datapath.wire.Ipv4Header;
import io.spraynic.datapath.wire.Ipv6Header;
import io.spraynic.datapath.wire.UdpHeader;

import java.lang.foreign.MemorySegment;

/**
 * The two conversions of a {@link UdpSocketPacketPort} between the engine's Ethernet/IPv4/UDP or
 * Ethernet/IPv6/UDP frames and the UDP payloads (BTH onwards) that kernel sockets carry. Both produce one <em>canonical</em> header, so the
 * ICRC a sending port computes is the one the receiving engine recomputes:
 * <ul>
 *     <li>IPv4 with no options, identification 0, DF, TTL 64, the checksum computed; TOS as sent (masked
 *     by the ICRC anyway, so a router's CE mark changes nothing);</li>
 *     <li>UDP source port: the sending socket's, which is what the receiver's kernel reports; destination
 *     port 4791, whatever port the receiving socket is bound to; checksum 0 (masked by the ICRC);</li>
 *     <li>Ethernet: destination the receiving plane's MAC, source {@code 02:00:} and the sender's IPv4
 *     address (locally administered, so a capture still tells senders apart); neither is covered by the
 *     ICRC.</li>
 * </ul>
 * {@link #canonicalizeForSend} rewrites the engine's frame into that form (the identification the engine
 * increments and its flow's source port are what a socket cannot carry) and recomputes the ICRC over it.
 * What still protects the payload in flight is the UDP checksum, which the kernels compute and check; the
 * ICRC then covers sending port to receiving engine. {@link #synthesize} writes the same headers in front of
 * a received payload.
 * <p>
 * <b>IPv6</b> ({@link #synthesizeIpv6}, {@link #canonicalizeIpv6ForSend}): 62 bytes of headers (Ethernet 14,
 * IPv6 40 with no extension headers, UDP 8), as a DPDK port would hand the engine. The ICRC masks the traffic
 * class, flow label and hop limit, and IPv6 has no identification, so the UDP source port is all a sending port
 * rewrites; a synthesized header has flow label 0, hop limit 64 and the traffic class as received. The Ethernet
 * source is {@code 02:00:} and the last 32 bits of the sender's address.
 * <p>
 * <b>The IPv6 UDP checksum</b> is mandatory on a wire (RFC 8200 section 8.1: Wireshark flags a zero as illegal), but
 * nothing on the receive path reads it: the kernel verified the datagram's own checksum before the socket got it, and
 * the engine checks the ICRC. Summing every payload again would cost each received frame a pass over its bytes, so
 * {@link #synthesizeIpv6} leaves the field 0, the value a computed checksum never has (0 is sent as 0xFFFF), meaning
 * "verified, not written", as a NIC with checksum offload leaves it to the driver's flags.
 * {@link #completeIpv6Checksum} writes the real one where a frame is observed: the port does it for the frames a
 * capture tap takes ({@link PacketPort#completeReceived}), so a capture holds valid frames.
 */
public final class UdpFrames
{
    /** Ethernet, IPv4 (no options) and UDP headers: where a socket's payload starts in a frame. */
    public static final int HEADERS_LENGTH = EthernetHeader.LENGTH + Ipv4Header.LENGTH + UdpHeader.LENGTH;
    /** Ethernet, IPv6 (no extension headers) and UDP headers: where a socket's payload starts in an IPv6 frame. */
    public static final int IPV6_HEADERS_LENGTH = EthernetHeader.LENGTH + Ipv6Header.LENGTH + UdpHeader.LENGTH;
    /** The shortest payload that can be RoCEv2: a BTH and the ICRC. */
    public static final int MIN_PAYLOAD_LENGTH = BaseTransportHeader.LENGTH + Icrc.LENGTH;
    /** TTL of a synthesized header (masked by the ICRC). */
    static final int TTL = 64;
    /** {@link #canonicalizeForSend}: the frame is not IPv4 (no options) / UDP to port 4791 with a whole payload. */
    public static final int NOT_IPV4_UDP = -1;
    /** {@link #canonicalizeForSend}: the frame's IPv4 source is not the socket's address. */
    public static final int WRONG_SOURCE = -2;
    /** {@link #canonicalizeIpv6ForSend}: the frame is not IPv6 (no extension headers) / UDP to port 4791 with a whole payload. */
    public static final int NOT_IPV6_UDP = -3;

    private static final int IP = EthernetHeader.LENGTH;
    private static final int UDP = IP + Ipv4Header.LENGTH;
    private static final int UDP6 = IP + Ipv6Header.LENGTH;
    private static final long LOCALLY_ADMINISTERED = 0x0200_0000_0000L;
    /** A synthesized IPv6 frame's UDP checksum until {@link #completeIpv6Checksum}: never a computed value. */
    private static final int NO_CHECKSUM = 0;

    private UdpFrames()
    {
    }

    /**
     * Writes the canonical Ethernet, IPv4 and UDP headers of a received datagram in the
     * {@link #HEADERS_LENGTH} bytes at {@code frame}, in front of its {@code payloadLength} bytes.
     *
     * @return the frame's length.
     */
    public static int synthesize(final MemorySegment s, final long frame, final int payloadLength, final long localMac,
        final int sourceAddress, final int sourcePort, final int destinationAddress, final int tos)
    {
        EthernetHeader.destinationMac(s, frame, localMac);
        EthernetHeader.sourceMac(s, frame, LOCALLY_ADMINISTERED | Integer.toUnsignedLong(sourceAddress));
        EthernetHeader.etherType(s, frame, EthernetHeader.ETHER_TYPE_IPV4);
        final long ip = frame + IP;
        Ipv4Header.write(s, ip, tos, Ipv4Header.LENGTH + UdpHeader.LENGTH + payloadLength, 0, TTL, Ipv4Header.PROTOCOL_UDP,
            sourceAddress, destinationAddress);
        final long udp = frame + UDP;
        UdpHeader.sourcePort(s, udp, sourcePort);
        UdpHeader.destinationPort(s, udp, UdpHeader.ROCE_V2_PORT);
        UdpHeader.length(s, udp, UdpHeader.LENGTH + payloadLength);
        UdpHeader.checksum(s, udp, 0);
        return HEADERS_LENGTH + payloadLength;
    }

    /**
     * Checks that the {@code length} bytes at {@code frame} are an IPv4/UDP frame to port 4791 from
     * {@code sourceAddress}, rewrites its headers to the canonical form with {@code sourcePort}, and recomputes
     * its ICRC.
     *
     * @return the UDP payload's length (from {@link #HEADERS_LENGTH}), or {@link #NOT_IPV4_UDP} or
     * {@link #WRONG_SOURCE}, the frame untouched.
     */
    public static int canonicalizeForSend(final MemorySegment s, final long frame, final int length, final int sourceAddress,
        final int sourcePort, final Icrc icrc)
    {
        if (length < HEADERS_LENGTH + MIN_PAYLOAD_LENGTH ||
            EthernetHeader.etherType(s, frame) != EthernetHeader.ETHER_TYPE_IPV4)
        {
            return NOT_IPV4_UDP;
        }
        final long ip = frame + IP;
        final long udp = frame + UDP;
        if (Ipv4Header.version(s, ip) != 4 || Ipv4Header.headerLength(s, ip) != Ipv4Header.LENGTH ||
            Ipv4Header.protocol(s, ip) != Ipv4Header.PROTOCOL_UDP || Ipv4Header.isFragment(s, ip) ||
            UdpHeader.destinationPort(s, udp) != UdpHeader.ROCE_V2_PORT)
        {
            return NOT_IPV4_UDP;
        }
        final int udpLength = UdpHeader.length(s, udp);
        if (udpLength < UdpHeader.LENGTH + MIN_PAYLOAD_LENGTH || UDP + udpLength > length ||
            Ipv4Header.totalLength(s, ip) != Ipv4Header.LENGTH + udpLength)
        {
            return NOT_IPV4_UDP;
        }
        if (Ipv4Header.sourceAddress(s, ip) != sourceAddress)
        {
            return WRONG_SOURCE;
        }
        Ipv4Header.identification(s, ip, 0);
        Ipv4Header.flagsAndFragmentOffset(s, ip, Ipv4Header.FLAG_DONT_FRAGMENT);
        UdpHeader.sourcePort(s, udp, sourcePort);
        final long icrcOffset = udp + udpLength - Icrc.LENGTH;
        Icrc.write(s, icrcOffset, icrc.compute(s, ip, 4, Ipv4Header.LENGTH, icrcOffset));
        return udpLength - UdpHeader.LENGTH;
    }

    /**
     * Writes the canonical Ethernet, IPv6 and UDP headers of a datagram received from {@code [sourceHigh:sourceLow]}
     * in the {@link #IPV6_HEADERS_LENGTH} bytes at {@code frame}, in front of its {@code payloadLength} bytes.
     *
     * @return the frame's length.
     */
    public static int synthesizeIpv6(final MemorySegment s, final long frame, final int payloadLength, final long localMac,
        final long sourceHigh, final long sourceLow, final int sourcePort, final long destinationHigh,
        final long destinationLow, final int trafficClass)
    {
        EthernetHeader.destinationMac(s, frame, localMac);
        EthernetHeader.sourceMac(s, frame, LOCALLY_ADMINISTERED | (sourceLow & 0xFFFF_FFFFL));
        EthernetHeader.etherType(s, frame, EthernetHeader.ETHER_TYPE_IPV6);
        final long ip = frame + IP;
        final int udpLength = UdpHeader.LENGTH + payloadLength;
        Ipv6Header.write(s, ip, trafficClass, 0, udpLength, Ipv6Header.NEXT_HEADER_UDP, TTL, sourceHigh, sourceLow,
            destinationHigh, destinationLow);
        final long udp = frame + UDP6;
        UdpHeader.sourcePort(s, udp, sourcePort);
        UdpHeader.destinationPort(s, udp, UdpHeader.ROCE_V2_PORT);
        UdpHeader.length(s, udp, udpLength);
        UdpHeader.checksum(s, udp, NO_CHECKSUM); // verified by the kernel, written only when observed
        return IPV6_HEADERS_LENGTH + payloadLength;
    }

    /**
     * Writes the UDP checksum of a frame {@link #synthesizeIpv6} wrote, over the pseudo-header, the UDP header and the
     * payload, unless it has one already: what a capture of it must show (RFC 8200 section 8.1). The
     * {@code length} bytes at {@code frame} are checked first, so a frame something else rewrote is left alone.
     *
     * @return true when it computed one; false when the frame had one (a second tap of the same frame) or is not
     * IPv6/UDP within its length.
     */
    public static boolean completeIpv6Checksum(final MemorySegment s, final long frame, final int length)
    {
        final long udp = frame + UDP6;
        if (length < IPV6_HEADERS_LENGTH || EthernetHeader.etherType(s, frame) != EthernetHeader.ETHER_TYPE_IPV6 ||
            Ipv6Header.nextHeader(s, frame + IP) != Ipv6Header.NEXT_HEADER_UDP || UdpHeader.checksum(s, udp) != NO_CHECKSUM)
        {
            return false;
        }
        final int udpLength = UdpHeader.length(s, udp);
        if (udpLength < UdpHeader.LENGTH || UDP6 + udpLength > length)
        {
            return false;
        }
        UdpHeader.checksum(s, udp, UdpHeader.computeIpv6Checksum(s, frame + IP, udp, udpLength));
        return true;
    }

    /**
     * Checks that the {@code length} bytes at {@code frame} are an IPv6/UDP frame to port 4791 from
     * {@code [sourceHigh:sourceLow]}, rewrites its UDP source port to {@code sourcePort}, and recomputes its ICRC.
     *
     * @return the UDP payload's length (from {@link #IPV6_HEADERS_LENGTH}), or {@link #NOT_IPV6_UDP} or
     * {@link #WRONG_SOURCE}, the frame untouched.
     */
    public static int canonicalizeIpv6ForSend(final MemorySegment s, final long frame, final int length,
        final long sourceHigh, final long sourceLow, final int sourcePort, final Icrc icrc)
    {
        if (length < IPV6_HEADERS_LENGTH + MIN_PAYLOAD_LENGTH ||
            EthernetHeader.etherType(s, frame) != EthernetHeader.ETHER_TYPE_IPV6)
        {
            return NOT_IPV6_UDP;
        }
        final long ip = frame + IP;
        final long udp = frame + UDP6;
        if (Ipv6Header.version(s, ip) != 6 || Ipv6Header.nextHeader(s, ip) != Ipv6Header.NEXT_HEADER_UDP ||
            UdpHeader.destinationPort(s, udp) != UdpHeader.ROCE_V2_PORT)
        {
            return NOT_IPV6_UDP;
        }
        final int udpLength = UdpHeader.length(s, udp);
        if (udpLength < UdpHeader.LENGTH + MIN_PAYLOAD_LENGTH || UDP6 + udpLength > length ||
            Ipv6Header.payloadLength(s, ip) != udpLength)
        {
            return NOT_IPV6_UDP;
        }
        if (Ipv6Header.sourceAddressHigh(s, ip) != sourceHigh || Ipv6Header.sourceAddressLow(s, ip) != sourceLow)
        {
            return WRONG_SOURCE;
        }
        UdpHeader.sourcePort(s, udp, sourcePort);
        final long icrcOffset = udp + udpLength - Icrc.LENGTH;
        Icrc.write(s, icrcOffset, icrc.compute(s, ip, 6, Ipv6Header.LENGTH, icrcOffset));
        return udpLength - UdpHeader.LENGTH;
    }

    /** @return the frame's IPv6 traffic class (after {@link #canonicalizeIpv6ForSend} accepted it). */
    public static int trafficClassIpv6(final MemorySegment s, final long frame)
    {
        return Ipv6Header.trafficClass(s, frame + IP);
    }

    /** @return the first 8 bytes of the frame's IPv6 destination (after {@link #canonicalizeIpv6ForSend} accepted it). */
    public static long destinationHighIpv6(final MemorySegment s, final long frame)
    {
        return Ipv6Header.destinationAddressHigh(s, frame + IP);
    }

    /** @return the last 8 bytes of the frame's IPv6 destination. */
    public static long destinationLowIpv6(final MemorySegment s, final long frame)
    {
        return Ipv6Header.destinationAddressLow(s, frame + IP);
    }

    /** @return the frame's IPv4 TOS byte (after {@link #canonicalizeForSend} accepted it). */
    public static int tos(final MemorySegment s, final long frame)
    {
        return Ipv4Header.tos(s, frame + IP);
    }

    /** @return the frame's IPv4 destination (after {@link #canonicalizeForSend} accepted it). */
    public static int destinationAddress(final MemorySegment s, final long frame)
    {
        return Ipv4Header.destinationAddress(s, frame + IP);
    }

    /** @return the IPv4 frame's UDP source port, the flow's entropy as the engine chose it. */
    public static int sourcePort(final MemorySegment s, final long frame)
    {
        return UdpHeader.sourcePort(s, frame + UDP);
    }

    /** @return the IPv6 frame's UDP source port, the flow's entropy as the engine chose it. */
    public static int sourcePortIpv6(final MemorySegment s, final long frame)
    {
        return UdpHeader.sourcePort(s, frame + UDP6);
    }
}
