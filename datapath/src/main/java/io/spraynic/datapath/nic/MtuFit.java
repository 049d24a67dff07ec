package io.spraynic.datapath.nic;

import io.spraynic.datapath.transport.spray.SprayFrameSize;
import io.spraynic.pmd.InterfaceAddress;

/**
 * The path MTU against what the ports carry: a frame of a full MTU with every header must fit the ports'
 * {@code maxFrameLength} (buffers, the ports' own MTU, af_packet ring frames).
 */
final class MtuFit
{
    /** Bytes of headers a data frame may carry beyond its payload at most: the NIC's, over IPv6 ({@link #headerBytes}). */
    static final int MAX_HEADER_BYTES = SprayFrameSize.largestDataFrame(0, false, true);

    private MtuFit()
    {
    }

    /**
     * @return bytes of headers around a full-MTU payload, the most either transport sends: a spray WRITE with
     * immediate (SETH, RETH, ImmDt; more than RoCEv2's) over IPv6 if a plane has an IPv6 address, else over IPv4;
     * the NIC tags no VLAN. The spray engine refuses a connection beyond its output's frames with the same figure.
     */
    static int headerBytes(final EmbeddedNicConfig config)
    {
        boolean ipv6 = false;
        for (final InterfaceAddress address : config.addresses)
        {
            ipv6 |= null != address && address.isIpv6();
        }
        return SprayFrameSize.largestDataFrame(0, false, ipv6);
    }

    /**
     * Makes the path MTU fit the ports: the default MTU is lowered to the largest that fits, with a one-line notice;
     * an MTU the application chose is refused.
     *
     * @throws IllegalArgumentException for a chosen MTU that does not fit, or ports too small for any MTU.
     */
    static void fit(final EmbeddedNicConfig config)
    {
        final int headers = headerBytes(config);
        if (config.mtu + headers <= config.maxFrameLength)
        {
            return;
        }
        final int fitting = SprayFrameSize.largestMtu(config.maxFrameLength, headers);
        if (config.mtuChosen)
        {
            throw new IllegalArgumentException("an MTU of " + config.mtu + " needs frames of up to " +
                (config.mtu + headers) + " B with headers, but the ports carry at most " + config.maxFrameLength +
                " B (their MTU, or the mempool's data_room less headroom): lower the MTU to " + fitting +
                ", or raise the ports' MTU and the mempool's data_room");
        }
        if (fitting == 0)
        {
            throw new IllegalArgumentException("the ports carry frames of at most " + config.maxFrameLength +
                " B, too few for even a 256 B path MTU with headers (" + (256 + headers) + " B)");
        }
        System.err.println("spraynic: path MTU " + fitting + ", not " + config.mtu + ": the ports carry frames of at most " +
            config.maxFrameLength + " B (raise the port MTU, e.g. the veth's, for " + config.mtu + ")");
        config.mtu = fitting;
    }
}
