package io.spraynic.datapath.nic;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TickScheduleTest
{
    private static final long INTERVAL = 1_000;

    @Test
    void shouldTickWithinAnIntervalOfAnArrivalThenWhileBusyAndNotWhileIdle()
    {
        final TickSchedule schedule = TickSchedule.whileBusy(INTERVAL);
        assertEquals(TickSchedule.NONE, schedule.dueNanos(), "nothing arrived: no tick");
        assertFalse(schedule.isDue(1_000_000));

        schedule.onArrival(5_000);
        assertEquals(6_000, schedule.dueNanos());
        schedule.onArrival(5_500);
        assertEquals(6_000, schedule.dueNanos(), "a later arrival does not put off the tick the first one asked for");
        assertFalse(schedule.isDue(5_999));
        assertTrue(schedule.isDue(6_000));

        schedule.onTicked(6_000, false);
        assertEquals(7_000, schedule.dueNanos(), "busy: the next interval");
        schedule.onArrival(6_200);
        assertEquals(7_000, schedule.dueNanos());

        schedule.onTicked(7_000, true);
        assertEquals(TickSchedule.NONE, schedule.dueNanos(), "idle: no tick until something arrives");
        schedule.onArrival(50_000);
        assertEquals(51_000, schedule.dueNanos(), "an arrival after idling starts a fresh interval");
    }

    @Test
    void shouldTickEveryIntervalFromTheFirstKickWhenPeriodic()
    {
        final TickSchedule schedule = TickSchedule.periodic(INTERVAL);
        schedule.onArrival(5_000);
        assertEquals(TickSchedule.NONE, schedule.dueNanos(), "not started: arrivals do not tick a periodic schedule");

        schedule.kick();
        assertTrue(schedule.isDue(0), "a kick: the next loop ticks");
        schedule.onTicked(8_000, true);
        assertEquals(9_000, schedule.dueNanos(), "idle or not, every interval");
        schedule.onArrival(8_500);
        assertEquals(9_000, schedule.dueNanos());
    }

    @Test
    void shouldMakeATickDueAtOnceOnAKick()
    {
        final TickSchedule schedule = TickSchedule.whileBusy(INTERVAL);
        schedule.onArrival(5_000);
        schedule.kick();
        assertTrue(schedule.isDue(5_001));
        assertEquals(Long.MIN_VALUE, schedule.dueNanos());
    }

    @Test
    void shouldRefuseAnIntervalThatIsNotPositive()
    {
        assertThrows(IllegalArgumentException.class, () -> TickSchedule.whileBusy(0));
        assertThrows(IllegalArgumentException.class, () -> TickSchedule.periodic(-1));
        assertThrows(IllegalArgumentException.class, () -> NicWorker.builder().tickInterval(0, false));
    }
}
