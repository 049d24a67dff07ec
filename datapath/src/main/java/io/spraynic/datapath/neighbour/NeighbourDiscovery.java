package io.spraynic.datapath.neighbour;

import io.spraynic.datapath.transport.FrameSink;
import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.IcmpHeader;
import io.spraynic.datapath.wire.Icmpv6Header;
import io.spraynic.datapath.wire.Ipv6Header;
import io.spraynic.pmd.InterfaceAddress;

import java.lang.foreign.MemorySegment;

/**
 * The IPv6 half of a {@link NeighbourAgent}: neighbour discovery (RFC 4861) and ICMPv6 echo for the plane's
 * address. The agent keeps the one neighbour state machine and cache; this class reads and writes the messages.
 * <ul>
 *     <li>A neighbour solicitation (NS) for our address, to it or to its solicited-node multicast address, is
 *     answered with a solicited advertisement (NA, S and O set) to the source link-layer address the NS carries,
 *     else to its Ethernet source; a duplicate-address probe (source ::) for it is answered to all nodes, the
 *     address defended and the conflict counted.</li>
 *     <li>Next hops are resolved with an NS to the target's solicited-node multicast address (unicast to the
 *     cached MAC when an entry is STALE, as RFC 4861's probe); the start sends one unsolicited NA (O set) to all
 *     nodes.</li>
 *     <li>An NA is taken only when it is sent to our address or to all nodes, and only by an entry that exists:
 *     solicited (S set) only by one we asked for (INCOMPLETE or
 *     STALE), unsolicited by any that is not FAILED; one without the override flag confirms a MAC but changes none;
 *     an NA for an address we hold no entry for is dropped and counted, so a flood of advertisements can neither
 *     fill the table nor poison it.</li>
 * </ul>
 * Every message is checked as RFC 4861 7.1 says before it is used: hop limit 255 (it did not cross a router),
 * checksum over the pseudo-header, code 0, length, a target that is not multicast, every option above length 0
 * and inside the message; each drop counted by reason. Frames with IPv6 extension headers before the ICMPv6
 * header are not taken (RFC 4861 allows none that we need). One thread, nothing allocates.
 */
final class NeighbourDiscovery
{
    private static final int FRAME_LENGTH = EthernetHeader.LENGTH + Ipv6Header.LENGTH + Icmpv6Header.NEIGHBOUR_LENGTH +
        Icmpv6Header.LINK_LAYER_OPTION_LENGTH;
    private static final int ECHO_HOP_LIMIT = 64;
    private static final long MULTICAST_HIGH_BYTE = 0xFFL;

    private final NeighbourAgent agent;
    private final long localHigh;
    private final long localLow;
    private final long solicitedLow;
    private final long localMac;
    private final FrameSink sink;
    private final TransportCounters counters;

    NeighbourDiscovery(final NeighbourAgent agent, final InterfaceAddress address, final long localMac,
        final FrameSink sink, final TransportCounters counters)
    {
        this.agent = agent;
        this.localHigh = address.ipv6High();
        this.localLow = address.ipv6Low();
        this.solicitedLow = Icmpv6Header.solicitedNodeLow(localLow);
        this.localMac = localMac;
        this.sink = sink;
        this.counters = counters;
    }

    /** Announces the address: one unsolicited NA with the override flag to all nodes. */
    void advertise()
    {
        if (writeNeighbourMessage(Icmpv6Header.TYPE_NEIGHBOUR_ADVERTISEMENT, Icmpv6Header.multicastMac(Icmpv6Header.ALL_NODES_LOW),
            Icmpv6Header.ALL_NODES_HIGH, Icmpv6Header.ALL_NODES_LOW, Icmpv6Header.FLAG_OVERRIDE, localHigh, localLow))
        {
            counters.increment(NeighbourCounters.UNSOLICITED_ADVERTISEMENTS_SENT);
        }
    }

