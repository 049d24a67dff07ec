package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.Psn;
import io.spraynic.datapath.transport.TransportCounters;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.SplittableRandom;

import static io.spraynic.datapath.transport.spray.AckScheduler.ACCEPT;
import static io.spraynic.datapath.transport.spray.AckScheduler.ACCEPT_ACK_NOW;
import static io.spraynic.datapath.transport.spray.AckScheduler.DROP;
import static io.spraynic.datapath.transport.spray.AckScheduler.DUPLICATE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/PROTOCOL.md S6.3, S6.4, S7.5, S8.3.2, S12.6: the receiver's inbound path windows and when their ACKs are
 * due, across the PSN space's end.
 */
@Timeout(10)
class AckSchedulerTest
{
    private static final int NEAR_WRAP = Psn.MASK - 5; // path 0's first PSNs wrap after six packets

    private final SprayConfig config = new SprayConfig();
    private final TransportCounters counters = SprayCounters.create();
    private final TransportCounters[] pathCounters = {SprayCounters.create(), SprayCounters.create()};
    private final AckScheduler acks = new AckScheduler(2, NEAR_WRAP, config, counters, pathCounters);

    private static int psn(final int distance)
    {
        return Psn.add(NEAR_WRAP, distance);
    }

    @Test
    void shouldAcknowledgeEveryAckEveryThPacketInOrderAcrossTheWrapAndTheRestAfterTheDelay()
    {
        assertTrue(config.ackEvery > 1 && config.ackEvery < 20, "the test assumes a small ackEvery");
        int distance = 0;
        for (int round = 0; round < 3; round++)
        {
            for (int i = 1; i < config.ackEvery; i++)
            {
                assertEquals(ACCEPT, acks.onData(0, psn(distance++), false, false, 1_000), "packet " + distance);
            }
            assertEquals(ACCEPT_ACK_NOW, acks.onData(0, psn(distance++), false, false, 1_000));
            acks.ackSent(0, 0);
        }
        assertTrue(distance > 6, "crossed the PSN wrap");
        assertEquals(psn(distance), acks.windows().cumulativePsn(0));
        assertFalse(acks.windows().hasGap(0));

        assertEquals(ACCEPT, acks.onData(0, psn(distance), false, false, 5_000));
        assertFalse(acks.isDue(0, 5_000 + config.ackDelayNanos - 1));
        assertTrue(acks.isDue(0, 5_000 + config.ackDelayNanos));
        assertTrue(acks.anyUnacknowledged());
        assertFalse(acks.isDue(1, Long.MAX_VALUE), "nothing arrived on path 1");
        acks.ackSent(0, 0);
        assertFalse(acks.isDue(0, Long.MAX_VALUE));
        assertFalse(acks.anyUnacknowledged());
        assertEquals(3L * config.ackEvery + 1, counters.get(SprayCounters.RX_PACKETS));
        assertEquals(3L * config.ackEvery + 1, pathCounters[0].get(SprayCounters.RX_PACKETS));
        assertEquals(0, pathCounters[1].get(SprayCounters.RX_PACKETS));
    }

    @Test
    void shouldAcknowledgeAtOnceWhenAGapOpensAndWhenItClosesAndWhenAsked()
    {
        assertEquals(ACCEPT, acks.onData(0, psn(0), false, false, 0));
        assertEquals(ACCEPT_ACK_NOW, acks.onData(0, psn(2), false, false, 0), "a gap opens (S6.4)");
        assertEquals(1, counters.get(SprayCounters.SACK_GAPS));
        acks.ackSent(0, 0);
        assertEquals(ACCEPT, acks.onData(0, psn(3), false, false, 0), "the gap stays open: no news");
        assertEquals(ACCEPT_ACK_NOW, acks.onData(0, psn(1), false, false, 0), "the gap closes");
        assertEquals(1, counters.get(SprayCounters.SACK_GAPS));
        assertEquals(psn(4), acks.windows().cumulativePsn(0));
        acks.ackSent(0, 0);
        assertEquals(ACCEPT_ACK_NOW, acks.onData(0, psn(4), false, true, 0), "the sender asked for an ACK");
    }

