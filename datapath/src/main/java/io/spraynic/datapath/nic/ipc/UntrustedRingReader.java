package io.spraynic.datapath.nic.ipc;

import org.agrona.BitUtil;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.RecordDescriptor;
import org.agrona.concurrent.ringbuffer.RingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

/**
 * The consumer side of an Agrona ring buffer ({@code OneToOneRingBuffer} or {@code ManyToOneRingBuffer} layout)
 * whose producers are other processes and are not trusted. Agrona's own {@code read} believes the record length it
 * finds: a length of 0x7FFFFFFF makes it throw on every call without ever moving the head. This reader checks every
 * record header against the ring before it touches the record, copies the record into private memory before the
 * handler sees it (the producer cannot change a field between its check and its use), keeps its head position in a
 * field of its own (a producer that overwrites the shared head only misleads the producers), and answers
 * {@link #CORRUPT} with a reason instead of throwing. No allocation on the read path.
 * <p>
 * One thread at a time (the NIC's conductor, or the worker that owns a client's connection).
 */
final class UntrustedRingReader
{
    /** What {@link #read} returns when the ring holds a record no honest producer writes. */
    static final int CORRUPT = -1;

    /** Takes one record, copied out of the ring. */
    @FunctionalInterface
    interface Handler
    {
        /**
         * @param type   the record's type, greater than 0.
         * @param record the copy, from index 0.
         * @param length bytes of the copy.
         * @return true to consume the record, false to leave it in the ring and stop (offered again on the next read).
         */
        boolean onRecord(int type, MutableDirectBuffer record, int length);
    }

    private final AtomicBuffer buffer;
    private final int capacity;
    private final int headPositionIndex;
    private final int headCachePositionIndex;
    private final int tailPositionIndex;
    private final int maxMessageLength;
    private final UnsafeBuffer copy;
    private long head;
    private int recordLength;
    private int recordAligned;
    private String corruption;

    /**
     * @param buffer           the ring and its trailer; its head position must be 0 (a ring this process made).
     * @param maxMessageLength the longest record body an honest producer writes; a longer one is corruption.
     */
    UntrustedRingReader(final AtomicBuffer buffer, final int maxMessageLength)
    {
        this.buffer = buffer;
        this.capacity = buffer.capacity() - RingBufferDescriptor.TRAILER_LENGTH;
        if (!BitUtil.isPowerOfTwo(capacity))
        {
            throw new IllegalArgumentException("a ring of " + buffer.capacity() + " B is not a power of two and a trailer");
        }
        this.headPositionIndex = capacity + RingBufferDescriptor.HEAD_POSITION_OFFSET;
        this.headCachePositionIndex = capacity + RingBufferDescriptor.HEAD_CACHE_POSITION_OFFSET;
        this.tailPositionIndex = capacity + RingBufferDescriptor.TAIL_POSITION_OFFSET;
        this.maxMessageLength = maxMessageLength;
        this.copy = new UnsafeBuffer(new byte[BitUtil.align(Math.max(maxMessageLength, 1), RecordDescriptor.ALIGNMENT)]);
        this.head = 0;
    }

    /** @return bytes of the ring, trailer excluded. */
    int capacity()
    {
        return capacity;
    }

    /** @return this reader's head position (the shared one is written from it, never read back). */
    long head()
    {
        return head;
    }

    /** @return the producers' tail position as they left it (untrusted). */
    long tail()
    {
        return buffer.getLongVolatile(tailPositionIndex);
    }

    /** @return why the last {@link #read} or {@link #checkPositions} answered {@link #CORRUPT} (allocates only then). */
    String corruption()
    {
        return corruption;
    }

    /**
     * Hands at most {@code limit} records to {@code handler}, in order, each removed from the ring (zeroed, as the
     * producers expect) once the handler consumed it.
     *
     * @return records handed over, or {@link #CORRUPT} (see {@link #corruption()}): nothing past the bad record is read.
     */
    int read(final Handler handler, final int limit)
    {
        int records = 0;
        while (records < limit)
        {
            final int type = peek();
            if (type == CORRUPT)
            {
                return CORRUPT;
            }
            if (0 == type || !handler.onRecord(type, copy, recordLength))
            {
                break;
            }
            consume();
            records++;
        }
        return records;
    }

