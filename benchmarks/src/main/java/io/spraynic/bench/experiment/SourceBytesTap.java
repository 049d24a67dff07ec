package io.spraynic.bench.experiment;

import io.spraynic.datapath.fabric.DropReason;
import io.spraynic.datapath.fabric.FabricAddresses;
import io.spraynic.datapath.fabric.Link;
import io.spraynic.datapath.fabric.LinkTap;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Counts the bytes a link carries per sending host (by IPv4 source address) and the most frames it held
 * queued: what a bottleneck link shows of how its capacity is shared.
 */
final class SourceBytesTap implements LinkTap
{
    private static final int ETHERTYPE_OFFSET = 12;
    private static final int IPV4_SOURCE_OFFSET = 14 + 12;
    private static final int ETHERTYPE_IPV4 = 0x0800;
    private static final ValueLayout.OfShort SHORT_BE = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt INT_BE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private final FabricAddresses addresses;
    private final long[] bytes;
    private int peakQueueFrames;
    private long dropped;

    SourceBytesTap(final FabricAddresses addresses)
    {
        this.addresses = addresses;
        this.bytes = new long[addresses.hosts()];
    }

    public void onFrameSent(final long nowNs, final Link link, final MemorySegment segment, final long offset, final int length)
    {
        // the frame leaving plus those still queued behind it
        peakQueueFrames = Math.max(peakQueueFrames, link.queueFrames() + 1);
        if (length >= IPV4_SOURCE_OFFSET + 4 &&
            (segment.get(SHORT_BE, offset + ETHERTYPE_OFFSET) & 0xFFFF) == ETHERTYPE_IPV4)
        {
            final int host = addresses.hostOf(segment.get(INT_BE, offset + IPV4_SOURCE_OFFSET));
            if (host >= 0)
            {
                bytes[host] += length;
            }
        }
    }

    public void onFrameDropped(
        final long nowNs, final Link link, final DropReason reason, final MemorySegment segment, final long offset,
        final int length)
    {
        dropped++;
    }

    /** @return bytes sent so far from {@code host}. */
    long bytesFrom(final int host)
    {
        return bytes[host];
    }

    int peakQueueFrames()
    {
        return peakQueueFrames;
    }

    long dropped()
    {
        return dropped;
    }
}
