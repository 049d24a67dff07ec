package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.verbs.AccessCheck;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletionOpcode;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import org.agrona.collections.Long2LongHashMap;

import java.lang.foreign.MemorySegment;

import static io.spraynic.datapath.transport.spray.SendSlots.key;

/**
 * The receives the application posted on one spray connection, found by (stream, RSN) (docs/PROTOCOL.md S4.5):
 * the j-th receive posted on a stream is the one its j-th receive-consuming message consumes. The message layer
 * ({@link InboundMessages}) matches and places into them, its {@link InboundRetirement} completes them in MSN
 * order; the connection's close flushes them.
 * <p>
 * A fixed table of parallel primitive arrays with a free list, lent by a pooled {@link Storage} while the
 * connection has traffic (the count posted per stream stays with the connection). Allocation-free after
 * construction.
 */
final class PostedReceives
{
    static final int MISSING = SendSlots.MISSING;

    final int capacity;
    private final int streams;
    private final CompletionQueue receiveCq;
    private final int localCid;
    private final int[] posted; // per stream: receives posted so far, so the RSN the next one takes
    private ProtectionDomain pd;

    private Storage storage;
    private long[] receiveWrId;
    private MemoryRegion[] receiveRegion;
    private long[] receiveAddress;
    private int[] receiveLength;
    private int[] freeReceives;
    private int freeReceiveCount;
    private Long2LongHashMap byRsn;

    PostedReceives(
        final int capacity,
        final int streams,
        final CompletionQueue receiveCq,
        final int localCid,
        final ProtectionDomain pd)
    {
        this.capacity = capacity;
        this.streams = streams;
        this.receiveCq = receiveCq;
        this.localCid = localCid;
        this.pd = pd;
        freeReceiveCount = capacity;
        posted = new int[streams];
    }

    /** Takes the arrays of a pooled {@link Storage} (cleared); this table must be empty and detached. */
    void attach(final Storage storage)
    {
        if (null != this.storage || freeReceiveCount != capacity || storage.capacity != capacity)
        {
            throw new IllegalStateException("attach needs an empty, detached table and storage of its capacity");
        }
        this.storage = storage;
        receiveWrId = storage.receiveWrId;
        receiveRegion = storage.receiveRegion;
        receiveAddress = storage.receiveAddress;
        receiveLength = storage.receiveLength;
        freeReceives = storage.freeReceives;
        byRsn = storage.byRsn;
    }

    /** @return whether the table is attached and holds no receive (so {@link #detach} may run). */
    boolean isDetachable()
    {
        return null != storage && freeReceiveCount == capacity && byRsn.isEmpty();
    }

    /** Gives the arrays back (the table is {@link #isDetachable detachable}); the caller clears and pools them. */
    Storage detach()
    {
        final Storage detached = storage;
        storage = null;
        receiveWrId = null;
        receiveRegion = null;
        receiveAddress = null;
        receiveLength = null;
        freeReceives = null;
        byRsn = null;
        return detached;
    }

    /** Binds to a tenant's protection domain (control path, before use): receives then name only its regions. */
    void protectionDomain(final ProtectionDomain domain)
    {
        this.pd = domain;
    }

    /** @return bytes of a table of {@code capacity} receives and its map (S10.1). */
    static long stateBytes(final int capacity)
    {
        return Storage.RECEIVE_BYTES * capacity + 16L * ConnectionStorage.mapCapacity(4 * capacity);
    }

    /**
     * Posts a receive on a stream (the connection checked the stream and its own state).
     *
     * @return a {@link PostResult} code.
     */
    int post(final int streamId, final ReceiveWorkRequest request)
    {
        if (request.length() > 0)
        {
            final MemoryRegion region = request.region();
            if (null == region || region.protectionDomain() != pd ||
                pd.checkLocalAccess(region.lkey(), request.address(), request.length(), AccessFlags.LOCAL_WRITE) !=
                AccessCheck.OK)
            {
                return PostResult.INVALID_ARGUMENT;
            }
        }
        if (freeReceiveCount == 0)
        {
            return PostResult.QUEUE_FULL;
        }
        final int receive = freeReceives[--freeReceiveCount];
        receiveWrId[receive] = request.wrId();
        receiveRegion[receive] = request.length() > 0 ? request.region() : null;
        receiveAddress[receive] = request.address();
        receiveLength[receive] = request.length();
        byRsn.put(key(streamId, posted[streamId]++), receive);
        return PostResult.OK;
    }

