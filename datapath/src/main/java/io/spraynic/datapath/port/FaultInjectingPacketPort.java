package io.spraynic.datapath.port;

import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.Ipv4Header;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * A {@link PacketPort} decorator that loses, duplicates or CE-marks transmitted packets, at random rates
 * from a seeded {@link SplittableRandom} (so a run is reproducible) or by exact position ("drop the 5th and
 * 6th data packet"), and counts what it did. Receiving passes straight through.
 * <p>
 * Only packets the {@link Selector} picks are eligible, and positions count eligible packets from 0: a test
 * can aim at data packets and leave ACKs alone. Each eligible packet draws the same three random numbers
 * whatever happens to it, so changing one rate does not reshuffle the other faults.
 * <p>
 * Since a burst cannot drop one of its packets, transmit copies the survivors (twice for a duplicate) into
 * buffers of its own from the inner port and frees the caller's; a copy the inner port could not take yet is
 * sent first on the next call. For tests and experiments, not for line rate.
 */
public final class FaultInjectingPacketPort implements PacketPort
{
    /** {@inheritDoc} */
    public boolean writesUdpChecksum()
    {
        return inner.writesUdpChecksum();
    }

    /**
     * Chooses the packets faults may hit.
     */
    @FunctionalInterface
    public interface Selector
    {
        /** Every packet. */
        Selector ALL = (memory, offset, length) -> true;

        /**
         * @return true when the frame at {@code offset} may be dropped, duplicated or marked.
         */
        boolean test(MemorySegment memory, long offset, int length);
    }

    private final PacketPort inner;
    private final SplittableRandom random;
    private final double dropRate;
    private final double duplicateRate;
    private final double ceMarkRate;
    private final Selector selector;
    private long[] dropPositions = new long[0];
    private long[] duplicatePositions = new long[0];
    private PacketBurst staging;

    private long eligible;
    private long dropped;
    private long duplicated;
    private long ceMarked;
    private long forwarded;

    /**
     * @param inner         the port that really sends.
     * @param seed          the random seed.
     * @param dropRate      probability an eligible packet is lost.
     * @param duplicateRate probability an eligible packet that is not lost is sent twice.
     * @param ceMarkRate    probability an eligible IPv4 packet that is not lost has its ECN set to CE.
     * @param selector      which packets are eligible.
     */
    public FaultInjectingPacketPort(
        final PacketPort inner,
        final long seed,
        final double dropRate,
        final double duplicateRate,
        final double ceMarkRate,
        final Selector selector)
    {
        if (dropRate < 0 || dropRate > 1 || duplicateRate < 0 || duplicateRate > 1 || ceMarkRate < 0 || ceMarkRate > 1)
        {
            throw new IllegalArgumentException("rates must be probabilities");
        }
        this.inner = inner;
        this.random = new SplittableRandom(seed);
        this.dropRate = dropRate;
        this.duplicateRate = duplicateRate;
        this.ceMarkRate = ceMarkRate;
        this.selector = selector;
    }

    /**
     * A port that faults only the eligible packets at the given positions (counting from 0).
     *
     * @param inner    the port that really sends.
     * @param selector which packets are eligible.
     * @return the port; add positions with {@link #dropAt} and {@link #duplicateAt}.
     */
    public static FaultInjectingPacketPort exact(final PacketPort inner, final Selector selector)
    {
        return new FaultInjectingPacketPort(inner, 0, 0, 0, 0, selector);
    }

    /**
     * Also drops the eligible packets at these positions (control path).
     *
     * @param positions 0-based positions among eligible packets.
     * @return this.
     */
    public FaultInjectingPacketPort dropAt(final long... positions)
    {
        dropPositions = merge(dropPositions, positions);
        return this;
    }

    /**
     * Also duplicates the eligible packets at these positions (control path).
     *
     * @param positions 0-based positions among eligible packets.
     * @return this.
     */
    public FaultInjectingPacketPort duplicateAt(final long... positions)
    {
        duplicatePositions = merge(duplicatePositions, positions);
        return this;
    }

    private static long[] merge(final long[] existing, final long[] more)
    {
        final long[] merged = Arrays.copyOf(existing, existing.length + more.length);
        System.arraycopy(more, 0, merged, existing.length, more.length);
        Arrays.sort(merged);
        return merged;
    }

    public String name()
    {
        return inner.name() + "+faults";
    }

    public PacketBurst newBurst(final int capacity)
    {
        ensureStaging(capacity);
        return inner.newBurst(capacity);
    }

    private void ensureStaging(final int capacity)
    {
        // room for every packet of a caller's burst sent twice; grows only on the control path (newBurst) or
        // on the first transmit of a larger burst
        if (null == staging || staging.capacity() < 2 * capacity)
        {
            if (null != staging)
            {
                inner.transmit(staging);
                inner.release(staging);
                staging.close();
            }
            staging = inner.newBurst(2 * capacity);
        }
    }

    public int receive(final PacketBurst burst)
    {
        return inner.receive(burst);
    }

    public void completeReceived(final PacketBurst burst, final int from, final int to)
    {
        inner.completeReceived(burst, from, to);
    }

    public boolean allocate(final PacketBurst burst, final int count)
    {
        return inner.allocate(burst, count);
    }

    public boolean allocateOne(final PacketBurst burst)
    {
        return inner.allocateOne(burst);
    }

    public int transmit(final PacketBurst burst)
    {
        ensureStaging(burst.capacity());
        if (staging.size() > 0)
        {
            inner.transmit(staging);
            if (staging.size() > 0)
            {
                return 0; // the inner port is full: the caller keeps its packets
            }
        }
        final int size = burst.size();
        if (size == 0)
        {
            return 0;
        }
        // decide first, so that a failed buffer allocation changes nothing
        int copies = 0;
        final int[] plan = planScratch(size);
        final long eligibleBefore = eligible;
        final long droppedBefore = dropped;
        final long duplicatedBefore = duplicated;
        final long ceMarkedBefore = ceMarked;
        for (int i = 0; i < size; i++)
        {
            plan[i] = decide(burst.memory(), burst.offset(i), burst.length(i));
            copies += plan[i] & COPIES_MASK;
        }
        if (copies > 0 && !inner.allocate(staging, copies))
        {
            // out of buffers: the caller keeps its packets and they are judged again next time (the random
            // draws are spent, so a run that runs out of buffers is reproducible only with the same timing)
            eligible = eligibleBefore;
            dropped = droppedBefore;
            duplicated = duplicatedBefore;
            ceMarked = ceMarkedBefore;
            return 0;
        }
        int target = 0;
        for (int i = 0; i < size; i++)
        {
            final int n = plan[i] & COPIES_MASK;
            for (int c = 0; c < n; c++, target++)
            {
                final int length = burst.length(i);
                MemorySegment.copy(burst.memory(), burst.offset(i), staging.memory(), staging.offset(target), length);
                staging.length(target, length);
                if ((plan[i] & CE_MARK) != 0)
                {
                    markCe(staging.memory(), staging.offset(target), length);
                }
            }
        }
        inner.release(burst);
        forwarded += copies;
        inner.transmit(staging);
        return size;
    }

    private static final int COPIES_MASK = 0x3;
    private static final int CE_MARK = 0x4;
    private int[] planScratchArray = new int[64];

    private int[] planScratch(final int size)
    {
        if (planScratchArray.length < size)
        {
            planScratchArray = new int[size];
        }
        return planScratchArray;
    }

    private int decide(final MemorySegment memory, final long offset, final int length)
    {
        if (!selector.test(memory, offset, length))
        {
            return 1;
        }
        final long position = eligible++;
        final double dropDraw = random.nextDouble();
        final double duplicateDraw = random.nextDouble();
        final double markDraw = random.nextDouble();
        if (Arrays.binarySearch(dropPositions, position) >= 0 || dropDraw < dropRate)
        {
            dropped++;
            return 0;
        }
        int plan = 1;
        if (Arrays.binarySearch(duplicatePositions, position) >= 0 || duplicateDraw < duplicateRate)
        {
            duplicated++;
            plan = 2;
        }
        if (markDraw < ceMarkRate && isIpv4(memory, offset, length))
        {
            ceMarked++;
            plan |= CE_MARK;
        }
        return plan;
    }

    private static boolean isIpv4(final MemorySegment memory, final long offset, final int length)
    {
        return length >= EthernetHeader.LENGTH + Ipv4Header.LENGTH &&
            EthernetHeader.etherType(memory, offset) == EthernetHeader.ETHER_TYPE_IPV4;
    }

    private static void markCe(final MemorySegment memory, final long offset, final int length)
    {
        final long ip = offset + EthernetHeader.LENGTH;
        Ipv4Header.ecn(memory, ip, 3);
        // the ICRC masks the traffic class, so only the header checksum changes
        Ipv4Header.updateChecksum(memory, ip, Ipv4Header.headerLength(memory, ip));
    }

    public void release(final PacketBurst burst)
    {
        inner.release(burst);
    }

    public void releaseLast(final PacketBurst burst)
    {
        inner.releaseLast(burst);
    }

    public void onPollerStart()
    {
        inner.onPollerStart();
    }

    public void onPollerClose()
    {
        if (null != staging)
        {
            inner.release(staging);
        }
        inner.onPollerClose();
    }

    public void close()
    {
        if (null != staging)
        {
            inner.release(staging);
            staging.close();
            staging = null;
        }
        inner.close();
    }

    /** @return eligible packets seen. */
    public long eligible()
    {
        return eligible;
    }

    /** @return packets lost on purpose. */
    public long dropped()
    {
        return dropped;
    }

    /** @return packets sent twice. */
    public long duplicated()
    {
        return duplicated;
    }

    /** @return packets marked CE. */
    public long ceMarked()
    {
        return ceMarked;
    }

    /** @return copies handed to the inner port. */
    public long forwarded()
    {
        return forwarded;
    }

    public String toString()
    {
        return "FaultInjectingPacketPort{" + inner.name() + ", eligible=" + eligible + ", dropped=" + dropped +
            ", duplicated=" + duplicated + ", ceMarked=" + ceMarked + '}';
    }
}