    /**
     * Makes the oldest committed record current without removing it: checks its header against the ring and copies
     * its body into private memory ({@link #record()}, {@link #recordLength()}), so what the producer writes there
     * afterwards changes nothing. Padding records on the way are removed. Until {@link #consume()}, each call answers
     * the same record again.
     *
     * @return the record's type (greater than 0), 0 when none is committed yet, or {@link #CORRUPT}.
     */
    int peek()
    {
        final AtomicBuffer buffer = this.buffer;
        final int mask = capacity - 1;
        for (int paddings = 0; paddings < 2; paddings++) // a padding record fills the end, so two in a row are a lap
        {
            final int index = (int)head & mask;
            final int length = buffer.getIntVolatile(RecordDescriptor.lengthOffset(index));
            if (0 == length)
            {
                return 0;
            }
            final int room = capacity - index; // records never wrap: a padding record fills the end
            if (length < 0)
            {
                // claimed and not committed yet: legitimate for a while (a producer that died is unblocked later)
                if (length == Integer.MIN_VALUE || -length < RecordDescriptor.HEADER_LENGTH || -length > room)
                {
                    return corrupt("a claimed record of " + -(long)length + " B at " + index + " (room " + room + ")");
                }
                return 0;
            }
            if (length < RecordDescriptor.HEADER_LENGTH || length > room)
            {
                return corrupt("a record of " + length + " B at " + index + " (room " + room + ")");
            }
            final int aligned = BitUtil.align(length, RecordDescriptor.ALIGNMENT); // room is a multiple of 8
            final int type = buffer.getInt(RecordDescriptor.typeOffset(index));
            if (type == RingBuffer.PADDING_MSG_TYPE_ID)
            {
                remove(index, aligned);
                continue;
            }
            final int messageLength = length - RecordDescriptor.HEADER_LENGTH;
            if (type <= 0)
            {
                return corrupt("a record of type " + type + " at " + index);
            }
            if (messageLength > maxMessageLength)
            {
                return corrupt("a record of " + messageLength + " B at " + index + ", longer than the " +
                    maxMessageLength + " B of any message");
            }
            copy.putBytes(0, buffer, RecordDescriptor.encodedMsgOffset(index), messageLength);
            recordLength = messageLength;
            recordAligned = aligned;
            return type;
        }
        return 0;
    }

    /** @return the current record's body, copied out of the ring, from index 0 (after {@link #peek()}). */
    MutableDirectBuffer record()
    {
        return copy;
    }

    /** @return bytes of the current record's body (after {@link #peek()}). */
    int recordLength()
    {
        return recordLength;
    }

    /** Removes the current record from the ring (zeroed, as the producers expect): only after a {@link #peek()} found one. */
    void consume()
    {
        remove((int)head & (capacity - 1), recordAligned);
    }

    private void remove(final int index, final int aligned)
    {
        buffer.setMemory(index, aligned, (byte)0);
        head += aligned;
        buffer.putLongRelease(headPositionIndex, head);
    }

    /**
     * Checks the producers' tail against this reader's head: an honest tail is never behind the head, nor more than
     * the capacity ahead of it (producers trust both to find room). A shared head position someone overwrote is
     * written back from this reader's own, so producers (and Agrona's {@code unblock}) find the real one.
     *
     * @return 0, or {@link #CORRUPT} (see {@link #corruption()}).
     */
    int checkPositions()
    {
        if (buffer.getLongVolatile(headPositionIndex) != head)
        {
            buffer.putLongRelease(headPositionIndex, head);
        }
        final long ahead = tail() - head;
        if (ahead < 0 || ahead > capacity)
        {
            return corrupt("a tail position " + ahead + " B from the head (capacity " + capacity + ")");
        }
        return 0;
    }

    /**
     * Discards everything in the ring and restarts it empty at the next multiple of its capacity (so no producer's
     * compare-and-set on an old tail can succeed): zeroes the records, then moves head, head cache and tail. A
     * producer that claimed before the reset and commits after it writes into memory behind the new head, which the
     * next claims overwrite; if its header lands where this reader looks, that reads as corruption and resets again.
     */
    void reset()
    {
        buffer.setMemory(0, capacity, (byte)0);
        head = (head & ~((long)capacity - 1)) + capacity;
        buffer.putLongRelease(headPositionIndex, head);
        buffer.putLongRelease(headCachePositionIndex, head);
        buffer.putLongRelease(tailPositionIndex, head);
    }

    private int corrupt(final String reason)
    {
        corruption = reason;
        return CORRUPT;
    }
}
