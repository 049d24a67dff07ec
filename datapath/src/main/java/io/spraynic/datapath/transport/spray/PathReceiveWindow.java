package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.Psn;
import io.spraynic.datapath.wire.SelectiveAckHeader;

import java.lang.foreign.MemorySegment;

/**
 * The receiver's view of each inbound path's sequence space (docs/PROTOCOL.md S6.3): the cumulative PSN
 * (the first PSN not yet received) and a 256-bit bitmap of what arrived above it, bit {@code i}
 * standing for PSN {@code cumulative + i}. Bit 0 is therefore always clear. This is exactly what a
 * {@code SPRAY_ACK} carries (S5.1), so acknowledging is copying four words.
 * <p>
 * Paths are FIFO (S6.2): a set bit above a clear one means the clear one was lost, and the sender
 * learns it from the next ACK. Allocation-free; one instance holds every inbound path of a connection, methods
 * taking the path.
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

    /** The most paths one instance holds. */
    static final int MAX_PATHS = 64;

    // WORDS words a path, path-major (issue 13: one array and one object for all the paths of a connection, not an
    // object each: 8 paths 344 B instead of 512)
    private final long[] bits;
    private final int[] cumulativePsns;

    /**
     * One path's window.
     *
     * @param firstPsn the first PSN the sender will use on this path.
     */
    public PathReceiveWindow(final int firstPsn)
    {
        this(1, firstPsn);
    }

    /**
     * @param paths      paths of the connection; path {@code i} starts at {@link PathScheduler#initialPsn}
     *                   {@code (initialPsn, i)}.
     * @param initialPsn the connection's initial receive PSN (S6.1).
     */
    PathReceiveWindow(final int paths, final int initialPsn)
    {
        if (paths < 1 || paths > MAX_PATHS)
        {
            throw new IllegalArgumentException("need 1 <= paths <= " + MAX_PATHS + " (got " + paths + ")");
        }
        bits = new long[paths * WORDS];
        cumulativePsns = new int[paths];
        for (int path = 0; path < paths; path++)
        {
            reset(path, PathScheduler.initialPsn(initialPsn, path));
        }
    }

    /**
     * Forgets everything of the path and expects {@code nextPsn} (set-up, and {@code RESYNC} probes, S7.5).
     */
    public void reset(final int path, final int nextPsn)
    {
        cumulativePsns[path] = nextPsn & Psn.MASK;
        final int base = path * WORDS;
        for (int i = 0; i < WORDS; i++)
        {
            bits[base + i] = 0;
        }
    }

    /**
     * Records the arrival of {@code psn} on the path.
     *
     * @return {@link #IN_ORDER}, {@link #ABOVE_GAP}, {@link #DUPLICATE} or {@link #OUT_OF_WINDOW}.
     */
    public int onPacket(final int path, final int psn)
    {
        final int distance = Psn.diff(psn, cumulativePsns[path]);
        if (distance < 0)
        {
            return DUPLICATE;
        }
        if (distance >= SelectiveAckHeader.SACK_BITS)
        {
            return OUT_OF_WINDOW;
        }
        final int word = path * WORDS + (distance >>> 6);
        final long mask = Long.MIN_VALUE >>> (distance & 63);
        if ((bits[word] & mask) != 0)
        {
            return DUPLICATE;
        }
        bits[word] |= mask;
        if (distance != 0)
        {
            return ABOVE_GAP;
        }
        advance(path);
        return IN_ORDER;
    }

    /**
     * @return true when the path has a gap: some PSN above the cumulative one has arrived.
     */
    public boolean hasGap(final int path)
    {
        final int base = path * WORDS;
        for (int i = 0; i < WORDS; i++)
        {
            if (bits[base + i] != 0)
            {
                return true;
            }
        }
        return false;
    }

    public int cumulativePsn(final int path)
    {
        return cumulativePsns[path];
    }

    /**
     * @return the PSN after the highest one received on the path: the cumulative PSN without a gap (S12.6: a RESYNC
     * may not go below it, so a replayed one cannot undo what arrived since).
     */
    public int frontier(final int path)
    {
        final int base = path * WORDS;
        for (int i = WORDS - 1; i >= 0; i--)
        {
            if (bits[base + i] != 0)
            {
                return Psn.add(cumulativePsns[path],
                    i * Long.SIZE + Long.SIZE - Long.numberOfTrailingZeros(bits[base + i]));
            }
        }
        return cumulativePsns[path];
    }

    /**
     * @return bit {@code index} of the path: whether PSN {@code cumulativePsn(path) + index} has arrived.
     */
    public boolean isReceived(final int path, final int index)
    {
        java.util.Objects.checkIndex(index, SelectiveAckHeader.SACK_BITS); // never a word of another path's window
        return (bits[path * WORDS + (index >>> 6)] & (Long.MIN_VALUE >>> (index & 63))) != 0;
    }

    /**
     * Writes the path's cumulative PSN and bitmap into a SACK header at {@code offset}.
     */
    public void writeTo(final int path, final MemorySegment segment, final long offset)
    {
        SelectiveAckHeader.cumulativePsn(segment, offset, cumulativePsns[path]);
        final int base = path * WORDS;
        for (int i = 0; i < WORDS; i++)
        {
            SelectiveAckHeader.sackWord(segment, offset, i, bits[base + i]);
        }
    }

    // Bit 0 just got set: slide the window past the run of received PSNs that starts there.
    private void advance(final int path)
    {
        final int base = path * WORDS;
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
        shiftLeft(base, run);
        cumulativePsns[path] = Psn.add(cumulativePsns[path], run);
    }

    private void shiftLeft(final int base, final int count)
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

    /** @return the path's window, for diagnostics (allocates). */
    public String toString(final int path)
    {
        final int base = path * WORDS;
        return String.format("PathReceiveWindow{cumulativePsn=%d, bits=%016x%016x%016x%016x}",
            cumulativePsns[path], bits[base], bits[base + 1], bits[base + 2], bits[base + 3]);
    }

    public String toString()
    {
        final StringBuilder sb = new StringBuilder();
        for (int path = 0; path < cumulativePsns.length; path++)
        {
            sb.append(path == 0 ? "" : ", ").append(toString(path));
        }
        return sb.toString();
    }
}
