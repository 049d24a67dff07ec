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

    /**
     * After churn the quarantine holds every close of the hold time, and a CLOSE for a CID no connection has is looked
     * up in it before any tag is checked, from any sender: before, each lookup scanned every entry (10^5 after churn),
     * so 10^6 such packets took 10^11 steps; through the map they take a moment. The bound is 1,000 times what the
     * map needs: a guard against the scan coming back, not a measurement.
     */
    @Test
    @org.junit.jupiter.api.Timeout(20)
    void shouldFindACidWithoutScanningTheEntriesAfterChurn()
    {
        final ClosedCidQuarantine quarantine = new ClosedCidQuarantine(1_000_000);
        final int churn = 100_000;
        for (int i = 0; i < churn; i++)
        {
            quarantine.add(0x1000 + i, i, 7, i, i, i, i);
        }
        assertEquals(churn, quarantine.size());
        int found = 0;
        for (int i = 0; i < 1_000_000; i++)
        {
            found += quarantine.find(0x4000_0000 + i, churn) >= 0 ? 1 : 0; // CIDs nobody closed
        }
        assertEquals(0, found);
        final int entry = quarantine.find(0x1000 + 4242, churn);
        assertEquals(4242, quarantine.key(entry, 0), "a closed CID's latest entry, with its keys");
        // expiry frees a CID's entry only when it is its latest
        quarantine.add(0x1000, churn, 9, 1, 1, 1, 1);
        assertEquals(9, quarantine.remoteCid(quarantine.find(0x1000, 1_000_000 + 1)), "the older entry expired");
        assertEquals(-1, quarantine.find(0x1001, 1_000_000 + 1));
        assertEquals(-1, quarantine.find(0x1000, churn + 1_000_000), "and then the latest");
    }

    @Test
    void shouldRefuseANegativeHold()
    {
        assertThrows(IllegalArgumentException.class, () -> new ClosedCidQuarantine(-1));
    }
}
