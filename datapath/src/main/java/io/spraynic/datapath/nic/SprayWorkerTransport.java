package io.spraynic.datapath.nic;

import io.spraynic.datapath.port.PortFrameSink;
import io.spraynic.datapath.transport.FrameSink;
import io.spraynic.datapath.transport.spray.SprayEngine;
import io.spraynic.datapath.wire.ConnectionHeader;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceParser;
import io.spraynic.datapath.wire.SprayOpcodes;

/**
 * A worker's spray engine over its queue of every plane's port. Packets are steered by DestQP, the
 * connection ID, whose residue names the worker ({@code SprayConfig#cidPartition}); a CONNECT, which names
 * no connection yet, by its token, so its retransmissions, and its resend with the cookie, reach the worker whose
 * cookie secret made the cookie wherever they arrive (S9.1). CONNECT_RETRY, CONNECT_REJECT and CONNECT_ACK name
 * the initiator's CID in DestQP, which its engine drew from its own share: they go by DestQP like the rest.
 * <p>
 * The engine's output is a {@link PortFrameSink} over the worker's ports, which this starts, flushes and closes,
 * or a sink that hands each frame on at its commit (a fabric's link), which needs none of that.
 */
final class SprayWorkerTransport implements WorkerTransport
{
    private final SprayEngine engine;
    private final PortFrameSink output; // null: the engine's sink sends at each commit
    private final RoceParser parser;

    SprayWorkerTransport(final SprayEngine engine, final FrameSink output, final ParseCounters parseCounters)
    {
        this.engine = engine;
        this.output = output instanceof PortFrameSink ports ? ports : null;
        this.parser = new RoceParser(SprayOpcodes.TABLE, parseCounters, true);
    }

    SprayEngine engine()
    {
        return engine;
    }

    public RoceParser parser()
    {
        return parser;
    }

    public int owner(final RoceFrame frame, final int workers)
    {
        if (frame.opcode() == SprayOpcodes.CONNECT)
        {
            final long token = ConnectionHeader.token(frame.segment(), frame.customHeaderOffset());
            return (int)Long.remainderUnsigned(token, workers);
        }
        return frame.destQp() % workers;
    }

    public void onFrame(final int plane, final RoceFrame frame, final long nowNanos)
    {
        engine.onFrame(frame, nowNanos);
    }

    public void onReceiveStart()
    {
        engine.beginReceiveBurst();
    }

    public int onReceiveEnd()
    {
        return engine.endReceiveBurst();
    }

    public int onTick(final long nowNanos)
    {
        return engine.onTick(nowNanos);
    }

    public void onStart()
    {
        if (null != output)
        {
            output.onStart();
        }
    }

    public void flush()
    {
        if (null != output)
        {
            output.flush();
        }
    }

    public void onClose()
    {
        if (null != output)
        {
            output.close();
        }
    }

    public void revoke(final io.spraynic.datapath.verbs.MemoryRegion region)
    {
        // a spray connection checks MemoryRegion.isRegistered() wherever it touches a region it holds (its posted
        // receives, its send slots, the READ responses it serves); WRITEs are checked against the domain per packet
    }

    public boolean isIdle()
    {
        return engine.isIdle();
    }
}
