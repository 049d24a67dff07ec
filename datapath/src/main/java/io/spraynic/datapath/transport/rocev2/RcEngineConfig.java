package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.transport.Psn;

/**
 * What an {@link RcEngine} needs to know about its own end and how it paces its protocol.
 *
 * @param localMac           this endpoint's MAC, low 48 bits.
 * @param localIpv4          this endpoint's IPv4 address.
 * @param ackCoalescePackets the responder ACKs at least every this many in-order request packets (and
 *                           whenever a packet asks for an ACK, as the last of each message does).
 * @param maxInflightPackets the requester's window: most PSNs sent and not yet acknowledged (below 2^23).
 * @param maxReadsInFlight   RDMA READs outstanding per QP, both ways (ibverbs max_rd_atomic and
 *                           max_dest_rd_atomic in one).
 * @param packetsPerQpPerTick most packets one QP sends per {@link RcEngine#onTick}: round-robin fairness.
 * @param dataEcn            the ECN codepoint of data packets: ECT(0) = 2 lets switches mark CE.
 * @param dcqcn              congestion control.
 * @param maxQueuePairs      most queue pairs the engine holds at once: {@link RcEngine#createQueuePair} refuses more,
 *                           so no caller can make it allocate without bound.
 */
public record RcEngineConfig(
    long localMac,
    int localIpv4,
    int ackCoalescePackets,
    int maxInflightPackets,
    int maxReadsInFlight,
    int packetsPerQpPerTick,
    int dataEcn,
    DcqcnConfig dcqcn,
    int maxQueuePairs)
{
    /** The default cap on queue pairs per engine: thousands of flows per host in the fabric experiments fit. */
    public static final int DEFAULT_MAX_QUEUE_PAIRS = 16_384;
    /** QP numbers are 24 bits; the cap leaves most of the space free, so random numbers stay hard to guess. */
    public static final int MAX_QUEUE_PAIRS_LIMIT = 1 << 20;

    /** ECN-capable transport (0): what RoCEv2 NICs mark data with so switches can signal congestion. */
    public static final int ECT_0 = 2;
    /** Congestion experienced. */
    public static final int ECN_CE = 3;

    public RcEngineConfig
    {
        if (ackCoalescePackets < 1 || maxInflightPackets < 1 || maxInflightPackets >= Psn.HALF ||
            maxReadsInFlight < 1 || packetsPerQpPerTick < 1)
        {
            throw new IllegalArgumentException("ack coalescing, window, reads and per-tick budget must be positive, " +
                "the window below 2^23");
        }
        if (dataEcn < 0 || dataEcn > 3)
        {
            throw new IllegalArgumentException("ECN codepoint " + dataEcn);
        }
        if (maxQueuePairs < 1 || maxQueuePairs > MAX_QUEUE_PAIRS_LIMIT)
        {
            throw new IllegalArgumentException("maxQueuePairs " + maxQueuePairs + " must be in 1.." + MAX_QUEUE_PAIRS_LIMIT);
        }
    }

    /**
     * The configuration with the {@link #DEFAULT_MAX_QUEUE_PAIRS default cap on queue pairs}.
     */
    public RcEngineConfig(
        final long localMac,
        final int localIpv4,
        final int ackCoalescePackets,
        final int maxInflightPackets,
        final int maxReadsInFlight,
        final int packetsPerQpPerTick,
        final int dataEcn,
        final DcqcnConfig dcqcn)
    {
        this(localMac, localIpv4, ackCoalescePackets, maxInflightPackets, maxReadsInFlight, packetsPerQpPerTick, dataEcn,
            dcqcn, DEFAULT_MAX_QUEUE_PAIRS);
    }

    /**
     * @param localMac  this endpoint's MAC.
     * @param localIpv4 this endpoint's IPv4 address.
     * @return defaults: ACK every 16 packets, a 512-packet window, 16 reads, 32 packets per QP per tick,
     * ECT(0), DCQCN with the paper's parameters, at most {@link #DEFAULT_MAX_QUEUE_PAIRS} queue pairs.
     */
    public static RcEngineConfig defaults(final long localMac, final int localIpv4)
    {
        return new RcEngineConfig(localMac, localIpv4, 16, 512, 16, 32, ECT_0, DcqcnConfig.paperDefaults());
    }

    /** @param dcqcn congestion control. @return a copy with it. */
    public RcEngineConfig withDcqcn(final DcqcnConfig dcqcn)
    {
        return new RcEngineConfig(localMac, localIpv4, ackCoalescePackets, maxInflightPackets, maxReadsInFlight,
            packetsPerQpPerTick, dataEcn, dcqcn, maxQueuePairs);
    }

    /** @param packets the requester window. @return a copy with it. */
    public RcEngineConfig withMaxInflightPackets(final int packets)
    {
        return new RcEngineConfig(localMac, localIpv4, ackCoalescePackets, packets, maxReadsInFlight,
            packetsPerQpPerTick, dataEcn, dcqcn, maxQueuePairs);
    }

    /** @param packets the ACK coalescing count. @return a copy with it. */
    public RcEngineConfig withAckCoalescePackets(final int packets)
    {
        return new RcEngineConfig(localMac, localIpv4, packets, maxInflightPackets, maxReadsInFlight,
            packetsPerQpPerTick, dataEcn, dcqcn, maxQueuePairs);
    }

    /** @param queuePairs the cap on queue pairs. @return a copy with it. */
    public RcEngineConfig withMaxQueuePairs(final int queuePairs)
    {
        return new RcEngineConfig(localMac, localIpv4, ackCoalescePackets, maxInflightPackets, maxReadsInFlight,
            packetsPerQpPerTick, dataEcn, dcqcn, queuePairs);
    }
}
