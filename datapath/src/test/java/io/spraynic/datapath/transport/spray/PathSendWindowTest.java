package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.Psn;
import io.spraynic.datapath.wire.SelectiveAckHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/PROTOCOL.md S6.5, S6.6: the sender learns exactly which packets a FIFO path lost from the
 * receiver's SACK, retransmits exactly those, and catches a lost retransmission.
 */
class PathSendWindowTest
{
    private final Arena arena = Arena.ofConfined();
    private final MemorySegment ack = arena.allocate(SelectiveAckHeader.LENGTH);
    private final List<Long> acked = new ArrayList<>();
    private final List<Integer> lost = new ArrayList<>();
    private final PathSendWindow.Listener listener = new PathSendWindow.Listener()
    {
        public void onAcked(final long handle, final int psn, final long rttNanos)
        {
            acked.add(handle);
        }

        public void onLost(final long handle, final int psn)
        {
            lost.add(psn);
        }
    };

    @AfterEach
    void close()
    {
        arena.close();
    }

    @Test
    void shouldReportExactlyTheMissingPacketsAsLost()
    {
        final PathSendWindow sender = new PathSendWindow(0xFFFFFC);
        final PathReceiveWindow receiver = new PathReceiveWindow(0xFFFFFC);
        for (int i = 0; i < 10; i++)
        {
            final int psn = sender.send(1000 + i, 0);
            if (i != 2 && i != 5)
            {
                receiver.onPacket(0, psn);
            }
        }
        receiver.writeTo(0, ack, 0);
        assertEquals(8, sender.onAck(ack, 0, 10, listener));
        assertEquals(List.of(Psn.add(0xFFFFFC, 2), Psn.add(0xFFFFFC, 5)), lost);
        assertEquals(List.of(1000L, 1001L, 1003L, 1004L, 1006L, 1007L, 1008L, 1009L), acked);
        assertEquals(Psn.add(0xFFFFFC, 2), sender.basePsn());
        assertEquals(8, sender.outstanding());
    }

    /**
     * S7.4.1: after an RTO the overdue packets leave the path (their handles go to be re-sent elsewhere) and
     * placeholders keep their PSNs outstanding, so an ACK of them acknowledges only the placeholder and a
     * lost one is found by S6.5 like any packet.
     */
    @Test
    void shouldHandOverOverduePacketsAndKeepTheirPsnsS741()
    {
        final PathSendWindow sender = new PathSendWindow(0xFFFFFE);
        final PathReceiveWindow receiver = new PathReceiveWindow(0xFFFFFE);
        for (int i = 0; i < 6; i++)
        {
            sender.send(1000 + i, 10L * i);
        }
        final List<Long> handed = new ArrayList<>();
        assertEquals(4, sender.relocate(-1L, 30, handed::add), "sent at or before 30 ns");
        assertEquals(List.of(1000L, 1001L, 1002L, 1003L), handed);
        assertEquals(6, sender.outstanding(), "their PSNs stay outstanding");
        assertEquals(-1L, sender.oldestHandle());
        assertEquals(0, sender.relocate(-1L, 30, handed::add), "a placeholder is never handed over");
        assertEquals(2, sender.relocate(-1L, 1_000, handed::add));
        assertEquals(List.of(1000L, 1001L, 1002L, 1003L, 1004L, 1005L), handed);

        // the path was alive after all: PSN 1 (a placeholder now) was lost, the others arrive
        for (int i = 0; i < 6; i++)
        {
            if (i != 1)
            {
                receiver.onPacket(0, Psn.add(0xFFFFFE, i));
            }
        }
        receiver.writeTo(0, ack, 0);
        assertEquals(5, sender.onAck(ack, 0, 100, listener));
        assertEquals(List.of(-1L, -1L, -1L, -1L, -1L), acked, "only placeholders are acknowledged on this path");
        assertEquals(List.of(Psn.add(0xFFFFFE, 1)), lost, "a lost placeholder is a gap like any packet (S6.5)");
    }

