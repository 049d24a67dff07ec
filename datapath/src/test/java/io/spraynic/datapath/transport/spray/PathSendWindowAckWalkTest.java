package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.Psn;
import io.spraynic.datapath.wire.SelectiveAckHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Issue 13: {@link PathSendWindow#onAck} reads the SACK bitmap by words, visits set bits only and walks for losses
 * only over PSNs not yet judged. Property: over random windows (PSNs wrapping at 2^24), states (sent,
 * retransmitted, relocated, reset, drained) and bitmaps (a real receiver's, with random losses, and random forged
 * ones), it tells the listener exactly what the bit-by-bit walk it replaced ({@link Reference}, kept here verbatim)
 * tells, in the same order, and leaves the window where that one does (S6.5, S6.6, S6.8.1).
 */
class PathSendWindowAckWalkTest
{
    private static final long PLACEHOLDER = -1L;

    private final Arena arena = Arena.ofConfined();
    private final MemorySegment ack = arena.allocate(SelectiveAckHeader.LENGTH);

    @AfterEach
    void close()
    {
        arena.close();
    }

    /**
     * @param retransmitInOnLost true: the listener calls {@code retransmitted} inside {@code onLost} (as
     *                           {@link LossDetector} does); false: after the ACK, before the next one.
     */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void shouldTellWhatTheBitByBitWalkTold(final boolean retransmitInOnLost)
    {
        final SplittableRandom random = new SplittableRandom(13);
        for (int trial = 0; trial < 200; trial++)
        {
            // near the top of the PSN space half the time, so that windows wrap
            final int firstPsn = random.nextBoolean() ? Psn.MASK - random.nextInt(600) : random.nextInt(1 << 24);
            runTrial(random.split(), firstPsn, retransmitInOnLost, trial);
        }
    }

    private void runTrial(final SplittableRandom random, final int firstPsn, final boolean retransmitInOnLost,
        final int trial)
    {
        final PathSendWindow window = new PathSendWindow(firstPsn);
        final Reference reference = new Reference(firstPsn);
        final PathReceiveWindow receiver = new PathReceiveWindow(firstPsn);
        final Recorder actual = new Recorder(window, null, retransmitInOnLost);
        final Recorder expected = new Recorder(null, reference, retransmitInOnLost);
        final double lossRate = new double[] {0.0, 0.02, 0.2, 0.6}[random.nextInt(4)];
        long now = 1_000;
        long handle = 0;
        for (int step = 0; step < 400; step++)
        {
            now += 1 + random.nextInt(1_000);
            final String where = "trial " + trial + " step " + step + " " + window;
            final int action = random.nextInt(100);
            if (action < 50)
            {
                final int burst = 1 + random.nextInt(random.nextBoolean() ? 8 : 80);
                for (int i = 0; i < burst && !window.isFull(); i++)
                {
                    final int psn = window.send(handle, now);
                    assertEquals(psn, reference.send(handle, now), where);
                    handle++;
                    if (random.nextDouble() >= lossRate)
                    {
                        receiver.onPacket(0, psn);
                    }
                }
            }
            else if (action < 85)
            {
                if (random.nextInt(5) == 0)
                {
                    forge(random, window);
                }
                else
                {
                    receiver.writeTo(0, ack, 0);
                }
                final int got = window.onAck(ack, 0, now, actual.at(now));
                final int want = reference.onAck(ack, 0, now, expected.at(now));
                assertEquals(want, got, where);
                assertEquals(expected.events, actual.events, where);
                if (!retransmitInOnLost)
                {
                    actual.retransmitLost(now);
                    expected.retransmitLost(now);
                }
                // what was found lost goes again on the path, and arrives (or not)
                for (final int psn : actual.lostPsns)
                {
                    if (random.nextDouble() >= lossRate)
                    {
                        receiver.onPacket(0, psn);
                    }
                }
                actual.clear();
                expected.clear();
            }
            else if (action < 92 && window.outstanding() > 0)
            {
                // an RTO (S6.8): the oldest goes again at its PSN, maybe after the overdue ones were relocated
                final List<Long> moved = new ArrayList<>();
                final List<Long> movedToo = new ArrayList<>();
                if (random.nextBoolean())
                {
                    final long before = now - random.nextInt(5_000);
                    assertEquals(reference.relocate(PLACEHOLDER, before, movedToo::add),
                        window.relocate(PLACEHOLDER, before, moved::add), where);
                    assertEquals(movedToo, moved, where);
                }
                final int psn = window.basePsn();
                window.retransmitted(psn, now);
                reference.retransmitted(psn, now);
                if (random.nextDouble() >= lossRate)
                {
                    receiver.onPacket(0, psn);
                }
            }
            else if (action < 94)
            {
                // S7.5 RESYNC: both ends restart at the sender's next PSN
                final int next = window.nextPsn();
                window.reset(next);
                reference.reset(next);
                receiver.reset(0, next);
            }
            else if (action < 95)
            {
                final List<Long> moved = new ArrayList<>();
                final List<Long> movedToo = new ArrayList<>();
                assertEquals(reference.drain(movedToo::add), window.drain(moved::add), where);
                assertEquals(movedToo, moved, where);
                receiver.reset(0, window.nextPsn());
            }
            assertEquals(reference.basePsn, window.basePsn(), where);
            assertEquals(reference.nextPsn, window.nextPsn(), where);
        }
    }

    // a hostile or stale ACK: any cumulative PSN near the window, any bits
    private void forge(final SplittableRandom random, final PathSendWindow window)
    {
        final int cumulative = Psn.add(window.basePsn(), random.nextInt(window.outstanding() + 3) - 1);
        SelectiveAckHeader.cumulativePsn(ack, 0, cumulative);
        for (int word = 0; word < 4; word++)
        {
            final long bits = switch (random.nextInt(4))
            {
                case 0 -> 0L;
                case 1 -> -1L;
                case 2 -> random.nextLong() & random.nextLong() & random.nextLong(); // sparse
                default -> random.nextLong();
            };
            SelectiveAckHeader.sackWord(ack, 0, word, bits);
        }
    }

    /** Records what a window tells, and plays the engine: sends a lost packet again, at once or after the ACK. */
    private static final class Recorder implements PathSendWindow.Listener
    {
        final List<String> events = new ArrayList<>();
        final List<Integer> lostPsns = new ArrayList<>();
        private final PathSendWindow window;
        private final Reference reference;
        private final boolean retransmitInOnLost;
        private long now;

        Recorder(final PathSendWindow window, final Reference reference, final boolean retransmitInOnLost)
        {
            this.window = window;
            this.reference = reference;
            this.retransmitInOnLost = retransmitInOnLost;
        }

        Recorder at(final long now)
        {
            this.now = now;
            return this;
        }

        void clear()
        {
            events.clear();
            lostPsns.clear();
        }

        void retransmitLost(final long now)
        {
            for (final int psn : lostPsns)
            {
                retransmit(psn, now);
            }
        }

        private void retransmit(final int psn, final long now)
        {
            if (null != window)
            {
                window.retransmitted(psn, now);
            }
            else
            {
                reference.retransmitted(psn, now);
            }
        }

        public void onAcked(final long handle, final int psn, final long rttNanos)
        {
            events.add("acked " + psn + " " + handle + " " + rttNanos);
        }

        public void onLost(final long handle, final int psn)
        {
            events.add("lost " + psn + " " + handle);
            lostPsns.add(psn);
            if (retransmitInOnLost)
            {
                retransmit(psn, now);
            }
        }

        public void onRelocatedArrived(final int psn, final long rttNanos)
        {
            events.add("relocated arrived " + psn + " " + rttNanos);
        }

        public void onRetransmissionAcked(final long handle, final int psn, final long sinceResendNanos)
        {
            events.add("resend acked " + psn + " " + sinceResendNanos);
        }
    }

    /** {@link PathSendWindow} before issue 13: the SACK walked bit by bit, the loss walk over the whole range. */
    private static final class Reference
    {
        private static final byte FREE = 0;
        private static final byte OUTSTANDING = 1;
        private static final byte RETRANSMITTED = 2;
        private static final byte ACKED = 3;
        private static final byte RELOCATED = 4;
        private static final int CAPACITY = SelectiveAckHeader.SACK_BITS;
        private static final int SLOT_MASK = CAPACITY - 1;

        private final long[] handles = new long[CAPACITY];
        private final long[] sentAtNanos = new long[CAPACITY];
        private final int[] retransmitMarks = new int[CAPACITY];
        private final byte[] states = new byte[CAPACITY];
        private int basePsn;
        private int nextPsn;

        Reference(final int firstPsn)
        {
            reset(firstPsn);
        }

        void reset(final int next)
        {
            basePsn = next & Psn.MASK;
            nextPsn = basePsn;
            java.util.Arrays.fill(states, FREE);
        }

        int outstanding()
        {
            return Psn.diff(nextPsn, basePsn);
        }

        int send(final long handle, final long nowNanos)
        {
            final int psn = nextPsn;
            final int slot = psn & SLOT_MASK;
            handles[slot] = handle;
            sentAtNanos[slot] = nowNanos;
            states[slot] = OUTSTANDING;
            nextPsn = Psn.next(psn);
            return psn;
        }

        void retransmitted(final int psn, final long nowNanos)
        {
            final int slot = psn & SLOT_MASK;
            states[slot] = RETRANSMITTED;
            sentAtNanos[slot] = nowNanos;
            retransmitMarks[slot] = Psn.add(nextPsn, -1);
        }

        int onAck(final MemorySegment segment, final long sackOffset, final long nowNanos,
            final PathSendWindow.Listener listener)
        {
            final int cumulative = SelectiveAckHeader.cumulativePsn(segment, sackOffset);
            final int outstanding = outstanding();
            final int cumulativeDistance = Psn.diff(cumulative, basePsn);
            if (cumulativeDistance < 0 || cumulativeDistance > outstanding)
            {
                return -1;
            }

            int acked = 0;
            int highestAckedDistance = cumulativeDistance - 1;
            for (int d = 0; d < cumulativeDistance; d++)
            {
                acked += acknowledge(Psn.add(basePsn, d), nowNanos, listener);
            }
            final int above = outstanding - cumulativeDistance;
            for (int i = 1; i < above; i++)
            {
                if (SelectiveAckHeader.sackBit(segment, sackOffset, i))
                {
                    acked += acknowledge(Psn.add(cumulative, i), nowNanos, listener);
                    highestAckedDistance = cumulativeDistance + i;
                }
            }

            if (highestAckedDistance > cumulativeDistance)
            {
                final int highestAcked = Psn.add(basePsn, highestAckedDistance);
                for (int d = cumulativeDistance; d < highestAckedDistance; d++)
                {
                    final int psn = Psn.add(basePsn, d);
                    final int slot = psn & SLOT_MASK;
                    if (states[slot] == OUTSTANDING || states[slot] == RELOCATED ||
                        (states[slot] == RETRANSMITTED && Psn.isAfter(highestAcked, retransmitMarks[slot])))
                    {
                        listener.onLost(handles[slot], psn);
                    }
                }
            }

            while (basePsn != nextPsn && states[basePsn & SLOT_MASK] == ACKED)
            {
                states[basePsn & SLOT_MASK] = FREE;
                basePsn = Psn.next(basePsn);
            }
            return acked;
        }

        private int acknowledge(final int psn, final long nowNanos, final PathSendWindow.Listener listener)
        {
            final int slot = psn & SLOT_MASK;
            final byte state = states[slot];
            if (state != OUTSTANDING && state != RETRANSMITTED && state != RELOCATED)
            {
                return 0;
            }
            states[slot] = ACKED;
            final long sinceSent = nowNanos - sentAtNanos[slot];
            if (state == RELOCATED)
            {
                listener.onRelocatedArrived(psn, sinceSent);
            }
            else if (state == RETRANSMITTED)
            {
                listener.onRetransmissionAcked(handles[slot], psn, sinceSent);
            }
            listener.onAcked(handles[slot], psn, state != RETRANSMITTED ? sinceSent : -1);
            return 1;
        }

        int relocate(final long placeholder, final long sentBeforeNanos, final java.util.function.LongConsumer sink)
        {
            int moved = 0;
            for (int psn = basePsn; psn != nextPsn; psn = Psn.next(psn))
            {
                final int slot = psn & SLOT_MASK;
                if ((states[slot] == OUTSTANDING || states[slot] == RETRANSMITTED) && handles[slot] != placeholder &&
                    sentAtNanos[slot] <= sentBeforeNanos)
                {
                    sink.accept(handles[slot]);
                    handles[slot] = placeholder;
                    if (states[slot] == OUTSTANDING)
                    {
                        states[slot] = RELOCATED;
                    }
                    moved++;
                }
            }
            return moved;
        }

        int drain(final java.util.function.LongConsumer sink)
        {
            int moved = 0;
            while (basePsn != nextPsn)
            {
                final int slot = basePsn & SLOT_MASK;
                if (states[slot] == OUTSTANDING || states[slot] == RETRANSMITTED || states[slot] == RELOCATED)
                {
                    sink.accept(handles[slot]);
                    moved++;
                }
                states[slot] = FREE;
                basePsn = Psn.next(basePsn);
            }
            return moved;
        }
    }
}
