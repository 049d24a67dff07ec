package io.spraynic.datapath.nic;

import io.spraynic.datapath.capture.CaptureFilter;
import io.spraynic.datapath.capture.CaptureRingLayout;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The one check every capture source ({@link EmbeddedNic}, the apps' classify-mode runtime) makes before it starts a
 * capture: each way a capture can fail to fit is refused with its reason, and one that fits passes.
 */
final class CaptureSourceTest
{
    private final Arena arena = Arena.ofConfined();

    @AfterEach
    void free()
    {
        arena.close();
    }

    @Test
    void oneCaptureAtATime()
    {
        final CaptureRingLayout layout = CaptureRingLayout.of(2, 16, 128);
        final IllegalStateException refused = assertThrows(IllegalStateException.class,
            () -> CaptureSource.checkStart(new Source(2, 2, 2), memory(layout), memory(layout), layout, CaptureFilter.ALL));
        assertEquals("a capture is running: stop it first (one at a time)", refused.getMessage());
    }

    @Test
    void refusesMorePortsThanTheCaptureCovers()
    {
        final CaptureRingLayout layout = CaptureRingLayout.of(2, 16, 128);
        assertEquals("a capture covers at most 8 ports, this NIC has 9",
            refusal(new Source(9, 2, 2), memory(layout), layout, CaptureFilter.ALL));
    }

    @Test
    void refusesARingCountOtherThanThePollThreads()
    {
        final CaptureRingLayout layout = CaptureRingLayout.of(3, 16, 128);
        assertEquals("the capture has 3 ring(s) for 2 poll thread(s)",
            refusal(new Source(1, 2, 2), memory(layout), layout, CaptureFilter.ALL));
    }

    @Test
    void refusesMemoryShorterThanTheLayout()
    {
        final CaptureRingLayout layout = CaptureRingLayout.of(2, 16, 128);
        assertEquals("the capture memory is shorter than its layout",
            refusal(new Source(1, 2, 2), arena.allocate(layout.fileLength() - 1), layout, CaptureFilter.ALL));
    }

    @Test
    void refusesAFilterNamingAPortOrQueueTheSourceLacks()
    {
        final CaptureRingLayout layout = CaptureRingLayout.of(2, 16, 128);
        final MemorySegment memory = memory(layout);
        assertEquals("port 2 is not one of the NIC's ports 0..1",
            refusal(new Source(2, 2, 2), memory, layout, CaptureFilter.parse("port 2")));
        assertEquals("queue 2 is not one of the NIC's queues 0..1 (one per worker)",
            refusal(new Source(2, 2, 2), memory, layout, CaptureFilter.parse("queue 2")));
    }

    @Test
    void queuesAreTheSourcesNotItsPollThreads()
    {
        // classify mode: a poll thread per port queue, so 2 ports of 2 queues have 4 rings but queues 0..1
        final CaptureRingLayout layout = CaptureRingLayout.of(4, 16, 128);
        final MemorySegment memory = memory(layout);
        assertEquals("queue 3 is not one of the NIC's queues 0..1 (one per worker)",
            refusal(new Source(2, 4, 2), memory, layout, CaptureFilter.parse("queue 3")));
        assertDoesNotThrow(() -> CaptureSource.checkStart(new Source(2, 4, 2), null, memory, layout,
            CaptureFilter.parse("rx and port 1 and queue 1")));
    }

    @Test
    void aCaptureThatFitsPasses()
    {
        final CaptureRingLayout layout = CaptureRingLayout.of(8, 16, 128);
        assertDoesNotThrow(() -> CaptureSource.checkStart(new Source(8, 8, 8), null, memory(layout), layout,
            CaptureFilter.ALL));
    }

    private MemorySegment memory(final CaptureRingLayout layout)
    {
        return arena.allocate(layout.fileLength());
    }

    private static String refusal(final CaptureSource source, final MemorySegment memory, final CaptureRingLayout layout,
        final CaptureFilter filter)
    {
        return assertThrows(IllegalArgumentException.class,
            () -> CaptureSource.checkStart(source, null, memory, layout, filter)).getMessage();
    }

    /** Only the shape the check reads. */
    private record Source(int planes, int workers, int queues) implements CaptureSource
    {
        public String portName(final int plane)
        {
            return "p" + plane;
        }

        public void startCapture(final MemorySegment memory, final CaptureRingLayout layout, final CaptureFilter filter)
        {
            throw new UnsupportedOperationException();
        }

        public void stopCapture()
        {
            throw new UnsupportedOperationException();
        }
    }
}
