package io.spraynic.datapath.fabric;

/**
 * What a {@link Topology} builds a {@link Fabric} from.
 *
 * @param hostLink   links between hosts' NIC ports and their switch, both directions (the host-to-switch
 *                   direction's queue is the NIC's egress queue).
 * @param fabricLink links between switches, both directions.
 * @param frameSlots frames the fabric can hold at once (queued, on a wire, being delivered), across all
 *                   links; a send finding none free is refused and counted.
 * @param slotBytes  the largest frame, in bytes (without FCS).
 * @param seed       the one seed every random choice (loss, ECMP hash seeds) derives from.
 */
public record FabricConfig(LinkConfig hostLink, LinkConfig fabricLink, int frameSlots, int slotBytes, long seed)
{
    /** Frames the default pool holds. */
    public static final int DEFAULT_FRAME_SLOTS = 16_384;
    /** A 4096 B RoCEv2 payload with every header, rounded up. */
    public static final int DEFAULT_SLOT_BYTES = 4_352;

    /** Data-centre links everywhere (100 Gb/s, 1 µs hop, 512 KiB queues, ECN above 100 KiB), no loss. */
    public static final FabricConfig DEFAULT = new FabricConfig(
        LinkConfig.DATA_CENTRE, LinkConfig.DATA_CENTRE, DEFAULT_FRAME_SLOTS, DEFAULT_SLOT_BYTES, 1L);

    /**
     * Validates.
     */
    public FabricConfig
    {
        if (null == hostLink || null == fabricLink)
        {
            throw new IllegalArgumentException("host and fabric link configurations are required");
        }
        if (frameSlots < 1 || frameSlots > 1 << 24)
        {
            throw new IllegalArgumentException("frame slots " + frameSlots + " must be 1..16777216");
        }
        if (slotBytes < 64 || slotBytes > LinkConfig.MAX_FRAME_BYTES)
        {
            throw new IllegalArgumentException(
                "slot size " + slotBytes + " B must be 64.." + LinkConfig.MAX_FRAME_BYTES + " B");
        }
        if ((long)frameSlots * slotBytes > 1L << 34)
        {
            throw new IllegalArgumentException("frame pool of " + frameSlots + " x " + slotBytes +
                " B exceeds 16 GiB");
        }
        if (hostLink.queueBytes() < slotBytes)
        {
            throw new IllegalArgumentException("host link queue " + hostLink.queueBytes() +
                " B cannot hold one " + slotBytes + " B frame");
        }
        if (fabricLink.queueBytes() < slotBytes)
        {
            throw new IllegalArgumentException("fabric link queue " + fabricLink.queueBytes() +
                " B cannot hold one " + slotBytes + " B frame");
        }
    }

    /** @return a copy with another seed. */
    public FabricConfig withSeed(final long newSeed)
    {
        return new FabricConfig(hostLink, fabricLink, frameSlots, slotBytes, newSeed);
    }

    /** @return a copy with other host links. */
    public FabricConfig withHostLink(final LinkConfig link)
    {
        return new FabricConfig(link, fabricLink, frameSlots, slotBytes, seed);
    }

    /** @return a copy with other switch-to-switch links. */
    public FabricConfig withFabricLink(final LinkConfig link)
    {
        return new FabricConfig(hostLink, link, frameSlots, slotBytes, seed);
    }

    /** @return a copy with the same configuration for every link. */
    public FabricConfig withLinks(final LinkConfig link)
    {
        return new FabricConfig(link, link, frameSlots, slotBytes, seed);
    }

    /** @return a copy with another frame pool. */
    public FabricConfig withFrames(final int slots, final int bytesPerSlot)
    {
        return new FabricConfig(hostLink, fabricLink, slots, bytesPerSlot, seed);
    }
}
