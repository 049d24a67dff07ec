package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.nic.WorkRequestSource;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;

/**
 * A client connection's request ring in shared memory ({@link ConnectionRings}), read in place by the worker that owns
 * the connection: a post from another process crosses once, in the layout the client wrote, with no relay. The
 * client is not trusted: an {@link UntrustedRingReader} checks each record header against the ring and copies the
 * record into private memory before any field is read, so every field the worker checks is the one it uses; a record
 * that is no work request is counted and skipped ({@link #MALFORMED}); a ring no honest client writes (a header that
 * does not fit, a record longer than any request) stops this reader for good and marks it {@link #brokenReason() broken},
 * and the conductor drops the client. The worker checks the fields themselves (lkey, bounds, stream, opcode) and
 * refuses a bad request with an error completion, counted here by reason ({@code ipc: work requests refused: ...}).
 * <p>
 * The worker also moves the connection's completions into the client's completion rings ({@link #relayCompletions});
 * a completion ring the client made unwritable (its trailer overwritten) breaks this reader the same way.
 * <p>
 * Worker thread only, except {@link #broken()} and {@link #brokenReason()}; no allocation, lock or exception on the
 * path of a request or completion.
 */
final class ClientRequestRing implements WorkRequestSource
{
    /** Longest record an honest client puts in a connection's request ring. */
    static final int MAX_REQUEST_LENGTH = 64;
    /** {@link #broken()}: the request ring holds what no honest client writes. */
    static final int CORRUPT_REQUESTS = 1;
    /** {@link #broken()}: a completion ring could not be written (the client overwrote its positions). */
    static final int UNWRITABLE_COMPLETIONS = 2;
    private static final int OPCODES = WorkRequestOpcode.values().length;
    private static final int KNOWN_FLAGS = ConnectionRings.FLAG_SIGNALED | ConnectionRings.FLAG_SOLICITED;
    private static final int RECORD = 64; // a request record with its header, aligned: what one waiting request takes

    private final UntrustedRingReader reader;
    private final MutableDirectBuffer record;
    private final OneToOneRingBuffer sendCompletions;
    private final OneToOneRingBuffer receiveCompletions;
    private final IpcCounters counters;
    private final WorkCompletion sendCompletion = new WorkCompletion();
    private final WorkCompletion receiveCompletion = new WorkCompletion();
    private boolean sendPending;
    private boolean receivePending;
    private long taken;
    private long takenPublished;
    private String reason;
    private volatile int broken;

    ClientRequestRing(final ConnectionRings rings, final IpcCounters counters)
    {
        this.reader = new UntrustedRingReader(rings.requests().buffer(), MAX_REQUEST_LENGTH);
        this.record = reader.record();
        this.sendCompletions = rings.sendCompletions();
        this.receiveCompletions = rings.receiveCompletions();
        this.counters = counters;
    }

    /** @return 0, {@link #CORRUPT_REQUESTS} or {@link #UNWRITABLE_COMPLETIONS} (any thread). */
    int broken()
    {
        return broken;
    }

    /** @return what broke this reader, once {@link #broken()} is not 0 (any thread). */
    String brokenReason()
    {
        return broken == 0 ? null : reason;
    }

    public byte peek()
    {
        if (0 != broken)
        {
            return 0;
        }
        final int type = reader.peek();
        if (type == 0)
        {
            return 0;
        }
        if (type == UntrustedRingReader.CORRUPT)
        {
            breaks(CORRUPT_REQUESTS, "wrote " + reader.corruption() + " into its request ring");
            return 0;
        }
        if (reader.recordLength() < ConnectionRings.WR_LENGTH ||
            (type != ConnectionRings.SEND_REQUEST && type != ConnectionRings.RECEIVE_REQUEST))
        {
            counters.requestsRefused.increment(); // workers share these
            counters.requestsMalformed.increment();
            return MALFORMED;
        }
        return type == ConnectionRings.SEND_REQUEST ? SEND : RECEIVE;
    }

    public void advance()
    {
        reader.consume();
        taken++;
    }