    /**
     * Asks for {@code high:low}'s MAC: to its solicited-node multicast address, or with {@code destinationMac} not 0
     * directly to it (a STALE entry's probe).
     */
    void solicit(final long high, final long low, final long destinationMac)
    {
        final boolean multicast = 0 == destinationMac;
        final long ipHigh = multicast ? Icmpv6Header.SOLICITED_NODE_HIGH : high;
        final long ipLow = multicast ? Icmpv6Header.solicitedNodeLow(low) : low;
        if (writeNeighbourMessage(Icmpv6Header.TYPE_NEIGHBOUR_SOLICITATION,
            multicast ? Icmpv6Header.multicastMac(ipLow) : destinationMac, ipHigh, ipLow, 0, high, low))
        {
            counters.increment(NeighbourCounters.SOLICITATIONS_SENT);
        }
    }

    /**
     * @return true when the frame was an ICMPv6 message, handled or dropped with a count; false for any other IPv6
     * packet (or a header too short to tell, which the RX parser counts).
     */
    boolean onFrame(final MemorySegment s, final long o, final int length, final long nowNanos)
    {
        if (length < EthernetHeader.LENGTH + Ipv6Header.LENGTH)
        {
            return false;
        }
        final long ip = o + EthernetHeader.LENGTH;
        if (Ipv6Header.version(s, ip) != 6 || Ipv6Header.nextHeader(s, ip) != Ipv6Header.NEXT_HEADER_ICMPV6)
        {
            return false;
        }
        final int icmpLength = Ipv6Header.payloadLength(s, ip);
        if (icmpLength < IcmpHeader.CHECKSUM_OFFSET + 2 ||
            EthernetHeader.LENGTH + Ipv6Header.LENGTH + icmpLength > length)
        {
            counters.increment(NeighbourCounters.DROPPED_TRUNCATED);
            return true;
        }
        final long icmp = ip + Ipv6Header.LENGTH;
        switch (IcmpHeader.type(s, icmp))
        {
            case Icmpv6Header.TYPE_NEIGHBOUR_SOLICITATION -> onSolicitation(s, o, ip, icmp, icmpLength, nowNanos);
            case Icmpv6Header.TYPE_NEIGHBOUR_ADVERTISEMENT -> onAdvertisement(s, o, ip, icmp, icmpLength, nowNanos);
            case Icmpv6Header.TYPE_ECHO_REQUEST -> onEcho(s, o, ip, icmp, icmpLength, nowNanos);
            default -> counters.increment(NeighbourCounters.ICMP_OTHER); // router and multicast listener messages
        }
        return true;
    }

    // RFC 4861 7.1.1 and 7.1.2, the checks both messages share; counts the drop and returns false
    private boolean isValidNeighbourMessage(final MemorySegment s, final long ip, final long icmp, final int icmpLength)
    {
        if (Ipv6Header.hopLimit(s, ip) != Icmpv6Header.ND_HOP_LIMIT)
        {
            counters.increment(NeighbourCounters.DROPPED_BAD_HOP_LIMIT); // sent from beyond a router
            return false;
        }
        if (icmpLength < Icmpv6Header.NEIGHBOUR_LENGTH)
        {
            counters.increment(NeighbourCounters.DROPPED_TRUNCATED);
            return false;
        }
        if (!Icmpv6Header.isChecksumValid(s, ip, icmp, icmpLength) || IcmpHeader.code(s, icmp) != 0)
        {
            counters.increment(NeighbourCounters.DROPPED_BAD_ICMP);
            return false;
        }
        if (isMulticast(Icmpv6Header.targetHigh(s, icmp)))
        {
            counters.increment(NeighbourCounters.DROPPED_BAD_FORMAT);
            return false;
        }
        return true;
    }

