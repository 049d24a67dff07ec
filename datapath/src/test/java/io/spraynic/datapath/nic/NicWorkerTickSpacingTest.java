package io.spraynic.datapath.nic;

import io.spraynic.datapath.port.InMemoryLink;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceParser;
import org.agrona.concurrent.NanoClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A poll thread's worker ticks its engine on every loop while a tick is cheap, and leaves loops without a tick after
 * one that took long (an engine of thousands of connections), so that receiving keeps about half the thread.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class NicWorkerTickSpacingTest
{
    private static final long LOOP_NANOS = 100_000; // what each loop costs besides the tick, in the test's time

    private final InMemoryLink link = new InMemoryLink("spacing", 16, 2048);
    private final ManualClock clock = new ManualClock();
    private final TimedTransport transport = new TimedTransport(clock);

    @AfterEach
    void close()
    {
        link.close();
    }

    @Test
    void shouldTickOnEveryLoopWhileTicksAreCheap()
    {
        transport.tickNanos = 2_000;
        final NicWorker worker = worker();
        loops(worker, 100);
        assertEquals(100, transport.ticks);
    }

    @Test
    void shouldLeaveAsLongWithoutATickAsALongTickTook()
    {
        transport.tickNanos = 2_000_000; // 2 ms: a few thousand connections on a loaded machine
        final NicWorker worker = worker();
        final long start = clock.nanoTime();
        loops(worker, 400);
        final long elapsed = clock.nanoTime() - start;
        // without spacing every loop ticks: 400 ticks; with it, one tick per about 4 ms (2 ms ticking, 2 ms not)
        assertTrue(transport.ticks >= elapsed / 4_500_000 && transport.ticks <= elapsed / 3_500_000 + 1,
            transport.ticks + " ticks in " + elapsed + " ns");
        assertTrue(transport.ticks * transport.tickNanos <= elapsed * 6 / 10, "ticks took at most about half the time");
    }

    @Test
    void shouldReadTheClockOncePerLoopWhileTicksAreCheap()
    {
        transport.tickNanos = 2_000;
        final NicWorker worker = worker();
        worker.doWork(); // the first loop starts the worker, which reads the clock on its own
        final long before = clock.reads;
        loops(worker, 1_000);
        assertEquals(1_000, clock.reads - before, "one read per loop");
        assertEquals(1_001, transport.ticks);
    }

    @Test
    void shouldNotSpaceTicksForTimeSpentOutsideTheTick()
    {
        transport.tickNanos = 2_000;
        transport.flushNanos = 5_000_000; // every loop stalls 5 ms after its tick: a descheduled thread, say
        final NicWorker worker = worker();
        loops(worker, 100);
        assertEquals(100, transport.ticks, "every loop ticked");
    }

    @Test
    void shouldNotSpaceTicksForTimeSpentBeforeTheTickInItsLoop()
    {
        transport.tickNanos = 2_000;
        transport.receiveEndNanos = 5_000_000; // every loop stalls 5 ms in its receive part: a descheduled thread
        final NicWorker worker = worker();
        loops(worker, 100);
        assertEquals(100, transport.ticks, "every loop ticked");
    }

    @Test
    void shouldFireATimerInTheFirstLoopAfterALateOne()
    {
        transport.tickNanos = 2_000;
        final NicWorker worker = worker();
        loops(worker, 10);
        transport.timerDueNanos = clock.time + 1_000_000; // due 1 ms from now
        transport.flushNanos = 3_000_000; // the next loop runs late: it stalls 3 ms after its tick
        worker.doWork();
        assertEquals(Long.MIN_VALUE, transport.timerFiredNanos, "not due in that loop");
        transport.flushNanos = 0;
        clock.time += LOOP_NANOS;
        final long lateLoopStart = clock.time;
        worker.doWork();
        assertEquals(lateLoopStart, transport.timerFiredNanos, "fired in the first loop after, at its start");
        assertTrue(lateLoopStart - transport.timerDueNanos <= 3_000_000 + LOOP_NANOS, "late by at most one loop");
    }

    private NicWorker worker()
    {
        final ParseCounters parse = new ParseCounters();
        final NicWorker worker = new NicWorker(0, 1, new PacketPort[]{link.first()}, transport, parse,
            new ProtectionDomain(), clock, 32, NicWorkerBuilder.LONE_INBOX_BYTES, Arena.ofAuto(),
            NicWorker.WorkerCounters.unpublished(), "spacing", null);
        worker.peers(new NicWorker[]{worker});
        return worker;
    }

    private void loops(final NicWorker worker, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            worker.doWork();
            clock.time += LOOP_NANOS;
        }
    }

    private static final class ManualClock implements NanoClock
    {
        long time = 1_000_000_000L;
        long reads;

        public long nanoTime()
        {
            reads++;
            return time;
        }
    }

    /** An engine whose tick takes {@code tickNanos} of the test's clock and does nothing else. */
    private static final class TimedTransport implements WorkerTransport
    {
        private final ManualClock clock;
        private final RoceParser parser = new RoceParser(new ParseCounters());
        long tickNanos;
        long flushNanos; // what each loop's flush (after the tick) takes
        long receiveEndNanos; // what each loop's end of receiving (before the tick) takes
        long timerDueNanos = Long.MAX_VALUE;
        long timerFiredNanos = Long.MIN_VALUE;
        int ticks;

        TimedTransport(final ManualClock clock)
        {
            this.clock = clock;
        }

        public RoceParser parser()
        {
            return parser;
        }

        public int owner(final RoceFrame frame, final int workers)
        {
            return 0;
        }

        public void onFrame(final int plane, final RoceFrame frame, final long nowNanos)
        {
        }

        public int onTick(final long nowNanos)
        {
            ticks++;
            if (nowNanos >= timerDueNanos && timerFiredNanos == Long.MIN_VALUE)
            {
                timerFiredNanos = nowNanos;
            }
            clock.time += tickNanos;
            return 0;
        }

        public void onStart()
        {
        }

        public void flush()
        {
            clock.time += flushNanos;
        }

        public int onReceiveEnd()
        {
            clock.time += receiveEndNanos;
            return 0;
        }

        public void onClose()
        {
        }

        public void revoke(final MemoryRegion region)
        {
        }

        public boolean isIdle()
        {
            return true;
        }
    }
}
