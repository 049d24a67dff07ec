package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.rocev2.PathMtu;
import io.spraynic.datapath.wire.ConnectionHeader;
import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.HandshakeBlock;
import io.spraynic.datapath.wire.PlaneAddress;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.Wire;

import java.lang.foreign.MemorySegment;

/**
 * The field checks of the handshake (docs/PROTOCOL.md S9.1 steps 2 and 6): what a CONNECT and a CONNECT_ACK must
 * hold before anything in them is used. Stateless; nothing here throws for any frame the parser passed.
 */
final class ConnectChecks
{

    private ConnectChecks()
    {
    }

    /**
     * S9.1 step 2, after the version and the handshake block's presence: DestQP 0, a nonzero CID, this engine's
     * planes, paths 1..64, an MTU of S4.3, known flags only, and with {@code ADDRESSES} an entry per plane of a
     * known kind with a host's address that is not this end's own and a unicast MAC (IPv6 only where this end has an
     * IPv6 address). Streams are valid by
     * construction (0 means 65536).
     *
     * @param hasResolver whether the listener can find the initiator's other planes without the address list.
     */
    static boolean connectValid(final RoceFrame frame, final MemorySegment seg, final long conh, final long hsb,
        final int payload, final int initiatorCid, final SprayConfig config, final boolean hasResolver)
    {
        final int flags = ConnectionHeader.flags(seg, conh);
        final int paths = ConnectionHeader.paths(seg, conh);
        final int planes = ConnectionHeader.planes(seg, conh);
        if (frame.destQp() != 0 || initiatorCid == 0 || planes != config.planes || paths < 1 || paths > 64 ||
            !PathMtu.isValid(ConnectionHeader.mtu(seg, conh)) || (flags & ~ConnectionHeader.FLAG_ADDRESSES) != 0)
        {
            return false;
        }
        // streams: 1..65536 on the wire by construction (0 means 65536); the minimum with the template is taken
        if ((flags & ConnectionHeader.FLAG_ADDRESSES) == 0)
        {
            return planes == 1 || hasResolver;
        }
        if (payload < HandshakeBlock.LENGTH + planes * PlaneAddress.LENGTH)
        {
            return false;
        }
        for (int plane = 0; plane < planes; plane++)
        {
            final long entry = PlaneAddress.entry(hsb + HandshakeBlock.LENGTH, plane);
            final int entryFlags = Wire.u8(seg, entry + PlaneAddress.FLAGS_OFFSET);
            if ((entryFlags & ~PlaneAddress.FLAG_IPV6) != 0)
            {
                return false;
            }
            if (!EthernetHeader.isUnicast(PlaneAddress.mac(seg, entry)))
            {
                return false; // every frame of the plane would go to a group, or nowhere
            }
            if (PlaneAddress.isIpv6(seg, entry))
            {
                final long high = PlaneAddress.ipv6High(seg, entry);
                final long low = PlaneAddress.ipv6Low(seg, entry);
                final boolean noLocal = config.localIpv6High[plane] == 0 && config.localIpv6Low[plane] == 0;
                final long localHigh = config.localIpv6High[plane];
                final long localLow = config.localIpv6Low[plane];
                final boolean loopback = isLoopbackIpv6(high, low);
                if (noLocal || !isHostIpv6(high, low) || loopback != isLoopbackIpv6(localHigh, localLow) ||
                    (!loopback && high == localHigh && low == localLow))
                {
                    return false;
                }
            }
            else
            {
                final int ipv4 = PlaneAddress.ipv4(seg, entry);
                final int local = config.localIpv4[plane];
                final boolean loopback = isLoopbackIpv4(ipv4);
                if (!isHostIpv4(ipv4) || loopback != isLoopbackIpv4(local) || (!loopback && ipv4 == local))
                {
                    return false;
                }
            }
        }
        return true;
    }

    /** @return whether an IPv4 address may be a host's: not in 0/8 ("this network"), not multicast, reserved or broadcast. */
    static boolean isHostIpv4(final int ipv4)
    {
        final int first = ipv4 >>> 24;
        return first != 0 && first < 224;
    }

    /** @return whether an IPv6 address may be a host's: not ::, not multicast, not IPv4-mapped. */
    static boolean isHostIpv6(final long high, final long low)
    {
        return !(high == 0 && low == 0) && (high >>> 56) != 0xFF && !(high == 0 && (low >>> 32) == 0xFFFF);
    }

    // loopback (127/8, ::1) is a peer's address only where this end's is loopback too (UDP sockets on one host, where
    // two NICs may share ::1, told apart by their ports)
    private static boolean isLoopbackIpv4(final int ipv4)
    {
        return (ipv4 >>> 24) == 127;
    }

    private static boolean isLoopbackIpv6(final long high, final long low)
    {
        return high == 0 && low == 1;
    }

    /** S9.1 step 6: a CONNECT_ACK's version, block, planes, paths, MTU and CID. */
    static boolean acceptValid(final RoceFrame frame, final MemorySegment seg, final long conh, final SprayConfig config)
    {
        final int paths = ConnectionHeader.paths(seg, conh);
        return ConnectionHeader.version(seg, conh) == ConnectionHeader.VERSION &&
            frame.payloadLength() >= HandshakeBlock.LENGTH && ConnectionHeader.planes(seg, conh) == config.planes &&
            paths >= 1 && paths <= 64 && PathMtu.isValid(ConnectionHeader.mtu(seg, conh)) &&
            ConnectionHeader.senderCid(seg, conh) != 0;
    }
}
