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
 * One thread at a time (the NIC's conductor).
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
        final AtomicBuffer buffer = this.buffer;
        final int mask = capacity - 1;
        int records = 0;
        final long start = head;
        try
        {
            while (records < limit)
            {
                final int index = (int)head & mask;
                final int length = buffer.getIntVolatile(RecordDescriptor.lengthOffset(index));
                if (0 == length)
                {
                    break;
                }
                final int room = capacity - index; // records never wrap: a padding record fills the end
                if (length < 0)
                {
                    // claimed and not committed yet: legitimate for a while (a producer that died is unblocked later)
                    if (length == Integer.MIN_VALUE || -length < RecordDescriptor.HEADER_LENGTH || -length > room)
                    {
                        return corrupt("a claimed record of " + -(long)length + " B at " + index + " (room " + room + ")");
                    }
                    break;
                }
                if (length < RecordDescriptor.HEADER_LENGTH || length > room)
                {
                    return corrupt("a record of " + length + " B at " + index + " (room " + room + ")");
                }
                final int aligned = BitUtil.align(length, RecordDescriptor.ALIGNMENT); // room is a multiple of 8
                final int type = buffer.getInt(RecordDescriptor.typeOffset(index));
                if (type != RingBuffer.PADDING_MSG_TYPE_ID)
                {
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
                    if (!handler.onRecord(type, copy, messageLength))
                    {
                        break;
                    }
                    records++;
                }
                buffer.setMemory(index, aligned, (byte)0);
                head += aligned;
            }
        }
        finally
        {
            if (head != start)
            {
                buffer.putLongRelease(headPositionIndex, head);
            }
        }
        return records;
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
