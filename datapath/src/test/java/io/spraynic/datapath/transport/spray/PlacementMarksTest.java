package io.spraynic.datapath.transport.spray;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/PROTOCOL.md S4.4: each packet of a message counts once, however often it is placed.
 */
@Timeout(10)
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
}
