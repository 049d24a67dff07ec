package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.Psn;
import io.spraynic.datapath.wire.SelectiveAckHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static io.spraynic.datapath.transport.spray.PathReceiveWindow.ABOVE_GAP;
import static io.spraynic.datapath.transport.spray.PathReceiveWindow.DUPLICATE;
import static io.spraynic.datapath.transport.spray.PathReceiveWindow.IN_ORDER;
import static io.spraynic.datapath.transport.spray.PathReceiveWindow.OUT_OF_WINDOW;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/PROTOCOL.md S5.1, S6.3: the receiver's per-path cumulative PSN and 256-bit bitmap.
 */
class PathReceiveWindowTest
{
    @ParameterizedTest
    @ValueSource(ints = {0, 1000, 0xFFFF00, 0xFFFFFF})
    void shouldAdvanceCumulativePsnInOrderAcrossWrap(final int first)
    {
        final PathReceiveWindow window = new PathReceiveWindow(first);
        for (int i = 0; i < 1000; i++)
        {
            assertEquals(IN_ORDER, window.onPacket(0, Psn.add(first, i)));
        }
        assertEquals(Psn.add(first, 1000), window.cumulativePsn(0));
        assertFalse(window.hasGap(0));
    }

    @Test
    void shouldRecordGapAndCloseItWhenMissingPacketArrives()
    {
        final PathReceiveWindow window = new PathReceiveWindow(0xFFFFFE);
        assertEquals(IN_ORDER, window.onPacket(0, 0xFFFFFE));
        assertEquals(ABOVE_GAP, window.onPacket(0, 0x000000));
        assertEquals(ABOVE_GAP, window.onPacket(0, 0x000001));
        assertEquals(0xFFFFFF, window.cumulativePsn(0));
        assertTrue(window.hasGap(0));
        assertTrue(window.isReceived(0, 1) && window.isReceived(0, 2) && !window.isReceived(0, 0));

        assertEquals(IN_ORDER, window.onPacket(0, 0xFFFFFF));
        assertEquals(2, window.cumulativePsn(0), "slides over the run that was waiting");
        assertFalse(window.hasGap(0));
    }

    @Test
    void shouldReportThePsnAfterTheHighestReceivedS126()
    {
        final PathReceiveWindow window = new PathReceiveWindow(0xFFFFF0);
        assertEquals(0xFFFFF0, window.frontier(0), "nothing received: the cumulative PSN");
        window.onPacket(0, 0xFFFFF0);
        assertEquals(0xFFFFF1, window.frontier(0));
        window.onPacket(0, 0xFFFFF5);
        assertEquals(0xFFFFF6, window.frontier(0), "above a gap");
        window.onPacket(0, 0x00000A); // across the wrap, in the last words of the bitmap
        assertEquals(0x00000B, window.frontier(0));
        window.onPacket(0, 0xFFFFF1 + 254);
        assertEquals(Psn.add(0xFFFFF1, 255), window.frontier(0), "the last bit of the window");
    }

    @Test
    void shouldRecogniseDuplicatesBelowAndInsideWindow()
    {
        final PathReceiveWindow window = new PathReceiveWindow(100);
        window.onPacket(0, 100);
        window.onPacket(0, 105);
        assertEquals(DUPLICATE, window.onPacket(0, 100));
        assertEquals(DUPLICATE, window.onPacket(0, 50));
        assertEquals(DUPLICATE, window.onPacket(0, 105));
        assertEquals(101, window.cumulativePsn(0));
    }

    @Test
    void shouldRefusePacketsBeyondSackWindow()
    {
        final PathReceiveWindow window = new PathReceiveWindow(0);
        assertEquals(ABOVE_GAP, window.onPacket(0, 255));
        assertEquals(OUT_OF_WINDOW, window.onPacket(0, 256));
        assertEquals(OUT_OF_WINDOW, window.onPacket(0, 0x7FFFFF));
        assertEquals(0, window.cumulativePsn(0));
    }

    @Test
    void shouldSlideAcrossWordBoundaries()
    {
        final PathReceiveWindow window = new PathReceiveWindow(0);
        for (int psn = 1; psn < 200; psn++)
        {
            assertEquals(ABOVE_GAP, window.onPacket(0, psn));
        }
        window.onPacket(0, 230);
        assertEquals(IN_ORDER, window.onPacket(0, 0));
        assertEquals(200, window.cumulativePsn(0));
        assertTrue(window.isReceived(0, 30));
        assertFalse(window.isReceived(0, 29));
    }

    @Test
    void shouldWriteExactlyWhatArrivedIntoSackHeader()
    {
        final PathReceiveWindow window = new PathReceiveWindow(10);
        for (final int psn : new int[] {11, 12, 74, 75, 265})
        {
            window.onPacket(0, psn);
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment header = arena.allocate(SelectiveAckHeader.LENGTH);
            window.writeTo(0, header, 0);
            assertEquals(10, SelectiveAckHeader.cumulativePsn(header, 0));
            assertEquals(0x6000_0000_0000_0000L, SelectiveAckHeader.sackWord(header, 0, 0));
            assertEquals(0xC000_0000_0000_0000L, SelectiveAckHeader.sackWord(header, 0, 1), "PSNs 74, 75 = bits 64, 65");
            assertEquals(0, SelectiveAckHeader.sackWord(header, 0, 2));
            assertEquals(1, SelectiveAckHeader.sackWord(header, 0, 3), "PSN 265 = 10 + 255, the last bit");
            for (int i = 0; i < 256; i++)
            {
                assertEquals(window.isReceived(0, i), SelectiveAckHeader.sackBit(header, 0, i), "bit " + i);
            }
        }
    }
    @Test
    void shouldKeepEachPathsWindowApart()
    {
        final PathReceiveWindow windows = new PathReceiveWindow(3, 100);
        final int first1 = PathScheduler.initialPsn(100, 1);
        assertEquals(100, windows.cumulativePsn(0));
        assertEquals(first1, windows.cumulativePsn(1));
        assertEquals(ABOVE_GAP, windows.onPacket(1, Psn.add(first1, 2)));
        assertTrue(windows.hasGap(1));
        assertFalse(windows.hasGap(0) || windows.hasGap(2), "a gap is its path's only");
        assertEquals(IN_ORDER, windows.onPacket(0, 100));
        assertEquals(101, windows.cumulativePsn(0));
        assertTrue(windows.isReceived(1, 2));
        assertFalse(windows.isReceived(0, 2) || windows.isReceived(2, 2));
        windows.reset(1, 5_000);
        assertFalse(windows.hasGap(1));
        assertEquals(5_000, windows.cumulativePsn(1));
        assertEquals(101, windows.cumulativePsn(0), "a path's RESYNC moves no other");
        assertThrows(IllegalArgumentException.class, () -> new PathReceiveWindow(65, 0));
    }
}
