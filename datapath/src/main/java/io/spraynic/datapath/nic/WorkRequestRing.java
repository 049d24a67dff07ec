package io.spraynic.datapath.nic;

import io.spraynic.datapath.verbs.ReceiveRequestFields;
import io.spraynic.datapath.verbs.SendRequestFields;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.agrona.BitUtil;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * How an application thread's work requests reach the worker that owns a connection: a bounded
 * single-producer single-consumer ring of requests held in primitive arrays, as a NIC's doorbell-rung
 * work queue. The application {@link #offerSend offers} (copying the request, naming its memory by lkey);
 * the worker {@link #peek peeks} the oldest, hands it to the transport and {@link #advance advances}
 * only once the transport took it, so a transport queue that is full backs up here and the application
 * sees {@code QUEUE_FULL} instead of losing a request. Neither side allocates, locks or throws. Its poster is in the
 * NIC's process, so it holds only what the poster's {@link NicConnection} checked; the worker checks again anyway.
 * <p>
 * A ring made {@link #growing growing} holds no slots until its first request, then {@value #FIRST_SLOTS}, and
 * doubles up to its {@link #capacity()} only when a post finds every slot it holds taken: an idle connection's ring
 * holds none, not {@code capacity} x 47 B (issue 13). The poster grows it, as JCTools'
 * {@code SpscGrowableArrayQueue} does: it writes the request into the new slots, marks its place in the old ones
 * {@code JUMP} with a link, and the worker follows the link when it reaches the mark; nothing is copied and neither
 * side waits for the other. Slots are made only on a post that is the first to need that many waiting (at most
 * log2(capacity / {@value #FIRST_SLOTS}) + 1 times from empty, on the application's thread, never the worker's). Below
 * its capacity a ring keeps one slot free for the mark; at its capacity it refuses the post that finds it full, as
 * before.
 * <p>
 * A ring gives its slots back once it has been empty for a while ({@link #trimIfIdle}, the worker's, as the
 * consumer): a connection that once had many requests waiting does not keep its high-water mark while idle (issue
 * 13). The worker, seeing the ring empty at position {@code t}, claims it by setting {@link #TRIMMING} in the tail
 * with a compare-and-set from {@code t}, forgets every slot, then moves head and tail together past {@code t} (as if
 * a request had been posted and taken there), which releases the ring. The poster publishes each request with a
 * compare-and-set of the tail from the position it wrote (not a plain store), so a request written while the worker
 * claimed the ring is never published into forgotten slots: its compare-and-set fails, and it starts again in new
 * slots; a poster that finds the ring claimed waits the few stores the release takes. The next post makes slots from
 * {@value #FIRST_SLOTS} up as after the first, so a ring given back and used again allocates at most
 * log2(capacity / {@value #FIRST_SLOTS}) + 1 times per idle period of the worker's {@code idleNanos}.
 */
public final class WorkRequestRing implements WorkRequestSource
{
    /** Slots a {@link #growing} ring makes at its first request. */
    public static final int FIRST_SLOTS = 8;
    /** Most slots a ring may hold. */
    public static final int MAX_CAPACITY = 1 << 20;

    private static final VarHandle HEAD;
    private static final VarHandle TAIL;

    static
    {
        try
        {
            final MethodHandles.Lookup lookup = MethodHandles.lookup();
            HEAD = lookup.findVarHandle(WorkRequestRing.class, "head", long.class);
            TAIL = lookup.findVarHandle(WorkRequestRing.class, "tail", long.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    /** In the tail: the worker is giving the slots back at the position in the other bits (never a position). */
    static final long TRIMMING = Long.MIN_VALUE;
    /** A poster that finds the ring being given back waits this many spins at most, then answers full. */
    private static final int TRIM_SPINS = 1 << 16;

    private static final byte SIGNALED = 1;
    private static final byte SOLICITED = 2;
    /** In a slot's kind: the requests from here on are in {@link Slots#next} (never a {@link WorkRequestSource} kind). */
    private static final byte JUMP = -1;

    /** One generation of the ring's storage: parallel arrays of a power-of-two length. */
    private static final class Slots
    {
        final int mask;
        final byte[] kinds;
        final byte[] opcodes;
        final byte[] flags;
        final int[] streams;
        final long[] wrIds;
        final int[] lkeys;
        final long[] localAddresses;
        final int[] lengths;
        final long[] remoteAddresses;
        final int[] rkeys;
        final int[] immediates;
        /** Set by the producer, with a {@link #JUMP} in {@link #kinds}, before the position it marks is published. */
        Slots next;

        Slots(final int length)
        {
            mask = length - 1;
            kinds = new byte[length];
            opcodes = new byte[length];
            flags = new byte[length];
            streams = new int[length];
            wrIds = new long[length];
            lkeys = new int[length];
            localAddresses = new long[length];
            lengths = new int[length];
            remoteAddresses = new long[length];
            rkeys = new int[length];
            immediates = new int[length];
        }
    }

    private final int capacity;
    /**
     * Producer thread: where the next request goes; but {@link #trimIfIdle} (the consumer, holding the claim) forgets
     * it, and a post that raced the claim fails its compare-and-set and forgets it itself before it reads it again.
     */
    private Slots producerSlots;
    /**
     * The first slots made since the ring was made or given back: written by the producer before its first request
     * is published, then read by the consumer; forgotten by {@link #trimIfIdle} under its claim.
     */
    private Slots firstSlots;
    /** Consumer thread only: where the oldest request is. */
    private Slots consumerSlots;
    /** The slot {@link #peek()} made current in {@link #consumerSlots}: consumer thread only. */
    private int current;
    /** Consumer thread only ({@link #trimIfIdle}): the head at the last check, and since when it has not moved. */
    private long idleHead = -1;
    private long idleSince;
    @SuppressWarnings("unused") // accessed through HEAD
    private volatile long head;
    @SuppressWarnings("unused") // accessed through TAIL
    private volatile long tail;

    /**
     * A ring whose slots are all made now (tests, and rings that must never allocate once made).
     *
     * @param capacity most requests waiting, rounded up to a power of two.
     */
    public WorkRequestRing(final int capacity)
    {
        this(capacity, true);
    }

    private WorkRequestRing(final int capacity, final boolean makeAll)
    {
        if (capacity < 1 || capacity > MAX_CAPACITY)
        {
            throw new IllegalArgumentException("work request ring capacity " + capacity + " must be in 1..2^20");
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
     * @param capacity most requests waiting, rounded up to a power of two (1..2^20).
     * @return a ring that makes its slots as requests wait: none until the first, then doubling up to {@code capacity}.
     */
    public static WorkRequestRing growing(final int capacity)
    {
        return new WorkRequestRing(capacity, false);
    }

    /** @return most requests waiting. */
    public int capacity()
    {
        return capacity;
    }

    /**
     * @return slots held now (producer thread, or any thread once both are quiet): 0 before the first post and once
     * given back.
     */
    public int slotsHeld()
    {
        final Slots slots = producerSlots;
        return null == slots ? 0 : slots.mask + 1;
    }

    /** @return requests waiting (either thread; a snapshot). */
    public int size()
    {
        final long tail = (long)TAIL.getAcquire(this) & ~TRIMMING;
        return (int)Math.max(0, tail - (long)HEAD.getAcquire(this)); // 0 while head and tail move past a trim
    }

    /**
     * Copies a send request in (producer thread): the verbs one (its region's lkey) or an application's (by lkey).
     *
     * @return false when the ring is full.
     */
    public boolean offerSend(final int stream, final SendRequestFields<?> request)
    {
        long t;
        while ((t = tail()) >= 0)
        {
            final Slots slots = slotsFor(t);
            if (null == slots)
            {
                return false;
            }
            final int i = (int)t & slots.mask;
            slots.kinds[i] = SEND;
            slots.opcodes[i] = (byte)request.opcode().code();
            slots.flags[i] = (byte)((request.signaled() ? SIGNALED : 0) | (request.solicited() ? SOLICITED : 0));
            slots.streams[i] = stream;
            slots.wrIds[i] = request.wrId();
            slots.lkeys[i] = request.lkey();
            slots.localAddresses[i] = request.localAddress();
            slots.lengths[i] = request.length();
            slots.remoteAddresses[i] = request.remoteAddress();
            slots.rkeys[i] = request.rkey();
            slots.immediates[i] = request.immediateData();
            if (published(t))
            {
                return true;
            }
        }
        return false;
    }

    /**
     * Copies a receive request in (producer thread): the verbs one (its region's lkey) or an application's (by lkey).
     *
     * @return false when the ring is full.
     */
    public boolean offerReceive(final int stream, final ReceiveRequestFields<?> request)
    {
        long t;
        while ((t = tail()) >= 0)
        {
            final Slots slots = slotsFor(t);
            if (null == slots)
            {
                return false;
            }
            final int i = (int)t & slots.mask;
            slots.kinds[i] = RECEIVE;
            slots.streams[i] = stream;
            slots.wrIds[i] = request.wrId();
            slots.lkeys[i] = request.lkey();
            slots.localAddresses[i] = request.address();
            slots.lengths[i] = request.length();
            if (published(t))
            {
                return true;
            }
        }
        return false;
    }

    /**
     * @return the position the next request goes in (producer thread), once the worker is not giving the slots
     * back; {@link #TRIMMING} (negative) when it still is after {@link #TRIM_SPINS} spins: the post answers full.
     */
    private long tail()
    {
        long t = (long)TAIL.getAcquire(this);
        for (int spins = 0; t < 0 && spins < TRIM_SPINS; spins++)
        {
            Thread.onSpinWait(); // the worker is between its claim and its release: a few stores
            t = (long)TAIL.getAcquire(this);
        }
        return t;
    }

    /**
     * Publishes the request written at {@code t} (producer thread).
     *
     * @return false when the worker gave the slots back meanwhile: the request went into forgotten slots, and the
     * poster writes it again into new ones at the position after the worker's.
     */
    private boolean published(final long t)
    {
        if (TAIL.compareAndSet(this, t, t + 1))
        {
            return true;
        }
        producerSlots = null; // read again after the worker's release: the next slotsFor makes new ones
        return false;
    }

    /**
     * Gives the ring's slots back when it has been empty, with no request taken, for {@code idleNanos} (consumer
     * thread, between {@link #advance} and the next {@link #peek}; the worker calls it now and then): the next post
     * makes {@value #FIRST_SLOTS} slots again.
     *
     * @return whether the slots were given back now.
     */
    public boolean trimIfIdle(final long now, final long idleNanos)
    {
        final long h = (long)HEAD.getOpaque(this);
        if (h != idleHead)
        {
            idleHead = h;
            idleSince = now;
            return false;
        }
        if (null == consumerSlots || now - idleSince < idleNanos || !TAIL.compareAndSet(this, h, h | TRIMMING))
        {
            return false; // nothing taken since the last trim, not idle long enough, or a request is waiting
        }
        // claimed: no post completes until the release below; one under way fails its compare-and-set
        producerSlots = null;
        firstSlots = null;
        consumerSlots = null;
        idleHead = h + 1;
        HEAD.setRelease(this, h + 1);
        TAIL.setRelease(this, h + 1); // released: head and tail past h, as if a request had been posted and taken
        return true;
    }

    /** @return the slots position {@code t} goes in, made or grown if it needs them; null when the ring is full. */
    private Slots slotsFor(final long t)
    {
        final Slots slots = producerSlots;
        if (null == slots)
        {
            return first(); // nothing was posted since the ring was made or given back: the ring is empty at t
        }
        final int held = slots.mask + 1;
        final long waiting = t - (long)HEAD.getAcquire(this);
        if (waiting < held - 1)
        {
            return slots;
        }
        if (held == capacity)
        {
            return waiting < held ? slots : null; // at its most it uses every slot: back-pressure as before
        }
        return grow(slots, t);
    }

    private Slots first()
    {
        final Slots slots = new Slots(Math.min(FIRST_SLOTS, capacity));
        producerSlots = slots;
        firstSlots = slots; // published to the consumer by the compare-and-set of the first request's tail
        return slots;
    }

    /** Position {@code t} goes in new slots twice as many; the one free old slot, at {@code t}, points the consumer there. */
    private Slots grow(final Slots old, final long t)
    {
        final Slots grown = new Slots(Math.min(capacity, 2 * (old.mask + 1)));
        old.next = grown;
        old.kinds[(int)t & old.mask] = JUMP;
        producerSlots = grown;
        return grown;
    }

    /**
     * Makes the oldest request current without taking it (consumer thread); read it with the accessors.
     *
     * @return its kind, {@link #SEND} or {@link #RECEIVE}, or 0 when the ring is empty.
     */
    public byte peek()
    {
        final long h = (long)HEAD.getOpaque(this);
        if (h == (long)TAIL.getAcquire(this))
        {
            return 0;
        }
        Slots slots = consumerSlots;
        if (null == slots)
        {
            slots = firstSlots;
            consumerSlots = slots;
        }
        int i = (int)h & slots.mask;
        byte kind = slots.kinds[i];
        if (JUMP == kind)
        {
            slots = slots.next;
            consumerSlots = slots;
            i = (int)h & slots.mask;
            kind = slots.kinds[i];
        }
        current = i;
        return kind;
    }

    /** Takes the current request: its slot may be reused (consumer thread). */
    public void advance()
    {
        HEAD.setRelease(this, (long)HEAD.getOpaque(this) + 1);
    }

    /** @return the current request's stream. */
    public int stream()
    {
        return consumerSlots.streams[current];
    }

    /** @return the current request's wrId. */
    public long wrId()
    {
        return consumerSlots.wrIds[current];
    }

    /** @return the current request's local key (0: no local memory). */
    public int lkey()
    {
        return consumerSlots.lkeys[current];
    }

    /** @return the current request's local address. */
    public long localAddress()
    {
        return consumerSlots.localAddresses[current];
    }

    /** @return the current request's length. */
    public int length()
    {
        return consumerSlots.lengths[current];
    }

    /** @return the current send request's opcode (the poster's, always one of them). */
    public WorkRequestOpcode opcode()
    {
        return WorkRequestOpcode.of(consumerSlots.opcodes[current]);
    }

    /** @return the current send request's remote address. */
    public long remoteAddress()
    {
        return consumerSlots.remoteAddresses[current];
    }

    /** @return the current send request's rkey. */
    public int rkey()
    {
        return consumerSlots.rkeys[current];
    }

    /** @return the current send request's immediate data. */
    public int immediateData()
    {
        return consumerSlots.immediates[current];
    }

    /** @return whether the current send request asks for a completion. */
    public boolean signaled()
    {
        return (consumerSlots.flags[current] & SIGNALED) != 0;
    }

    /** @return whether the current send request is solicited. */
    public boolean solicited()
    {
        return (consumerSlots.flags[current] & SOLICITED) != 0;
    }
}
