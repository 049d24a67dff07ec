package io.spraynic.datapath.nic;

import io.spraynic.datapath.port.PortFrameSink;
import io.spraynic.datapath.transport.FrameSink;
import io.spraynic.datapath.transport.rocev2.RcEngine;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceParser;

/**
 * A worker's RoCEv2 RC engines, one per plane (a queue pair belongs to one port, as on a RoCE NIC), each
 * writing to its plane's queue. Packets are steered by DestQP, whose residue names the worker
 * ({@link RcEngine#qpNumberPartition}). A sink that is not a {@link PortFrameSink} sends at each commit (a fabric's
 * link): nothing to start, flush or close.
 */
final class RocevWorkerTransport implements WorkerTransport
{
    private final RcEngine[] engines;
    private final PortFrameSink[] sinks; // per plane, null where the engine's sink sends at each commit
    private final RoceParser parser;

    RocevWorkerTransport(final RcEngine[] engines, final FrameSink[] sinks, final ParseCounters parseCounters)
    {
        this.engines = engines.clone();
        this.sinks = new PortFrameSink[sinks.length];
        for (int p = 0; p < sinks.length; p++)
        {
            this.sinks[p] = sinks[p] instanceof PortFrameSink ports ? ports : null;
        }
        this.parser = new RoceParser(parseCounters);
    }

    RcEngine engine(final int plane)
    {
        return engines[plane];
    }

    int planes()
    {
        return engines.length;
    }

    public RoceParser parser()
    {
        return parser;
    }

    public int owner(final RoceFrame frame, final int workers)
    {
        return frame.destQp() % workers;
    }

    public void onFrame(final int plane, final RoceFrame frame, final long nowNanos)
    {
        engines[plane].onFrame(frame, nowNanos);
    }

    public int onTick(final long nowNanos)
    {
        int work = 0;
        for (final RcEngine engine : engines)
        {
            work += engine.onTick(nowNanos);
        }
        return work;
    }

    public void onStart()
    {
        for (final PortFrameSink sink : sinks)
        {
            if (null != sink)
            {
                sink.onStart();
            }
        }
    }

    public void flush()
    {
        for (final PortFrameSink sink : sinks)
        {
            if (null != sink)
            {
                sink.flush();
            }
        }
    }

    public void onClose()
    {
        for (final PortFrameSink sink : sinks)
        {
            if (null != sink)
            {
                sink.close();
            }
        }
    }

    public void revoke(final io.spraynic.datapath.verbs.MemoryRegion region)
    {
        for (final RcEngine engine : engines)
        {
            engine.revoke(region);
        }
    }

    public boolean isIdle()
    {
        return true; // RC has no connection state outside its queue pairs, whose idleness the worker checks
    }
}
