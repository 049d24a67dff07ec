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
 * log2(capacity / {@value #FIRST_SLOTS}) + 1 times, on the application's thread, never the worker's), and kept until
 * the ring is dropped. Below its capacity a ring keeps one slot free for the mark; at its capacity it refuses the post
 * that finds it full, as before.
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
    /** Producer thread only: where the next request goes. */
    private Slots producerSlots;
    /** The first slots made: written by the producer before its first request is published, then read by the consumer. */
    private Slots firstSlots;
    /** Consumer thread only: where the oldest request is. */
    private Slots consumerSlots;
    /** The slot {@link #peek()} made current in {@link #consumerSlots}: consumer thread only. */
    private int current;
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

    /** @return slots made so far (producer thread, or any thread once the producer is quiet): 0 before the first post. */
    public int slotsHeld()
    {
        final Slots slots = producerSlots;
        return null == slots ? 0 : slots.mask + 1;
    }

    /** @return requests waiting (either thread; a snapshot). */
    public int size()
    {
        return (int)((long)TAIL.getAcquire(this) - (long)HEAD.getAcquire(this));
    }

    /**
     * Copies a send request in (producer thread): the verbs one (its region's lkey) or an application's (by lkey).
     *
     * @return false when the ring is full.
     */
    public boolean offerSend(final int stream, final SendRequestFields<?> request)
    {
        final long t = (long)TAIL.getOpaque(this);
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
        TAIL.setRelease(this, t + 1);
        return true;
    }

    /**
     * Copies a receive request in (producer thread): the verbs one (its region's lkey) or an application's (by lkey).
     *
     * @return false when the ring is full.
     */
    public boolean offerReceive(final int stream, final ReceiveRequestFields<?> request)
    {
        final long t = (long)TAIL.getOpaque(this);
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
        TAIL.setRelease(this, t + 1);
        return true;
    }

    /** @return the slots position {@code t} goes in, made or grown if it needs them; null when the ring is full. */
    private Slots slotsFor(final long t)
    {
        final Slots slots = producerSlots;
        if (null == slots)
        {
            return first(); // nothing was ever posted: t is 0, and so is head
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
        firstSlots = slots; // published to the consumer by the release of the first request's tail
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
