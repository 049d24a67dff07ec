package io.spraynic.datapath.transport.spray;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/PROTOCOL.md S6.4, S6.8, S7.2-S7.6: the outbound paths' scheduling, repathing, failure and restore.
 */
@Timeout(10)
class PathSchedulerTest
{
    private static PathScheduler scheduler(final int paths)
    {
        return new PathScheduler(paths, new SprayConfig(), new SplittableRandom(7), 1000, 50_000);
    }

    @Test
    void shouldAnswerTheWindowRateOfTheCurrentWindowsRttsAndLivePathsS84()
    {
        // the rate is kept between changes of its inputs: after every change of any of them it must be the sum
        // computed afresh, bit for bit, and asking twice must not change it
        final PathScheduler scheduler = scheduler(4);
        final SplittableRandom random = new SplittableRandom(84);
        long now = 1_000_000;
        int changed = 0;
        for (int step = 0; step < 20_000; step++)
        {
            final int path = random.nextInt(4);
            now += random.nextInt(1, 50_000);
            switch (random.nextInt(7))
            {
                case 0 -> scheduler.onRttSample(path, random.nextLong(1_000, 5_000_000));
                case 1 -> scheduler.repath(path);
                case 2 -> scheduler.congestionWindows.onAck(path, random.nextInt(1, 40), random.nextInt(3) == 0 ?
                    random.nextInt(1, 5) : 0, now, scheduler.srttNanos(path));
                case 3 -> scheduler.fail(path, now);
                case 4 -> scheduler.restore(path, now);
                case 5 -> scheduler.refreshSiblingEstimates();
                default ->
                {
                    // no input changes: the kept rate is the answer
                }
            }
            final int mtu = random.nextInt(8) == 0 ? 4096 : 1024;
            final double before = scheduler.windowRate(mtu);
            double expected = 0;
            for (int p = 0; p < 4; p++)
            {
                if (scheduler.isActive(p))
                {
                    expected += (double)scheduler.congestionWindows.window(p) * mtu /
                        Math.max(1, scheduler.rtt.srttNanos(p, scheduler.siblingSrtt()));
                }
            }
            assertEquals(expected, scheduler.windowRate(mtu), "step " + step);
            assertEquals(expected, before, "step " + step);
            changed += before != scheduler.windowRate(mtu == 1024 ? 4096 : 1024) ? 1 : 0;
        }
        assertTrue(changed > 10_000, "the MTU is an input too: " + changed);
    }

    @Test
    void shouldSpreadPacketsByFreeWindowS72()
    {
        final PathScheduler scheduler = scheduler(3);
        final int[] picked = new int[3];
        for (int i = 0; i < 30; i++)
        {
            final int path = scheduler.pick();
            picked[path]++;
            scheduler.sendWindows[path].send(i, 0); // takes window space: the weights change
        }
        assertEquals(10, picked[0]);
        assertEquals(10, picked[1]);
        assertEquals(10, picked[2]);
        final int[] again = new int[3];
        for (int i = 0; i < 3 * 16 - 30; i++) // the initial window is 16 packets per path
        {
            again[scheduler.pick()]++;
            scheduler.sendWindows[i % 3].send(i, 0);
        }
        assertEquals(-1, scheduler.pick(), "every window full");
    }

    @Test
    void shouldCountTimeoutsInARowUntilAnAckOrARestoreEndsThem()
    {
        final PathScheduler scheduler = scheduler(2);
        assertFalse(scheduler.timedOutSinceAck(0));
        assertEquals(1, scheduler.onTimeout(0, 0));
        assertEquals(2, scheduler.onTimeout(0, 0));
        assertTrue(scheduler.timedOutSinceAck(0));
        assertFalse(scheduler.timedOutSinceAck(1), "per path");
        scheduler.onAckTaken(0, 1, 500);
        assertFalse(scheduler.timedOutSinceAck(0), "an ACK ends them");
        assertEquals(1, scheduler.onTimeout(0, 0));
        scheduler.fail(0, 600);
        scheduler.restore(0, 700);
        assertFalse(scheduler.timedOutSinceAck(0), "so does a restore");
    }

    @Test
    void shouldSkipFailedPathsAndPathsThatTimedOutWhileAnotherAnswersS74()
    {
        final PathScheduler scheduler = scheduler(3);
        scheduler.fail(0, 100);
        scheduler.onTimeout(1, 0);
        for (int i = 0; i < 10; i++)
        {
            assertEquals(2, scheduler.pick());
        }
        scheduler.onTimeout(2, 0);
        assertNotEquals(0, scheduler.pick(), "all live paths timed out: any live one, never a failed one");
        assertNotEquals(-1, scheduler.pick());
    }

