package io.spraynic.datapath.nic;

import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletionOpcode;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * A {@link NicWorker}'s intake of posted work requests: takes what the application posted on a connection's
 * {@link WorkRequestSource}, each field checked here whoever wrote it (another process may have: its request ring is
 * read in place); a request that fails a check completes with an error status and is counted by reason, and never
 * reaches the transport. Worker thread only.
 */
final class WorkRequestIntake
{
    /** Per connection and call, most work requests taken from its ring: keeps one busy poster from starving the loop. */
    static final int POSTS_PER_CONNECTION = 64;

    private final ProtectionDomain defaultDomain;
    private final AtomicCounter badLkeys;
    private final SendWorkRequest sendRequest = new SendWorkRequest();
    private final ReceiveWorkRequest receiveRequest = new ReceiveWorkRequest();

    /**
     * @param defaultDomain the worker's domain, for connections bound to no tenant.
     * @param badLkeys      counts requests naming a region the connection's domain does not hold.
     */
    WorkRequestIntake(final ProtectionDomain defaultDomain, final AtomicCounter badLkeys)
    {
        this.defaultDomain = defaultDomain;
        this.badLkeys = badLkeys;
    }

    /** @return the requests taken from {@code c}'s ring, at most {@link #POSTS_PER_CONNECTION}. */
    int take(final NicConnection c)
    {
        final WorkRequestSource requests = c.requests;
        final ProtectionDomain domain = null == c.protectionDomain ? defaultDomain : c.protectionDomain;
        int taken = 0;
        byte kind;
        while (taken < POSTS_PER_CONNECTION && (kind = requests.peek()) != 0)
        {
            taken++;
            if (kind == WorkRequestSource.MALFORMED)
            {
                requests.advance(); // counted by the source; no wrId to complete it with
                continue;
            }
            final int lkey = requests.lkey();
            final long localAddress = requests.localAddress();
            final int length = requests.length();
            final int stream = requests.stream();
            final boolean send = kind == WorkRequestSource.SEND;
            final WorkRequestOpcode opcode = send ? requests.opcode() : null;
            // a connection bound to a tenant names only that tenant's regions
            final MemoryRegion region = 0 == lkey ? null : domain.regionByLkey(lkey);
            final int refusal;
            if (length < 0)
            {
                refusal = WorkRequestSource.REFUSED_LENGTH;
            }
            else if (0 != lkey && null == region)
            {
                badLkeys.incrementRelease();
                refusal = WorkRequestSource.REFUSED_LKEY;
            }
            else if (null == region ? 0 != length : !region.contains(localAddress, length))
            {
                refusal = WorkRequestSource.REFUSED_OUT_OF_REGION;
            }
            else if (stream < 0 || stream >= c.streams)
            {
                refusal = WorkRequestSource.REFUSED_STREAM;
            }
            else if (send && null == opcode)
            {
                refusal = WorkRequestSource.REFUSED_OPCODE;
            }
            else
            {
                refusal = -1;
            }
            if (refusal >= 0)
            {
                requests.refused(refusal);
                fail(c, kind, refusal == WorkRequestSource.REFUSED_LENGTH ? WorkCompletionStatus.LOC_LEN_ERR :
                    refusal == WorkRequestSource.REFUSED_LKEY || refusal == WorkRequestSource.REFUSED_OUT_OF_REGION ?
                    WorkCompletionStatus.LOC_PROT_ERR : WorkCompletionStatus.LOC_QP_OP_ERR);
                requests.advance();
                continue;
            }
            final int result;
            if (send)
            {
                sendRequest.reset().wrId(requests.wrId()).opcode(opcode).local(region, localAddress, length)
                    .remote(requests.remoteAddress(), requests.rkey()).immediate(requests.immediateData())
                    .signaled(requests.signaled()).solicited(requests.solicited());
                result = c.sendCompletionQueue().hasOverrun() ? PostResult.COMPLETION_QUEUE_OVERRUN :
                    c.transportPostSend(stream, sendRequest);
            }
            else
            {
                receiveRequest.reset().wrId(requests.wrId()).buffer(region, localAddress, length);
                result = c.receiveCompletionQueue().hasOverrun() ? PostResult.COMPLETION_QUEUE_OVERRUN :
                    c.transportPostReceive(stream, receiveRequest);
            }
            if (result == PostResult.QUEUE_FULL)
            {
                taken--;
                break; // stays in the ring until the transport has room: back-pressure to the application
            }
            if (result != PostResult.OK)
            {
                requests.refused(WorkRequestSource.REFUSED_BY_TRANSPORT);
                fail(c, kind, result == PostResult.INVALID_STATE || result == PostResult.COMPLETION_QUEUE_OVERRUN ?
                    WorkCompletionStatus.WR_FLUSH_ERR : WorkCompletionStatus.LOC_QP_OP_ERR);
            }
            c.countTaken(send);
            requests.advance();
        }
        return taken;
    }

    /**
     * Fails the request at the head of {@code c}'s ring to the application and moves past it: taking it threw, and
     * would throw again on every loop.
     */
    void failHead(final NicConnection c)
    {
        final WorkRequestSource requests = c.requests;
        final byte kind = requests.peek();
        if (kind == WorkRequestSource.SEND || kind == WorkRequestSource.RECEIVE)
        {
            fail(c, kind, WorkCompletionStatus.LOC_QP_OP_ERR);
        }
        if (kind != 0)
        {
            requests.advance();
        }
    }

    private static void fail(final NicConnection c, final byte kind, final WorkCompletionStatus status)
    {
        final WorkRequestSource requests = c.requests;
        final boolean offered;
        if (kind == WorkRequestSource.SEND)
        {
            final WorkRequestOpcode opcode = requests.opcode();
            offered = c.sendCompletionQueue().offer(requests.wrId(), status, null == opcode ? WorkCompletionOpcode.SEND :
                opcode.completionOpcode(), 0, false, 0, c.localId);
        }
        else
        {
            offered = c.receiveCompletionQueue().offer(requests.wrId(), status, WorkCompletionOpcode.RECV, 0, false, 0,
                c.localId);
        }
        if (!offered)
        {
            c.onCompletionQueueOverrun(); // counted by the queue; an error of the connection using it, as in IB
        }
    }
}