    private void onSolicitation(final MemorySegment s, final long o, final long ip, final long icmp, final int icmpLength,
        final long nowNanos)
    {
        if (!isValidNeighbourMessage(s, ip, icmp, icmpLength))
        {
            return;
        }
        final long sourceLinkLayer = Icmpv6Header.linkLayerOption(s, icmp, icmpLength, Icmpv6Header.OPTION_SOURCE_LINK_LAYER);
        if (sourceLinkLayer == Icmpv6Header.BAD_OPTIONS)
        {
            counters.increment(NeighbourCounters.DROPPED_BAD_OPTIONS);
            return;
        }
        final long sourceHigh = Ipv6Header.sourceAddressHigh(s, ip);
        final long sourceLow = Ipv6Header.sourceAddressLow(s, ip);
        final long destinationHigh = Ipv6Header.destinationAddressHigh(s, ip);
        final long destinationLow = Ipv6Header.destinationAddressLow(s, ip);
        final boolean probe = sourceHigh == 0 && sourceLow == 0; // duplicate address detection
        if (probe && (sourceLinkLayer != Icmpv6Header.NO_OPTION || !isMulticast(destinationHigh)))
        {
            counters.increment(NeighbourCounters.DROPPED_BAD_FORMAT); // 7.1.1: a probe goes to multicast, with no address
            return;
        }
        final long ethernetSource = EthernetHeader.sourceMac(s, o);
        if (ethernetSource == localMac)
        {
            return; // our own frame, looped back by a promiscuous port
        }
        counters.increment(NeighbourCounters.SOLICITATIONS_RECEIVED);
        final boolean toUs = (destinationHigh == localHigh && destinationLow == localLow) ||
            (destinationHigh == Icmpv6Header.SOLICITED_NODE_HIGH && destinationLow == solicitedLow);
        if (Icmpv6Header.targetHigh(s, icmp) != localHigh || Icmpv6Header.targetLow(s, icmp) != localLow || !toUs)
        {
            counters.increment(NeighbourCounters.DROPPED_NOT_FOR_US);
            return;
        }
        if (!EthernetHeader.isUnicast(ethernetSource) ||
            (sourceLinkLayer != Icmpv6Header.NO_OPTION && !EthernetHeader.isUnicast(sourceLinkLayer)))
        {
            counters.increment(NeighbourCounters.DROPPED_BAD_SENDER);
            return;
        }
        if (probe)
        {
            // another host tests our address before taking it: defend it (RFC 4862 5.4.3), to all nodes
            counters.increment(NeighbourCounters.DROPPED_ADDRESS_CONFLICT);
            if (agent.takeNeighbourReplyCredit(nowNanos) && writeNeighbourMessage(Icmpv6Header.TYPE_NEIGHBOUR_ADVERTISEMENT,
                Icmpv6Header.multicastMac(Icmpv6Header.ALL_NODES_LOW), Icmpv6Header.ALL_NODES_HIGH, Icmpv6Header.ALL_NODES_LOW,
                Icmpv6Header.FLAG_OVERRIDE, localHigh, localLow))
            {
                counters.increment(NeighbourCounters.ADVERTISEMENTS_SENT);
            }
            return;
        }
        if (sourceHigh == localHigh && sourceLow == localLow)
        {
            counters.increment(NeighbourCounters.DROPPED_ADDRESS_CONFLICT); // another host uses our address
            return;
        }
        if (isMulticast(sourceHigh) || isLoopback(sourceHigh, sourceLow))
        {
            counters.increment(NeighbourCounters.DROPPED_BAD_SENDER);
            return;
        }
        final long replyMac = sourceLinkLayer != Icmpv6Header.NO_OPTION ? sourceLinkLayer : ethernetSource;
        final boolean known = agent.isKnownNeighbour(sourceHigh, sourceLow, replyMac); // before the NS may change it
        if (sourceLinkLayer != Icmpv6Header.NO_OPTION)
        {
            agent.update(sourceHigh, sourceLow, sourceLinkLayer, false, true, nowNanos); // only an entry we have
        }
        if (agent.takeNeighbourReplyCredit(known, nowNanos) &&
            writeNeighbourMessage(Icmpv6Header.TYPE_NEIGHBOUR_ADVERTISEMENT, replyMac,
            sourceHigh, sourceLow, Icmpv6Header.FLAG_SOLICITED | Icmpv6Header.FLAG_OVERRIDE, localHigh, localLow))
        {
            counters.increment(NeighbourCounters.ADVERTISEMENTS_SENT);
        }
    }

