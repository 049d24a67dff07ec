package io.spraynic.datapath.neighbour;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;

final class NeighbourCacheTest
{
    private record Key(long high, long low)
    {
    }

    @Test
    void shouldFindEveryEntryAfterAnyMixOfCreatesAndRemovesAsAMapWould()
    {
        final NeighbourCache cache = new NeighbourCache(64);
        final Map<Key, Integer> model = new HashMap<>();
        final List<Key> keys = new ArrayList<>();
        final SplittableRandom random = new SplittableRandom(4291);
        for (int i = 0; i < 200; i++)
        {
            // few distinct high halves and low halves that collide in their low bits: long probe runs
            keys.add(new Key(random.nextInt(3) * 0xFD00_0000_0000_0000L, (long)random.nextInt(1 << 10) << 40));
        }
        for (int step = 0; step < 20_000; step++)
        {
            final Key key = keys.get(random.nextInt(keys.size()));
            final int slot = cache.slot(key.high(), key.low());
            assertEquals(model.getOrDefault(key, NeighbourCache.NONE), slot, "step " + step);
            if (slot == NeighbourCache.NONE && cache.size() < cache.capacity())
            {
                final int created = cache.create(key.high(), key.low(), NeighbourCache.INCOMPLETE, step);
                model.put(key, created);
                assertEquals(key.low(), cache.addressLow(created));
            }
            else if (slot != NeighbourCache.NONE)
            {
                cache.remove(slot);
                model.remove(key);
            }
            assertEquals(model.size(), cache.size());
        }
        for (final Key key : keys)
        {
            assertEquals(model.getOrDefault(key, NeighbourCache.NONE), cache.slot(key.high(), key.low()));
        }
    }

    @Test
    void shouldTellIpv4AndIpv6AddressesThatShareTheirLast32BitsApart()
    {
        final NeighbourCache cache = new NeighbourCache(4);
        final int mapped = cache.create(0, 0x0000_FFFF_0A00_0001L, NeighbourCache.INCOMPLETE, 0);
        final int compatible = cache.create(0, 0x0A00_0001L, NeighbourCache.INCOMPLETE, 0);
        assertEquals(mapped, cache.slot(0, 0x0000_FFFF_0A00_0001L));
        assertEquals(compatible, cache.slot(0, 0x0A00_0001L));
        assertEquals(NeighbourCache.NONE, cache.slot(1, 0x0A00_0001L));
    }
}
