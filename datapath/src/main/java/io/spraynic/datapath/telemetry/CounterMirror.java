package io.spraynic.datapath.telemetry;

import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.wire.ParseCounters;
import org.agrona.concurrent.status.AtomicCounter;

import java.util.function.IntFunction;
import java.util.function.IntToLongFunction;

/**
 * Copies chosen slots of a transport's {@link TransportCounters} (plain longs its engine writes) into
 * counters of the {@link CountersFile}, which other processes read: the engine keeps its cheap plain
 * increments and the worker publishes a snapshot every few milliseconds. Allocation (control path) may
 * find the file full: the mirror then keeps what it got and counts the rest as missing.
 */
public final class CounterMirror implements AutoCloseable
{
    private final IntToLongFunction source;
    private final int[] slots;
    private final AtomicCounter[] targets;

    /**
     * @param file   where the counters go.
     * @param prefix label prefix, e.g. {@code "conn 0x101 path 3: "}.
     * @param source the engine's counters.
     * @param slots  the slots to mirror, or null for all.
     */
    public CounterMirror(final CountersFile file, final String prefix, final TransportCounters source, final int[] slots)
    {
        this(file, prefix, source::get, source::label, null == slots ? all(source.slotCount()) : slots);
    }

    /**
     * @param file   where the counters go.
     * @param prefix label prefix, e.g. {@code "worker 0: "}.
     * @param source a parser's counters (every slot).
     */
    public CounterMirror(final CountersFile file, final String prefix, final ParseCounters source)
    {
        this(file, prefix, source::get, ParseCounters::label, all(ParseCounters.SLOT_COUNT));
    }

    /**
     * @param file   where the counters go.
     * @param prefix label prefix.
     * @param source read at each {@link #publish()}, on the thread that writes the values: for counters that are not
     *               one fixed object (a spray path's are lent for a traffic period).
     * @param labels the label of each slot.
     * @param slots  the slots to mirror.
     */
    public CounterMirror(
        final CountersFile file, final String prefix, final IntToLongFunction source, final IntFunction<String> labels,
        final int[] slots)
    {
        this.source = source;
        final int[] kept = new int[slots.length];
        final AtomicCounter[] got = new AtomicCounter[slots.length];
        int count = 0;
        for (final int slot : slots)
        {
            final AtomicCounter target = tryNewCounter(file, prefix + labels.apply(slot));
            if (null != target)
            {
                kept[count] = slot;
                got[count++] = target;
            }
        }
        // only the counters the file had room for: a NIC with thousands of connections finds it full for most of
        // theirs, and each publish would otherwise walk every one of their slots for nothing
        this.slots = java.util.Arrays.copyOf(kept, count);
        this.targets = java.util.Arrays.copyOf(got, count);
    }

    private static int[] all(final int count)
    {
        final int[] slots = new int[count];
        for (int i = 0; i < count; i++)
        {
            slots[i] = i;
        }
        return slots;
    }

    public static AtomicCounter tryNewCounter(final CountersFile file, final String label)
    {
        // a full file is asked first: a NIC with thousands of connections finds it full for each of their hundreds of
        // counters, and the exception Agrona throws then cost the worker milliseconds per connection opened
        if (file.counters().available() <= 0)
        {
            return null;
        }
        try
        {
            return file.newCounter(label);
        }
        catch (final IllegalStateException full)
        {
            return null; // the counters file is full: this value stays unpublished
        }
    }

    /** Copies the current values (worker thread). */
    public void publish()
    {
        for (int i = 0; i < targets.length; i++)
        {
            final AtomicCounter target = targets[i];
            if (null != target)
            {
                target.setRelease(source.applyAsLong(slots[i]));
            }
        }
    }

    /** Frees the counters (control path). */
    public void close()
    {
        for (int i = 0; i < targets.length; i++)
        {
            if (null != targets[i])
            {
                targets[i].close();
                targets[i] = null;
            }
        }
    }
}
