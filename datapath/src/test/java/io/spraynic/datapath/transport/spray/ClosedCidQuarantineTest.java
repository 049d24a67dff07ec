package io.spraynic.datapath.transport.spray;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * docs/PROTOCOL.md S9.2: a closed CID is held for 2 x connectionTimeout.
 */
class ClosedCidQuarantineTest
{
    @Test
    void shouldHoldAClosedCidForItsTimeThenFreeIt()
    {
        final ClosedCidQuarantine q = new ClosedCidQuarantine(1_000);
        assertEquals(0, q.heldFor(7, 0), "never closed");
        q.add(7, 100);
        assertEquals(1_000, q.heldFor(7, 100));
        assertEquals(1, q.heldFor(7, 1_099));
        assertEquals(0, q.heldFor(8, 500), "another CID");
        assertEquals(0, q.heldFor(7, 1_100), "free again");
        assertEquals(0, q.size(), "expired entries are dropped");
    }

    @Test
    void shouldKeepTheKeysOfTheLatestCloseAcrossGrowthUntilExpiryS123()
    {
        final ClosedCidQuarantine q = new ClosedCidQuarantine(10_000);
        for (int i = 0; i < 40; i++)
        {
            q.add(i, i, 1000 + i, i * 4L, i * 4L + 1, i * 4L + 2, i * 4L + 3);
        }
        q.add(5, 50, 77, 10, 11, 12, 13);
        final int entry = q.find(5, 60);
        assertEquals(77, q.remoteCid(entry), "the latest connection closed with the CID");
        assertEquals(10, q.key(entry, 0));
        assertEquals(13, q.key(entry, 3));
        final int other = q.find(33, 60);
        assertEquals(1033, q.remoteCid(other));
        assertEquals(33 * 4L + 2, q.key(other, 2));
        assertEquals(-1, q.find(99, 60), "never closed");
        assertEquals(-1, q.find(33, 10_033), "expired: its keys are forgotten");
    }

    @Test
    void shouldCountFromTheLatestCloseOfACid()
    {
        final ClosedCidQuarantine q = new ClosedCidQuarantine(1_000);
        q.add(7, 0);
        q.add(7, 600);
        assertEquals(600, q.heldFor(7, 1_000));
    }

    @Test
    void shouldGrowBeyondItsFirstCapacityAndKeepOrder()
    {
        final ClosedCidQuarantine q = new ClosedCidQuarantine(10_000);
        for (int i = 0; i < 100; i++)
        {
            q.add(i, i * 10L);
        }
        assertEquals(100, q.size());
        for (int i = 0; i < 100; i++)
        {
            assertEquals(10_000 - (1_000 - i * 10L), q.heldFor(i, 1_000), "CID " + i);
        }
        assertEquals(0, q.heldFor(0, 10_000));
        assertEquals(99, q.size(), "the oldest expired first");
    }

    @Test
    void shouldRefuseANegativeHold()
    {
        assertThrows(IllegalArgumentException.class, () -> new ClosedCidQuarantine(-1));
    }
}
