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

            public void onRetransmissionAcked(final int psn, final long sinceResendNanos)
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
