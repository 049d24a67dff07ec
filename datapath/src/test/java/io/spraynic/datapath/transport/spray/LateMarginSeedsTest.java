package io.spraynic.datapath.transport.spray;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * S6.8.1's seed kept per peer host ({@link LateMarginSeeds}): read only by the peer that wrote it, a collision costing
 * a seed but never handing over another peer's, aged lazily by quiet spans, keys spread by a secret.
 */
class LateMarginSeedsTest
{
    private static final long QUIET = 10_000_000_000L;

    private static long ipv4(final int address)
    {
        return io.spraynic.pmd.InterfaceAddress.mappedLow(address);
    }

    @Test
    void shouldGiveAPeersSeedToThatPeerOnly()
    {
        final LateMarginSeeds seeds = new LateMarginSeeds(42);
        seeds.tick(1_000, QUIET);
        final int liar = seeds.key(0, ipv4(0x0A00_0007));
        seeds.changed(liar, 2_000_000_000L);
        assertEquals(2_000_000_000L, seeds.seed(liar));
        assertEquals(0, seeds.seed(seeds.key(0, ipv4(0x0A00_0008))), "a peer with none starts from 0");
        assertEquals(0, seeds.seed(seeds.key(1, ipv4(0x0A00_0007))), "an IPv6 peer whose low bits match: another");
    }

    @Test
    void shouldLetACollidingPeerTakeTheSlotOverWithoutEitherSeeingTheOthersSeed()
    {
        final LateMarginSeeds seeds = new LateMarginSeeds(42);
        seeds.tick(1_000, QUIET);
        // two addresses whose keys share a slot: the slots are few, so one is found among a few hundred
        final int first = seeds.key(0, ipv4(0x0A00_0001));
        int address = 0x0A00_0002;
        while (LateMarginSeeds.slot(seeds.key(0, ipv4(address))) != LateMarginSeeds.slot(first))
        {
            address++;
        }
        final int other = seeds.key(0, ipv4(address));
        seeds.changed(first, 2_000_000_000L);
        assertEquals(0, seeds.seed(other), "the other peer does not inherit it");
        seeds.changed(other, 5_000_000L);
        assertEquals(5_000_000L, seeds.seed(other));
        assertEquals(0, seeds.seed(first), "the first peer's seed is gone: its next connection learns again");
    }

    @Test
    void shouldNarrowASeedByAQuarterPerQuietSpanSinceItsLastChange()
    {
        final LateMarginSeeds seeds = new LateMarginSeeds(42);
        final long start = 3_000_000_000L;
        seeds.tick(start, QUIET);
        final int peer = seeds.key(0, ipv4(0x0A00_0009));
        seeds.changed(peer, 1_000_000_000L);
        seeds.tick(start + QUIET - 1, QUIET);
        assertEquals(1_000_000_000L, seeds.seed(peer), "not a whole span yet");
        seeds.tick(start + 3 * QUIET + QUIET / 2, QUIET);
        long aged = 1_000_000_000L;
        for (int span = 0; span < 3; span++)
        {
            aged = RttEstimator.narrowed(aged);
        }
        assertEquals(aged, seeds.seed(peer), "three spans: three quarters off, one after the other");
        seeds.tick(start + 4 * QUIET, QUIET);
        assertEquals(RttEstimator.narrowed(aged), seeds.seed(peer), "the half span read before still counted");
        seeds.tick(start + 1_000 * QUIET, QUIET);
        assertEquals(0, seeds.seed(peer), "long quiet: forgotten");
        seeds.changed(peer, 7_000_000L);
        assertEquals(7_000_000L, seeds.seed(peer), "news again");
    }

    @Test
    void shouldSpreadPeersOverKeysAndSlotsBySecret()
    {
        final LateMarginSeeds one = new LateMarginSeeds(1);
        final LateMarginSeeds two = new LateMarginSeeds(2);
        final Set<Integer> slots = new HashSet<>();
        final Set<Integer> keys = new HashSet<>();
        int moved = 0;
        for (int address = 0; address < 64; address++)
        {
            final long low = ipv4(0x0A00_0000 | address);
            final int key = one.key(0, low);
            keys.add(key);
            slots.add(LateMarginSeeds.slot(key));
            moved += LateMarginSeeds.slot(key) != LateMarginSeeds.slot(two.key(0, low)) ? 1 : 0;
        }
        assertEquals(64, keys.size(), "64 neighbouring addresses, 64 keys");
        assertTrue(slots.size() > 48, "64 neighbouring addresses over " + slots.size() + " slots");
        assertTrue(moved > 56, "another secret puts " + moved + " of 64 in another slot: a peer cannot aim at one");
    }
}