    /**
     * S6.5-2: a path changed route (S7.3) with packets outstanding, and the new route's first packets arrived before
     * the old route's (a deeper queue there): the gap they open is not a loss. An old-route packet is lost when a later
     * old-route packet is acknowledged, or once it is overdue (on an ACK, or on the path's timer when none comes); a window that did not change route loses them all at
     * once, as S6.5 says.
     */
    @Test
    void shouldHoldOldRoutePacketsBehindTheNewRoutesGapsS652()
    {
        final PathSendWindow sender = new PathSendWindow(0xFFFFFD);
        final PathSendWindow unmoved = new PathSendWindow(0xFFFFFD);
        final PathReceiveWindow receiver = new PathReceiveWindow(0xFFFFFD);
        final long[] now = {0};
        final PathSendWindow.Listener retransmitting = new PathSendWindow.Listener()
        {
            public void onAcked(final long handle, final int psn, final long rttNanos)
            {
                acked.add(handle);
            }

            public void onLost(final long handle, final int psn)
            {
                lost.add(psn);
                sender.retransmitted(psn, now[0]);
            }
        };
        for (int i = 0; i < 4; i++)
        {
            sender.send(1000 + i, i);
            unmoved.send(1000 + i, i);
        }
        sender.routeChanged(37); // an old-route packet's ACK is overdue 37 ns after it was sent
        assertTrue(sender.hasOldRoute());
        for (int i = 4; i < 6; i++)
        {
            sender.send(1000 + i, 10 + i);
            unmoved.send(1000 + i, 10 + i);
            receiver.onPacket(0, Psn.add(0xFFFFFD, i)); // the new route's packets overtake
        }
        receiver.writeTo(0, ack, 0);
        now[0] = 20;
        assertEquals(2, sender.onAck(ack, 0, now[0], retransmitting));
        assertEquals(List.of(), lost, "only the new route's packets are acknowledged above the old route's");
        assertEquals(2, unmoved.onAck(ack, 0, now[0], listener));
        assertEquals(4, lost.size(), "a path that kept its route loses every packet below them (S6.5)");
        lost.clear();

        receiver.onPacket(0, Psn.add(0xFFFFFD, 0));
        receiver.onPacket(0, Psn.add(0xFFFFFD, 2)); // the old route's packets: 1 was lost there, 3 is late
        receiver.writeTo(0, ack, 0);
        now[0] = 30;
        assertEquals(2, sender.onAck(ack, 0, now[0], retransmitting));
        assertEquals(List.of(Psn.add(0xFFFFFD, 1)), lost, "below an old-route packet acknowledged: lost");

        now[0] = 39;
        assertEquals(0, sender.onAck(ack, 0, now[0], retransmitting));
        assertEquals(List.of(Psn.add(0xFFFFFD, 1)), lost, "PSN 3, sent at 3 ns, is not overdue at 39 ns");
        assertTrue(sender.hasHeld());
        assertEquals(0, sender.judgeHeld(now[0], 0, 10, retransmitting), "nor by the path's timer");
        now[0] = 40;
        assertEquals(1, sender.judgeHeld(now[0], 0, 10, retransmitting), "the timer, with no ACK: overdue at 40 ns");
        assertEquals(List.of(Psn.add(0xFFFFFD, 1), Psn.add(0xFFFFFD, 3)), lost, "overdue: lost whatever its route");
        assertTrue(!sender.hasHeld());
        assertEquals(0, sender.onAck(ack, 0, now[0], retransmitting));
        assertEquals(0, sender.judgeHeld(now[0], 0, 10, retransmitting));
        assertEquals(2, lost.size(), "once");

        receiver.onPacket(0, Psn.add(0xFFFFFD, 1));
        receiver.onPacket(0, Psn.add(0xFFFFFD, 3));
        receiver.writeTo(0, ack, 0);
        assertEquals(2, sender.onAck(ack, 0, 50, retransmitting));
        assertEquals(0, sender.outstanding());
        assertTrue(!sender.hasOldRoute(), "the old route drained");

        final int six = sender.send(1006, 60);
        final int seven = sender.send(1007, 61);
        receiver.onPacket(0, seven);
        receiver.writeTo(0, ack, 0);
        assertEquals(1, sender.onAck(ack, 0, 70, retransmitting));
        assertEquals(six, (int)lost.get(lost.size() - 1), "one route again: a gap is a loss at once (S6.5)");
    }

