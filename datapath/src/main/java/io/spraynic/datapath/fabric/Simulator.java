package io.spraynic.datapath.fabric;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A discrete-event loop in virtual time (nanoseconds), on one thread.
 * <p>
 * Pending events live in a binary min-heap kept in parallel primitive arrays (time, sequence, target,
 * kind, argument), ordered by {@code (time, sequence)}: the sequence number is given at scheduling, so
 * events due at the same nanosecond run in the order they were scheduled. Nothing else decides the
 * order, which makes a run a pure function of its inputs and seeds: two runs of the same scenario
 * process the same events in the same order. The arrays grow (doubling) while a scenario warms up and
 * are then reused, so a steady state schedules and runs events without allocating.
 * <p>
 * Targets are registered once ({@link #register}) and named by their index in events. Time only moves
 * forward: to each event's time while running, and to the end of a {@link #runUntil} window.
 * Not thread-safe; {@link RealTimeFabricAgent} drives one from real time on its own thread.
 */
public final class Simulator implements FabricClock
{
    private static final int INITIAL_CAPACITY = 1024;

    private final List<EventTarget> targetList = new ArrayList<>();
    private EventTarget[] targets = new EventTarget[16];

    private long[] times = new long[INITIAL_CAPACITY];
    private long[] sequences = new long[INITIAL_CAPACITY];
    private int[] targetIds = new int[INITIAL_CAPACITY];
    private int[] kinds = new int[INITIAL_CAPACITY];
    private long[] args = new long[INITIAL_CAPACITY];
    private int size;

    private long nowNs;
    private long nextSequence;
    private long eventsProcessed;

    /**
     * Registers something events can be delivered to. Control path.
     *
     * @return the target's id for {@link #schedule}.
     */
    public int register(final EventTarget target)
    {
        if (null == target)
        {
            throw new NullPointerException("target");
        }
        final int id = targetList.size();
        targetList.add(target);
        if (id == targets.length)
        {
            targets = Arrays.copyOf(targets, id * 2);
        }
        targets[id] = target;
        return id;
    }

    /**
     * @return the current virtual time in nanoseconds.
     */
    public long now()
    {
        return nowNs;
    }

    /**
     * Same as {@link #now()}: a simulator is the clock of what it runs.
     */
    public long nanoTime()
    {
        return nowNs;
    }

    /**
     * Schedules an event.
     *
     * @param timeNs when, not before {@link #now()}.
     * @param target a registered target id.
     * @param kind   passed to the target.
     * @param arg    passed to the target.
     * @throws IllegalArgumentException if the time is in the past or the target unknown: a bug in the caller.
     */
    public void schedule(final long timeNs, final int target, final int kind, final long arg)
    {
        if (timeNs < nowNs)
        {
            throw new IllegalArgumentException("event at " + timeNs + " ns is before now " + nowNs + " ns");
        }
        if (target < 0 || target >= targetList.size())
        {
            throw new IllegalArgumentException("unknown target " + target);
        }
        if (size == times.length)
        {
            grow();
        }
        final long sequence = nextSequence++;
        int child = size++;
        // sift up: move parents down until the new event's place is found
        while (child > 0)
        {
            final int parent = (child - 1) >>> 1;
            if (!before(timeNs, sequence, times[parent], sequences[parent]))
            {
                break;
            }
            move(parent, child);
            child = parent;
        }
        times[child] = timeNs;
        sequences[child] = sequence;
        targetIds[child] = target;
        kinds[child] = kind;
        args[child] = arg;
    }

    /**
     * Runs every event due at or before {@code timeNs}, then sets the time to {@code timeNs} (if later
     * than now). Events the handlers schedule inside the window run too.
     *
     * @return events run.
     */
    public long runUntil(final long timeNs)
    {
        long ran = 0;
        while (size > 0 && times[0] <= timeNs)
        {
            runFirst();
            ran++;
        }
        if (timeNs > nowNs)
        {
            nowNs = timeNs;
        }
        return ran;
    }

    /**
     * Runs events until none is pending. Never returns while something reschedules itself for ever
     * (a periodic timer): use {@link #runUntil} for those.
     *
     * @return events run.
     */
    public long runUntilIdle()
    {
        long ran = 0;
        while (size > 0)
        {
            runFirst();
            ran++;
        }
        return ran;
    }

    /**
     * Runs the next event, if any.
     *
     * @return true if one ran.
     */
    public boolean step()
    {
        if (size == 0)
        {
            return false;
        }
        runFirst();
        return true;
    }

    /**
     * @return the time of the next pending event, or {@link Long#MAX_VALUE} if none.
     */
    public long nextEventTime()
    {
        return size == 0 ? Long.MAX_VALUE : times[0];
    }

    /**
     * @return events pending.
     */
    public int pending()
    {
        return size;
    }

    /**
     * @return events run since creation.
     */
    public long eventsProcessed()
    {
        return eventsProcessed;
    }

    /**
     * @return events scheduled since creation.
     */
    public long eventsScheduled()
    {
        return nextSequence;
    }

    private void runFirst()
    {
        final long time = times[0];
        final int target = targetIds[0];
        final int kind = kinds[0];
        final long arg = args[0];
        removeFirst();
        nowNs = time;
        eventsProcessed++;
        targets[target].onEvent(time, kind, arg);
    }

    private void removeFirst()
    {
        final int last = --size;
        if (last == 0)
        {
            return;
        }
        final long time = times[last];
        final long sequence = sequences[last];
        int parent = 0;
        // sift down the last event from the root
        while (true)
        {
            int child = (parent << 1) + 1;
            if (child >= last)
            {
                break;
            }
            final int right = child + 1;
            if (right < last && before(times[right], sequences[right], times[child], sequences[child]))
            {
                child = right;
            }
            if (!before(times[child], sequences[child], time, sequence))
            {
                break;
            }
            move(child, parent);
            parent = child;
        }
        move(last, parent);
    }

    private static boolean before(final long time, final long sequence, final long otherTime, final long otherSequence)
    {
        return time < otherTime || (time == otherTime && sequence < otherSequence);
    }

    private void move(final int from, final int to)
    {
        times[to] = times[from];
        sequences[to] = sequences[from];
        targetIds[to] = targetIds[from];
        kinds[to] = kinds[from];
        args[to] = args[from];
    }

    private void grow()
    {
        final int capacity = times.length * 2;
        times = Arrays.copyOf(times, capacity);
        sequences = Arrays.copyOf(sequences, capacity);
        targetIds = Arrays.copyOf(targetIds, capacity);
        kinds = Arrays.copyOf(kinds, capacity);
        args = Arrays.copyOf(args, capacity);
    }

    public String toString()
    {
        return "Simulator{now=" + nowNs + "ns, pending=" + size + ", processed=" + eventsProcessed + '}';
    }
}
