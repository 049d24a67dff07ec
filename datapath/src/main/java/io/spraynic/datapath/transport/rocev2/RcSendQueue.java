package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.transport.Psn;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkRequestOpcode;

/**
 * The send queue of one RC queue pair: posted requests in parallel arrays (a ring indexed by ever-growing
 * positions), each with its PSN range. Three positions walk it: {@link #head} (oldest not completed),
 * {@link #next} (the request transmission is in) and {@link #tail} (where the next post goes), head &lt;= next
 * &lt;= tail. The {@link RcRequester} reads and writes the entries directly: it is their only user.
 */
final class RcSendQueue extends RcRegionRing
{
    /** {@link #localError} of a request whose memory checked out. */
    static final int NO_LOCAL_ERROR = -1;

    private static final WorkRequestOpcode[] WR_OPCODES = WorkRequestOpcode.values();
    private static final byte RDMA_READ = (byte)WorkRequestOpcode.RDMA_READ.ordinal();

    final long[] wrId;
    final byte[] opcode;
    final long[] localOffset;
    final int[] length;
    final long[] remoteAddress;
    final int[] rkey;
    final int[] immediateData;
    final boolean[] signaled;
    final boolean[] solicited;
    final int[] firstPsn;
    final int[] packetCount;
    /** READ responses placed so far. */
    final int[] readResponsesReceived;
    /** A {@code WorkCompletionStatus} ordinal to complete with in its turn, or {@link #NO_LOCAL_ERROR}. */
    final int[] localError;

    long next;

    /**
     * @param depth most outstanding requests (rounded up to a power of two).
     */
    RcSendQueue(final int depth)
    {
        super(depth);
        final int capacity = capacity();
        wrId = new long[capacity];
        opcode = new byte[capacity];
        localOffset = new long[capacity];
        length = new int[capacity];
        remoteAddress = new long[capacity];
        rkey = new int[capacity];
        immediateData = new int[capacity];
        signaled = new boolean[capacity];
        solicited = new boolean[capacity];
        firstPsn = new int[capacity];
        packetCount = new int[capacity];
        readResponsesReceived = new int[capacity];
        localError = new int[capacity];
    }

    /**
     * Appends a request at {@link #tail}.
     *
     * @param memory      its local memory, or null when it has none.
     * @param offset      where in {@code memory} it starts.
     * @param errorStatus a status ordinal to fail it with in its turn, or {@link #NO_LOCAL_ERROR}.
     * @param psn         its first PSN.
     * @param packets     the PSNs it takes.
     */
    void add(
        final SendWorkRequest request,
        final MemoryRegion memory,
        final long offset,
        final int errorStatus,
        final int psn,
        final int packets)
    {
        final int slot = (int)tail & mask;
        wrId[slot] = request.wrId();
        opcode[slot] = (byte)request.opcode().ordinal();
        region[slot] = memory;
        localOffset[slot] = offset;
        length[slot] = request.length();
        remoteAddress[slot] = request.remoteAddress();
        rkey[slot] = request.rkey();
        immediateData[slot] = request.immediateData();
        signaled[slot] = request.signaled();
        solicited[slot] = request.solicited();
        readResponsesReceived[slot] = 0;
        localError[slot] = errorStatus;
        firstPsn[slot] = psn;
        packetCount[slot] = packets;
        tail++;
    }

    boolean isRead(final int index)
    {
        return opcode[index] == RDMA_READ;
    }

    WorkRequestOpcode workRequestOpcode(final int index)
    {
        return WR_OPCODES[opcode[index]];
    }

    /** @return the last PSN of the request at {@code index}. */
    int lastPsn(final int index)
    {
        return Psn.add(firstPsn[index], packetCount[index] - 1);
    }

    /** @return RDMA READs from the head up to (not including) {@code position}. */
    int readsBefore(final long position)
    {
        int reads = 0;
        for (long w = head; w < position; w++)
        {
            if (opcode[(int)w & mask] == RDMA_READ)
            {
                reads++;
            }
        }
        return reads;
    }

    @Override
    void clear()
    {
        super.clear();
        next = 0;
    }
}