    /**
     * S6.5-2 with S6.6: a retransmission sent on the old route is not lost because the new route's packets overtook
     * it; it is, as S6.6 says, once an old-route packet sent after it is acknowledged.
     */
    @Test
    void shouldHoldAnOldRouteRetransmissionBehindTheNewRoutesGapsS652()
    {
        final PathSendWindow sender = new PathSendWindow(100);
        final PathReceiveWindow receiver = new PathReceiveWindow(100);
        final PathSendWindow.Listener retransmitting = new PathSendWindow.Listener()
        {
            public void onAcked(final long handle, final int psn, final long rttNanos)
            {
                acked.add(handle);
            }

            public void onLost(final long handle, final int psn)
            {
                lost.add(psn);
                sender.retransmitted(psn, 5);
            }
        };
        sender.send(1000, 0);
        sender.send(1001, 1);
        receiver.onPacket(0, 101);
        receiver.writeTo(0, ack, 0);
        sender.onAck(ack, 0, 5, retransmitting);
        assertEquals(List.of(100), lost, "a gap on one route");
        sender.send(1002, 6); // PSN 102: on the old route, after the retransmission of 100
        sender.routeChanged(1_000);
        sender.send(1003, 7);
        receiver.onPacket(0, 103); // the new route overtakes the copy of 100 and PSN 102
        receiver.writeTo(0, ack, 0);
        sender.onAck(ack, 0, 8, retransmitting);
        assertEquals(List.of(100), lost, "the copy is not lost to the new route's packet");
        receiver.onPacket(0, 102);
        receiver.writeTo(0, ack, 0);
        sender.onAck(ack, 0, 9, retransmitting);
        assertEquals(List.of(100, 100), lost, "an old-route packet sent after the copy arrived: the copy was lost (S6.6)");
    }

    /**
     * S6.5-3: with a reordering window a gap is not loss until a packet sent at least the window after the missing one
     * is acknowledged; a packet that only arrived late fills its gap and is never reported; with no window (S6.5) the
     * same ACKs report the late packet lost at once.
     */
    @Test
    void shouldHoldAGapWithinTheReorderingWindowS653()
    {
        final PathSendWindow sender = new PathSendWindow(0xFFFFFE);
        final PathSendWindow strict = new PathSendWindow(0xFFFFFE);
        final PathReceiveWindow receiver = new PathReceiveWindow(0xFFFFFE);
        final List<Integer> strictLost = new ArrayList<>();
        final PathSendWindow.Listener strictListener = new PathSendWindow.Listener()
        {
            public void onAcked(final long handle, final int psn, final long rttNanos)
            {
            }

            public void onLost(final long handle, final int psn)
            {
                strictLost.add(psn);
            }
        };
        for (int i = 0; i < 8; i++)
        {
            sender.send(1000 + i, 10L * i);
            strict.send(1000 + i, 10L * i);
        }
        final int first = 0xFFFFFE;
        for (int i = 1; i <= 3; i++)
        {
            receiver.onPacket(0, Psn.add(first, i)); // PSN first + 0 is late, behind the next three
        }
        receiver.writeTo(0, ack, 0);
        assertEquals(3, sender.onAck(ack, 0, 40, 50, listener));
        strict.onAck(ack, 0, 40, 0, strictListener);
        assertEquals(List.of(), lost, "sent 30 ns before the highest acknowledged: within the 50 ns window");
        assertEquals(List.of(first), strictLost, "S6.5 without a window: the gap is a loss");

        receiver.onPacket(0, first);
        receiver.writeTo(0, ack, 0);
        assertEquals(1, sender.onAck(ack, 0, 45, 50, listener));
        assertEquals(List.of(), lost, "it arrived: never reported");
        assertEquals(4, acked.size());

        // PSN first + 4 (sent at 40) is really lost: held while what is acknowledged above it was sent within 50 ns
        receiver.onPacket(0, Psn.add(first, 5));
        receiver.onPacket(0, Psn.add(first, 6));
        receiver.writeTo(0, ack, 0);
        sender.onAck(ack, 0, 70, 50, listener);
        receiver.onPacket(0, Psn.add(first, 7));
        receiver.writeTo(0, ack, 0);
        sender.onAck(ack, 0, 80, 50, listener);
        assertEquals(List.of(), lost, "the highest acknowledged, sent at 70, is 30 ns after it");
        receiver.onPacket(0, sender.send(1008, 90));
        receiver.writeTo(0, ack, 0);
        sender.onAck(ack, 0, 100, 50, listener);
        assertEquals(List.of(Psn.add(first, 4)), lost, "one sent 50 ns after it arrived: lost");
    }