    public int size()
    {
        if (0 != broken)
        {
            return 0;
        }
        final long ahead = reader.tail() - reader.head(); // the client's tail, untrusted: only a hint, clamped
        return (int)(Math.max(0, Math.min(ahead, reader.capacity())) / RECORD);
    }

    public int stream()
    {
        return record.getInt(ConnectionRings.WR_STREAM_OFFSET, IpcMessages.ORDER);
    }

    public long wrId()
    {
        return record.getLong(ConnectionRings.WR_ID_OFFSET, IpcMessages.ORDER);
    }

    public int lkey()
    {
        return record.getInt(ConnectionRings.WR_LKEY_OFFSET, IpcMessages.ORDER);
    }

    public long localAddress()
    {
        return record.getLong(ConnectionRings.WR_LOCAL_ADDRESS_OFFSET, IpcMessages.ORDER);
    }

    public int length()
    {
        return record.getInt(ConnectionRings.WR_LENGTH_OFFSET, IpcMessages.ORDER);
    }

    public WorkRequestOpcode opcode()
    {
        final int code = record.getByte(ConnectionRings.WR_OPCODE_OFFSET);
        final int flags = record.getByte(ConnectionRings.WR_FLAGS_OFFSET);
        return code >= 0 && code < OPCODES && (flags & ~KNOWN_FLAGS) == 0 ? WorkRequestOpcode.of(code) : null;
    }

    public long remoteAddress()
    {
        return record.getLong(ConnectionRings.WR_REMOTE_ADDRESS_OFFSET, IpcMessages.ORDER);
    }

    public int rkey()
    {
        return record.getInt(ConnectionRings.WR_RKEY_OFFSET, IpcMessages.ORDER);
    }

    public int immediateData()
    {
        return record.getInt(ConnectionRings.WR_IMMEDIATE_OFFSET, IpcMessages.ORDER);
    }

    public boolean signaled()
    {
        return (record.getByte(ConnectionRings.WR_FLAGS_OFFSET) & ConnectionRings.FLAG_SIGNALED) != 0;
    }

    public boolean solicited()
    {
        return (record.getByte(ConnectionRings.WR_FLAGS_OFFSET) & ConnectionRings.FLAG_SOLICITED) != 0;
    }

    public void refused(final int why)
    {
        // workers share these: atomic, and only on the path of a refused request
        counters.requestsRefused.increment();
        counters.requestsRefusedBy[why].increment();
    }

    public int relayCompletions(final CompletionQueue sends, final CompletionQueue receives)
    {
        if (0 != broken)
        {
            return 0;
        }
        int work = 0;
        try
        {
            work = relay(sends, sendCompletions, sendCompletion, true) +
                relay(receives, receiveCompletions, receiveCompletion, false);
        }
        catch (final RuntimeException ex) // Agrona's bounds checks on positions the client overwrote
        {
            breaks(UNWRITABLE_COMPLETIONS, "made its completion ring unwritable (" + ex + ")");
        }
        if (taken != takenPublished)
        {
            counters.requestsTaken.getAndAdd(taken - takenPublished); // once a loop, not once a request
            takenPublished = taken;
        }
        if (work > 0)
        {
            counters.completionsRelayed.getAndAdd(work);
        }
        return work;
    }

    private int relay(final CompletionQueue cq, final OneToOneRingBuffer ring, final WorkCompletion holder,
        final boolean send)
    {
        int work = 0;
        while ((send ? sendPending : receivePending) || cq.poll(holder))
        {
            if (!ConnectionRings.offerCompletion(ring, holder))
            {
                // the client is slow to poll: keep this one and leave the rest in the NIC's queue
                if (send)
                {
                    sendPending = true;
                }
                else
                {
                    receivePending = true;
                }
                return work;
            }
            if (send)
            {
                sendPending = false;
            }
            else
            {
                receivePending = false;
            }
            work++;
        }
        return work;
    }

    private void breaks(final int why, final String text)
    {
        reason = text;
        broken = why; // publishes the reason
    }
}