    @Test
    void shouldTellWhenEveryPathStayedFailedAndForgetItOnRestoreS76()
    {
        final PathScheduler scheduler = scheduler(2);
        scheduler.fail(0, 100);
        assertFalse(scheduler.allFailedFor(10, 1_000));
        assertEquals(100 + new SprayConfig().probeIntervalNanos, scheduler.times.nextResyncAt[0]);
        scheduler.fail(1, 200);
        assertFalse(scheduler.allFailedFor(1_000, 1_199));
        assertTrue(scheduler.allFailedFor(1_000, 1_200));
        assertEquals(1, scheduler.controlPath(1), "no live path: its own");
        scheduler.restore(0, 300);
        assertFalse(scheduler.allFailedFor(1_000, 10_000));
        assertEquals(SprayConnection.ACTIVE, scheduler.state(0));
        assertEquals(0, scheduler.controlPath(1), "control packets go back on a live path (S6.4)");
        assertEquals(0, scheduler.controlPath(0));
    }

    @Test
    void shouldJudgeAPathLossyOnlyAgainstMostOthersS73()
    {
        final PathScheduler scheduler = scheduler(4);
        for (int i = 0; i < 40; i++)
        {
            for (int path = 0; path < 4; path++)
            {
                scheduler.countSent(path);
            }
        }
        for (int i = 0; i < 4; i++)
        {
            scheduler.countLost(3); // 10 %, above the 5 % bar
        }
        assertTrue(scheduler.isLossy(3));
        assertFalse(scheduler.isLossy(0));
        for (int path = 0; path < 3; path++)
        {
            scheduler.countLost(path);
            scheduler.countLost(path); // 5 % each: the median is no longer under half the bar
        }
        assertFalse(scheduler.isLossy(3), "a fabric losing everywhere is not one bad path");
        final int before = scheduler.sourcePort(3);
        scheduler.repath(3);
        assertNotEquals(before, scheduler.sourcePort(3));
        assertTrue(scheduler.sourcePort(3) >= 49152 && scheduler.sourcePort(3) <= 65535);
        assertFalse(scheduler.isLossy(3), "its samples start over");
    }

    @Test
    void shouldEndASampleEvery256PacketsAndRepathASlowPathS73()
    {
        final PathScheduler scheduler = scheduler(3);
        for (int path = 0; path < 3; path++)
        {
            scheduler.rtt.onSample(path, path == 2 ? 400_000 : 10_000);
        }
        int full = 0;
        for (int i = 0; i < PathSendWindow.CAPACITY; i++)
        {
            full += scheduler.countSent(2) ? 1 : 0;
        }
        assertEquals(1, full);
        assertTrue(scheduler.endLossSample(2), "40 x the median RTT");
        assertFalse(scheduler.endLossSample(0));
    }

    @Test
    void shouldTimeAPathWithoutSamplesByItsSlowestLiveSiblingS68()
    {
        final PathScheduler scheduler = scheduler(3);
        scheduler.rtt.onSample(0, 20_000);
        scheduler.rtt.onSample(1, 90_000);
        scheduler.fail(1, 0);
        scheduler.refreshSiblingEstimates();
        assertEquals(20_000, scheduler.siblingSrtt(), "a failed path's estimate is not used");
        assertEquals(20_000, scheduler.srttNanos(2));
        assertTrue(scheduler.rtoNanos(2) >= new SprayConfig().rtoMinNanos);
        assertTrue(scheduler.ackExpectedWithinNanos(2) > 20_000);
    }

    @Test
    void shouldTakeEachAckOnceAndKnowWhoAnsweredS741()
    {
        final PathScheduler scheduler = scheduler(2);
        assertFalse(scheduler.isStaleAck(0, 5));
        scheduler.onTimeout(0, 0);
        scheduler.onTimeout(0, 0);
        scheduler.onAckTaken(0, 5, 1_000);
        assertEquals(0, scheduler.consecutiveTimeouts(0));
        assertTrue(scheduler.isStaleAck(0, 5));
        assertTrue(scheduler.isStaleAck(0, 4));
        assertFalse(scheduler.isStaleAck(0, 6));
        assertFalse(scheduler.isStaleAck(1, 5), "per path");
        assertTrue(scheduler.othersAcknowledgedSince(1, 1_000), "an ACK of the loop that sent: the sibling answers");
        assertFalse(scheduler.othersAcknowledgedSince(1, 1_001));
        assertFalse(scheduler.othersAcknowledgedSince(0, 0), "not itself");
        assertTrue(scheduler.nothingOutstanding());
        scheduler.sendWindows[1].send(1L, 0);
        assertFalse(scheduler.nothingOutstanding());
    }

