package io.spraynic.datapath.transport.spray;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/PROTOCOL.md S9.3: refusal numbers made here, and the peer's learned here, out of order and repeated.
 */
@Timeout(10)
class RefusalsTest
{
    @Test
    void shouldNumberOwnRefusalsFromOne()
    {
        final Refusals refusals = new Refusals();
        assertEquals(0, refusals.made());
        assertEquals(1, refusals.next());
        assertEquals(2, refusals.next());
        assertEquals(2, refusals.made());
    }

    @Test
    void shouldHoldWhileAnyRefusalOfThePeerIsUnknown()
    {
        final Refusals refusals = new Refusals();
        assertFalse(refusals.anyUnlearned());
        refusals.onPeerCount(2); // a SACKH says the peer made two
        assertTrue(refusals.anyUnlearned());
        assertTrue(refusals.learn(2), "learned out of order");
        assertTrue(refusals.anyUnlearned(), "refusal 1 still unknown");
        assertFalse(refusals.learn(2), "a repeated NACK is not fresh");
        assertTrue(refusals.learn(1));
        assertFalse(refusals.anyUnlearned());
        assertFalse(refusals.learn(1), "nor one already passed");
        refusals.onPeerCount(1); // an older, reordered SACKH does not lower the count
        assertFalse(refusals.anyUnlearned());
        refusals.onPeerCount(3);
        assertTrue(refusals.anyUnlearned());
    }

    @Test
    void shouldTakeARefusalTooFarAheadAsFreshWithoutRecordingIt()
    {
        final Refusals refusals = new Refusals();
        refusals.onPeerCount(100);
        assertTrue(refusals.learn(100), "65 or more ahead: fresh, not recorded");
        assertTrue(refusals.learn(100), "so its repeat is fresh again");
        for (int refusal = 1; refusal <= 99; refusal++)
        {
            assertTrue(refusals.learn(refusal), "refusal " + refusal);
        }
        assertTrue(refusals.anyUnlearned(), "100 itself was never recorded");
        assertTrue(refusals.learn(100));
        assertFalse(refusals.anyUnlearned());
    }

    @Test
    void shouldCountAcrossTheWrap()
    {
        final Refusals refusals = new Refusals();
        for (int i = 1; i <= 64; i++)
        {
            refusals.learn(i);
        }
        refusals.onPeerCount(Integer.MAX_VALUE);
        refusals.onPeerCount(Integer.MIN_VALUE); // one more, in serial arithmetic
        assertTrue(refusals.anyUnlearned());
        refusals.onPeerCount(Integer.MAX_VALUE);
        assertTrue(refusals.anyUnlearned(), "the count never goes back");
    }

    @Test
    void shouldNumberAndKeepRefusedReadResponsesForQueriesS932()
    {
        final Refusals refusals = new Refusals();
        assertEquals(1, refusals.next(), "an ordinary refusal");
        assertEquals(2, refusals.refuseLate(3, 70, 1_000, 500));
        assertEquals(2, refusals.made(), "numbered with the others, so every SACKH counts it");
        assertEquals(2, refusals.lateRefusal(3, 70));
        assertEquals(0, refusals.lateRefusal(3, 71), "another READ of the stream was not refused");
        assertEquals(0, refusals.lateRefusal(2, 70));
        assertEquals(1, refusals.lateCount());
        assertEquals(3, refusals.lateStream(0));
        assertEquals(70, refusals.lateMsn(0));
        assertEquals(2, refusals.lateNumber(0));
    }

    @Test
    void shouldKeepABoundedNumberOfRefusedReadResponsesAndForgetOnlyExpiredOnesS932()
    {
        final Refusals refusals = new Refusals();
        for (int msn = 0; msn < Refusals.LATE_CAPACITY; msn++)
        {
            assertEquals(msn + 1, refusals.refuseLate(0, msn, 1_000 + msn, 500));
        }
        assertEquals(0, refusals.refuseLate(0, 99, 1_400, 500), "full of refusals still to be asked about");
        assertEquals(Refusals.LATE_CAPACITY, refusals.made(), "none numbered for it");
        assertEquals(Refusals.LATE_CAPACITY + 1, refusals.refuseLate(0, 99, 1_500, 500), "the oldest expired");
        assertEquals(0, refusals.lateRefusal(0, 0), "and was forgotten");
        assertEquals(Refusals.LATE_CAPACITY + 1, refusals.lateRefusal(0, 99));
        assertEquals(2, refusals.lateRefusal(0, 1), "the others are kept");
        assertEquals(Refusals.LATE_CAPACITY, refusals.lateCount());
    }
}