    /**
     * S6.5-3 against a path that delays each packet by its own random amount up to {@code D} and loses some: with a
     * window of at least {@code D} nothing that arrives is ever reported lost, and every loss is found and recovered
     * by the packets sent after it; with no window the same path makes spurious losses, so the check can fail.
     */
    @ParameterizedTest
    @ValueSource(longs = {0, 40, 80})
    void shouldReportNoPacketThatArrivesWhenTheWindowCoversTheReorderingS653(final long reorderWindow)
    {
        final SplittableRandom random = new SplittableRandom(11);
        final int firstPsn = 0xFFFF00;
        final int packets = 20_000;
        final PathSendWindow sender = new PathSendWindow(firstPsn);
        final PathReceiveWindow receiver = new PathReceiveWindow(firstPsn);
        final long[] arrivesAt = new long[packets + 1_000]; // by handle; -1: lost; 0: not sent
        final java.util.PriorityQueue<long[]> inFlight = new java.util.PriorityQueue<>((a, b) -> Long.compare(a[0], b[0]));
        final ArrayDeque<Integer> resend = new ArrayDeque<>();
        final int[] spurious = {0};
        final int[] lossesReported = {0};
        final long[] now = {0};
        final PathSendWindow.Listener engine = new PathSendWindow.Listener()
        {
            public void onAcked(final long handle, final int psn, final long rttNanos)
            {
            }

            public void onLost(final long handle, final int psn)
            {
                lossesReported[0]++;
                if (arrivesAt[(int)handle] >= 0)
                {
                    spurious[0]++; // it arrived, or is on its way
                }
                resend.add((int)handle);
            }
        };
        int next = 0;
        int lost = 0;
        while (now[0] < 10_000_000 && (next < packets || receiver.cumulativePsn(0) != Psn.add(firstPsn, packets)))
        {
            now[0] += 10; // a packet every 10 ns: up to four in flight overtake one another
            while (!resend.isEmpty()) // as Listener.onLost asks: resent before the next ACK
            {
                final int handle = resend.poll();
                sender.retransmitted(Psn.add(firstPsn, handle), now[0]);
                lost += transmit(handle, now[0], random, arrivesAt, inFlight);
            }
            if (!sender.isFull())
            {
                final int handle = next++; // past `packets`: more traffic, as an application sends after its message
                sender.send(handle, now[0]);
                lost += transmit(handle, now[0], random, arrivesAt, inFlight);
            }
            boolean arrived = false;
            while (!inFlight.isEmpty() && inFlight.peek()[0] <= now[0])
            {
                receiver.onPacket(0, Psn.add(firstPsn, (int)inFlight.poll()[1]));
                arrived = true;
            }
            if (arrived)
            {
                receiver.writeTo(0, ack, 0);
                sender.onAck(ack, 0, now[0], reorderWindow, engine);
            }
        }
        assertTrue(Psn.diff(receiver.cumulativePsn(0), firstPsn) >= packets, "every packet arrived in the end");
        if (reorderWindow >= MAX_EXTRA_DELAY)
        {
            assertEquals(0, spurious[0], "a window of at least the reordering: no packet that arrives is lost");
            assertTrue(lossesReported[0] >= lost - 100 && lossesReported[0] <= lost, lossesReported[0] + " reported of " +
                lost + " lost (the last few, after the traffic, are not)");
        }
        else
        {
            assertTrue(spurious[0] > 1_000, "no window: reordering is taken for loss (" + spurious[0] + ")");
        }
    }

    // D of the reordering tests: each packet's delay is 100 + [0, D) ns
    private static final long MAX_EXTRA_DELAY = 40;

    // 1 % lost, the rest delayed 100 + [0, D) ns; @return 1 if lost
    private static int transmit(final int handle, final long now, final SplittableRandom random, final long[] arrivesAt,
        final java.util.PriorityQueue<long[]> inFlight)
    {
        if (random.nextDouble() < 0.01)
        {
            arrivesAt[handle] = -1;
            return 1;
        }
        arrivesAt[handle] = now + 100 + random.nextLong(MAX_EXTRA_DELAY);
        inFlight.add(new long[]{arrivesAt[handle], handle});
        return 0;
    }

