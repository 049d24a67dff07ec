package io.spraynic.cli;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PathRecoveryTest
{
    private static final long MS = 1_000_000L;
    private static final int PATHS = 3;

    @Test
    void shouldTimeAPathCutAtTheFailureFromTheCommandToTheReceiversCountOfItsCopies()
    {
        final List<PathRecovery.Sample> samples = new ArrayList<>();
        final List<PathRecovery.Sample> receiver = new ArrayList<>();
        // readings every 2 ms from -10 ms; the command runs from 0 to 4 ms; path 0 hears its last ACK at -2 ms and
        // counts its loss at 26 ms; path 1 answers throughout; path 2 is idle
        for (long t = -10; t <= 60; t += 2)
        {
            final long[][] paths = reading(10 * MS, p -> (p + 1) * MS);
            paths[0][PathRecovery.ACKS] = Math.min(t, -2);
            paths[0][PathRecovery.LOST] = t >= 26 ? 5 : 0;
            paths[0][PathRecovery.TX] = t < 0 ? 100 + t : 100;
            paths[1][PathRecovery.ACKS] = 100 + t;
            samples.add(new PathRecovery.Sample(t * MS, paths, 3 * MS));
            // the receiver, read at odd milliseconds: 2 copies before the failure (another cause), then the 5 copies
            // arrive one by one from 27 ms
            receiver.add(new PathRecovery.Sample((t + 1) * MS, new long[PATHS][PathRecovery.PATH_FIELDS.length], 0,
                2 + Math.clamp((t + 1 - 25) / 2, 0, 5)));
        }
        final PathRecovery.Result result = PathRecovery.analyse(samples, receiver, 0, 4 * MS);
        assertEquals(1, result.cut().size(), result.toString());
        final PathRecovery.Cut cut = result.cut().get(0);
        assertEquals(0, cut.path());
        assertTrue(cut.atFailure());
        assertEquals(0, cut.failedNanos(), "the last ACK less the RTT is before the command: the command's start");
        assertEquals(26 * MS, cut.resentNanos());
        assertEquals(5, cut.lost());
        assertTrue(result.delivered());
        assertEquals(35 * MS, result.deliveredNanos(), "the receiver's first reading with 5 more copies than before");
        assertEquals(35 * MS, cut.recoveryNanos());
        assertEquals(5, result.copies());
        assertEquals(3.5, result.worstRtos(), 1e-9);
        assertEquals((26 - 2) / 10.0, result.worstResendRtos(), 1e-9, "resent after the reading at 24 ms");
        assertEquals(24 * MS, cut.resentAfterNanos());
        assertEquals(35.0 / 7, result.worstBaseRtos(), 1e-9, "without the late margin of 3 ms");
        assertEquals(0, cut.sentAfter(), "nothing sent on it after");
        assertEquals(2 * MS, result.meanInterval());
        assertEquals(2 * MS, result.receiverInterval());
    }

    @Test
    void shouldTimeAResendFromTheReadingBeforeTheOneShowingItWhenTheRecorderReadLate()
    {
        // readings every 2 ms, but none from 24 to 64 ms (the recorder descheduled): path 0, silent from the command,
        // counts its loss in the reading at 64 ms; it was resent after the one at 24 ms, not at 64 less a mean interval
        final List<PathRecovery.Sample> samples = new ArrayList<>();
        for (long t = -10; t <= 100; t += 2)
        {
            if (t > 24 && t < 64)
            {
                continue;
            }
            final long[][] paths = reading(10 * MS, p -> MS);
            paths[0][PathRecovery.ACKS] = Math.min(t, -2);
            paths[0][PathRecovery.LOST] = t >= 64 ? 5 : 0;
            paths[0][PathRecovery.TX] = t < 0 ? 100 + t : 100;
            samples.add(new PathRecovery.Sample(t * MS, paths, 0));
        }
        final PathRecovery.Result result = PathRecovery.analyse(samples, delivered(70), 0, 4 * MS);
        final PathRecovery.Cut cut = result.cut().get(0);
        assertEquals(64 * MS, cut.resentNanos());
        assertEquals(24 * MS, cut.resentAfterNanos());
        assertEquals(2.4, result.worstResendRtos(), 1e-9, "from the failure (0 ms) to the reading at 24 ms: " + result);
        assertTrue(result.toString().contains("resent +24.0 to +64.0 ms after the command began"), result.toString());
        assertEquals(70 * MS, cut.recoveryNanos(), "the copies' delivery is still read as the receiver saw it");
    }

    @Test
    void shouldTimeEachPathToTheCopiesResentUpToItsResendNotToThoseOfPathsCutLater()
    {
        final List<PathRecovery.Sample> samples = new ArrayList<>();
        final List<PathRecovery.Sample> receiver = new ArrayList<>();
        // path 0 silent from the failure, 5 lost at 26 ms; path 2 silent from 80 ms (rotated onto the dead link),
        // 3 lost at 100 ms; the receiver counts 5 copies from 31 ms and 3 more from 105 ms
        for (long t = -10; t <= 140; t += 2)
        {
            final long[][] paths = reading(10 * MS, p -> 4 * MS);
            paths[0][PathRecovery.ACKS] = Math.min(t, -2);
            paths[0][PathRecovery.LOST] = t >= 26 ? 5 : 0;
            paths[2][PathRecovery.ACKS] = Math.min(t, 84);
            paths[2][PathRecovery.TX] = t;
            paths[2][PathRecovery.LOST] = t >= 100 ? 3 : 0;
            samples.add(new PathRecovery.Sample(t * MS, paths, 0));
            receiver.add(new PathRecovery.Sample((t + 1) * MS, new long[PATHS][PathRecovery.PATH_FIELDS.length], 0,
                (t + 1 >= 31 ? 5 : 0) + (t + 1 >= 105 ? 3 : 0)));
        }
        final PathRecovery.Result result = PathRecovery.analyse(samples, receiver, 0, 4 * MS);
        assertEquals(2, result.cut().size(), result.toString());
        assertEquals(31 * MS, result.cut().get(0).recoveryNanos(), "path 0: its 5 copies at 31 ms");
        assertEquals((105 - 80) * MS, result.cut().get(1).recoveryNanos(), "path 2: all 8 at 105 ms");
        assertEquals(105 * MS, result.deliveredNanos());
        assertEquals(8, result.lost());
    }

    @Test
    void shouldSayWhenTheReceiversReadingsDoNotShowTheCopiesDelivered()
    {
        final List<PathRecovery.Sample> samples = new ArrayList<>();
        final List<PathRecovery.Sample> receiver = new ArrayList<>();
        for (long t = -10; t <= 60; t += 2)
        {
            final long[][] paths = new long[PATHS][PathRecovery.PATH_FIELDS.length];
            paths[0][PathRecovery.ACKS] = Math.min(t, -2);
            paths[0][PathRecovery.LOST] = t >= 26 ? 5 : 0;
            paths[0][PathRecovery.RTO] = 10 * MS;
            samples.add(new PathRecovery.Sample(t * MS, paths, 0));
            receiver.add(new PathRecovery.Sample(t * MS, new long[PATHS][PathRecovery.PATH_FIELDS.length], 0,
                t >= 30 ? 4 : 0)); // one copy short
        }
        final PathRecovery.Result result = PathRecovery.analyse(samples, receiver, 0, 4 * MS);
        assertFalse(result.delivered());
        assertEquals(4, result.copies());
        assertEquals(-1, result.cut().get(0).recoveryNanos());
        assertTrue(Double.isNaN(result.worstRtos()));
        assertEquals(2.4, result.worstResendRtos(), 1e-9, "the resend is measured all the same");
        assertTrue(result.toString().contains("did NOT show their delivery (4 copies taken"), result.toString());
        assertFalse(PathRecovery.analyse(samples, List.of(), 0, 4 * MS).delivered(), "no receiver readings");
        // copies of another cause counted before the resend: the delivery is not taken before the resend
        final List<PathRecovery.Sample> early = new ArrayList<>();
        for (long t = -9; t <= 61; t += 2)
        {
            early.add(new PathRecovery.Sample(t * MS, new long[PATHS][PathRecovery.PATH_FIELDS.length], 0,
                t >= 5 ? 5 : 0));
        }
        assertEquals(25 * MS, PathRecovery.analyse(samples, early, 0, 4 * MS).deliveredNanos(),
            "the first reading from the resend's (26 ms) less a reading's interval");
    }

    @Test
    void shouldTimeAPathThatWentSilentLaterFromItsLastAckLessItsRoundTrip()
    {
        final List<PathRecovery.Sample> samples = new ArrayList<>();
        for (long t = -10; t <= 200; t += 2)
        {
            final long[][] paths = reading(20 * MS, p -> 4 * MS);
            paths[2][PathRecovery.ACKS] = Math.min(t, 100);
            paths[2][PathRecovery.LOST] = t >= 140 ? 1 : 0;
            paths[2][PathRecovery.TX] = t;
            samples.add(new PathRecovery.Sample(t * MS, paths, 0));
        }
        final PathRecovery.Result result = PathRecovery.analyse(samples, delivered(144), 0, 4 * MS);
        final PathRecovery.Cut cut = result.cut().get(0);
        assertEquals(2, cut.path());
        assertFalse(cut.atFailure(), "its ACKs went on long after the failure");
        assertEquals(96 * MS, cut.failedNanos());
        assertEquals((144 - 96) * MS, cut.recoveryNanos());
        assertEquals(48.0 / 20, result.worstRtos(), 1e-9);
        assertEquals(60, cut.sentAfter(), "what it sent in the 3 RTOs after its resend");
    }

    @Test
    void shouldTimeAnIdlePathFromTheFirstPacketItSentAfterItsLastAckNotFromThatAck()
    {
        final PathRecovery.Cut cut = PathRecovery.analyse(idlePathOne(t -> 50 * MS, 5 * MS, t -> 0L), delivered(155), 0,
            4 * MS).cut().get(0);
        assertEquals(80 * MS, cut.failedNanos(), "the reading before the first packet after the idle spell: idle for " +
            "longer than its RTO (20 to 80 ms against 50) with no loss counted, nothing its last ACK left was lost");
        assertEquals((155 - 80) * MS, cut.recoveryNanos());
        assertEquals(1.5, cut.rtos(), 1e-9);
    }

    /**
     * CI's fresh-connection run: the server's paths idle from 20 ms while the client writes; one sends its first packet
     * at 149 ms onto the dead link and times out on its initial 6 ms RTO, so the reading at 156 ms shows both its
     * packet and its loss. It went silent after the reading at 154 ms, not at the command (277 RTOs before, read so).
     */
    @Test
    void shouldTimeAnIdlePathWhosePacketAndItsLossShowInOneReadingFromTheReadingBefore()
    {
        final List<PathRecovery.Sample> samples = new ArrayList<>();
        for (long t = -10; t <= 200; t += 2)
        {
            final long[][] paths = reading(6 * MS, p -> MS);
            paths[1][PathRecovery.ACKS] = Math.min(t, 20);
            paths[1][PathRecovery.TX] = Math.min(t, 20) + (t >= 156 ? 1 : 0);
            paths[1][PathRecovery.LOST] = t >= 156 ? 1 : 0;
            paths[1][PathRecovery.TIMEOUTS] = t >= 156 ? 1 : 0;
            samples.add(new PathRecovery.Sample(t * MS, paths, 0));
        }
        final PathRecovery.Result result = PathRecovery.analyse(samples, delivered(160), 0, 4 * MS);
        final PathRecovery.Cut cut = result.cut().get(0);
        assertEquals(154 * MS, cut.failedNanos(), "idle (20 to 154 ms) longer than its RTO: silent from its packet");
        assertEquals(0, result.worstResendRtos(), 1e-9, result.toString());
        assertEquals(1, cut.timeoutsByResend());
        assertTrue(result.toString().contains("(1 lost, 1 timeout(s) of it by then)"), result.toString());
    }

    @Test
    void shouldTakeAPauseShorterThanItsRtoForABusyPathsAndTimeItFromThreeRoundTripsBeforeItsEnd()
    {
        // the same readings with an RTO of 70 ms: the 60 ms pause could hide a packet still to time out
        final PathRecovery.Cut cut = PathRecovery.analyse(idlePathOne(t -> 70 * MS, 5 * MS, t -> 0L), delivered(155), 0,
            4 * MS).cut().get(0);
        assertEquals((80 - 3 * 5) * MS, cut.failedNanos(), "the reading before the first packet after the pause, less " +
            "3 round trips");
        assertEquals((155 - 65) * MS, cut.recoveryNanos());
    }

    /**
     * An idle path without an RTT sample of its own reads its initial RTT's RTO (6 ms) until the siblings that start
     * sending with it are sampled; its timer then runs with theirs (S6.8: 30 ms from 90 ms on): it is judged in that
     * RTO, the one before its resend, and not in one a backoff raised (a timeout before the resend).
     */
    @Test
    void shouldJudgeAPathInTheRtoItsTimerRanWithBeforeItsResendUnlessATimeoutCameBetween()
    {
        for (final boolean backedOff : new boolean[]{false, true})
        {
            final List<PathRecovery.Sample> samples = idlePathOne(
                t -> t < 90 ? 6 * MS : backedOff && t >= 120 ? 60 * MS : 30 * MS, 1 * MS,
                t -> backedOff && t >= 120 ? 1L : 0L);
            final PathRecovery.Cut cut = PathRecovery.analyse(samples, delivered(155), 0, 4 * MS).cut().get(0);
            assertEquals(6 * MS, cut.rtoAtFailureNanos(), "its reading when it went silent (at 80 ms)");
            assertEquals((backedOff ? 6 : 30) * MS, cut.rtoNanos(), backedOff ? "a backoff is no RTO to judge by" :
                "the siblings' RTO it was timed by before its resend");
        }
    }

    /**
     * Readings every 2 ms from -10 to 200 ms: path 1 answered until 20 ms, sent nothing from then until 82 ms (idle,
     * not silent), lost 3 packets at 150 ms; every path's RTO and path 1's timeouts by the millisecond of the reading.
     */
    private static List<PathRecovery.Sample> idlePathOne(final java.util.function.LongUnaryOperator rtoAt,
        final long srtt, final java.util.function.LongUnaryOperator timeoutsAt)
    {
        final List<PathRecovery.Sample> samples = new ArrayList<>();
        for (long t = -10; t <= 200; t += 2)
        {
            final long[][] paths = reading(rtoAt.applyAsLong(t), p -> srtt);
            paths[1][PathRecovery.ACKS] = Math.min(t, 20);
            paths[1][PathRecovery.TX] = t <= 20 ? t : t < 82 ? 20 : t;
            paths[1][PathRecovery.LOST] = t >= 150 ? 3 : 0;
            paths[1][PathRecovery.TIMEOUTS] = timeoutsAt.applyAsLong(t);
            samples.add(new PathRecovery.Sample(t * MS, paths, 0));
        }
        return samples;
    }

    /** A recorder's reading of every path, each with RTO {@code rto} and the srtt {@code srtt} gives it. */
    private static long[][] reading(final long rto, final java.util.function.IntToLongFunction srtt)
    {
        final long[][] paths = new long[PATHS][PathRecovery.PATH_FIELDS.length];
        for (int p = 0; p < PATHS; p++)
        {
            paths[p][PathRecovery.RTO] = rto;
            paths[p][PathRecovery.SRTT] = srtt.applyAsLong(p);
        }
        return paths;
    }

    /** A receiver read every millisecond from -10 ms, whose copies (many) all arrived at {@code atMillis}. */
    private static List<PathRecovery.Sample> delivered(final long atMillis)
    {
        final List<PathRecovery.Sample> receiver = new ArrayList<>();
        for (long t = -10; t <= 200; t++)
        {
            receiver.add(new PathRecovery.Sample(t * MS, new long[PATHS][PathRecovery.PATH_FIELDS.length], 0,
                t >= atMillis ? 1_000 : 0));
        }
        return receiver;
    }

    @Test
    void shouldRefuseReadingsThatDoNotSpanTheFailure()
    {
        final long[][] paths = new long[PATHS][PathRecovery.PATH_FIELDS.length];
        final List<PathRecovery.Sample> after = List.of(new PathRecovery.Sample(5 * MS, paths, 0),
            new PathRecovery.Sample(7 * MS, paths, 0));
        assertThrows(IllegalStateException.class, () -> PathRecovery.analyse(after, after, 0, 4 * MS));
        final List<PathRecovery.Sample> before = List.of(new PathRecovery.Sample(-5 * MS, paths, 0));
        assertThrows(IllegalStateException.class, () -> PathRecovery.analyse(before, before, 0, 4 * MS));
    }

    @Test
    void shouldReadTheBusiestConnectionsPathsFromACountersFilesLabels()
    {
        final Map<String, Long> values = new java.util.HashMap<>();
        for (final String conn : new String[] {"conn 0x1", "conn 0x2"})
        {
            values.put(conn + ": tx_packets", conn.endsWith("2") ? 50L : 10L);
            values.put(conn + ": late_margin_ns", conn.endsWith("2") ? 7L : 1L);
            values.put(conn + ": rx_retransmitted", conn.endsWith("2") ? 9L : 1L);
            for (int p = 0; p < 2; p++)
            {
                for (final String field : PathRecovery.PATH_FIELDS)
                {
                    values.put(conn + ": path " + p + " " + field, conn.endsWith("2") ? 100L + p : 1L);
                }
            }
        }
        final PathRecovery.Sample sample = PathRecovery.sample(42, values, 2);
        assertEquals(7, sample.lateMarginNanos());
        assertEquals(9, sample.rxRetransmitted());
        assertEquals(101, sample.get(1, PathRecovery.RTO));
        assertNull(PathRecovery.sample(42, values, 3), "no path 2 published");
        assertNull(PathRecovery.sample(42, Map.of(), 2));
    }

    @Test
    void shouldKeepToTheConnectionWhosePacketsGrewNotTheOneThatSentMost()
    {
        // the warm-up's connection sent more but is done; the fresh one is sending
        final Map<String, Long> before = Map.of("conn 0x1: tx_packets", 5_000L, "conn 0x2: tx_packets", 100L,
            "conn 0x2: path 0 tx_packets", 50L);
        final Map<String, Long> after = Map.of("conn 0x1: tx_packets", 5_000L, "conn 0x2: tx_packets", 300L,
            "conn 0x2: path 0 tx_packets", 150L);
        assertEquals("conn 0x2", PathRecovery.activeConnection(before, after));
        assertEquals("conn 0x1", PathRecovery.activeConnection(after, after), "none grew: the one that sent most");
        assertEquals("conn 0x1", PathRecovery.activeConnection(Map.of(), after), "a first reading: the busiest");
        assertEquals("conn 0x3", PathRecovery.activeConnection(before, Map.of("conn 0x1: tx_packets", 5_000L,
            "conn 0x3: tx_packets", 400L)), "a connection opened since: from 0");
        assertNull(PathRecovery.activeConnection(Map.of(), Map.of()));
    }
}
