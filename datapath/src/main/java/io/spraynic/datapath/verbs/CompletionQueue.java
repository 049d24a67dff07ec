package io.spraynic.datapath.verbs;

import org.agrona.BitUtil;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A bounded completion queue, as {@code ibv_cq}: a single-producer single-consumer ring of completions
 * held in primitive arrays. The transport thread {@link #offer}s, one application thread {@link #poll}s
 * into a reused {@link WorkCompletion}: neither side allocates, locks or throws.
 * <p>
 * A full queue refuses the completion and counts an {@link #overruns() overrun}: as in InfiniBand, a CQ
 * overrun is an error of the queue pairs using it, which the transport moves to the error state (its
 * {@code offer} returned false; later posts on those QPs answer {@link PostResult#COMPLETION_QUEUE_OVERRUN}).
 * The queue itself stays usable: what it holds can still be polled. The overrun is sticky and visible from any
 * thread ({@link #hasOverrun()}, {@link #overruns()}), as {@code IBV_EVENT_CQ_ERR} is. Size the queue for the
 * send and receive queue depths of every QP that shares it.
 */
public final class CompletionQueue implements io.spraynic.datapath.api.CompletionQueue
{
    private static final VarHandle HEAD;
    private static final VarHandle TAIL;
    private static final VarHandle OVERRUNS;

    static
    {
        try
        {
            final MethodHandles.Lookup lookup = MethodHandles.lookup();
            HEAD = lookup.findVarHandle(CompletionQueue.class, "head", long.class);
            TAIL = lookup.findVarHandle(CompletionQueue.class, "tail", long.class);
            OVERRUNS = lookup.findVarHandle(CompletionQueue.class, "overruns", long.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private static final WorkCompletionStatus[] STATUSES = WorkCompletionStatus.values();
    private static final WorkCompletionOpcode[] OPCODES = WorkCompletionOpcode.values();

    private final int capacity;
    private final int mask;
    private final long[] wrIds;
    private final byte[] statuses;
    private final byte[] opcodes;
    private final int[] byteLengths;
    private final int[] immediates;
    private final boolean[] hasImmediates;
    private final int[] qpNumbers;

    @SuppressWarnings("unused") // accessed through HEAD
    private volatile long head;
    @SuppressWarnings("unused") // accessed through TAIL
    private volatile long tail;
    @SuppressWarnings("unused") // accessed through OVERRUNS: written by the producer, read by anyone
    private volatile long overruns;

    /**
     * @param capacity most completions held, rounded up to a power of two.
     */
    public CompletionQueue(final int capacity)
    {
        if (capacity < 1 || capacity > 1 << 24)
        {
            throw new IllegalArgumentException("completion queue capacity " + capacity + " must be in 1..2^24");
        }
        this.capacity = BitUtil.findNextPositivePowerOfTwo(capacity);
        this.mask = this.capacity - 1;
        this.wrIds = new long[this.capacity];
        this.statuses = new byte[this.capacity];
        this.opcodes = new byte[this.capacity];
        this.byteLengths = new int[this.capacity];
        this.immediates = new int[this.capacity];
        this.hasImmediates = new boolean[this.capacity];
        this.qpNumbers = new int[this.capacity];
    }

    /** @return most completions held. */
    public int capacity()
    {
        return capacity;
    }

    /** @return completions waiting to be polled (a snapshot). */
    public int size()
    {
        return (int)((long)TAIL.getAcquire(this) - (long)HEAD.getAcquire(this));
    }

    /** @return true when {@link #size()} is 0. */
    public boolean isEmpty()
    {
        return size() == 0;
    }

    /** @return room for completions right now (producer side). */
    public int remaining()
    {
        return capacity - size();
    }

    /** @return completions refused because the queue was full (any thread). */
    public long overruns()
    {
        return (long)OVERRUNS.getAcquire(this);
    }

    /**
     * @return true once a completion was refused: the queue pairs that use this queue went to the error state
     * (any thread; sticky, as {@code IBV_EVENT_CQ_ERR}).
     */
    public boolean hasOverrun()
    {
        return overruns() != 0;
    }

    /**
     * Adds a completion (producer thread).
     *
     * @return false, counting an overrun, when the queue is full.
     */
    public boolean offer(
        final long wrId,
        final WorkCompletionStatus status,
        final WorkCompletionOpcode opcode,
        final int byteLength,
        final boolean hasImmediate,
        final int immediateData,
        final int qpNumber)
    {
        final long t = (long)TAIL.getOpaque(this);
        if (t - (long)HEAD.getAcquire(this) >= capacity)
        {
            OVERRUNS.setRelease(this, (long)OVERRUNS.getOpaque(this) + 1); // single producer: no lost update
            return false;
        }
        final int i = (int)t & mask;
        wrIds[i] = wrId;
        statuses[i] = (byte)status.ordinal();
        opcodes[i] = (byte)opcode.ordinal();
        byteLengths[i] = byteLength;
        hasImmediates[i] = hasImmediate;
        immediates[i] = immediateData;
        qpNumbers[i] = qpNumber;
        TAIL.setRelease(this, t + 1);
        return true;
    }

    /**
     * Takes the oldest completion (consumer thread).
     *
     * @param into filled with the completion.
     * @return false when there was none.
     */
    public boolean poll(final WorkCompletion into)
    {
        final long h = (long)HEAD.getOpaque(this);
        if (h == (long)TAIL.getAcquire(this))
        {
            return false;
        }
        read(h, into);
        HEAD.setRelease(this, h + 1);
        return true;
    }

    /**
     * Takes up to {@code into.length} completions, as {@code ibv_poll_cq} (consumer thread).
     *
     * @param into holders filled from index 0; none may be null.
     * @return completions taken.
     */
    public int poll(final WorkCompletion[] into)
    {
        final long h = (long)HEAD.getOpaque(this);
        final int available = (int)Math.min(into.length, (long)TAIL.getAcquire(this) - h);
        for (int n = 0; n < available; n++)
        {
            read(h + n, into[n]);
        }
        if (available > 0)
        {
            HEAD.setRelease(this, h + available);
        }
        return available;
    }

    private void read(final long position, final WorkCompletion into)
    {
        final int i = (int)position & mask;
        into.wrId = wrIds[i];
        into.status = STATUSES[statuses[i]];
        into.opcode = OPCODES[opcodes[i]];
        into.byteLength = byteLengths[i];
        into.hasImmediate = hasImmediates[i];
        into.immediateData = immediates[i];
        into.qpNumber = qpNumbers[i];
    }

    public String toString()
    {
        return "CompletionQueue{size=" + size() + ", capacity=" + capacity + ", overruns=" + overruns() + '}';
    }
}