    @Test
    void shouldNotReportLossAgainUntilRetransmissionIsOvertaken()
    {
        final PathSendWindow sender = new PathSendWindow(0);
        final PathReceiveWindow receiver = new PathReceiveWindow(0);
        for (int i = 0; i < 4; i++)
        {
            final int psn = sender.send(i, 0);
            if (i != 1)
            {
                receiver.onPacket(0, psn);
            }
        }
        receiver.writeTo(0, ack, 0);
        sender.onAck(ack, 0, 1, listener);
        assertEquals(List.of(1), lost);
        sender.retransmitted(1, 2); // ...and the retransmission is lost too

        receiver.writeTo(0, ack, 0);
        sender.onAck(ack, 0, 3, listener);
        assertEquals(List.of(1), lost, "the same ACK again is no news about the retransmission");

        receiver.onPacket(0, sender.send(4, 4)); // sent after the retransmission and arrived: it was lost
        receiver.writeTo(0, ack, 0);
        sender.onAck(ack, 0, 5, listener);
        assertEquals(List.of(1, 1), lost);

        sender.retransmitted(1, 6);
        receiver.onPacket(0, 1);
        receiver.writeTo(0, ack, 0);
        sender.onAck(ack, 0, 7, listener);
        assertEquals(0, sender.outstanding());
        assertEquals(5, acked.size());
    }

    @Test
    void shouldIgnoreAckOutsideWindow()
    {
        final PathSendWindow sender = new PathSendWindow(500);
        sender.send(1, 0);
        SelectiveAckHeader.cumulativePsn(ack, 0, 700);
        assertEquals(-1, sender.onAck(ack, 0, 1, listener));
        SelectiveAckHeader.cumulativePsn(ack, 0, 499);
        assertEquals(-1, sender.onAck(ack, 0, 1, listener));
        assertEquals(1, sender.outstanding());
        assertTrue(acked.isEmpty() && lost.isEmpty());
    }

    @Test
    void shouldHoldAtMost256Outstanding()
    {
        final PathSendWindow sender = new PathSendWindow(0);
        for (int i = 0; i < PathSendWindow.CAPACITY; i++)
        {
            sender.send(i, 0);
        }
        assertTrue(sender.isFull());
        assertThrows(IllegalStateException.class, () -> sender.send(999, 0));
    }

    /**
     * S6.8.1: the window says which acknowledged packets had been relocated without being sent again (their first
     * transmission arrived) and how soon after its last transmission a packet sent again was acknowledged.
     */
    @Test
    void shouldSayWhenARelocatedPacketArrivesAndHowSoonAResentOneIsAcknowledgedS681()
    {
        final PathSendWindow sender = new PathSendWindow(0);
        final PathReceiveWindow receiver = new PathReceiveWindow(0);
        final List<String> events = new ArrayList<>();
        final PathSendWindow.Listener judging = new PathSendWindow.Listener()
        {
            public void onAcked(final long handle, final int psn, final long rttNanos)
            {
                events.add("acked " + psn + " " + handle + " " + rttNanos);
            }

            public void onLost(final long handle, final int psn)
            {
                events.add("lost " + psn);
            }

            public void onRelocatedArrived(final int psn, final long rttNanos)
            {
                events.add("relocated arrived " + psn + " " + rttNanos);
            }

            public void onRetransmissionAcked(final long handle, final int psn, final long sinceResendNanos)
            {
                events.add("resend acked " + psn + " " + sinceResendNanos);
            }
        };
        sender.send(10, 100);
        sender.send(11, 200);
        sender.send(12, 300);
        assertEquals(3, sender.relocate(-1L, 300, handle -> { }));
        sender.retransmitted(0, 900); // the oldest goes again at its PSN, a placeholder
        receiver.onPacket(0, 0);
        receiver.onPacket(0, 1);
        receiver.writeTo(0, ack, 0);
        assertEquals(2, sender.onAck(ack, 0, 1_000, judging));
        assertEquals(List.of("resend acked 0 100", "acked 0 -1 -1", "relocated arrived 1 800", "acked 1 -1 800"),
            events);

        events.clear();
        sender.send(13, 1_100);
        receiver.onPacket(0, 3);
        receiver.writeTo(0, ack, 0);
        assertEquals(1, sender.onAck(ack, 0, 1_200, judging));
        assertEquals(List.of("acked 3 13 100", "lost 2"), events, "a relocated packet missing is a gap (S6.5)");
    }

