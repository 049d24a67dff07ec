package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.transport.Psn;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.QueuePairState;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.datapath.wire.AckExtendedTransportHeader;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.RoceFrame;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static io.spraynic.datapath.transport.rocev2.RcParts.MTU;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The requester alone, against responses written by hand: PSN ranges, packet opcodes, cumulative ACKs, go-back-N
 * on a NAK, a timeout or a READ response gap (once per loss), retry and RNR retry exhaustion, fatal NAKs, READ
 * response placement, and flushes.
 */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class RcRequesterTest
{
    private static final int FIRST_PSN = Psn.MASK - 2; // the PSNs wrap inside the tests
    private static final long TIMEOUT = 50_000;

    private final RcParts parts = new RcParts();
    private final SendWorkRequest send = new SendWorkRequest();
    private final MemoryRegion local = parts.register(16 * MTU, AccessFlags.LOCAL_WRITE);
    /** What the peer's READ responses carry. */
    private final MemoryRegion remote = parts.register(16 * MTU, AccessFlags.NONE);
    private RcRequester requester;
    private long now = 1_000_000;

    @AfterEach
    void close()
    {
        parts.close();
    }

    private void connect(final RcConnectionAttributes attributes)
    {
        requester = new RcRequester(parts.config, parts.counters, parts.states, parts.output, parts.rateLimiter,
            parts.cq, RcParts.QP_NUMBER, parts.failures, parts.pd, 16);
        parts.onError = () -> requester.flush(null);
        parts.output.connect(attributes);
        requester.connect(attributes);
        requester.start();
        parts.moveTo(QueuePairState.RTS);
    }

    private void connect()
    {
        connect(RcParts.attributes(FIRST_PSN, 0).withRetry(TIMEOUT, 2));
    }

    private int post(final long wrId, final WorkRequestOpcode opcode, final int length)
    {
        return requester.postSend(send.reset().wrId(wrId).opcode(opcode).local(local, local.address(), length)
            .remote(0x1000_0000L, 0x55));
    }

    private int psn(final int index)
    {
        return Psn.add(FIRST_PSN, index);
    }

    private int sendAll()
    {
        return requester.sendRequests(64, now);
    }

    private void ack(final int psn)
    {
        requester.onAcknowledge(psn, RcResponder.ACK_SYNDROME, now);
    }

    private void nak(final int psn, final int code)
    {
        requester.onAcknowledge(psn, AckExtendedTransportHeader.syndrome(AckExtendedTransportHeader.KIND_NAK, code), now);
    }

    private void readResponse(final int opcode, final int psn, final int from, final int payload)
    {
        final RoceFrame frame = parts.inbound(RcParts.fromPeer(opcode, psn).aeth(RcResponder.ACK_SYNDROME, 0),
            remote.segment().asSlice(from), payload);
        requester.onReadResponse(frame, opcode, now);
    }

    @Test
    void shouldGiveEachRequestItsPsnRangeAndSendItsPacketsInOrder()
    {
        connect();
        assertEquals(PostResult.OK, post(1, WorkRequestOpcode.RDMA_WRITE, 2 * MTU + 10));
        assertEquals(PostResult.OK, post(2, WorkRequestOpcode.RDMA_READ, 3 * MTU));
        assertEquals(PostResult.OK, post(3, WorkRequestOpcode.SEND_WITH_IMM, 0));
        assertEquals(3, requester.outstanding());

        assertEquals(5, sendAll());
        final int[] opcodes = {Opcode.RC_RDMA_WRITE_FIRST, Opcode.RC_RDMA_WRITE_MIDDLE, Opcode.RC_RDMA_WRITE_LAST,
            Opcode.RC_RDMA_READ_REQUEST, Opcode.RC_SEND_ONLY_WITH_IMMEDIATE};
        final int[] psns = {psn(0), psn(1), psn(2), psn(3), psn(6)};
        final boolean[] ackReqs = {false, false, true, false, true};
        for (int i = 0; i < opcodes.length; i++)
        {
            final RoceFrame frame = parts.sent(i);
            assertEquals(opcodes[i], frame.opcode(), "packet " + i);
            assertEquals(psns[i], frame.psn(), "packet " + i);
            assertEquals(ackReqs[i], frame.ackReq(), "packet " + i);
        }
        assertEquals(2 * MTU + 10, parts.sent(0).rethDmaLength());
        assertEquals(10, parts.sent(2).payloadLength());
        assertEquals(3 * MTU, parts.sent(3).rethDmaLength(), "a READ asks for all of it in one request");
        assertEquals(psn(7), requester.sendPsn());
        assertEquals(psn(0), requester.unackedPsn());
        assertEquals(5, parts.counters.get(RcCounters.TX_REQUESTS));
    }

    @Test
    void shouldCompleteRequestsInOrderOnACumulativeAck()
    {
        connect();
        post(1, WorkRequestOpcode.RDMA_WRITE, MTU);
        post(2, WorkRequestOpcode.SEND, 2 * MTU);
        sendAll();
        ack(psn(0));
        assertEquals(1, parts.completion().wrId());
        assertTrue(parts.cq.isEmpty(), "the SEND is not all acknowledged");
        ack(psn(2));
        final WorkCompletion wc = parts.completion();
        assertEquals(2, wc.wrId());
        assertEquals(WorkCompletionStatus.SUCCESS, wc.status());
        assertEquals(2 * MTU, wc.byteLength());
        assertEquals(0, requester.outstanding());
        assertEquals(psn(3), requester.unackedPsn());
    }

    @Test
    void shouldDropAnAckForAPsnNeverSent()
    {
        connect();
        post(1, WorkRequestOpcode.RDMA_WRITE, MTU);
        sendAll();
        ack(psn(5));
        assertEquals(1, parts.counters.get(RcCounters.RX_RESPONSES_DROPPED));
        assertEquals(1, requester.outstanding());
    }

    @Test
    void shouldGoBackNOncePerLossOnASequenceNak()
    {
        connect();
        for (int i = 0; i < 4; i++)
        {
            post(i, WorkRequestOpcode.RDMA_WRITE, MTU);
        }
        assertEquals(4, sendAll());
        nak(psn(1), AckExtendedTransportHeader.NAK_PSN_SEQUENCE_ERROR);
        assertEquals(0, parts.completion().wrId(), "the NAK acknowledges what is before it");
        assertEquals(psn(1), requester.sendPsn());
        nak(psn(1), AckExtendedTransportHeader.NAK_PSN_SEQUENCE_ERROR); // the same gap, reported again
        assertEquals(3, sendAll());
        assertEquals(psn(1), parts.sent(4).psn());
        assertEquals(3, parts.counters.get(RcCounters.RETRANSMITTED), "one retransmission per loss");
        ack(psn(3));
        assertEquals(0, requester.outstanding(), "all done");
    }

    @Test
    void shouldRetransmitOnTimeoutAndFailWithRetryExceededWhenRetriesRunOut()
    {
        connect(); // two retries
        post(1, WorkRequestOpcode.RDMA_WRITE, MTU);
        post(2, WorkRequestOpcode.RDMA_WRITE, MTU);
        sendAll();
        assertEquals(0, requester.onTimers(now + TIMEOUT - 1));
        for (int retry = 1; retry <= 2; retry++)
        {
            now += TIMEOUT;
            assertEquals(1, requester.onTimers(now));
            assertEquals(2, sendAll(), "go-back-N resends both");
        }
        now += TIMEOUT;
        requester.onTimers(now);
        assertEquals(QueuePairState.ERROR, parts.states.state());
        assertEquals(WorkCompletionStatus.RETRY_EXC_ERR, parts.completion().status());
        assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, parts.completion().status());
        assertEquals(3, parts.counters.get(RcCounters.TIMEOUTS));
        assertEquals(0, sendAll());
    }

    @Test
    void shouldRestoreTheRetriesOnProgress()
    {
        connect();
        post(1, WorkRequestOpcode.RDMA_WRITE, MTU);
        post(2, WorkRequestOpcode.RDMA_WRITE, MTU);
        sendAll();
        for (int retry = 0; retry < 2; retry++)
        {
            now += TIMEOUT;
            requester.onTimers(now);
            sendAll();
        }
        ack(psn(0)); // progress: two retries again
        for (int retry = 0; retry < 2; retry++)
        {
            now += TIMEOUT;
            requester.onTimers(now);
            sendAll();
        }
        assertEquals(QueuePairState.RTS, parts.states.state());
    }

    @Test
    void shouldFailTheHeadWithTheNaksStatusAndFlushTheRest()
    {
        connect();
        post(1, WorkRequestOpcode.RDMA_WRITE, MTU);
        post(2, WorkRequestOpcode.RDMA_WRITE, MTU);
        post(3, WorkRequestOpcode.RDMA_WRITE, MTU);
        sendAll();
        nak(psn(1), AckExtendedTransportHeader.NAK_REMOTE_ACCESS_ERROR);
        assertEquals(WorkCompletionStatus.SUCCESS, parts.completion().status());
        WorkCompletion wc = parts.completion();
        assertEquals(2, wc.wrId());
        assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, wc.status());
        wc = parts.completion();
        assertEquals(3, wc.wrId());
        assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, wc.status());
        assertEquals(1, parts.errors);
        assertEquals(0, requester.outstanding());
    }

    @Test
    void shouldMapEachFatalNakToItsStatus()
    {
        final int[] codes = {AckExtendedTransportHeader.NAK_INVALID_REQUEST,
            AckExtendedTransportHeader.NAK_REMOTE_OPERATIONAL_ERROR, AckExtendedTransportHeader.NAK_INVALID_RD_REQUEST};
        final WorkCompletionStatus[] statuses = {WorkCompletionStatus.REM_INV_REQ_ERR, WorkCompletionStatus.REM_OP_ERR,
            WorkCompletionStatus.REM_INV_REQ_ERR};
        for (int i = 0; i < codes.length; i++)
        {
            parts.states.moveTo(QueuePairState.RESET);
            connect();
            post(i, WorkRequestOpcode.SEND, MTU);
            sendAll();
            nak(psn(0), codes[i]);
            assertEquals(statuses[i], parts.completion().status());
        }
    }

    @Test
    void shouldWaitTheRnrTimerBeforeSendingAgain()
    {
        connect(RcParts.attributes(FIRST_PSN, 0).withRetry(TIMEOUT, 2).withRnr(1, 14));
        post(1, WorkRequestOpcode.SEND, MTU);
        sendAll();
        final int rnr = AckExtendedTransportHeader.syndrome(AckExtendedTransportHeader.KIND_RNR_NAK, 14);
        requester.onAcknowledge(psn(0), rnr, now);
        assertEquals(0, sendAll(), "waiting");
        now += RnrTimer.nanos(14);
        requester.onTimers(now);
        assertEquals(1, sendAll());
        assertEquals(psn(0), parts.sent(1).psn());

        requester.onAcknowledge(psn(0), rnr, now); // the one RNR retry is spent
        assertEquals(WorkCompletionStatus.RNR_RETRY_EXC_ERR, parts.completion().status());
        assertEquals(QueuePairState.ERROR, parts.states.state());
    }

    @Test
    void shouldPlaceReadResponsesAndAskAgainFromTheFirstOneLost()
    {
        connect();
        RcParts.fill(remote.segment(), 3);
        post(1, WorkRequestOpcode.RDMA_READ, 3 * MTU);
        sendAll();
        readResponse(Opcode.RC_RDMA_READ_RESPONSE_FIRST, psn(0), 0, MTU);
        readResponse(Opcode.RC_RDMA_READ_RESPONSE_LAST, psn(2), 2 * MTU, MTU); // the middle one was lost
        readResponse(Opcode.RC_RDMA_READ_RESPONSE_LAST, psn(2), 2 * MTU, MTU); // the same gap again: no second rewind
        assertEquals(2, parts.counters.get(RcCounters.RX_RESPONSES_DROPPED));
        assertEquals(psn(1), requester.unackedPsn());

        assertEquals(1, sendAll());
        final RoceFrame again = parts.sent(1);
        assertEquals(Opcode.RC_RDMA_READ_REQUEST, again.opcode());
        assertEquals(psn(1), again.psn());
        assertEquals(0x1000_0000L + MTU, again.rethVirtualAddress(), "from the first response missing");
        assertEquals(2 * MTU, again.rethDmaLength());
        assertEquals(1, parts.counters.get(RcCounters.RETRANSMITTED));

        readResponse(Opcode.RC_RDMA_READ_RESPONSE_MIDDLE, psn(1), MTU, MTU);
        readResponse(Opcode.RC_RDMA_READ_RESPONSE_LAST, psn(2), 2 * MTU, MTU);
        final WorkCompletion wc = parts.completion();
        assertEquals(WorkCompletionStatus.SUCCESS, wc.status());
        assertEquals(3 * MTU, wc.byteLength());
        assertEquals(-1, remote.segment().asSlice(0, 3 * MTU).mismatch(local.segment().asSlice(0, 3 * MTU)));
    }

    @Test
    void shouldFailAReadWhoseResponseHasTheWrongLength()
    {
        connect();
        post(1, WorkRequestOpcode.RDMA_READ, 2 * MTU);
        sendAll();
        readResponse(Opcode.RC_RDMA_READ_RESPONSE_FIRST, psn(0), 0, MTU - 4);
        assertEquals(WorkCompletionStatus.BAD_RESP_ERR, parts.completion().status());
        assertEquals(QueuePairState.ERROR, parts.states.state());
    }

    @Test
    void shouldCompleteABadLocalBufferWithLocalProtectionErrorInItsTurn()
    {
        connect();
        final MemoryRegion gone = parts.register(MTU, AccessFlags.NONE);
        parts.pd.deregister(gone);
        post(1, WorkRequestOpcode.RDMA_WRITE, MTU);
        assertEquals(PostResult.OK, requester.postSend(send.reset().wrId(2).opcode(WorkRequestOpcode.RDMA_WRITE)
            .local(gone, gone.address(), MTU).remote(0x1000_0000L, 0x55)));
        assertEquals(1, sendAll(), "only the good one leaves");
        assertTrue(parts.cq.isEmpty(), "the bad one waits for those before it");
        ack(psn(0));
        assertEquals(WorkCompletionStatus.SUCCESS, parts.completion().status());
        assertEquals(WorkCompletionStatus.LOC_PROT_ERR, parts.completion().status());
        assertEquals(QueuePairState.ERROR, parts.states.state());
    }

    @Test
    void shouldStopAtTheNextRequestWhileDraining()
    {
        connect();
        post(1, WorkRequestOpcode.SEND, 2 * MTU);
        requester.sendRequests(1, now); // the SEND is under way
        parts.states.moveTo(QueuePairState.SQD);
        post(2, WorkRequestOpcode.SEND, MTU);
        assertEquals(1, sendAll(), "the SEND under way finishes; the next does not begin");
        assertEquals(psn(1), parts.sent(1).psn());
        assertEquals(2, requester.outstanding());
    }

    @Test
    void shouldRefusePostsBeforeRtsAndFlushThemInError()
    {
        connect();
        parts.states.moveTo(QueuePairState.RTR);
        assertEquals(PostResult.INVALID_STATE, post(1, WorkRequestOpcode.SEND, 0));
        parts.states.moveTo(QueuePairState.ERROR);
        assertEquals(PostResult.OK, post(2, WorkRequestOpcode.SEND, MTU));
        final WorkCompletion wc = parts.completion();
        assertEquals(2, wc.wrId());
        assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, wc.status());
        assertEquals(0, requester.outstanding());
        assertFalse(parts.cq.poll(wc));
    }

    @Test
    void shouldNotTouchMemoryDeregisteredUnderARequestButFailThroughRevocation()
    {
        connect();
        final MemoryRegion source = parts.register(MTU, AccessFlags.NONE);
        requester.postSend(send.reset().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE).local(source, source.address(), MTU)
            .remote(0x1000_0000L, 0x55));
        assertTrue(requester.uses(source));
        parts.pd.deregister(source);
        assertEquals(0, sendAll());
        assertEquals(source, parts.revoked.getFirst());
        assertEquals(0, parts.sentCount());
    }
}
