package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.Icrc;
import io.spraynic.datapath.wire.Ipv4Header;
import io.spraynic.datapath.wire.Ipv6Header;
import io.spraynic.datapath.wire.SprayOpcodes;
import io.spraynic.datapath.wire.UdpHeader;

/**
 * The largest frame a connection sends, against what its {@link io.spraynic.datapath.transport.FrameSink} carries
 * (S4.3, S11): a full-MTU data packet with the most extension headers (SETH, RETH, ImmDt of a WRITE with immediate).
 * A frame longer than the sink's {@code maxFrameLength()} would be dropped at TX on every try, retransmissions too,
 * so the engine refuses such an MTU when a connection is configured, as an RC queue pair does.
 */
public final class SprayFrameSize
{
    /** Extension headers of the data opcode that has the most: SETH, RETH and ImmDt. */
    static final int MOST_EXTENSION_BYTES = SprayOpcodes.TABLE.extensionHeadersLength(SprayOpcodes.WRITE_WITH_IMMEDIATE);

    private SprayFrameSize()
    {
    }

    /**
     * @param mtu  the connection's MTU (payload bytes per packet, a multiple of 4: no padding).
     * @param vlan whether frames carry an 802.1Q tag.
     * @param ipv6 whether frames go over IPv6 rather than IPv4.
     * @return bytes of the longest data frame, headers and ICRC included.
     */
    public static int largestDataFrame(final int mtu, final boolean vlan, final boolean ipv6)
    {
        return (vlan ? EthernetHeader.VLAN_LENGTH : EthernetHeader.LENGTH) +
            (ipv6 ? Ipv6Header.LENGTH : Ipv4Header.LENGTH) + UdpHeader.LENGTH + BaseTransportHeader.LENGTH +
            MOST_EXTENSION_BYTES + mtu + Icrc.LENGTH;
    }

    /**
     * @param maxFrameLength the longest frame an output carries.
     * @param headerBytes    bytes around a payload ({@link #largestDataFrame} of MTU 0).
     * @return the largest MTU of S4.3 whose frames fit, or 0 for none.
     */
    public static int largestMtu(final int maxFrameLength, final int headerBytes)
    {
        for (int mtu = 4096; mtu >= 256; mtu >>= 1)
        {
            if (mtu + headerBytes <= maxFrameLength)
            {
                return mtu;
            }
        }
        return 0;
    }

    /**
     * Refuses a connection whose full-MTU frames the sink cannot carry on some plane.
     *
     * @param config         the engine's planes, VLAN tags and local addresses.
     * @param connection     the MTU and the peer's address family per plane.
     * @param maxFrameLength the sink's {@code maxFrameLength()}.
     * @param peerUnknown    true for a listener's template: a plane where this end has an IPv6 address may see IPv6
     *                       peers, so it is judged as IPv6.
     * @throws IllegalArgumentException naming the plane, the frame length and the largest MTU that fits.
     */
    static void requireFits(
        final SprayConfig config, final SprayConnectionConfig connection, final int maxFrameLength,
        final boolean peerUnknown)
    {
        for (int plane = 0; plane < config.planes; plane++)
        {
            final boolean vlan = config.vlanTci[plane] >= 0;
            final boolean ipv6 = connection.remoteIsIpv6[plane] ||
                peerUnknown && (config.localIpv6High[plane] | config.localIpv6Low[plane]) != 0;
            final int frame = largestDataFrame(connection.mtu, vlan, ipv6);
            if (frame > maxFrameLength)
            {
                final int fitting = largestMtu(maxFrameLength, largestDataFrame(0, vlan, ipv6));
                throw new IllegalArgumentException("MTU " + connection.mtu + " needs frames of up to " + frame +
                    " B on plane " + plane + (ipv6 ? " (IPv6" : " (IPv4") + (vlan ? ", VLAN-tagged)" : ")") +
                    ", but the output carries at most " + maxFrameLength + " B: " +
                    (fitting == 0 ? "too few for any MTU (S4.3)" : "lower the MTU to " + fitting + " (S4.3, S11)"));
            }
        }
    }
}
