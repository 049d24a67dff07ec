package io.spraynic.conformance;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The queue {@code multipath.repath-left-behind} puts on a path (S6.5-2), packet by packet, on a clock of its own. */
class QueuedRouteTest
{
    private static final long MS = ScriptedPeer.MILLI;

    private static Packet data(final int psn, final int port, final boolean copy)
    {
        final byte[] bytes = FrameBuilder.bth(SprayWire.READ_RESPONSE, 7, psn, false).zeros(32).bytes();
        bytes[SprayWire.BTH_LENGTH] = 1; // SETH path
        bytes[SprayWire.BTH_LENGTH + 1] = (byte)(copy ? SprayWire.SETH_RETRANSMIT : 0);
        final Packet p = new Packet(bytes, true, 0);
        p.sourcePort = port;
        return p;
    }

    @Test
    void shouldHoldThePathsPacketsAndNoteWhatAMoveLeavesBehindS652()
    {
        final QueuedRoute queue = new QueuedRoute();
        queue.path = 1;
        queue.queueNanos = 8 * MS;
        final Packet first = data(100, 5000, false);
        assertTrue(queue.offer(first, 0));
        assertTrue(queue.offer(data(101, 5000, false), 4 * MS));
        assertEquals(ScriptedPeer.SLOW_RAMP_NANOS, queue.nextDueNanos(), "the wait ramps up from 0");
        assertNull(queue.pollDue(ScriptedPeer.SLOW_RAMP_NANOS - 1));
        assertSame(first, queue.pollDue(ScriptedPeer.SLOW_RAMP_NANOS));
        assertEquals(2, queue.seen);

        // the path moves to port 6000 with PSN 101 (to wait 100 us) still queued, 10 us after it came: left behind,
        // and judgeable
        assertFalse(queue.offer(data(102, 6000, false), 4 * MS + 10_000), "the new route has no queue");
        assertEquals(4 * MS + 10_000, queue.changedAt);
        assertEquals(List.of(101), List.copyOf(queue.leftBehind.keySet()));
        assertEquals(2 * ScriptedPeer.SLOW_RAMP_NANOS, queue.leftBehindQueued.get(101));
        assertFalse(queue.offer(data(101, 6000, true), 4 * MS + 20_000), "a copy goes in at once");
        assertEquals(4 * MS + 20_000, queue.leftBehindCopies.get(101), "and is noted: its original is still queued");
        assertEquals(101, queue.pollDue(Long.MAX_VALUE / 2).psn());
        assertEquals(Long.MAX_VALUE / 2, queue.leftBehindTakenIn.get(101));

        // judged: the port it is on now queues again, from the ramp's start
        queue.again();
        assertTrue(queue.offer(data(103, 6000, false), 20 * MS));
        assertEquals(20 * MS + ScriptedPeer.SLOW_RAMP_NANOS, queue.nextDueNanos());
        queue.end();
        assertEquals(103, queue.pollDue(0).psn(), "ended: what is queued is due at once");
        assertEquals(Long.MAX_VALUE, queue.nextDueNanos());
    }

    /**
     * A move whose packets left behind all waited over half their queueing is passed over (the new port queued as the
     * old), at most {@link QueuedRoute#MOST_UNJUDGED_CHANGES} times; a rotation after a drain is no move at all.
     */
    @Test
    void shouldPassOverMovesThatLeftNothingJudgeable()
    {
        final QueuedRoute queue = new QueuedRoute();
        queue.path = 1;
        queue.queueNanos = ScriptedPeer.SLOW_RAMP_NANOS; // every packet waits 50 us
        assertTrue(queue.offer(data(100, 5000, false), 0));
        assertTrue(queue.offer(data(101, 6000, false), 40_000), "PSN 100 waited 40 of its 50 us: passed over");
        assertEquals(0, queue.changedAt);
        assertEquals(1, queue.unjudgedChanges);
        assertEquals(100, queue.pollDue(50_000).psn());
        assertEquals(101, queue.pollDue(90_000).psn());
        assertTrue(queue.offer(data(102, 7000, false), 100_000), "nothing queued: a rotation, queued as before");
        assertEquals(1, queue.unjudgedChanges);
        assertTrue(queue.offer(data(103, 7000, false), 110_000), "the same port: queued");
        assertFalse(queue.offer(data(104, 9000, false), 120_000));
        assertEquals(120_000, queue.changedAt, "a move with PSN 102 and 103 still queued");
        assertEquals(List.of(102, 103), List.copyOf(queue.leftBehind.keySet()));
    }
}