    @Test
    void shouldRotateADataPortOnlyOnceItsBudgetIsSpentAndNothingIsInFlightS77()
    {
        final PathScheduler scheduler =
            new PathScheduler(1, new SprayConfig().portRotation(16, 16).window(64, 256), new SplittableRandom(7), 1000, 50_000);
        final int first = scheduler.sourcePort(0);
        for (int i = 0; i < 16; i++)
        {
            assertEquals(0, scheduler.pick());
            assertEquals(i == 15, scheduler.endsPortRun(0), "the budget's last packet asks for an ACK: " + i);
            scheduler.sendWindows[0].send(i, 0);
        }
        assertEquals(first, scheduler.sourcePort(0));
        assertEquals(0, scheduler.pick(), "the only path takes data while draining, on its old port");
        scheduler.sendWindows[0].send(16, 0);
        assertEquals(first, scheduler.sourcePort(0), "S6.2: not while its packets are in flight on the old route");
        scheduler.sendWindows[0].drain(handle -> { }); // everything acknowledged
        assertEquals(0, scheduler.pick());
        final int second = scheduler.sourcePort(0);
        assertNotEquals(first, second);
        assertTrue(second >= 49152 && second <= 65535);
        assertFalse(scheduler.endsPortRun(0));
    }

    @Test
    void shouldSendOnOtherPathsWhileADuePathDrainsS77()
    {
        final PathScheduler scheduler =
            new PathScheduler(2, new SprayConfig().portRotation(16, 16), new SplittableRandom(7), 1000, 50_000);
        int sentOnZero = 0;
        while (sentOnZero < 16)
        {
            final int path = scheduler.pick();
            sentOnZero += path == 0 ? 1 : 0;
            scheduler.sendWindows[path].send(0, 0);
            if (path == 1)
            {
                scheduler.sendWindows[1].drain(handle -> { }); // path 1 is acknowledged at once
            }
        }
        final int port = scheduler.sourcePort(0);
        for (int i = 0; i < 40; i++)
        {
            assertEquals(1, scheduler.pick(), "path 0 is due with packets in flight: " + i);
            scheduler.sendWindows[1].send(0, 0);
            scheduler.sendWindows[1].drain(handle -> { });
        }
        scheduler.sendWindows[0].drain(handle -> { });
        int picked = -1;
        while (picked != 0)
        {
            picked = scheduler.pick();
        }
        assertNotEquals(port, scheduler.sourcePort(0), "drained: path 0 takes data again, on a new port");
    }

    @Test
    void shouldKeepControlPortsUntilThePathChangesRouteForCauseS77()
    {
        final PathScheduler scheduler =
            new PathScheduler(1, new SprayConfig().portRotation(16, 16).window(64, 256), new SplittableRandom(7), 1000,
                50_000);
        final int first = scheduler.sourcePort(0);
        for (int i = 0; i < 100; i++)
        {
            scheduler.pick();
            scheduler.sendWindows[0].drain(handle -> { }); // drained each time: rotates every 16
        }
        assertNotEquals(first, scheduler.sourcePort(0));
        assertEquals(first, scheduler.controlPort(0), "ACKs stay on their route: it is part of the peer's RTT");
        scheduler.repath(0);
        assertEquals(scheduler.sourcePort(0), scheduler.controlPort(0), "S7.3: a bad route is left by both");
        scheduler.fail(0, 0);
        scheduler.sourcePort(0, 60_000); // S7.5: the connection probes on a new port
        scheduler.restore(0, 1);
        assertEquals(60_000, scheduler.controlPort(0));
    }

    @Test
    void shouldNeverRotateWhenRotationIsOff()
    {
        final PathScheduler scheduler =
            new PathScheduler(1, new SprayConfig().portRotation(0, 0), new SplittableRandom(7), 1000, 50_000);
        final int port = scheduler.sourcePort(0);
        for (int i = 0; i < 1_000; i++)
        {
            assertEquals(0, scheduler.pick());
            assertFalse(scheduler.endsPortRun(0));
            assertEquals(port, scheduler.controlPort(0));
        }
        assertEquals(port, scheduler.sourcePort(0));
    }