    private void onAdvertisement(final MemorySegment s, final long o, final long ip, final long icmp,
        final int icmpLength, final long nowNanos)
    {
        if (!isValidNeighbourMessage(s, ip, icmp, icmpLength))
        {
            return;
        }
        final int flags = Icmpv6Header.flags(s, icmp);
        final boolean solicited = (flags & Icmpv6Header.FLAG_SOLICITED) != 0;
        final long destinationHigh = Ipv6Header.destinationAddressHigh(s, ip);
        final long destinationLow = Ipv6Header.destinationAddressLow(s, ip);
        if (solicited && isMulticast(destinationHigh))
        {
            counters.increment(NeighbourCounters.DROPPED_BAD_FORMAT); // 7.1.2: an answer goes to the asker only
            return;
        }
        if (!(destinationHigh == localHigh && destinationLow == localLow) &&
            !(destinationHigh == Icmpv6Header.ALL_NODES_HIGH && destinationLow == Icmpv6Header.ALL_NODES_LOW))
        {
            // an answer to another host's question, seen because the port is promiscuous (af_packet on a veth): the
            // entry it would confirm or move is that host's business, not ours
            counters.increment(NeighbourCounters.DROPPED_NOT_FOR_US);
            return;
        }
        final long targetLinkLayer = Icmpv6Header.linkLayerOption(s, icmp, icmpLength, Icmpv6Header.OPTION_TARGET_LINK_LAYER);
        if (targetLinkLayer == Icmpv6Header.BAD_OPTIONS)
        {
            counters.increment(NeighbourCounters.DROPPED_BAD_OPTIONS);
            return;
        }
        if (EthernetHeader.sourceMac(s, o) == localMac)
        {
            return; // our own frame, looped back
        }
        counters.increment(NeighbourCounters.ADVERTISEMENTS_RECEIVED);
        if (!solicited)
        {
            counters.increment(NeighbourCounters.UNSOLICITED_ADVERTISEMENTS_RECEIVED);
        }
        final long targetHigh = Icmpv6Header.targetHigh(s, icmp);
        final long targetLow = Icmpv6Header.targetLow(s, icmp);
        if (targetHigh == localHigh && targetLow == localLow)
        {
            counters.increment(NeighbourCounters.DROPPED_ADDRESS_CONFLICT); // another host claims our address
            return;
        }
        final long sourceHigh = Ipv6Header.sourceAddressHigh(s, ip);
        final long sourceLow = Ipv6Header.sourceAddressLow(s, ip);
        if (isMulticast(sourceHigh) || (sourceHigh == 0 && sourceLow == 0) || isLoopback(targetHigh, targetLow) ||
            (targetLinkLayer != Icmpv6Header.NO_OPTION && !EthernetHeader.isUnicast(targetLinkLayer)))
        {
            counters.increment(NeighbourCounters.DROPPED_BAD_SENDER);
            return;
        }
        long mac = targetLinkLayer;
        if (mac == Icmpv6Header.NO_OPTION)
        {
            mac = agent.macOf(targetHigh, targetLow); // 7.2.5: without the option it only confirms a known MAC
            if (0 == mac)
            {
                counters.increment(NeighbourCounters.DROPPED_NO_LINK_LAYER_ADDRESS);
                return;
            }
        }
        final boolean override = (flags & Icmpv6Header.FLAG_OVERRIDE) != 0;
        if (!agent.update(targetHigh, targetLow, mac, solicited, override, nowNanos))
        {
            counters.increment(NeighbourCounters.DROPPED_UNSOLICITED_REPLY); // nobody asked: no entry is made or changed
        }
    }

