package io.spraynic.datapath.fabric;

/**
 * One direction of a cable and the output queue feeding it.
 *
 * @param rateBitsPerSecond     line rate.
 * @param propagationDelayNs    time from a frame's last bit leaving to it arriving at the far end
 *                              (cable plus the far switch's forwarding latency: one hop).
 * @param queueBytes            output buffer; a frame that would not fit is tail-dropped. It must hold at
 *                              least one frame of the fabric's largest size.
 * @param ecnThresholdBytes     ECN-capable frames that find more than this many bytes queued ahead of them
 *                              are marked Congestion Experienced; at or above {@code queueBytes} nothing
 *                              is ever marked.
 * @param lossProbability       chance that a frame is lost on the wire, in [0, 1).
 * @param wireOverheadBytes     bytes each frame occupies on the wire besides its own (Ethernet preamble and
 *                              start delimiter 8, FCS 4, inter-frame gap 12: 24).
 */
public record LinkConfig(
    long rateBitsPerSecond,
    long propagationDelayNs,
    int queueBytes,
    int ecnThresholdBytes,
    double lossProbability,
    int wireOverheadBytes)
{
    /** Preamble and SFD (8), FCS (4) and the minimum inter-frame gap (12). */
    public static final int ETHERNET_OVERHEAD_BYTES = 24;

    /** 100 Gb/s, 1 µs per hop, a 512 KiB queue marking above 100 KiB, no loss. */
    public static final LinkConfig DATA_CENTRE = new LinkConfig(
        100_000_000_000L, 1_000, 512 * 1024, 100 * 1024, 0.0, ETHERNET_OVERHEAD_BYTES);

    /**
     * Validates.
     */
    public LinkConfig
    {
        if (rateBitsPerSecond < 1_000 || rateBitsPerSecond > 100_000_000_000_000L)
        {
            throw new IllegalArgumentException("link rate " + rateBitsPerSecond + " b/s must be 1 kb/s..100 Tb/s");
        }
        if (propagationDelayNs < 0 || propagationDelayNs > 1_000_000_000_000L)
        {
            throw new IllegalArgumentException("propagation delay " + propagationDelayNs + " ns must be 0..1000 s");
        }
        if (queueBytes < 64)
        {
            throw new IllegalArgumentException("queue " + queueBytes + " B must hold at least one 64 B frame");
        }
        if (ecnThresholdBytes < 0)
        {
            throw new IllegalArgumentException("ECN threshold " + ecnThresholdBytes + " B must not be negative");
        }
        if (!(lossProbability >= 0.0 && lossProbability < 1.0))
        {
            throw new IllegalArgumentException("loss probability " + lossProbability + " must be in [0, 1)");
        }
        if (wireOverheadBytes < 0 || wireOverheadBytes > 1024)
        {
            throw new IllegalArgumentException("wire overhead " + wireOverheadBytes + " B must be 0..1024");
        }
    }

    /** @return a copy at another rate. */
    public LinkConfig withRate(final long bitsPerSecond)
    {
        return new LinkConfig(bitsPerSecond, propagationDelayNs, queueBytes, ecnThresholdBytes, lossProbability,
            wireOverheadBytes);
    }

    /** @return a copy with another propagation delay. */
    public LinkConfig withPropagationDelay(final long nanoseconds)
    {
        return new LinkConfig(rateBitsPerSecond, nanoseconds, queueBytes, ecnThresholdBytes, lossProbability,
            wireOverheadBytes);
    }

    /** @return a copy with another queue size and ECN threshold. */
    public LinkConfig withQueue(final int bytes, final int ecnThreshold)
    {
        return new LinkConfig(rateBitsPerSecond, propagationDelayNs, bytes, ecnThreshold, lossProbability,
            wireOverheadBytes);
    }

    /** @return a copy with another loss probability. */
    public LinkConfig withLoss(final double probability)
    {
        return new LinkConfig(rateBitsPerSecond, propagationDelayNs, queueBytes, ecnThresholdBytes, probability,
            wireOverheadBytes);
    }

    /** @return a copy with another per-frame wire overhead. */
    public LinkConfig withWireOverhead(final int bytes)
    {
        return new LinkConfig(rateBitsPerSecond, propagationDelayNs, queueBytes, ecnThresholdBytes, lossProbability,
            bytes);
    }

    /** The largest frame {@link #serializationPicos} accepts: 1 MiB keeps its arithmetic in a long. */
    public static final int MAX_FRAME_BYTES = 1 << 20;

    /**
     * @param frameBytes frame length, at most {@link #MAX_FRAME_BYTES}.
     * @return picoseconds to serialise the frame plus the wire overhead, rounded up.
     */
    public long serializationPicos(final int frameBytes)
    {
        final long bits = 8L * (frameBytes + wireOverheadBytes);
        return Math.ceilDiv(bits * 1_000_000_000_000L, rateBitsPerSecond);
    }
}
