package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.Psn;
import io.spraynic.datapath.wire.SelectiveAckHeader;

import java.lang.foreign.MemorySegment;

/**
 * The receiver's view of one path's sequence space (docs/PROTOCOL.md S6.3): the cumulative PSN
 * (the first PSN not yet received) and a 256-bit bitmap of what arrived above it, bit {@code i}
 * standing for PSN {@code cumulative + i}. Bit 0 is therefore always clear. This is exactly what a
 * {@code SPRAY_ACK} carries (S5.1), so acknowledging is copying four words.
 * <p>
 * Paths are FIFO (S6.2): a set bit above a clear one means the clear one was lost, and the sender
 * learns it from the next ACK. Allocation-free; one instance per path and direction.
 */
public final class PathReceiveWindow
{
    /** {@link #onPacket} result: the packet was the next expected one (the cumulative PSN advanced). */
    public static final int IN_ORDER = 0;
    /** {@link #onPacket} result: new, above a gap (S6.4: acknowledge at once). */
    public static final int ABOVE_GAP = 1;
    /** {@link #onPacket} result: received before (or below the cumulative PSN). */
    public static final int DUPLICATE = 2;
    /** {@link #onPacket} result: 256 or more ahead of the cumulative PSN; dropped (S6.3). */
    public static final int OUT_OF_WINDOW = 3;

    static final int WORDS = SelectiveAckHeader.SACK_BITS / Long.SIZE;

    // WORDS words from `base`: the window's own array, or its part of one its connection's paths share (issue 13:
    // one array header for all of them)
    private final long[] bits;
    private final int base;
    private int cumulativePsn;

    /**
     * @param firstPsn the first PSN the sender will use on this path.
     */
    public PathReceiveWindow(final int firstPsn)
    {
        this(new long[WORDS], 0, firstPsn);
    }

    /**
     * @param bits     holds this window's bitmap at {@code [base, base + WORDS)}, and other windows' elsewhere.
     * @param firstPsn the first PSN the sender will use on this path.
     */
    PathReceiveWindow(final long[] bits, final int base, final int firstPsn)
    {
        if (base < 0 || base + WORDS > bits.length)
        {
            throw new IllegalArgumentException("no room for " + WORDS + " words at " + base + " of " + bits.length);
        }
        this.bits = bits;
        this.base = base;
        reset(firstPsn);
    }

    /**
     * Forgets everything and expects {@code nextPsn} (set-up, and {@code RESYNC} probes, S7.5).
     */
    public void reset(final int nextPsn)
    {
        cumulativePsn = nextPsn & Psn.MASK;
        for (int i = 0; i < WORDS; i++)
        {
            bits[base + i] = 0;
        }
    }

    /**
     * Records the arrival of {@code psn}.
     *
     * @return {@link #IN_ORDER}, {@link #ABOVE_GAP}, {@link #DUPLICATE} or {@link #OUT_OF_WINDOW}.
     */
    public int onPacket(final int psn)
    {
        final int distance = Psn.diff(psn, cumulativePsn);
        if (distance < 0)
        {
            return DUPLICATE;
        }
        if (distance >= SelectiveAckHeader.SACK_BITS)
        {
            return OUT_OF_WINDOW;
        }
        final int word = distance >>> 6;
        final long mask = Long.MIN_VALUE >>> (distance & 63);
        if ((bits[base + word] & mask) != 0)
        {
            return DUPLICATE;
        }
        bits[base + word] |= mask;
        if (distance != 0)
        {
            return ABOVE_GAP;
        }
        advance();
        return IN_ORDER;
    }

    /**
     * @return true when a gap exists: some PSN above the cumulative one has arrived.
     */
    public boolean hasGap()
    {
        for (int i = 0; i < WORDS; i++)
        {
            if (bits[base + i] != 0)
            {
                return true;
            }
        }
        return false;
    }

    public int cumulativePsn()
    {
        return cumulativePsn;
    }

    /**
     * @return the PSN after the highest one received: the cumulative PSN without a gap (S12.6: a RESYNC may not
     * go below it, so a replayed one cannot undo what arrived since).
     */
    public int frontier()
    {
        for (int i = WORDS - 1; i >= 0; i--)
        {
            if (bits[base + i] != 0)
            {
                return Psn.add(cumulativePsn, i * Long.SIZE + Long.SIZE - Long.numberOfTrailingZeros(bits[base + i]));
            }
        }
        return cumulativePsn;
    }

    /**
     * @return bit {@code index}: whether PSN {@code cumulativePsn() + index} has arrived.
     */
    public boolean isReceived(final int index)
    {
        java.util.Objects.checkIndex(index, SelectiveAckHeader.SACK_BITS); // never a word of another path's window
        return (bits[base + (index >>> 6)] & (Long.MIN_VALUE >>> (index & 63))) != 0;
    }

    /**
     * Writes the cumulative PSN and the bitmap into a SACK header at {@code offset}.
     */
    public void writeTo(final MemorySegment segment, final long offset)
    {
        SelectiveAckHeader.cumulativePsn(segment, offset, cumulativePsn);
        for (int i = 0; i < WORDS; i++)
        {
            SelectiveAckHeader.sackWord(segment, offset, i, bits[base + i]);
        }
    }

    // Bit 0 just got set: slide the window past the run of received PSNs that starts there.
    private void advance()
    {
        int run = 0;
        for (int i = 0; i < WORDS; i++)
        {
            final int ones = Long.numberOfLeadingZeros(~bits[base + i]);
            run += ones;
            if (ones < Long.SIZE)
            {
                break;
            }
        }
        shiftLeft(run);
        cumulativePsn = Psn.add(cumulativePsn, run);
    }

    private void shiftLeft(final int count)
    {
        final int wordShift = count >>> 6;
        final int bitShift = count & 63;
        for (int i = 0; i < WORDS; i++)
        {
            final int source = i + wordShift;
            final long high = source < WORDS ? bits[base + source] : 0;
            final long low = source + 1 < WORDS ? bits[base + source + 1] : 0;
            bits[base + i] = bitShift == 0 ? high : (high << bitShift) | (low >>> (Long.SIZE - bitShift));
        }
    }

    public String toString()
    {
        return String.format("PathReceiveWindow{cumulativePsn=%d, bits=%016x%016x%016x%016x}",
            cumulativePsn, bits[base], bits[base + 1], bits[base + 2], bits[base + 3]);
    }
}