    private void onEcho(final MemorySegment s, final long o, final long ip, final long icmp, final int icmpLength,
        final long nowNanos)
    {
        counters.increment(NeighbourCounters.ECHO_REQUESTS_RECEIVED);
        if (Ipv6Header.destinationAddressHigh(s, ip) != localHigh || Ipv6Header.destinationAddressLow(s, ip) != localLow)
        {
            counters.increment(NeighbourCounters.DROPPED_NOT_FOR_US); // multicast echo too: not answered
            return;
        }
        if (icmpLength < Icmpv6Header.ECHO_LENGTH)
        {
            counters.increment(NeighbourCounters.DROPPED_TRUNCATED);
            return;
        }
        if (IcmpHeader.code(s, icmp) != 0 || !Icmpv6Header.isChecksumValid(s, ip, icmp, icmpLength))
        {
            counters.increment(NeighbourCounters.DROPPED_BAD_ICMP);
            return;
        }
        final long sourceHigh = Ipv6Header.sourceAddressHigh(s, ip);
        final long sourceLow = Ipv6Header.sourceAddressLow(s, ip);
        final long sourceMac = EthernetHeader.sourceMac(s, o);
        if (!EthernetHeader.isUnicast(sourceMac) || isMulticast(sourceHigh) || (sourceHigh == 0 && sourceLow == 0) ||
            isLoopback(sourceHigh, sourceLow) || (sourceHigh == localHigh && sourceLow == localLow))
        {
            counters.increment(NeighbourCounters.DROPPED_BAD_SENDER);
            return;
        }
        final int replyLength = EthernetHeader.LENGTH + Ipv6Header.LENGTH + icmpLength;
        final int claimLength = agent.claimEchoReply(replyLength, nowNanos);
        if (claimLength < 0)
        {
            return;
        }
        final MemorySegment b = sink.buffer();
        final long f = sink.offset();
        // back to the link-layer sender: the peer on-link, the router that forwarded it off-link
        final long rip = writeHeaders(b, f, sourceMac, sourceHigh, sourceLow, icmpLength, ECHO_HOP_LIMIT);
        final long ricmp = rip + Ipv6Header.LENGTH;
        MemorySegment.copy(s, icmp, b, ricmp, icmpLength); // identifier, sequence and data echoed unchanged
        IcmpHeader.type(b, ricmp, Icmpv6Header.TYPE_ECHO_REPLY);
        IcmpHeader.checksum(b, ricmp, 0);
        IcmpHeader.checksum(b, ricmp, Icmpv6Header.computeChecksum(b, rip, ricmp, icmpLength));
        NeighbourAgent.pad(b, f, replyLength, claimLength);
        sink.commit(claimLength);
        counters.increment(NeighbourCounters.ECHO_ANSWERED);
    }

    // an NS (source link-layer option) or NA (target link-layer option) about target, from our address, hop limit 255
    private boolean writeNeighbourMessage(final int type, final long destinationMac, final long destinationHigh,
        final long destinationLow, final int flags, final long targetHigh, final long targetLow)
    {
        if (!sink.claim(0, FRAME_LENGTH))
        {
            counters.increment(NeighbourCounters.TX_FULL);
            return false;
        }
        final MemorySegment b = sink.buffer();
        final long f = sink.offset();
        final int icmpLength = Icmpv6Header.NEIGHBOUR_LENGTH + Icmpv6Header.LINK_LAYER_OPTION_LENGTH;
        final long ip = writeHeaders(b, f, destinationMac, destinationHigh, destinationLow, icmpLength,
            Icmpv6Header.ND_HOP_LIMIT);
        final long icmp = ip + Ipv6Header.LENGTH;
        IcmpHeader.type(b, icmp, type);
        IcmpHeader.code(b, icmp, 0);
        IcmpHeader.checksum(b, icmp, 0);
        Icmpv6Header.flags(b, icmp, flags);
        Icmpv6Header.target(b, icmp, targetHigh, targetLow);
        Icmpv6Header.linkLayerOption(b, icmp + Icmpv6Header.OPTIONS_OFFSET,
            type == Icmpv6Header.TYPE_NEIGHBOUR_SOLICITATION ? Icmpv6Header.OPTION_SOURCE_LINK_LAYER :
                Icmpv6Header.OPTION_TARGET_LINK_LAYER, localMac);
        IcmpHeader.checksum(b, icmp, Icmpv6Header.computeChecksum(b, ip, icmp, icmpLength));
        sink.commit(FRAME_LENGTH);
        return true;
    }

    private long writeHeaders(final MemorySegment b, final long f, final long destinationMac, final long destinationHigh,
        final long destinationLow, final int payloadLength, final int hopLimit)
    {
        EthernetHeader.destinationMac(b, f, destinationMac);
        EthernetHeader.sourceMac(b, f, localMac);
        EthernetHeader.etherType(b, f, EthernetHeader.ETHER_TYPE_IPV6);
        final long ip = f + EthernetHeader.LENGTH;
        Ipv6Header.write(b, ip, 0, 0, payloadLength, Ipv6Header.NEXT_HEADER_ICMPV6, hopLimit, localHigh, localLow,
            destinationHigh, destinationLow);
        return ip;
    }

    private static boolean isMulticast(final long high)
    {
        return (high >>> 56) == MULTICAST_HIGH_BYTE;
    }

    private static boolean isLoopback(final long high, final long low)
    {
        return high == 0 && low == 1;
    }
}