    /** @return the receive posted on a stream with this RSN, or {@link #MISSING} (none posted yet). */
    int find(final int streamId, final int rsn)
    {
        return (int)byRsn.get(key(streamId, rsn));
    }

    /**
     * @return whether (stream, RSN) still names {@code receive}: no other message of the peer's that claimed the same
     * RSN (S4.5 gives it one) completed and freed it first.
     */
    boolean holds(final int streamId, final int rsn, final int receive)
    {
        return byRsn.get(key(streamId, rsn)) == receive;
    }

    /** @return the bytes a receive can hold. */
    int length(final int receive)
    {
        return receiveLength[receive];
    }

    /** @return whether the memory of a receive was deregistered after it was posted. */
    boolean isDeregistered(final int receive)
    {
        return receiveRegion[receive] != null && !receiveRegion[receive].isRegistered();
    }

    /** @return the memory a receive places into, or null for a receive of no bytes. */
    MemorySegment target(final int receive)
    {
        return receiveRegion[receive] == null ? null : receiveRegion[receive].segment();
    }

    /** @return where in {@link #target} the byte {@code offset} of the message goes. */
    long targetOffset(final int receive, final int offset)
    {
        return receiveRegion[receive] == null ? 0 : receiveRegion[receive].offsetOf(receiveAddress[receive]) + offset;
    }

    /**
     * Completes a receive and frees it.
     *
     * @return false when the receive CQ was full (the completion is lost: the caller counts it).
     */
    boolean complete(
        final int streamId,
        final int rsn,
        final int receive,
        final WorkCompletionStatus status,
        final WorkCompletionOpcode opcode,
        final int byteLength,
        final boolean hasImmediate,
        final int immediate)
    {
        final boolean offered =
            receiveCq.offer(receiveWrId[receive], status, opcode, byteLength, hasImmediate, immediate, localCid);
        release(receive);
        byRsn.remove(key(streamId, rsn));
        return offered;
    }

    /**
     * Completes every posted receive with WR_FLUSH_ERR, in posting order per stream (control path: close, error).
     *
     * @return completions the receive CQ had no room for.
     */
    int flush()
    {
        if (null == storage)
        {
            return 0; // detached: no receive posted
        }
        int overruns = 0;
        for (int streamId = 0; streamId < streams; streamId++)
        {
            // at most capacity receives are outstanding: the last capacity posted cover them all
            for (int rsn = posted[streamId] - Math.min(capacity, posted[streamId]); rsn - posted[streamId] < 0; rsn++)
            {
                final int receive = (int)byRsn.remove(key(streamId, rsn));
                if (receive == MISSING)
                {
                    continue;
                }
                if (!receiveCq.offer(receiveWrId[receive], WorkCompletionStatus.WR_FLUSH_ERR,
                    WorkCompletionOpcode.RECV, 0, false, 0, localCid))
                {
                    overruns++;
                }
                release(receive);
            }
        }
        return overruns;
    }

    private void release(final int receive)
    {
        receiveRegion[receive] = null;
        freeReceives[freeReceiveCount++] = receive;
    }

    /** The arrays of a table of one capacity, drawn from and returned to a pool. */
    static final class Storage
    {
        /** Bytes per receive: wr_id, region reference, address, length, free-list entry. */
        static final long RECEIVE_BYTES = 8 + 8 + 8 + 4 + 4;

        final int capacity;
        final long[] receiveWrId;
        final MemoryRegion[] receiveRegion;
        final long[] receiveAddress;
        final int[] receiveLength;
        final int[] freeReceives;
        final Long2LongHashMap byRsn;

        Storage(final int capacity)
        {
            this.capacity = capacity;
            receiveWrId = new long[capacity];
            receiveRegion = new MemoryRegion[capacity];
            receiveAddress = new long[capacity];
            receiveLength = new int[capacity];
            freeReceives = new int[capacity];
            byRsn = new Long2LongHashMap(4 * capacity, 0.5f, MISSING);
            clear();
        }

        /** @return bytes of the arrays and map (S10.1). */
        long bytes()
        {
            return RECEIVE_BYTES * capacity + 16L * byRsn.capacity();
        }

        /** Back to the state of a new table: every receive free, handed out in a new table's order. */
        void clear()
        {
            java.util.Arrays.fill(receiveWrId, 0L);
            java.util.Arrays.fill(receiveRegion, null);
            java.util.Arrays.fill(receiveAddress, 0L);
            java.util.Arrays.fill(receiveLength, 0);
            ConnectionStorage.freeListInOrder(freeReceives);
            byRsn.clear();
        }
    }
}