    @Test
    void shouldAcknowledgeTheFirstCongestionMarkAtOnceAndCountEveryMarkUntilTheAck()
    {
        assertEquals(ACCEPT_ACK_NOW, acks.onData(1, PathScheduler.initialPsn(NEAR_WRAP, 1), true, false, 0));
        assertEquals(1, acks.ceSinceAck(1));
        acks.ackSent(1, 0);
        assertEquals(0, acks.ceSinceAck(1));
        assertEquals(ACCEPT, acks.onData(1, Psn.add(PathScheduler.initialPsn(NEAR_WRAP, 1), 1), false, false, 0));
        assertEquals(ACCEPT, acks.onData(1, Psn.add(PathScheduler.initialPsn(NEAR_WRAP, 1), 2), true, false, 0),
            "a mark after an unacknowledged packet rides on the ACK that is due anyway");
        assertEquals(1, acks.ceSinceAck(1));
        assertEquals(2, counters.get(SprayCounters.ECN_MARKS_RECEIVED));
        assertEquals(2, pathCounters[1].get(SprayCounters.ECN_MARKS_RECEIVED));
    }

    @Test
    void shouldCountDuplicatesPerPathForTheNextAckAndStartAgainAfterItS513()
    {
        final int path1 = PathScheduler.initialPsn(NEAR_WRAP, 1);
        for (int distance = 0; distance < 4; distance++)
        {
            acks.onData(0, psn(distance), false, false, 0);
        }
        assertEquals(0, acks.duplicatesSinceAck(0));
        assertEquals(DUPLICATE, acks.onData(0, psn(1), true, false, 0), "a timeout's copy of a packet that arrived");
        assertEquals(DUPLICATE, acks.onData(0, psn(3), false, false, 0));
        acks.onProbe(0, psn(2), false); // a timeout sends a relocated packet's placeholder again as a probe (S7.4.1)
        assertEquals(3, acks.duplicatesSinceAck(0));
        assertEquals(0, acks.ceSinceAck(0), "the CE count beside it is the new packets' only");
        assertEquals(0, acks.duplicatesSinceAck(1), "per path");
        acks.onData(1, path1, false, false, 0);
        acks.onData(1, path1, false, false, 0);
        assertEquals(1, acks.duplicatesSinceAck(1));

        acks.ackSent(0, 0);
        assertEquals(0, acks.duplicatesSinceAck(0), "since the path's last ACK");
        assertEquals(1, acks.duplicatesSinceAck(1), "another path's ACK resets nothing here");
        acks.onProbe(0, psn(9), true); // a RESYNC restarts the window there: not a duplicate
        acks.onProbe(0, psn(9), false);
        assertEquals(1, acks.duplicatesSinceAck(0), "the probe after it is one");

        for (int i = 0; i < 300; i++)
        {
            acks.onData(1, path1, true, false, 0);
        }
        assertEquals(255, acks.duplicatesSinceAck(1), "saturating at the field's 255");
        assertEquals(0, acks.ceSinceAck(1), "duplicates' marks are not counted");
        assertEquals(1, acks.duplicatesSinceAck(0), "nor do they spill into another path");
    }

    @Test
    void shouldReportDuplicatesAndDropPacketsBeyondTheWindow()
    {
        assertEquals(ACCEPT, acks.onData(0, psn(0), false, false, 0));
        assertEquals(DUPLICATE, acks.onData(0, psn(0), false, false, 0), "below the cumulative PSN");
        assertEquals(ACCEPT_ACK_NOW, acks.onData(0, psn(5), false, false, 0));
        assertEquals(DUPLICATE, acks.onData(0, psn(5), true, false, 0), "above it, already received");
        assertEquals(0, acks.ceSinceAck(0), "a duplicate's mark is not counted again");
        assertEquals(ACCEPT, acks.onData(0, psn(1 + 255), false, false, 0), "the bitmap's last bit");
        assertEquals(DROP, acks.onData(0, psn(1 + 256), false, false, 0), "one beyond it (S6.3)");
        assertTrue(acks.windows().isReceived(0, 255));
        assertEquals(2, counters.get(SprayCounters.DUPLICATES));
        assertEquals(1, counters.get(SprayCounters.OUT_OF_WINDOW));
        assertEquals(6, counters.get(SprayCounters.RX_PACKETS), "every packet that reached the path layer");
    }

