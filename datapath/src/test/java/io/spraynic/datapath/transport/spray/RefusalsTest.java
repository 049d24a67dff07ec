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
}