    @Test
    void shouldSampleRttOnlyFromFirstTransmissions()
    {
        final PathSendWindow sender = new PathSendWindow(0);
        final PathReceiveWindow receiver = new PathReceiveWindow(0);
        final List<Long> samples = new ArrayList<>();
        final PathSendWindow.Listener sampling = new PathSendWindow.Listener()
        {
            public void onAcked(final long handle, final int psn, final long rttNanos)
            {
                samples.add(rttNanos);
            }

            public void onLost(final long handle, final int psn)
            {
            }
        };
        sender.send(0, 100);
        sender.send(1, 200);
        sender.retransmitted(0, 300);
        receiver.onPacket(0, 0);
        receiver.onPacket(0, 1);
        receiver.writeTo(0, ack, 0);
        sender.onAck(ack, 0, 1_000, sampling);
        assertEquals(List.of(-1L, 800L), samples);
    }

    /**
     * A FIFO path that loses packets at random: every lost packet is reported lost exactly once
     * per time it is lost, nothing delivered is ever reported lost (no spurious retransmission),
     * and everything arrives in the end.
     */
    @ParameterizedTest
    @ValueSource(doubles = {0.0, 0.01, 0.1, 0.3})
    void shouldRecoverEveryLossWithOneRetransmissionPerLoss(final double lossRate)
    {
        final SplittableRandom random = new SplittableRandom(7);
        final int packets = 20_000;
        final PathSendWindow sender = new PathSendWindow(0xFFF000);
        final PathReceiveWindow receiver = new PathReceiveWindow(0xFFF000);
        final boolean[] delivered = new boolean[packets];
        final ArrayDeque<Integer> retransmitQueue = new ArrayDeque<>();
        final int[] losses = {0};
        final int[] retransmissions = {0};
        final PathSendWindow.Listener engine = new PathSendWindow.Listener()
        {
            public void onAcked(final long handle, final int psn, final long rttNanos)
            {
                assertTrue(delivered[(int)handle], "acknowledged but never delivered: " + handle);
            }

            public void onLost(final long handle, final int psn)
            {
                assertTrue(!delivered[(int)handle], "spurious loss of delivered packet " + handle);
                retransmitQueue.add((int)handle);
            }
        };

        int next = 0;
        long now = 0;
        int rounds = 0;
        while ((next < packets || sender.outstanding() > 0) && rounds++ < 100_000)
        {
            // one round trip: send up to 64 new packets, retransmit what was reported lost, ACK
            while (!retransmitQueue.isEmpty())
            {
                final int handle = retransmitQueue.poll();
                final int psn = Psn.add(0xFFF000, handle);
                sender.retransmitted(psn, now);
                retransmissions[0]++;
                if (random.nextDouble() >= lossRate)
                {
                    receiver.onPacket(0, psn);
                    delivered[handle] = true;
                }
                else
                {
                    losses[0]++;
                }
            }
            for (int i = 0; i < 64 && next < packets && !sender.isFull(); i++, next++)
            {
                final int psn = sender.send(next, now);
                if (random.nextDouble() >= lossRate)
                {
                    receiver.onPacket(0, psn);
                    delivered[next] = true;
                }
                else
                {
                    losses[0]++;
                }
            }
            now += 10_000;
            receiver.writeTo(0, ack, 0);
            final int newlyAcked = sender.onAck(ack, 0, now, engine);
            if (retransmitQueue.isEmpty() && newlyAcked == 0 && sender.outstanding() > 0)
            {
                // Nothing above the hole reveals it (tail loss, or a lost retransmission with the window
                // full): the probe/RTO path (S6.7, S6.8) resends the oldest.
                retransmitQueue.add((int)sender.oldestHandle());
            }
        }
        assertEquals(0, sender.outstanding());
        for (int i = 0; i < packets; i++)
        {
            assertTrue(delivered[i], "packet " + i);
        }
        assertEquals(losses[0], retransmissions[0], "retransmitted / lost = 1.0 (S6.9)");
    }
}
