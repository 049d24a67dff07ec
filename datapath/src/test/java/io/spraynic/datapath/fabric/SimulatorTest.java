package io.spraynic.datapath.fabric;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SimulatorTest
{
    private final Simulator simulator = new Simulator();
    private final List<long[]> delivered = new ArrayList<>();

    private int recorder()
    {
        return simulator.register((nowNs, kind, arg) -> delivered.add(new long[]{nowNs, kind, arg}));
    }

    @Test
    void shouldRunEventsInTimeOrderAndSameTimeEventsInSchedulingOrder()
    {
        final int target = recorder();
        simulator.schedule(30, target, 1, 100);
        simulator.schedule(10, target, 2, 200);
        simulator.schedule(30, target, 3, 300);
        simulator.schedule(10, target, 4, 400);
        simulator.schedule(20, target, 5, 500);

        assertEquals(5, simulator.runUntilIdle());

        assertEquals(List.of("10/2/200", "10/4/400", "20/5/500", "30/1/100", "30/3/300"), render());
        assertEquals(30, simulator.now());
        assertEquals(5, simulator.eventsProcessed());
    }

    @Test
    void shouldRunOnlyEventsDueInWindowAndThenAdvanceTime()
    {
        final int target = recorder();
        simulator.schedule(5, target, 0, 1);
        simulator.schedule(15, target, 0, 2);

        assertEquals(1, simulator.runUntil(10));
        assertEquals(10, simulator.now());
        assertEquals(1, simulator.pending());
        assertEquals(15, simulator.nextEventTime());

        assertEquals(1, simulator.runUntil(15));
        assertEquals(15, simulator.now());
        assertEquals(Long.MAX_VALUE, simulator.nextEventTime());
        assertEquals(0, simulator.runUntil(12));
        assertEquals(15, simulator.now(), "time never goes back");
    }

    @Test
    void shouldRunEventsScheduledByHandlersInsideTheWindow()
    {
        final int[] self = new int[1];
        final List<Long> times = new ArrayList<>();
        self[0] = simulator.register((nowNs, kind, arg) ->
        {
            times.add(nowNs);
            if (arg > 0)
            {
                simulator.schedule(nowNs + 7, self[0], kind, arg - 1);
            }
        });
        simulator.schedule(0, self[0], 0, 3);

        assertEquals(4, simulator.runUntil(100));

        assertEquals(List.of(0L, 7L, 14L, 21L), times);
    }

    @Test
    void shouldRejectEventsInThePastAndUnknownTargets()
    {
        final int target = recorder();
        simulator.schedule(50, target, 0, 0);
        simulator.runUntilIdle();

        final IllegalArgumentException past =
            assertThrows(IllegalArgumentException.class, () -> simulator.schedule(49, target, 0, 0));
        assertEquals("event at 49 ns is before now 50 ns", past.getMessage());
        assertThrows(IllegalArgumentException.class, () -> simulator.schedule(60, 7, 0, 0));
    }

    @Test
    void shouldStepOneEventAtATime()
    {
        final int target = recorder();
        assertFalse(simulator.step());
        simulator.schedule(3, target, 0, 9);
        simulator.schedule(1, target, 0, 8);

        assertTrue(simulator.step());
        assertEquals(1, simulator.now());
        assertTrue(simulator.step());
        assertFalse(simulator.step());
        assertEquals(List.of("1/0/8", "3/0/9"), render());
    }

    @Test
    void shouldOrderManyRandomEventsLikeAStableSortByTime()
    {
        final int target = recorder();
        final SplittableRandom random = new SplittableRandom(42);
        final List<long[]> expected = new ArrayList<>();
        for (int i = 0; i < 50_000; i++)
        {
            final long time = random.nextLong(0, 1_000);
            simulator.schedule(time, target, i & 7, i);
            expected.add(new long[]{time, i & 7, i});
        }
        expected.sort(Comparator.comparingLong((long[] e) -> e[0]).thenComparingLong(e -> e[2]));

        // interleave running and scheduling: later events must still come out in order
        simulator.runUntil(500);
        for (int i = 0; i < 10_000; i++)
        {
            final long time = 500 + random.nextLong(0, 1_000);
            simulator.schedule(time, target, 0, 50_000 + i);
            expected.add(new long[]{time, 0, 50_000 + i});
        }
        simulator.runUntilIdle();

        final List<long[]> firstHalf = new ArrayList<>(expected.subList(0, 50_000));
        firstHalf.removeIf(e -> e[0] > 500);
        final List<long[]> rest = new ArrayList<>(expected);
        rest.removeIf(e -> e[2] < 50_000 && e[0] <= 500);
        rest.sort(Comparator.comparingLong((long[] e) -> e[0]).thenComparingLong(e -> e[2]));
        final List<long[]> order = new ArrayList<>(firstHalf);
        order.addAll(rest);

        assertEquals(order.size(), delivered.size());
        for (int i = 0; i < order.size(); i++)
        {
            assertEquals(order.get(i)[0], delivered.get(i)[0], "time of event " + i);
            assertEquals(order.get(i)[2], delivered.get(i)[2], "argument of event " + i);
        }
        assertEquals(60_000, simulator.eventsProcessed());
        assertEquals(60_000, simulator.eventsScheduled());
    }

    private List<String> render()
    {
        final List<String> out = new ArrayList<>();
        for (final long[] e : delivered)
        {
            out.add(e[0] + "/" + e[1] + "/" + e[2]);
        }
        return out;
    }
}
