package io.spraynic.datapath.transport.spray;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/PROTOCOL.md S4.4: each packet of a message counts once, however often it is placed.
 */
@Timeout(30)
class PlacementMarksTest
{
    @Test
    void shouldCountAPacketPlacedTwiceOnce()
    {
        final PlacementMarks marks = new PlacementMarks(4);
        assertEquals(PlacementMarks.NEW, marks.mark(7, 0));
        assertEquals(PlacementMarks.NEW, marks.mark(7, 1));
        assertEquals(PlacementMarks.DUPLICATE, marks.mark(7, 0));
        assertEquals(PlacementMarks.NEW, marks.mark(8, 0), "another owner's packet 0");
        assertEquals(PlacementMarks.NEW, marks.mark(7, 511));
        assertEquals(PlacementMarks.DUPLICATE, marks.mark(7, 511));
        assertEquals(2, marks.inUse(), "one chunk per owner so far");
        assertEquals(PlacementMarks.NEW, marks.mark(7, 512), "the next chunk");
        assertEquals(3, marks.inUse());
    }

    @Test
    void shouldStartAReusedChunkEmpty()
    {
        final PlacementMarks marks = new PlacementMarks(1);
        marks.mark(1, 5);
        marks.release(1, 6);
        assertEquals(0, marks.inUse());
        assertEquals(PlacementMarks.NEW, marks.mark(2, 5), "the chunk's old bits must not make a duplicate");
        marks.release(2, 6);
        assertEquals(PlacementMarks.NEW, marks.mark(1, 5), "nor its old owner's key");
    }

    @Test
    void shouldReportRoomOnlyForAChunkItHasOrCanTake()
    {
        final PlacementMarks marks = new PlacementMarks(2);
        assertTrue(marks.hasFreeChunk());
        marks.mark(1, 0);
        marks.mark(1, 600);
        assertFalse(marks.hasFreeChunk());
        assertTrue(marks.roomToMark(1, 3), "its first chunk");
        assertTrue(marks.roomToMark(1, 1023), "its second chunk");
        assertFalse(marks.roomToMark(1, 1024), "a third chunk would be needed");
        assertFalse(marks.roomToMark(2, 0), "another owner");
        marks.release(1, 1024);
        assertEquals(0, marks.inUse());
        assertTrue(marks.roomToMark(2, 0));
    }

    @Test
    void shouldReleaseEveryChunkOfALongMessageAndNothingElse()
    {
        final PlacementMarks marks = new PlacementMarks(8);
        for (int packet = 0; packet < 3 * PlacementMarks.CHUNK_PACKETS; packet += 100)
        {
            marks.mark(3, packet);
        }
        marks.mark(4, 0);
        assertEquals(4, marks.inUse());
        marks.release(3, 3 * PlacementMarks.CHUNK_PACKETS);
        assertEquals(1, marks.inUse());
        assertEquals(PlacementMarks.DUPLICATE, marks.mark(4, 0));
        marks.release(3, 1); // nothing left to release: harmless
        assertEquals(1, marks.inUse());
    }

    /**
     * Property (issue 13: the last chunk looked up answers again until the chunks change): over random traffic, as
     * a receiver sees it (the packets of messages mostly in order, interleaved, duplicated, refused and released, a
     * chunk reused by another owner) and with hostile owners and packet numbers (owners near 2^31, packets far
     * beyond a message's chunks, the same packet of different owners), every answer of {@link PlacementMarks#mark}
     * and {@link PlacementMarks#roomToMark}, and the chunks in use, equal those of a plain uncached model of the
     * marks: a map of (owner, chunk) to its bits.
     */
    @Test
    void shouldAnswerAsTheUncachedMarksOverRandomTraffic()
    {
        final SplittableRandom random = new SplittableRandom(4096);
        for (int trial = 0; trial < 40; trial++)
        {
            final int chunkCount = 1 + random.nextInt(8);
            final PlacementMarks marks = new PlacementMarks(chunkCount);
            final Map<Long, BitSet> model = new HashMap<>();
            final int[] owners = {0, 1, 2, 3, Integer.MAX_VALUE, Integer.MAX_VALUE - 1, 1 << 30};
            int owner = owners[0];
            int packet = 0;
            for (int step = 0; step < 20_000; step++)
            {
                final String where = "trial " + trial + " step " + step;
                final int action = random.nextInt(100);
                if (action < 60)
                {
                    packet++; // the next packet of the same message
                }
                else if (action < 75)
                {
                    owner = owners[random.nextInt(owners.length)]; // another message
                    packet = random.nextInt(4) == 0 ? random.nextInt(1 << 20) : random.nextInt(3);
                }
                else if (action < 85)
                {
                    packet = Math.max(0, packet - 1 - random.nextInt(4)); // a duplicate, or a copy moved paths
                }
                else
                {
                    // a message retires or its attempt is refused: its chunks go back (sometimes fewer than marked)
                    final int releasedOwner = random.nextBoolean() ? owner : owners[random.nextInt(owners.length)];
                    final int expected = 1 + random.nextInt(3 * PlacementMarks.CHUNK_PACKETS);
                    marks.release(releasedOwner, expected);
                    for (int index = 0; index <= (expected - 1) / PlacementMarks.CHUNK_PACKETS; index++)
                    {
                        model.remove(chunkKey(releasedOwner, index));
                    }
                    assertEquals(model.size(), marks.inUse(), where);
                    continue;
                }
                final long key = chunkKey(owner, packet / PlacementMarks.CHUNK_PACKETS);
                final boolean room = model.size() < chunkCount || model.containsKey(key);
                assertEquals(room, marks.roomToMark(owner, packet), where + ": room");
                assertEquals(room, marks.roomToMark(owner, packet), where + ": room, asked again");
                if (room)
                {
                    final BitSet bits = model.computeIfAbsent(key, ignored -> new BitSet());
                    final int bit = packet % PlacementMarks.CHUNK_PACKETS;
                    final int expected = bits.get(bit) ? PlacementMarks.DUPLICATE : PlacementMarks.NEW;
                    bits.set(bit);
                    assertEquals(expected, marks.mark(owner, packet), where + ": mark");
                    assertEquals(PlacementMarks.DUPLICATE, marks.mark(owner, packet), where + ": marked again");
                }
                assertEquals(model.size(), marks.inUse(), where + ": chunks in use");
            }
        }
    }

    private static long chunkKey(final int owner, final int index)
    {
        return ((long)owner << 32) | index;
    }
}
