package io.spraynic.conformance;

import java.util.BitSet;

/**
 * The receive side of one direction's paths as S6.3 keeps it: per path the cumulative PSN and the PSNs received
 * above it (bit i: cumulative + i), and the ACKs (S5.1) that report them, numbered 1, 2, 3, ... per path.
 * Control path: allocates.
 */
final class ReceiveWindows
{
    private final int[] cumulative;
    private final BitSet[] above;
    private final int[] ackSequence;
    /** The cumulativePsn each path's last ACK claimed: what a keepalive claims again ({@link #keepalive}). */
    private final int[] ackedCumulative;
    /** S5.1-3: per path, the packets recorded again since its last ACK (counted always, reported when asked). */
    private final int[] duplicates;
    /**
     * Whether ACKs report {@link #duplicates} (S5.1-3); off, they report 0, as a receiver older than that clause does,
     * which judges nothing at the sender (S6.8-1 c): the suite turns it on only where a check wants the report.
     */
    boolean reportDuplicates;

    /** @param initialPsn the peer's announced initial PSN: path i starts at {@code initialPsn + i * 2^18} (S5.4). */
    ReceiveWindows(final int paths, final int initialPsn)
    {
        cumulative = new int[paths];
        above = new BitSet[paths];
        ackSequence = new int[paths];
        ackedCumulative = new int[paths];
        duplicates = new int[paths];
        for (int i = 0; i < paths; i++)
        {
            cumulative[i] = (initialPsn + i * SprayWire.PATH_PSN_STRIDE) & SprayWire.PSN_MASK;
            above[i] = new BitSet(SprayWire.SACK_BITS);
        }
    }

    int cumulative(final int path)
    {
        return cumulative[path];
    }

    /** @return whether {@code psn} was new on {@code path} (and within its window); records it. */
    boolean record(final int path, final int psn)
    {
        final int d = SprayWire.psnDistance(cumulative[path], psn);
        if (d < 0 || d < SprayWire.SACK_BITS && above[path].get(d))
        {
            duplicates[path]++; // S6.3-2: below cumulativePsn or marked already
            return false;
        }
        if (d >= SprayWire.SACK_BITS)
        {
            return false;
        }
        above[path].set(d);
        int advance = 0;
        while (above[path].get(advance))
        {
            advance++;
        }
        if (advance > 0)
        {
            above[path] = above[path].get(advance, SprayWire.SACK_BITS + advance);
            cumulative[path] = (cumulative[path] + advance) & SprayWire.PSN_MASK;
        }
        return true;
    }

    /** S5.2-2: a RESYNC probe at {@code psn} accepted: the path expects the PSN after it. */
    void resync(final int path, final int psn)
    {
        cumulative[path] = (psn + 1) & SprayWire.PSN_MASK;
        above[path].clear();
    }

    /**
     * @return an ACK (S5.1) of {@code path} to {@code destQp}: its window, {@code ceCount} CE marks echoed (ECE set
     * when above 0), the share {@code rateHintMbps} (S8.3; 0: no hint), the next ackSequence, tagged with {@code key}.
     */
    byte[] ack(final int destQp, final int path, final int ceCount, final int rateHintMbps, final long[] key)
    {
        return ack(destQp, path, ceCount, rateHintMbps, 0, key);
    }

    /** As {@link #ack(int, int, int, int, long[])}, counting {@code refusals} (S9.3.1). */
    byte[] ack(final int destQp, final int path, final int ceCount, final int rateHintMbps, final int refusals,
        final long[] key)
    {
        final byte[] sack = new byte[32];
        for (int i = above[path].nextSetBit(1); i >= 0 && i < SprayWire.SACK_BITS; i = above[path].nextSetBit(i + 1))
        {
            sack[i >> 3] |= (byte)(0x80 >>> (i & 7));
        }
        final int reported = reportDuplicates ? Math.min(duplicates[path], 0xFF) : 0;
        ackedCumulative[path] = cumulative[path];
        duplicates[path] = 0; // S5.1-3: counted again from 0 after each ACK
        return FrameBuilder.bth(SprayWire.ACK, destQp, 0, false).u8(path).u8(ceCount > 0 ? SprayWire.SACKH_ECE : 0)
            .u16(Math.min(ceCount, 0xFFFF)).u8(reported).u24(cumulative[path]).bytes(sack).u32(rateHintMbps)
            .u32(++ackSequence[path])
            .u32(refusals).controlTag(key).bytes();
    }

    /**
     * @return a replayed ACK (S5.1-2) of {@code path}: it claims every PSN before {@code claimedCumulative}
     * received, SACK empty, and repeats the last ackSequence sent (stale: not above it), tagged with {@code key}.
     */
    byte[] staleAck(final int destQp, final int path, final int claimedCumulative, final long[] key)
    {
        return FrameBuilder.bth(SprayWire.ACK, destQp, 0, false).u8(path).u8(0).u16(0).u8(0).u24(claimedCumulative)
            .zeros(32).u32(0).u32(ackSequence[path]).u32(0).controlTag(key).bytes();
    }

    /**
     * @return the last ACK of {@code path} again as to what it claims (its cumulativePsn, SACK empty), with its
     * ackSequence: stale (S5.1-2), so a receiver drops it and learns nothing from it, but it is a packet of the
     * connection, which keeps the target from closing the connection for idleness (S12.10) while the suite withholds
     * what it received since. Only after an ACK of the path was sent (else its ackSequence, 0, is not stale).
     */
    byte[] keepalive(final int destQp, final int path, final long[] key)
    {
        if (ackSequence[path] == 0)
        {
            throw new IllegalStateException("no ACK of path " + path + " sent yet: a keepalive would not be stale");
        }
        return staleAck(destQp, path, ackedCumulative[path], key);
    }

    /** @return the last ackSequence sent on {@code path} (0: none yet). */
    int lastAckSequence(final int path)
    {
        return ackSequence[path];
    }
}
