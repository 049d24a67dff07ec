package io.spraynic.datapath.transport.spray;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

final class ReorderWindowTest
{
    @Test
    void shouldStayAtItsFloorWhenItDoesNotAdapt()
    {
        final ReorderWindow strict = new ReorderWindow(0, 0);
        assertFalse(strict.adapts());
        strict.onSpuriousLoss(100, 100);
        assertEquals(0, strict.nanos(), "S6.5: a gap is loss, whatever it sees");
        assertEquals(1, strict.spuriousLosses(), "still counted");

        final ReorderWindow fixed = new ReorderWindow(10_000, 5_000);
        assertFalse(fixed.adapts(), "a ceiling below the floor is the floor");
        fixed.onSpuriousLoss(200, 200);
        assertEquals(10_000, fixed.nanos());
    }

    @Test
    void shouldAtLeastDoubleOnASpuriousLossUpToItsCeiling()
    {
        final ReorderWindow window = new ReorderWindow(0, 100_000);
        assertTrue(window.adapts());
        assertEquals(0, window.nanos());
        window.onSpuriousLoss(300, 300);
        assertEquals(ReorderWindow.FIRST_WIDENING_NANOS, window.nanos(), "from nothing: 1 us");
        window.onSpuriousLoss(400, 400);
        assertEquals(2_000, window.nanos());
        window.onSpuriousLoss(500, 500);
        assertEquals(4_000, window.nanos());
        window.onSpuriousLoss(600, 600);
        window.onSpuriousLoss(700, 700);
        window.onSpuriousLoss(800, 800);
        window.onSpuriousLoss(900, 900);
        assertEquals(64_000, window.nanos());
        window.onSpuriousLoss(1000, 1000);
        assertEquals(100_000, window.nanos(), "held to the ceiling");
    }

    @Test
    void shouldHoldAPathsGapsByAtMostItsCapAboveTheFloor()
    {
        final ReorderWindow window = new ReorderWindow(3_000, 1_000_000);
        for (int i = 0; i < 8; i++)
        {
            window.onSpuriousLoss(100 * i, 100 * i);
        }
        assertEquals(768_000, window.nanos());
        assertEquals(20_000, window.nanos(20_000), "no longer than the cap the path gives");
        assertEquals(3_000, window.nanos(1_000), "but never below the floor");
        assertEquals(3_000, new ReorderWindow(3_000, 1_000_000).nanos(20_000), "nothing learnt: the floor");
    }

    @Test
    void shouldWidenOnceForLossesJudgedBeforeItsLastWidening()
    {
        final ReorderWindow window = new ReorderWindow(0, 1_000_000);
        window.onSpuriousLoss(100, 500);
        assertEquals(1_000, window.nanos());
        window.onSpuriousLoss(200, 510);
        window.onSpuriousLoss(499, 520);
        assertEquals(1_000, window.nanos(), "judged with the window before the widening at 500: one reordering, once");
        assertEquals(3, window.spuriousLosses());
        window.onSpuriousLoss(500, 600);
        assertEquals(2_000, window.nanos(), "judged with the widened window, still too narrow");
    }

    @Test
    void shouldNarrowAfterCleanSamplesDownToItsFloor()
    {
        final ReorderWindow window = new ReorderWindow(2_000, 1_000_000);
        window.onSpuriousLoss(1000, 1000);
        assertEquals(4_000, window.nanos(), "double the floor");
        for (int i = 1; i < ReorderWindow.NARROW_AFTER_SAMPLES; i++)
        {
            window.onSampleEnded();
        }
        assertEquals(4_000, window.nanos());
        window.onSpuriousLoss(1100, 1100); // a spurious loss starts the count again
        assertEquals(8_000, window.nanos());
        for (int i = 1; i < ReorderWindow.NARROW_AFTER_SAMPLES; i++)
        {
            window.onSampleEnded();
        }
        assertEquals(8_000, window.nanos());
        window.onSampleEnded();
        assertEquals(6_000, window.nanos(), "a quarter narrower");
        for (int i = 0; i < 20 * ReorderWindow.NARROW_AFTER_SAMPLES; i++)
        {
            window.onSampleEnded();
        }
        assertEquals(2_000, window.nanos(), "never below the floor");
    }

    @Test
    void shouldRefuseANegativeFloorOrCeiling()
    {
        assertThrows(IllegalArgumentException.class, () -> new ReorderWindow(-1, 0));
        assertThrows(IllegalArgumentException.class, () -> new ReorderWindow(0, -1));
    }
}