    @Test
    void shouldRefuseAnInvertedOrNegativeRotation()
    {
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
            () -> new SprayConfig().portRotation(32, 16));
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
            () -> new SprayConfig().portRotation(-1, 16));
    }

    @Test
    void shouldLeaveTheLateMarginOutOfTheRtoOfAPathSilentWhileASiblingAnswersLaterPacketsS681()
    {
        final PathScheduler scheduler = new PathScheduler(3, new SprayConfig().lateMarginMaxNanos(10_000_000),
            new SplittableRandom(7), 1000, 50_000);
        for (int path = 0; path < 3; path++)
        {
            scheduler.rtt.onSample(path, 20_000);
        }
        scheduler.refreshSiblingEstimates();
        scheduler.sendWindows[0].send(1, 1_000_000);
        final long plain = scheduler.rtoNanos(0);
        scheduler.onSpuriousTimeout(0, 5_000_000);
        final long margin = scheduler.rtt.lateMarginNanos();
        assertTrue(margin > 0);
        assertEquals(plain + margin, scheduler.rtoNanos(1), "one margin for the connection's paths");
        assertEquals(plain + margin, scheduler.rtoNanos(0), "nobody answered: the margin applies");

        final long due = 1_000_000 + scheduler.ackExpectedWithinNanos(0);
        scheduler.answered(1, due);
        assertEquals(plain + margin, scheduler.rtoNanos(0), "a packet sent when path 0's ACK was due: not later");
        scheduler.answered(2, due + 1);
        assertEquals(plain, scheduler.rtoNanos(0), "path 2 answered a packet sent after it: path 0 is silent alone");
        scheduler.fail(2, 0);
        assertEquals(plain + margin, scheduler.rtoNanos(0), "only live siblings count");

        scheduler.endLossSample(0);
        scheduler.endLossSample(1);
        assertEquals(margin, scheduler.rtt.lateMarginNanos(), "two of three paths' samples: not yet");
        scheduler.endLossSample(0);
        assertEquals(margin - margin / 4, scheduler.rtt.lateMarginNanos(), "P samples: a quarter less");
        for (int round = 0; round < 300; round++)
        {
            scheduler.endLossSample(round % 3);
        }
        assertEquals(0, scheduler.rtt.lateMarginNanos(), "clean sample rounds narrow it away");
    }

    /**
     * Issue 13: an idle connection's send windows are parked: each path keeps only its next PSN, every path names
     * the shared empty window, an ACK fits a parked path only at that PSN; lent windows restart there.
     */
    @Test
    void shouldParkEachPathAtItsNextPsnAndRestartLentWindowsThere()
    {
        final SprayConfig config = new SprayConfig();
        final PathSendWindow idle = new PathSendWindow(0, null);
        final PathLentTimes idleTimes = new PathLentTimes(2);
        final PathSendWindow[] idleWindows = PathScheduler.idleWindows(idle, 2);
        final PathScheduler scheduler = new PathScheduler(2, config, new SplittableRandom(7), 1000, 50_000,
            idleWindows, idleTimes, new PathScheduler.Shared(config, 2));
        assertTrue(scheduler.isParked(0));
        assertEquals(1000, scheduler.nextPsn(0));
        assertEquals(PathScheduler.initialPsn(1000, 1), scheduler.nextPsn(1));

        final PathSendWindow[] lent = {new PathSendWindow(77), new PathSendWindow(88)};
        final PathLentTimes times = new PathLentTimes(2);
        scheduler.unparkWindows(lent, times);
        assertFalse(scheduler.isParked(0));
        assertEquals(1000, lent[0].nextPsn(), "a lent window restarts at the path's parked PSN");
        assertEquals(PathScheduler.initialPsn(1000, 1), lent[1].nextPsn());
        assertSame(times, scheduler.times);
        assertSame(lent, scheduler.sendWindows, "the windows lent in their array");
        lent[0].send(5, 10);
        lent[0].send(6, 11);
        final IllegalStateException busy =
            assertThrows(IllegalStateException.class, () -> scheduler.parkWindows(idleWindows, idleTimes));
        assertTrue(busy.getMessage().contains("outstanding"), busy.getMessage());

        lent[0].reset(lent[0].nextPsn()); // (as if acknowledged) empty again
        scheduler.parkWindows(idleWindows, idleTimes);
        assertTrue(scheduler.isParked(0));
        assertEquals(idle, scheduler.sendWindows[0]);
        assertSame(idleWindows, scheduler.sendWindows, "the lent array went back with the windows");
        assertSame(idleTimes, scheduler.times);
        assertEquals(1002, scheduler.nextPsn(0), "the PSN after the two sent");
        assertEquals(0, scheduler.onAckOfParked(0, 1002));
        assertEquals(-1, scheduler.onAckOfParked(0, 1001), "below the next PSN: stale");
        assertEquals(-1, scheduler.onAckOfParked(0, 1003), "above it: acknowledges what was never sent");
        assertEquals(0, idle.nextPsn(), "the shared window is never written");

        final PathSendWindow[] again = {new PathSendWindow(0), new PathSendWindow(0)};
        scheduler.unparkWindows(again, times);
        assertEquals(1002, again[0].send(7, 12), "the next packet takes the PSN after the idle period");
    }
}
