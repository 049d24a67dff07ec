package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.transport.Psn;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.QueuePairState;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionOpcode;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.wire.AckExtendedTransportHeader;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceFrameWriter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static io.spraynic.datapath.transport.rocev2.RcParts.MTU;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The responder alone, against request packets written by hand: placement of SENDs and WRITEs, READ responses,
 * the ACK or NAK each case owes (sequence, RNR, access, invalid request), duplicates, revocation and flushes.
 */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class RcResponderTest
{
    private static final int FIRST_PSN = Psn.MASK - 1;
    private static final long NOW = 1_000_000;

    private final RcParts parts = new RcParts();
    private final ReceiveWorkRequest receive = new ReceiveWorkRequest();
    private final MemoryRegion source = parts.register(16 * MTU, AccessFlags.NONE);
    private final MemoryRegion target = parts.register(16 * MTU, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE |
        AccessFlags.REMOTE_READ);
    private final RcResponder responder = new RcResponder(parts.config, parts.counters, parts.states, parts.output,
        parts.cq, RcParts.QP_NUMBER, parts.failures, parts.pd, 16);

    @BeforeEach
    void connect()
    {
        RcParts.fill(source.segment(), 1);
        RcParts.fill(target.segment(), 2);
        parts.onError = () -> responder.flush(null);
        final RcConnectionAttributes attributes = RcParts.attributes(0, FIRST_PSN).withRnr(7, 5);
        responder.accessFlags(AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
        parts.output.connect(attributes);
        responder.connect(attributes);
        parts.moveTo(QueuePairState.RTR);
    }

    @AfterEach
    void close()
    {
        parts.close();
    }

    private static int psn(final int index)
    {
        return Psn.add(FIRST_PSN, index);
    }

    private void postReceive(final long wrId, final long offset, final int length)
    {
        assertEquals(PostResult.OK, responder.postReceive(receive.reset().wrId(wrId)
            .buffer(target, target.address() + offset, length)));
    }

    private void request(final RoceFrameWriter writer, final long from, final int payload)
    {
        final RoceFrame frame = parts.inbound(writer, source.segment().asSlice(from), payload);
        responder.onRequest(frame, frame.opcode());
    }

    private void request(final RoceFrameWriter writer)
    {
        final RoceFrame frame = parts.inbound(writer);
        responder.onRequest(frame, frame.opcode());
    }

    private static RoceFrameWriter packet(final int opcode, final int index)
    {
        return RcParts.fromPeer(opcode, psn(index));
    }

    /** @return the ACK or NAK the responder sends now, parsed. */
    private RoceFrame control()
    {
        final int before = parts.sentCount();
        assertTrue(responder.sendControl(NOW), "an ACK or NAK is owed");
        assertEquals(before + 1, parts.sentCount());
        final RoceFrame frame = parts.sent(before);
        assertEquals(Opcode.RC_ACKNOWLEDGE, frame.opcode());
        return frame;
    }

    private void assertTargetUnchanged(final long offset, final int length)
    {
        final RcParts fresh = new RcParts();
        final MemoryRegion expected = fresh.register(16 * MTU, AccessFlags.NONE);
        RcParts.fill(expected.segment(), 2);
        assertEquals(-1, expected.segment().asSlice(offset, length).mismatch(target.segment().asSlice(offset, length)));
        fresh.close();
    }

    @Test
    void shouldPlaceASendInTheReceivePostedAndAckWhenAsked()
    {
        postReceive(7, 0, 4 * MTU);
        request(packet(Opcode.RC_SEND_FIRST, 0), 0, MTU);
        request(packet(Opcode.RC_SEND_MIDDLE, 1), MTU, MTU);
        request(packet(Opcode.RC_SEND_LAST_WITH_IMMEDIATE, 2).immediate(0xFEED).ackReq(true), 2 * MTU, 100);

        final WorkCompletion wc = parts.completion();
        assertEquals(7, wc.wrId());
        assertEquals(WorkCompletionStatus.SUCCESS, wc.status());
        assertEquals(WorkCompletionOpcode.RECV, wc.opcode());
        assertEquals(2 * MTU + 100, wc.byteLength());
        assertTrue(wc.hasImmediate());
        assertEquals(0xFEED, wc.immediateData());
        assertEquals(-1, source.segment().asSlice(0, 2 * MTU + 100).mismatch(target.segment().asSlice(0, 2 * MTU + 100)));
        assertEquals(psn(3), responder.expectedPsn());
        assertEquals(0, responder.postedReceives());

        final RoceFrame ack = control();
        assertEquals(psn(2), ack.psn());
        assertEquals(RcResponder.ACK_SYNDROME, ack.aethSyndrome());
        assertEquals(1, ack.aethMsn(), "one message done");
        assertFalse(responder.sendControl(NOW), "one ACK");
    }

    @Test
    void shouldCoalesceAcksWhenNotAsked()
    {
        for (int i = 0; i < parts.config.ackCoalescePackets(); i++)
        {
            postReceive(i, 0, MTU);
            request(packet(Opcode.RC_SEND_ONLY, i), 0, 8);
            assertEquals(i == parts.config.ackCoalescePackets() - 1, responder.sendControl(NOW), "packet " + i);
        }
    }

    @Test
    void shouldPlaceAWriteWhereItsRkeyPointsAndCompleteAnImmediateOnly()
    {
        postReceive(9, 0, 0);
        request(packet(Opcode.RC_RDMA_WRITE_FIRST, 0).reth(target.address() + 64, target.rkey(), MTU + 10), 0, MTU);
        request(packet(Opcode.RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, 1).immediate(5), MTU, 10);
        assertEquals(-1, source.segment().asSlice(0, MTU + 10).mismatch(target.segment().asSlice(64, MTU + 10)));
        final WorkCompletion wc = parts.completion();
        assertEquals(WorkCompletionOpcode.RECV_RDMA_WITH_IMM, wc.opcode());
        assertEquals(MTU + 10, wc.byteLength());
        assertEquals(5, wc.immediateData());
        assertEquals(MTU + 10, parts.counters.get(RcCounters.BYTES_PLACED));
    }

    @Test
    void shouldAnswerASendWithNoReceivePostedWithAnRnrNakAndPlaceNothing()
    {
        request(packet(Opcode.RC_SEND_FIRST, 0), 0, MTU);
        request(packet(Opcode.RC_SEND_LAST, 1), MTU, MTU); // behind the refused one: covered by the RNR NAK
        final RoceFrame nak = control();
        assertEquals(psn(0), nak.psn());
        assertEquals(AckExtendedTransportHeader.syndrome(AckExtendedTransportHeader.KIND_RNR_NAK, 5), nak.aethSyndrome());
        assertFalse(responder.sendControl(NOW), "one NAK");
        assertEquals(psn(0), responder.expectedPsn());
        assertEquals(0, parts.counters.get(RcCounters.BYTES_PLACED));
        assertEquals(QueuePairState.RTR, parts.states.state(), "RNR is not an error");
    }

    @Test
    void shouldNakASequenceGapOnceAndPlaceNothingOfIt()
    {
        postReceive(1, 0, MTU);
        request(packet(Opcode.RC_SEND_ONLY, 1), 0, 8);
        request(packet(Opcode.RC_SEND_ONLY, 2), 0, 8);
        assertEquals(2, parts.counters.get(RcCounters.RX_OUT_OF_SEQUENCE));
        final RoceFrame nak = control();
        assertEquals(psn(0), nak.psn(), "the PSN expected");
        assertEquals(RcResponder.NAK_SEQUENCE_SYNDROME, nak.aethSyndrome());
        assertFalse(responder.sendControl(NOW));
        assertEquals(1, parts.counters.get(RcCounters.TX_NAK_SEQUENCE));
        assertEquals(1, responder.postedReceives());
    }

    @Test
    void shouldReAckADuplicateSendWithoutPlacingIt()
    {
        postReceive(1, 0, MTU);
        postReceive(2, MTU, MTU);
        request(packet(Opcode.RC_SEND_ONLY, 0).ackReq(true), 0, 8);
        control();
        parts.completion();
        request(packet(Opcode.RC_SEND_ONLY, 0).ackReq(true), 100, 8);
        assertEquals(psn(0), control().psn());
        assertEquals(1, parts.counters.get(RcCounters.RX_DUPLICATES));
        assertEquals(1, responder.postedReceives(), "the duplicate took no receive");
        assertTrue(parts.cq.isEmpty());
    }

    @Test
    void shouldRefuseAWriteWithABadRkeyByANakThatFailsTheQueuePairOnceSent()
    {
        request(packet(Opcode.RC_RDMA_WRITE_ONLY, 0).reth(target.address(), target.rkey() ^ 1, 8), 0, 8);
        assertEquals(QueuePairState.RTR, parts.states.state(), "not before the NAK is out");
        final RoceFrame nak = control();
        assertEquals(psn(0), nak.psn());
        assertEquals(RcResponder.NAK_ACCESS_SYNDROME, nak.aethSyndrome());
        assertEquals(QueuePairState.ERROR, parts.states.state());
        assertTargetUnchanged(0, 8);

        request(packet(Opcode.RC_SEND_ONLY, 0), 0, 8); // nothing more is taken
        assertEquals(1, parts.counters.get(RcCounters.RX_INVALID_STATE));
    }

    @Test
    void shouldRefuseRemoteAccessTheQueuePairDoesNotAllow()
    {
        responder.accessFlags(AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_READ);
        request(packet(Opcode.RC_RDMA_WRITE_ONLY, 0).reth(target.address(), target.rkey(), 8), 0, 8);
        assertEquals(RcResponder.NAK_ACCESS_SYNDROME, control().aethSyndrome());
        assertTargetUnchanged(0, 8);
    }

    @Test
    void shouldRefuseAnOpcodeOutOfSequenceAsAnInvalidRequest()
    {
        postReceive(1, 0, 4 * MTU);
        request(packet(Opcode.RC_SEND_MIDDLE, 0), 0, MTU);
        assertEquals(RcResponder.NAK_INVALID_SYNDROME, control().aethSyndrome());
        assertEquals(QueuePairState.ERROR, parts.states.state());
        assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, parts.completion().status(), "the receive is flushed");
    }

    @Test
    void shouldCompleteTheReceiveASendRefusedMidwayWasFillingInErrorNotAsFlushed()
    {
        // IB class C (InfiniBand Vol 1, 9.9.3.1): the receive WQE in use completes in error; WR_FLUSH_ERR would
        // tell the application it was never touched, yet part of the message is in its buffer
        postReceive(1, 0, 4 * MTU);
        postReceive(2, 0, MTU);
        request(packet(Opcode.RC_SEND_FIRST, 0), 0, MTU);
        request(packet(Opcode.RC_SEND_MIDDLE, 1), MTU, MTU - 8); // a middle packet must be a full MTU
        WorkCompletion wc = parts.completion();
        assertEquals(1, wc.wrId());
        assertEquals(WorkCompletionStatus.REM_INV_REQ_ERR, wc.status());
        assertEquals(WorkCompletionOpcode.RECV, wc.opcode());
        assertEquals(MTU, wc.byteLength(), "what was placed");
        assertEquals(RcResponder.NAK_INVALID_SYNDROME, control().aethSyndrome());
        wc = parts.completion();
        assertEquals(2, wc.wrId());
        assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, wc.status(), "the receive never used is flushed");
        assertFalse(parts.cq.poll(wc));
    }

    @Test
    void shouldCompleteASendLongerThanItsReceiveWithALengthError()
    {
        postReceive(1, 0, MTU);
        request(packet(Opcode.RC_SEND_FIRST, 0), 0, MTU);
        request(packet(Opcode.RC_SEND_LAST, 1), MTU, 8);
        final WorkCompletion wc = parts.completion();
        assertEquals(WorkCompletionStatus.LOC_LEN_ERR, wc.status());
        assertEquals(RcResponder.NAK_INVALID_SYNDROME, control().aethSyndrome());
        assertEquals(QueuePairState.ERROR, parts.states.state());
    }

    /**
     * A READ or WRITE longer than IB's 2^31 bytes is an invalid request, whatever the region: before, one of
     * 0xFFFFFFFF bytes at MTU 256 spanned all 2^24 PSNs (over a region that large), so the expected PSN did not move.
     */
    @Test
    void shouldRefuseAReadOrWriteLongerThanIbAllowsAsInvalid()
    {
        request(packet(Opcode.RC_RDMA_READ_REQUEST, 0).reth(target.address(), target.rkey(), 0x8000_0001));
        assertEquals(1, parts.counters.get(RcCounters.TX_NAK_INVALID));
        assertEquals(0, parts.counters.get(RcCounters.TX_NAK_ACCESS), "refused for its length, before the region");
        assertEquals(RcResponder.NAK_INVALID_SYNDROME, control().aethSyndrome());
    }

    @Test
    void shouldServeAReadAfterTheResponsesQueuedAndHoldTheAckBehindThem()
    {
        postReceive(1, 0, MTU);
        request(packet(Opcode.RC_SEND_ONLY, 0).ackReq(true), 0, 8); // an ACK is owed
        request(packet(Opcode.RC_RDMA_READ_REQUEST, 1).reth(target.address() + MTU, target.rkey(), 2 * MTU + 4));
        assertEquals(psn(4), responder.expectedPsn(), "a READ takes a PSN per response");
        assertTrue(responder.hasReadResponses());
        assertFalse(responder.sendControl(NOW), "the ACK waits behind the responses");

        final int[] opcodes = {Opcode.RC_RDMA_READ_RESPONSE_FIRST, Opcode.RC_RDMA_READ_RESPONSE_MIDDLE,
            Opcode.RC_RDMA_READ_RESPONSE_LAST};
        for (int i = 0; i < 3; i++)
        {
            assertTrue(responder.sendReadResponse(NOW));
            final RoceFrame response = parts.sent(i);
            assertEquals(opcodes[i], response.opcode());
            assertEquals(psn(1 + i), response.psn());
            final int length = i < 2 ? MTU : 4;
            assertEquals(length, response.payloadLength());
            assertEquals(-1, target.segment().asSlice(MTU + (long)i * MTU, length)
                .mismatch(response.segment().asSlice(response.payloadOffset(), length)));
        }
        assertFalse(responder.hasReadResponses());
        assertEquals(psn(0), control().psn());
    }

    @Test
    void shouldServeAgainOnlyADuplicateReadThatRepeatsOneServed()
    {
        final long address = target.address();
        request(packet(Opcode.RC_RDMA_READ_REQUEST, 0).reth(address, target.rkey(), 3 * MTU));
        for (int i = 0; i < 3; i++)
        {
            responder.sendReadResponse(NOW);
        }
        // go-back-N asks again from the second response: served from there
        request(packet(Opcode.RC_RDMA_READ_REQUEST, 1).reth(address + MTU, target.rkey(), 2 * MTU));
        // a forged one behind the expected PSN: another rkey, or a range never served
        request(packet(Opcode.RC_RDMA_READ_REQUEST, 1).reth(address + MTU, target.rkey() ^ 1, 2 * MTU));
        request(packet(Opcode.RC_RDMA_READ_REQUEST, 0).reth(address, target.rkey(), 16 * MTU));
        assertEquals(1, parts.counters.get(RcCounters.RX_DUPLICATES));
        assertEquals(2, parts.counters.get(RcCounters.RX_DUPLICATES_DROPPED));
        assertTrue(responder.sendReadResponse(NOW));
        assertEquals(psn(1), parts.sent(3).psn());
        assertTrue(responder.sendReadResponse(NOW));
        assertFalse(responder.hasReadResponses());
        assertFalse(responder.sendControl(NOW), "never a NAK for a duplicate");
        assertEquals(QueuePairState.RTR, parts.states.state());
    }

    @Test
    void shouldRefuseTheNextPacketOfAWriteIntoARegionRevokedMidway()
    {
        request(packet(Opcode.RC_RDMA_WRITE_FIRST, 0).reth(target.address(), target.rkey(), 2 * MTU), 0, MTU);
        assertTrue(responder.revokeRemoteAccess(target));
        request(packet(Opcode.RC_RDMA_WRITE_LAST, 1), MTU, MTU);
        final RoceFrame nak = control();
        assertEquals(psn(1), nak.psn());
        assertEquals(RcResponder.NAK_ACCESS_SYNDROME, nak.aethSyndrome());
        assertTargetUnchanged(MTU, MTU);
    }

    @Test
    void shouldReplaceReadResponsesFromARevokedRegionByAnAccessNak()
    {
        request(packet(Opcode.RC_RDMA_READ_REQUEST, 0).reth(target.address(), target.rkey(), 3 * MTU));
        assertTrue(responder.sendReadResponse(NOW));
        parts.pd.deregister(target);
        assertFalse(responder.sendReadResponse(NOW), "not a byte more leaves");
        assertFalse(responder.hasReadResponses());
        final RoceFrame nak = control();
        assertEquals(psn(1), nak.psn(), "the first response the requester lacks");
        assertEquals(RcResponder.NAK_ACCESS_SYNDROME, nak.aethSyndrome());
        assertEquals(1, parts.counters.get(RcCounters.REVOKED));
    }

    @Test
    void shouldFlushReceivesWithTheStatusTheirMemoryCalls()
    {
        final MemoryRegion other = parts.register(MTU, AccessFlags.LOCAL_WRITE);
        postReceive(1, 0, MTU);
        assertEquals(PostResult.OK, responder.postReceive(receive.reset().wrId(2).buffer(other, other.address(), MTU)));
        assertTrue(responder.receivesUse(other));
        parts.states.enterError();
        responder.flush(other);
        assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, parts.completion().status());
        assertEquals(WorkCompletionStatus.LOC_PROT_ERR, parts.completion().status());
        assertEquals(0, responder.postedReceives());
        assertFalse(responder.receivesUse(other));
    }

    @Test
    void shouldRefuseReceivesInResetAndFlushThemAtOnceInError()
    {
        parts.states.moveTo(QueuePairState.RESET);
        assertEquals(PostResult.INVALID_STATE, responder.postReceive(receive.reset().wrId(1)));
        parts.states.moveTo(QueuePairState.INIT);
        postReceive(2, 0, MTU);
        assertTrue(parts.cq.isEmpty(), "queued in INIT");
        parts.states.moveTo(QueuePairState.ERROR);
        postReceive(3, 0, MTU);
        final WorkCompletion wc = parts.completion();
        assertEquals(3, wc.wrId());
        assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, wc.status());
    }

    @Test
    void shouldRefuseAReceiveOutsideItsRegion()
    {
        assertEquals(PostResult.INVALID_ARGUMENT, responder.postReceive(receive.reset().wrId(1)
            .buffer(target, target.address() + 16 * MTU - 4, 8)));
        assertEquals(PostResult.INVALID_ARGUMENT, responder.postReceive(receive.reset().wrId(1)
            .buffer(source, source.address(), 8)), "no local write right");
    }
}
