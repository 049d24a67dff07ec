package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.transport.RecordingFrameSink;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.QueuePairState;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.RoceFrame;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static io.spraynic.datapath.transport.rocev2.RcParts.MTU;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One queue pair through its verbs, frames in by {@code onFrame} and out into a capturing sink: what posting does
 * in each state, what the moves between states keep or flush, and that a queue pair in ERROR sends nothing.
 */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class RcQueuePairTest
{
    private static final long NOW = 1_000_000;

    private final RcParts frames = new RcParts();
    private final RecordingFrameSink sink = frames.sink;
    private final RcEngine engine = new RcEngine(frames.config, frames.pd, sink, new SplittableRandom(9));
    private final CompletionQueue cq = new CompletionQueue(64);
    private final WorkCompletion wc = new WorkCompletion();
    private final RcQueuePair qp = engine.createQueuePair(cq, cq, 8, 8);
    private final MemoryRegion buffer = frames.register(4 * MTU, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
    private final SendWorkRequest send = new SendWorkRequest();
    private final ReceiveWorkRequest receive = new ReceiveWorkRequest();

    @AfterEach
    void close()
    {
        frames.close();
    }

    private void connect()
    {
        qp.toInit(AccessFlags.REMOTE_WRITE);
        qp.toRtr(RcConnectionAttributes.of(RcParts.REMOTE_QP_NUMBER, RcParts.REMOTE_MAC, RcParts.REMOTE_IP, 0xC0DE, MTU,
            100, 200));
        qp.toRts();
    }

    private int postSend(final long wrId)
    {
        return qp.postSend(send.reset().wrId(wrId).opcode(WorkRequestOpcode.SEND).local(buffer, buffer.address(), 64));
    }

    private int postReceive(final long wrId)
    {
        return qp.postReceive(receive.reset().wrId(wrId).buffer(buffer, buffer.address(), MTU));
    }

    /** A SEND Only from the peer at {@code psn}, asking for an ACK, CE-marked when {@code congested}. */
    private void sendFromPeer(final int psn, final boolean congested)
    {
        final RoceFrame frame = frames.inbound(RcParts.fromPeer(Opcode.RC_SEND_ONLY, psn).destQp(qp.qpNumber())
            .ackReq(true).ecn(congested ? RcEngineConfig.ECN_CE : RcEngineConfig.ECT_0), buffer.segment(), 8);
        engine.onFrame(frame, NOW);
    }

    @Test
    void shouldRefuseSendsUntilRtsAndReceivesUntilInit()
    {
        assertEquals(PostResult.INVALID_STATE, postSend(1));
        assertEquals(PostResult.INVALID_STATE, postReceive(1));
        qp.toInit(AccessFlags.REMOTE_WRITE);
        assertEquals(PostResult.INVALID_STATE, postSend(1));
        assertEquals(PostResult.OK, postReceive(1));
        qp.toRtr(RcConnectionAttributes.of(RcParts.REMOTE_QP_NUMBER, RcParts.REMOTE_MAC, RcParts.REMOTE_IP, 0xC0DE, MTU,
            100, 200));
        assertEquals(PostResult.INVALID_STATE, postSend(1));
        assertEquals(0, engine.onTick(NOW), "RTR sends no request");
        qp.toRts();
        assertEquals(PostResult.OK, postSend(1));
        assertEquals(1, engine.onTick(NOW));
        assertEquals(1, qp.postedReceives());
    }

    @Test
    void shouldQueueButNotStartSendsPostedWhileDrained()
    {
        connect();
        qp.toSqd();
        assertEquals(PostResult.OK, postSend(1));
        assertEquals(0, engine.onTick(NOW));
        assertEquals(1, qp.outstandingSends());
        qp.toRts();
        assertEquals(1, engine.onTick(NOW));
    }

    @Test
    void shouldFlushEverythingOnErrorAndPostsAfterAtOnce()
    {
        connect();
        postSend(1);
        postReceive(2);
        qp.toError();
        assertEquals(QueuePairState.ERROR, qp.state());
        assertTrue(cq.poll(wc));
        assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, wc.status());
        assertTrue(cq.poll(wc));
        assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, wc.status());
        assertEquals(PostResult.OK, postSend(3));
        assertEquals(PostResult.OK, postReceive(4));
        assertEquals(2, cq.size(), "flushed at once");
        assertEquals(1, engine.counters().get(RcCounters.QP_ERRORS));
        qp.toError();
        assertEquals(1, engine.counters().get(RcCounters.QP_ERRORS), "once");
    }

    @Test
    void shouldEmptyTheQueuesWithoutCompletionsOnReset()
    {
        connect();
        postSend(1);
        postReceive(2);
        qp.toReset();
        assertEquals(QueuePairState.RESET, qp.state());
        assertTrue(cq.isEmpty());
        assertEquals(0, qp.outstandingSends());
        assertEquals(0, qp.postedReceives());
        assertEquals(null, qp.attributes());
        assertThrows(IllegalStateException.class, qp::toRts);
        connect();
        assertEquals(PostResult.OK, postSend(3));
        assertEquals(1, engine.onTick(NOW));
        assertEquals(100, frames.sent(frames.sentCount() - 1).psn(), "from the send PSN of the new connection");
    }

    @Test
    void shouldSendNothingOnceInErrorNeitherAnAckOwedNorACnp()
    {
        connect();
        postReceive(1);
        sendFromPeer(200, true); // placed: an ACK is owed, and a CNP for the CE mark
        qp.toError();
        final int before = sink.frames.size();
        assertEquals(0, engine.onTick(NOW + 1_000_000));
        assertEquals(before, sink.frames.size(), "IB Vol 1 10.3.1: a QP in ERROR transmits nothing");
        assertFalse(engine.counters().get(RcCounters.TX_ACKS) > 0);
        assertEquals(0, engine.counters().get(RcCounters.TX_CNP));
    }

    @Test
    void shouldStillSendTheNakThatAnnouncesItsOwnFatalError()
    {
        connect();
        // a WRITE with an rkey this domain never gave: refused, and the QP fails once the NAK is out
        final RoceFrame frame = frames.inbound(RcParts.fromPeer(Opcode.RC_RDMA_WRITE_ONLY, 200).destQp(qp.qpNumber())
            .reth(buffer.address(), buffer.rkey() ^ 1, 8), buffer.segment(), 8);
        engine.onFrame(frame, NOW);
        assertEquals(QueuePairState.RTS, qp.state());
        assertEquals(1, engine.onTick(NOW));
        assertEquals(QueuePairState.ERROR, qp.state());
        assertEquals(1, engine.counters().get(RcCounters.TX_NAK_ACCESS));
        assertEquals(1, sink.frames.size());
    }

    @Test
    void shouldFlushOnDestroyAndDropEveryMemoryReference()
    {
        connect();
        postSend(1);
        postReceive(2);
        engine.destroyQueuePair(qp);
        assertEquals(2, cq.size());
        assertEquals(0, engine.revoke(buffer), "no operation of it uses the region any more");
        assertEquals(0, engine.queuePairCount());
    }
}
