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
 */
public final class WorkRequestRing implements WorkRequestSource
{
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

    private final int capacity;
    private final int mask;
    private final byte[] kinds;
    private final byte[] opcodes;
    private final byte[] flags;
    private final int[] streams;
    private final long[] wrIds;
    private final int[] lkeys;
    private final long[] localAddresses;
    private final int[] lengths;
    private final long[] remoteAddresses;
    private final int[] rkeys;
    private final int[] immediates;

    /** The slot {@link #peek()} made current: consumer thread only. */
    private int current;
    @SuppressWarnings("unused") // accessed through HEAD
    private volatile long head;
    @SuppressWarnings("unused") // accessed through TAIL
    private volatile long tail;

    private static final byte SIGNALED = 1;
    private static final byte SOLICITED = 2;

    /**
     * @param capacity most requests waiting, rounded up to a power of two.
     */
    public WorkRequestRing(final int capacity)
    {
        if (capacity < 1 || capacity > 1 << 20)
        {
            throw new IllegalArgumentException("work request ring capacity " + capacity + " must be in 1..2^20");
        }
        this.capacity = BitUtil.findNextPositivePowerOfTwo(capacity);
        this.mask = this.capacity - 1;
        kinds = new byte[this.capacity];
        opcodes = new byte[this.capacity];
        flags = new byte[this.capacity];
        streams = new int[this.capacity];
        wrIds = new long[this.capacity];
        lkeys = new int[this.capacity];
        localAddresses = new long[this.capacity];
        lengths = new int[this.capacity];
        remoteAddresses = new long[this.capacity];
        rkeys = new int[this.capacity];
        immediates = new int[this.capacity];
    }

    /** @return most requests waiting. */
    public int capacity()
    {
        return capacity;
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
        if (t - (long)HEAD.getAcquire(this) >= capacity)
        {
            return false;
        }
        final int i = (int)t & mask;
        kinds[i] = SEND;
        opcodes[i] = (byte)request.opcode().code();
        flags[i] = (byte)((request.signaled() ? SIGNALED : 0) | (request.solicited() ? SOLICITED : 0));
        streams[i] = stream;
        wrIds[i] = request.wrId();
        lkeys[i] = request.lkey();
        localAddresses[i] = request.localAddress();
        lengths[i] = request.length();
        remoteAddresses[i] = request.remoteAddress();
        rkeys[i] = request.rkey();
        immediates[i] = request.immediateData();
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
        if (t - (long)HEAD.getAcquire(this) >= capacity)
        {
            return false;
        }
        final int i = (int)t & mask;
        kinds[i] = RECEIVE;
        streams[i] = stream;
        wrIds[i] = request.wrId();
        lkeys[i] = request.lkey();
        localAddresses[i] = request.address();
        lengths[i] = request.length();
        TAIL.setRelease(this, t + 1);
        return true;
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
        current = (int)h & mask;
        return kinds[current];
    }

    /** Takes the current request: its slot may be reused (consumer thread). */
    public void advance()
    {
        HEAD.setRelease(this, (long)HEAD.getOpaque(this) + 1);
    }

    /** @return the current request's stream. */
    public int stream()
    {
        return streams[current];
    }

    /** @return the current request's wrId. */
    public long wrId()
    {
        return wrIds[current];
    }

    /** @return the current request's local key (0: no local memory). */
    public int lkey()
    {
        return lkeys[current];
    }

    /** @return the current request's local address. */
    public long localAddress()
    {
        return localAddresses[current];
    }

    /** @return the current request's length. */
    public int length()
    {
        return lengths[current];
    }

    /** @return the current send request's opcode (the poster's, always one of them). */
    public WorkRequestOpcode opcode()
    {
        return WorkRequestOpcode.of(opcodes[current]);
    }

    /** @return the current send request's remote address. */
    public long remoteAddress()
    {
        return remoteAddresses[current];
    }

    /** @return the current send request's rkey. */
    public int rkey()
    {
        return rkeys[current];
    }

    /** @return the current send request's immediate data. */
    public int immediateData()
    {
        return immediates[current];
    }

    /** @return whether the current send request asks for a completion. */
    public boolean signaled()
    {
        return (flags[current] & SIGNALED) != 0;
    }

    /** @return whether the current send request is solicited. */
    public boolean solicited()
    {
        return (flags[current] & SOLICITED) != 0;
    }
}
