package io.spraynic.datapath.nic;

/**
 * The path MTU against what the ports carry: a frame of a full MTU with every header must fit the ports'
 * {@code maxFrameLength} (buffers, the ports' own MTU, af_packet ring frames).
 */
final class MtuFit
{
    /** Bytes of headers a data frame may carry beyond its payload: VLAN, IPv6, UDP, BTH, SETH, RETH, ImmDt, ICRC. */
    static final int MAX_HEADER_BYTES = 18 + 40 + 8 + 12 + 20 + 16 + 4 + 4;

    private MtuFit()
    {
    }

    /**
     * Makes the path MTU fit the ports: the default MTU is lowered to the largest that fits, with a one-line notice;
     * an MTU the application chose is refused.
     *
     * @throws IllegalArgumentException for a chosen MTU that does not fit, or ports too small for any MTU.
     */
    static void fit(final EmbeddedNicConfig config)
    {
        if (config.mtu + MAX_HEADER_BYTES <= config.maxFrameLength)
        {
            return;
        }
        if (config.mtuChosen)
        {
            throw new IllegalArgumentException("an MTU of " + config.mtu + " needs frames of up to " +
                (config.mtu + MAX_HEADER_BYTES) + " B with headers, but the ports carry at most " + config.maxFrameLength +
                " B (their MTU, or the mempool's data_room less headroom): lower the MTU to " + fitting(config.maxFrameLength) +
                ", or raise the ports' MTU and the mempool's data_room");
        }
        final int fitting = fitting(config.maxFrameLength);
        if (fitting == 0)
        {
            throw new IllegalArgumentException("the ports carry frames of at most " + config.maxFrameLength +
                " B, too few for even a 256 B path MTU with headers (" + (256 + MAX_HEADER_BYTES) + " B)");
        }
        System.err.println("spraynic: path MTU " + fitting + ", not " + config.mtu + ": the ports carry frames of at most " +
            config.maxFrameLength + " B (raise the port MTU, e.g. the veth's, for " + config.mtu + ")");
        config.mtu = fitting;
    }

    /** @return the largest IB path MTU whose frames fit {@code maxFrameLength}, or 0 for none. */
    static int fitting(final int maxFrameLength)
    {
        for (int mtu = 4096; mtu >= 256; mtu >>= 1)
        {
            if (mtu + MAX_HEADER_BYTES <= maxFrameLength)
            {
                return mtu;
            }
        }
        return 0;
    }
}
