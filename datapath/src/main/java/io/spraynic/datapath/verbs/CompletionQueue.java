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
 * <p>
 * A queue made {@link #growing growing} holds no slots until its first completion, then {@value #FIRST_SLOTS}, and
 * doubles up to its {@link #capacity()} only when a completion finds every slot it holds taken, so that a
 * connection's queues cost bytes while they are quiet, not {@code capacity} x 23 B (issue 13). The producer grows it
 * as JCTools' {@code SpscGrowableArrayQueue} does: the completion goes into the new slots, its place in the old ones
 * is marked {@code JUMP} with a link, and the consumer follows the link when it reaches the mark. Slots are made only
 * by the completion that is the first to need that many waiting (at most log2(capacity / {@value #FIRST_SLOTS}) + 1
 * times per queue from empty). Below its capacity a queue keeps one slot free for the mark; at its capacity it holds
 * {@code capacity} and overruns on the next, as before.
 * <p>
 * A queue gives its slots back once it has been empty, with no completion added, for a while ({@link #trimIfIdle},
 * the producer's: the worker calls it now and then), so that a connection that once had many completions waiting does
 * not keep its high-water mark while idle (issue 13). Only the producer forgets the slots, and only when the consumer
 * has taken everything it added (head = tail, read with acquire): the consumer's last use of them came before it
 * released that head, and its next comes after the producer's next completion is released, which follows the
 * trim; the consumer never waits and is not told. The next completion makes {@value #FIRST_SLOTS} slots again, so a
 * queue given back and used again allocates at most log2(capacity / {@value #FIRST_SLOTS}) + 1 times per idle period.
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
    /** In a slot's status: the completions from here on are in {@link Slots#next} (never a status's ordinal). */
    private static final byte JUMP = -1;

    /** Slots a {@link #growing} queue makes at its first completion. */
    public static final int FIRST_SLOTS = 8;
    /** Most completions a queue may hold. */
    public static final int MAX_CAPACITY = 1 << 24;

    /** One generation of the queue's storage: parallel arrays of a power-of-two length. */
    private static final class Slots
    {
        final int mask;
        final long[] wrIds;
        final byte[] statuses;
        final byte[] opcodes;
        final int[] byteLengths;
        final int[] immediates;
        final boolean[] hasImmediates;
        final int[] qpNumbers;
        /** Set by the producer, with a {@link #JUMP} in {@link #statuses}, before the position it marks is published. */
        Slots next;

        Slots(final int length)
        {
            mask = length - 1;
            wrIds = new long[length];
            statuses = new byte[length];
            opcodes = new byte[length];
            byteLengths = new int[length];
            immediates = new int[length];
            hasImmediates = new boolean[length];
            qpNumbers = new int[length];
        }
    }

    private final int capacity;
    /** Producer thread only: where the next completion goes. */
    private Slots producerSlots;
    /** The first slots made: written by the producer before its first completion is published, then read by the consumer. */
    private Slots firstSlots;
    /**
     * Consumer thread only: where the oldest completion is; but {@link #trimIfIdle} (the producer) forgets it while
     * the queue is empty, ordered with the consumer through head and tail.
     */
    private Slots consumerSlots;
    /** Producer thread only ({@link #trimIfIdle}): the tail at the last check, and since when it has not moved. */
    private long idleTail = -1;
    private long idleSince;

    @SuppressWarnings("unused") // accessed through HEAD
    private volatile long head;
    @SuppressWarnings("unused") // accessed through TAIL
    private volatile long tail;
    @SuppressWarnings("unused") // accessed through OVERRUNS: written by the producer, read by anyone
    private volatile long overruns;

    /**
     * A queue whose slots are all made now (a queue shared by many queue pairs, tests, the simulator).
     *
     * @param capacity most completions held, rounded up to a power of two.
     */
    public CompletionQueue(final int capacity)
    {
        this(capacity, true);
    }

    private CompletionQueue(final int capacity, final boolean makeAll)
    {
        if (capacity < 1 || capacity > MAX_CAPACITY)
        {
            throw new IllegalArgumentException("completion queue capacity " + capacity + " must be in 1..2^24");
        }
        this.capacity = BitUtil.findNextPositivePowerOfTwo(capacity);
        if (makeAll)
        {
            producerSlots = new Slots(this.capacity);
            firstSlots = producerSlots;
            consumerSlots = producerSlots;
        }
    }

    /**
     * @param capacity most completions held, rounded up to a power of two (1..2^24).
     * @return a queue that makes its slots as completions wait: none until the first, then doubling up to
     * {@code capacity}.
     */
    public static CompletionQueue growing(final int capacity)
    {
        return new CompletionQueue(capacity, false);
    }

    /**
     * @return slots held now (producer thread, or any thread once the producer is quiet): 0 before the first
     * completion and once given back.
     */
    public int slotsHeld()
    {
        final Slots slots = producerSlots;
        return null == slots ? 0 : slots.mask + 1;
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
        final Slots slots = slotsFor(t);
        if (null == slots)
        {
            OVERRUNS.setRelease(this, (long)OVERRUNS.getOpaque(this) + 1); // single producer: no lost update
            return false;
        }
        final int i = (int)t & slots.mask;
        slots.wrIds[i] = wrId;
        slots.statuses[i] = (byte)status.ordinal();
        slots.opcodes[i] = (byte)opcode.ordinal();
        slots.byteLengths[i] = byteLength;
        slots.hasImmediates[i] = hasImmediate;
        slots.immediates[i] = immediateData;
        slots.qpNumbers[i] = qpNumber;
        TAIL.setRelease(this, t + 1);
        return true;
    }

    /** @return the slots position {@code t} goes in, made or grown if it needs them; null when the queue is full. */
    private Slots slotsFor(final long t)
    {
        final Slots slots = producerSlots;
        if (null == slots)
        {
            return first(); // nothing was offered since the queue was made or gave its slots back: it is empty at t
        }
        final int held = slots.mask + 1;
        final long waiting = t - (long)HEAD.getAcquire(this);
        if (waiting < held - 1)
        {
            return slots;
        }
        if (held == capacity)
        {
            return waiting < held ? slots : null; // at its most it uses every slot, and overruns after, as before
        }
        return grow(slots, t);
    }

    /**
     * Gives the queue's slots back when it has been empty, with no completion added, for {@code idleNanos} (producer
     * thread; the worker calls it now and then): the next completion makes {@value #FIRST_SLOTS} slots again.
     *
     * @return whether the slots were given back now.
     */
    public boolean trimIfIdle(final long now, final long idleNanos)
    {
        final long t = (long)TAIL.getOpaque(this);
        if (t != idleTail)
        {
            idleTail = t;
            idleSince = now;
            return false;
        }
        if (null == producerSlots || now - idleSince < idleNanos || (long)HEAD.getAcquire(this) != t)
        {
            return false;
        }
        producerSlots = null;
        firstSlots = null;
        consumerSlots = null; // the consumer reads it again only after the next completion's tail
        return true;
    }

    private Slots first()
    {
        final Slots slots = new Slots(Math.min(FIRST_SLOTS, capacity));
        producerSlots = slots;
        firstSlots = slots; // published to the consumer by the release of the first completion's tail
        return slots;
    }

    /** Position {@code t} goes in new slots twice as many; the one free old slot, at {@code t}, points the consumer there. */
    private Slots grow(final Slots old, final long t)
    {
        final Slots grown = new Slots(Math.min(capacity, 2 * (old.mask + 1)));
        old.next = grown;
        old.statuses[(int)t & old.mask] = JUMP;
        producerSlots = grown;
        return grown;
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
        Slots slots = consumerSlots;
        if (null == slots)
        {
            slots = firstSlots;
            consumerSlots = slots;
        }
        int i = (int)position & slots.mask;
        if (JUMP == slots.statuses[i])
        {
            slots = slots.next;
            consumerSlots = slots;
            i = (int)position & slots.mask;
        }
        into.wrId = slots.wrIds[i];
        into.status = STATUSES[slots.statuses[i]];
        into.opcode = OPCODES[slots.opcodes[i]];
        into.byteLength = slots.byteLengths[i];
        into.hasImmediate = slots.hasImmediates[i];
        into.immediateData = slots.immediates[i];
        into.qpNumber = slots.qpNumbers[i];
    }

    public String toString()
    {
        return "CompletionQueue{size=" + size() + ", capacity=" + capacity + ", overruns=" + overruns() + '}';
    }
}