    @Test
    void shouldRefuseResyncsThatGoBackOrJumpTooFarOrDisagreeWithTheirOwnPsnS126()
    {
        acks.onData(0, psn(0), false, false, 0);
        acks.onData(0, psn(10), false, false, 0); // frontier psn(11), cumulative psn(1)
        assertFalse(acks.isResyncValid(0, psn(5), psn(5)), "below what arrived: a replay");
        assertFalse(acks.isResyncValid(0, psn(12), psn(13)), "not the probe's own PSN");
        assertFalse(acks.isResyncValid(0, Psn.add(psn(1), Psn.MASK / 2 + 2), Psn.add(psn(1), Psn.MASK / 2 + 2)),
            "more than half the PSN space ahead is behind");
        assertTrue(acks.isResyncValid(0, psn(11), psn(11)));
        assertTrue(acks.isResyncValid(0, psn(5000), psn(5000)));

        acks.onProbe(0, psn(5000), true);
        assertEquals(psn(5001), acks.windows().cumulativePsn(0), "restarted at the probe, which occupies its PSN");
        assertFalse(acks.windows().hasGap(0));
        assertEquals(ACCEPT, acks.onData(0, psn(5001), false, false, 0), "no gap left over from before");
    }

    @Test
    void shouldLetAPlainProbeOccupyItsPsnSoThatALostTailShowsAsAGap()
    {
        acks.onData(0, psn(0), false, false, 0);
        acks.onProbe(0, psn(3), false); // psn(1) and psn(2) were lost
        assertEquals(psn(1), acks.windows().cumulativePsn(0));
        assertTrue(acks.windows().isReceived(0, 2));
        assertEquals(ACCEPT, acks.onData(0, psn(1), false, false, 0), "the gap the probe showed is still open");
        assertEquals(ACCEPT_ACK_NOW, acks.onData(0, psn(2), false, false, 0), "and closes now");
        assertEquals(psn(4), acks.windows().cumulativePsn(0));
    }

    @Test
    void shouldNumberAcksOnePerPathSoThatTheSenderTakesThemInOrderAcrossTheWrap()
    {
        assertEquals(1, acks.ackSent(0, 0));
        assertEquals(2, acks.ackSent(0, 0));
        assertEquals(1, acks.ackSent(1, 0), "each path has its own sequence");

        // the sender compares them serially (S6.5): the number after Integer.MAX_VALUE is newer, not stale
        final PathScheduler sender = new PathScheduler(1, config, new SplittableRandom(1), 0, 50_000);
        sender.onAckTaken(0, Integer.MAX_VALUE, 0);
        assertFalse(sender.isStaleAck(0, Integer.MAX_VALUE + 1));
        assertTrue(sender.isStaleAck(0, Integer.MAX_VALUE));
        assertTrue(sender.isStaleAck(0, Integer.MAX_VALUE - 1));
    }

    @Test
    void shouldTellThePeerAgainOnlyWhenItsShareFellByMoreThanAnEighth()
    {
        assertFalse(acks.hintFellBelowAdvertised(0), "nothing advertised yet");
        acks.ackSent(0, 8000);
        assertFalse(acks.hintFellBelowAdvertised(9000), "a rise is not urgent");
        assertFalse(acks.hintFellBelowAdvertised(7000), "exactly an eighth less");
        assertTrue(acks.hintFellBelowAdvertised(6999));
        acks.ackSent(1, 6999);
        assertFalse(acks.hintFellBelowAdvertised(6999), "the last ACK of any path told it");
    }
}
