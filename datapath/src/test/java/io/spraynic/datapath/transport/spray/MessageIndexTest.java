package io.spraynic.datapath.transport.spray;

import org.agrona.collections.Long2LongHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The (stream, MSN) index of the send slots against what it replaced (issue 13): a {@code Long2LongHashMap} made as
 * {@code SendSlots.Storage} made it, fed the same random puts, lookups and removes as a sender makes them (each
 * stream's MSNs taken in order, messages completed in any order, at most {@code capacity} held), plus lookups of
 * hostile keys: every answer the same.
 */
@Timeout(30)
class MessageIndexTest
{
    private static final int MISSING = SendSlots.MISSING;

    @Test
    void shouldAnswerAsTheHashMapItReplacesOverRandomTraffic()
    {
        final SplittableRandom random = new SplittableRandom(0x5EED_13L);
        long overflowed = 0;
        for (int trial = 0; trial < 200; trial++)
        {
            final int capacity = 1 + random.nextInt(trial % 4 == 0 ? 8 : 300);
            final int streams = 1 + random.nextInt(trial % 3 == 0 ? 1 : 40);
            final MessageIndex index = new MessageIndex(capacity, MISSING);
            final Long2LongHashMap reference = new Long2LongHashMap(4 * capacity, 0.5f, MISSING);
            final int[] nextMsn = new int[streams];
            for (int stream = 0; stream < streams; stream++)
            {
                nextMsn[stream] = random.nextInt(); // wraps within the run for some streams
            }
            final List<Long> held = new ArrayList<>();
            final int[] freeSlots = new int[capacity];
            int free = capacity;
            for (int slot = 0; slot < capacity; slot++)
            {
                freeSlots[slot] = slot;
            }
            for (int step = 0; step < 3_000; step++)
            {
                final int action = random.nextInt(10);
                if (action < 4 && free > 0)
                {
                    final int stream = random.nextInt(streams);
                    final long key = SendSlots.key(stream, nextMsn[stream]++);
                    final int slot = freeSlots[--free];
                    index.put(key, slot);
                    reference.put(key, slot);
                    held.add(key);
                }
                else if (action < 7 && !held.isEmpty())
                {
                    // completions leave in MSN order per stream, but streams and READs finish in any order
                    final long key = held.remove(random.nextInt(held.size()));
                    freeSlots[free++] = (int)reference.get(key);
                    index.remove(key);
                    reference.remove(key);
                }
                else if (action < 9 && !held.isEmpty())
                {
                    final long key = held.get(random.nextInt(held.size()));
                    assertEquals(reference.get(key), index.get(key), "trial " + trial + " step " + step);
                }
                else
                {
                    // a hostile READ response or NACK: any stream and MSN, near the ones in flight or not
                    final int stream = random.nextInt(streams + 2);
                    final int msn = random.nextBoolean() ? random.nextInt() :
                        nextMsn[Math.min(stream, streams - 1)] - random.nextInt(2 * capacity + 2);
                    final long key = SendSlots.key(stream, msn);
                    assertEquals(reference.get(key), index.get(key), "trial " + trial + " step " + step);
                    index.remove(SendSlots.key(stream, nextMsn[Math.min(stream, streams - 1)] + 1)); // not held
                }
                assertEquals(reference.size(), index.size(), "trial " + trial + " step " + step);
                assertEquals(reference.isEmpty(), index.isEmpty());
            }
            overflowed += index.size() - index.directSize();
            index.clear();
            assertTrue(index.isEmpty());
            for (final long key : held)
            {
                assertEquals(MISSING, index.get(key));
            }
        }
        assertTrue(overflowed > 0, "the overflow map was exercised");
    }

    @Test
    void shouldGiveOneStreamsMessagesInFlightBucketsOfTheirOwn()
    {
        final MessageIndex index = new MessageIndex(1000, MISSING);
        for (int msn = -500; msn < 500; msn++) // across the MSN wrap
        {
            index.put(SendSlots.key(3, msn), msn + 500);
        }
        assertEquals(1000, index.size());
        assertEquals(1000, index.directSize(), "none in the overflow map");
        for (int msn = -500; msn < 500; msn++)
        {
            assertEquals(msn + 500, index.get(SendSlots.key(3, msn)));
            index.remove(SendSlots.key(3, msn));
            assertEquals(MISSING, index.get(SendSlots.key(3, msn)));
        }
        assertTrue(index.isEmpty());
    }

}
