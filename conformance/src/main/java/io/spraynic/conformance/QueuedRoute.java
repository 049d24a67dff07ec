package io.spraynic.conformance;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * S6.5-2: a deep queue the suite puts on one of the target's paths, for {@code multipath.repath-left-behind}. The
 * {@link ScriptedPeer} takes in (records and acknowledges) the path's data and probes only {@link #queueNanos} after
 * they arrive; it places a READ's data when it arrives, so that the READ completes and the next one keeps the other
 * paths busy while the queue drains (a target judges a path's RTT against what its siblings sent over the same time,
 * S7.3-2). The wait rises by {@link ScriptedPeer#SLOW_RAMP_NANOS} a packet, as the slow path's ACKs do. When a packet
 * of the path comes on another source port while packets of the port before are still queued, the path changed
 * route and left them behind: from then on its packets on other ports are taken in at once (a new route with no
 * queue), the ones left behind when due, and the check reads what came when.
 */
final class QueuedRoute
{
    /** Route changes passed over (below) at most. */
    static final int MOST_UNJUDGED_CHANGES = 3;

    /** The target's path that is queued; -1: none. */
    int path = -1;
    /** How long the queue holds a packet, once the ramp reached it. */
    long queueNanos;
    private long appliedNanos;
    private int port = -1;
    /** The path's packets not yet taken in, oldest first, when each arrived and when each is due. */
    private final ArrayDeque<Packet> queued = new ArrayDeque<>();
    private final ArrayDeque<Long> arrivedAt = new ArrayDeque<>();
    private final ArrayDeque<Long> dueAt = new ArrayDeque<>();
    /** The path's first transmissions of data seen. */
    int seen;
    /** When the path changed route with packets left behind (System.nanoTime()); 0 until then. */
    long changedAt;
    /**
     * Route changes passed over because every packet they left behind had waited over half its queueing (a target
     * that sends a window at once and moves at an ACK): its copies could not be told from an estimate's. The path's
     * new port is queued as the old was, and a later move is judged, up to {@link #MOST_UNJUDGED_CHANGES}.
     */
    int unjudgedChanges;
    /** The data PSNs left on the old route at the change, and when each arrived at the suite. */
    final Map<Integer, Long> leftBehind = new LinkedHashMap<>();
    /** How long the queue was to hold each PSN left behind. */
    final Map<Integer, Long> leftBehindQueued = new HashMap<>();
    /** When the suite took in each PSN left behind. */
    final Map<Integer, Long> leftBehindTakenIn = new HashMap<>();
    /** When the target's first copy (SETH RETRANSMIT) of a PSN left behind arrived, if before its original was taken in. */
    final Map<Integer, Long> leftBehindCopies = new HashMap<>();

    /**
     * Puts a packet of the path in the queue, unless it comes on a new route: the first packet on another port while
     * packets of the port before are queued marks the change, and the packets queued then are the ones left behind. A
     * copy of one of them that comes before it is taken in is noted.
     *
     * @return true when the packet waits in the queue; false when it is taken in now.
     */
    boolean offer(final Packet p, final long now)
    {
        final boolean data = SprayWire.isData(p.opcode());
        final boolean copy = data && (p.h8(1) & SprayWire.SETH_RETRANSMIT) != 0;
        if (0 == changedAt && port >= 0 && p.sourcePort != port && !queued.isEmpty() &&
            (judgeable(now) > 0 || ++unjudgedChanges > MOST_UNJUDGED_CHANGES))
        {
            changedAt = now;
            final Iterator<Long> arrived = arrivedAt.iterator();
            final Iterator<Long> due = dueAt.iterator();
            for (final Packet q : queued)
            {
                final long at = arrived.next();
                final long dueAtNanos = due.next();
                if (SprayWire.isData(q.opcode()) && null == leftBehind.putIfAbsent(q.psn(), at))
                {
                    leftBehindQueued.put(q.psn(), dueAtNanos - at);
                }
            }
        }
        if (0 != changedAt && p.sourcePort != port)
        {
            final int psn = p.psn();
            if (copy && leftBehind.containsKey(psn) && !leftBehindTakenIn.containsKey(psn))
            {
                leftBehindCopies.putIfAbsent(psn, now);
            }
            return false; // the new route has no queue
        }
        port = p.sourcePort; // the first port, or a rotation's (S7.7: only once all before it was taken in)
        if (data && !copy)
        {
            seen++;
        }
        appliedNanos = Math.min(queueNanos, appliedNanos + ScriptedPeer.SLOW_RAMP_NANOS);
        queued.addLast(p);
        arrivedAt.addLast(now);
        dueAt.addLast(now + appliedNanos);
        return true;
    }

    /**
     * @return the queued data packets that arrived less than half their queueing before {@code now}: a copy the
     * target sends at once on the change can be judged for them (3/8 of their queueing is left for it to come in).
     */
    private int judgeable(final long now)
    {
        int judgeable = 0;
        final Iterator<Long> arrived = arrivedAt.iterator();
        final Iterator<Long> due = dueAt.iterator();
        for (final Packet q : queued)
        {
            final long at = arrived.next();
            final long dueAtNanos = due.next();
            if (SprayWire.isData(q.opcode()) && at + (dueAtNanos - at) / 2 > now)
            {
                judgeable++;
            }
        }
        return judgeable;
    }

    /** @return the oldest queued packet if it is due by {@code now} (any, once no path is queued), else null. */
    Packet pollDue(final long now)
    {
        if (dueAt.isEmpty() || (path >= 0 && dueAt.peekFirst() - now > 0))
        {
            return null;
        }
        dueAt.removeFirst();
        arrivedAt.removeFirst();
        final Packet p = queued.removeFirst();
        if (0 != changedAt && SprayWire.isData(p.opcode()) && leftBehind.containsKey(p.psn()))
        {
            leftBehindTakenIn.putIfAbsent(p.psn(), now);
        }
        return p;
    }

    /** @return when the oldest queued packet is due (System.nanoTime()), or {@code Long.MAX_VALUE} when none is. */
    long nextDueNanos()
    {
        return dueAt.isEmpty() ? Long.MAX_VALUE : dueAt.peekFirst();
    }

    /**
     * After a move was judged, the path's current port queues as the old one did (the wait ramped up again from 0),
     * until its next move with packets left behind; what the old port left is still taken in when due.
     */
    void again()
    {
        changedAt = 0;
        port = -1;
        appliedNanos = 0;
        leftBehind.clear();
        leftBehindQueued.clear();
        leftBehindTakenIn.clear();
        leftBehindCopies.clear();
    }

    /** No path is queued any more: what is still queued is due now. */
    void end()
    {
        path = -1;
        appliedNanos = 0;
    }
}
