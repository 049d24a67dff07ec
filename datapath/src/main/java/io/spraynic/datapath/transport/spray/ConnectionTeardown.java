package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.wire.ConnectionHeader;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.SprayOpcodes;

import java.lang.foreign.MemorySegment;

import static io.spraynic.datapath.transport.spray.SprayConnection.State;

/**
 * How one spray connection ends, and what it flushes when it does (docs/PROTOCOL.md): in error after a CQ overrun
 * or a local protection error, as an IB QP; after every path failed for {@code connectionTimeout} (S7.6); idle
 * (S12.10, with the keepalive that keeps a live idle connection open); closed gracefully by either end (S9.2,
 * the packets and timers around {@link CloseHandshake}); or aborted. A connection that ends completes everything
 * unfinished, is forgotten by its engine and gives back its borrowed tables. Allocation-free but for what the
 * engine does when it forgets the connection.
 */
final class ConnectionTeardown
{
    // the connection's parts are read through it (issue 13: an idle connection holds one reference here, not 15);
    // none of this is on the per-packet path
    private final SprayConnection connection;
    private final Liveness liveness;
    private final CompletionQueue sendCq;
    private final CompletionQueue receiveCq;

    /** Made last of {@code connection}'s parts: it reads the others through {@code connection}. */
    ConnectionTeardown(
        final SprayConnection connection,
        final Liveness liveness,
        final SprayConnectionConfig config)
    {
        this.connection = connection;
        this.liveness = liveness;
        this.sendCq = config.sendCq;
        this.receiveCq = config.receiveCq;
    }

    /**
     * The checks that end a connection on its tick, before its timers run.
     *
     * @param localError a region in use was deregistered, or the message layer overran a CQ.
     * @return whether the connection closed now (its tick does nothing more).
     */
    boolean endsOnTick(final boolean localError, final long now)
    {
        if (localError || connection.completions.localError() || connection.sender.localError() ||
            sendCq.hasOverrun() || receiveCq.hasOverrun())
        {
            // as an IB QP: a CQ overrun or a local protection error puts it in error; everything outstanding
            // completes (WR_FLUSH_ERR) and no region it held is touched again
            finish();
            return true;
        }
        if (connection.scheduler.allFailedFor(connection.config.connectionTimeoutNanos, now))
        {
            // S7.6: every path stayed failed for connectionTimeout: outstanding messages complete with
            // RETRY_EXC_ERR and the connection closes (its packets are then counted as for an unknown one, S9.5);
            // forgotten as any closed connection, or its CID, slot, tables and its source's limit stayed taken
            flushSends(WorkCompletionStatus.RETRY_EXC_ERR);
            finish();
            return true;
        }
        final int live = liveness.check(connection.counters, now);
        return live != Liveness.NOTHING && onLiveness(live, now) > 0 && connection.close.state() == State.CLOSED;
    }

    // S12.10: the peer said nothing for idleTimeout: unacknowledged sends complete with RETRY_EXC_ERR, the rest with
    // WR_FLUSH_ERR, and the connection is forgotten; or this end sent nothing for keepaliveInterval: an ACK goes out
    private int onLiveness(final int live, final long now)
    {
        if (live == Liveness.IDLE)
        {
            connection.counters.increment(SprayCounters.IDLE_CLOSED);
            connection.engine.counters().increment(SprayCounters.IDLE_CLOSED);
            flushSends(WorkCompletionStatus.RETRY_EXC_ERR);
            finish();
            return 1;
        }
        if (connection.close.state() == State.ESTABLISHED && connection.control.sendAck(0))
        {
            liveness.keepaliveSent(now);
            connection.counters.increment(SprayCounters.KEEPALIVES_SENT);
            return 1;
        }
        return 0;
    }

    /** Forceful close: everything unfinished completes with WR_FLUSH_ERR at once; nothing goes on the wire. */
    void abort()
    {
        if (connection.close.state() != State.CLOSED)
        {
            finish();
        }
    }

    /** The timers of a graceful close (S9.2), once it began. @return work done. */
    int closeTimers(final long now)
    {
        final int actions = connection.close.onTimer(now, drained());
        if ((actions & CloseHandshake.FLUSH) != 0)
        {
            flushSends(WorkCompletionStatus.WR_FLUSH_ERR);
            for (int path = 0; path < connection.scheduler.sendWindows.length; path++)
            {
                final PathSendWindow window = connection.scheduler.sendWindows[path];
                window.reset(window.nextPsn()); // nothing of the flushed messages is resent
            }
        }
        if ((actions & CloseHandshake.GIVE_UP) != 0)
        {
            finish();
            return 1;
        }
        if ((actions & CloseHandshake.SEND_CLOSE) != 0)
        {
            if (connection.control.sendConnectionPacket(SprayOpcodes.CLOSE, connection.close.token()))
            {
                connection.counters.increment(SprayCounters.CLOSES_SENT);
            }
            return 1;
        }
        return 0;
    }

    private boolean drained()
    {
        final RetransmitQueues resend = connection.resend;
        return connection.slots.inUse() == 0 && resend.retransmissions() == 0 && resend.moves() == 0 &&
            connection.scheduler.nothingOutstanding();
    }

    // the peer closes (S9.2): answer, flush what is unfinished here, forget the connection
    void onClosePacket(final RoceFrame frame)
    {
        final MemorySegment buffer = frame.segment();
        final long conh = frame.customHeaderOffset();
        if (ConnectionHeader.senderCid(buffer, conh) != connection.remoteCid)
        {
            connection.engine.counters().increment(SprayCounters.MALFORMED); // not our peer's CID: not our peer's CLOSE
            return;
        }
        connection.counters.increment(SprayCounters.CLOSES_RECEIVED);
        connection.control.sendConnectionPacket(SprayOpcodes.CLOSE_ACK, ConnectionHeader.token(buffer, conh));
        finish();
    }

    void onCloseAckPacket(final RoceFrame frame)
    {
        final MemorySegment buffer = frame.segment();
        final long conh = frame.customHeaderOffset();
        if (!connection.close.isAnsweredBy(ConnectionHeader.token(buffer, conh)) ||
            ConnectionHeader.senderCid(buffer, conh) != connection.remoteCid)
        {
            connection.engine.counters().increment(SprayCounters.MALFORMED);
            return;
        }
        finish();
    }

    private void finish()
    {
        flushSends(WorkCompletionStatus.WR_FLUSH_ERR);
        connection.inbound.flushReceives();
        connection.close.closed();
        connection.engine.forget(connection);
        connection.tables.onClosed();
    }

    // everything unfinished completes with `completionStatus`; nothing is left to send
    private void flushSends(final WorkCompletionStatus completionStatus)
    {
        connection.resend.clear();
        connection.completions.flush(completionStatus);
    }
}
