package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.port.PortFrameSink;
import io.spraynic.datapath.fault.FaultLog;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.wire.FrameClass;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceParser;
import io.spraynic.datapath.wire.SprayOpcodes;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.NanoClock;

/**
 * Glues a {@link SprayEngine} to one {@link PacketPort} per plane, run-to-completion: receive a burst from
 * each plane, parse each frame ({@link RoceParser} over {@link SprayOpcodes#TABLE}: malformed frames are
 * counted there and never reach the engine), hand spray packets to the engine, free the burst, tick the
 * engine with the injected clock, transmit what it wrote. Run it on an Agrona {@code AgentRunner}, or call
 * {@link #doWork()} from a test loop to step it deterministically.
 * <p>
 * The engine, its connections and the protection domain belong to this agent's thread: post work requests
 * from that thread (completion queues may be polled from another).
 * <p>
 * A frame or tick that throws is caught, counted ({@link #faults()}) and logged with rate limiting, and the
 * loop goes on; receive bursts are always released.
 */
public final class SprayTransportAgent implements Agent
{
    private final String roleName;
    private final PacketPort[] ports;
    private final PortFrameSink output;
    private final SprayEngine engine;
    private final RoceParser parser;
    private final NanoClock clock;
    private final int burstCapacity;
    private final RoceFrame frame = new RoceFrame();
    private final FaultLog faultLog;
    private PacketBurst[] rxBursts;
    private long faults;

    /**
     * @param roleName      for logs.
     * @param ports         one port per plane.
     * @param output        the engine's output, over the same ports.
     * @param engine        the engine.
     * @param parseCounters where parse outcomes are counted.
     * @param clock         the time the engine sees.
     * @param burstCapacity frames per RX burst.
     */
    public SprayTransportAgent(
        final String roleName,
        final PacketPort[] ports,
        final PortFrameSink output,
        final SprayEngine engine,
        final ParseCounters parseCounters,
        final NanoClock clock,
        final int burstCapacity)
    {
        this.roleName = roleName;
        this.ports = ports.clone();
        this.output = output;
        this.engine = engine;
        this.parser = new RoceParser(SprayOpcodes.TABLE, parseCounters, true);
        this.clock = clock;
        this.burstCapacity = burstCapacity;
        this.faultLog = new FaultLog(roleName);
    }

    public void onStart()
    {
        rxBursts = new PacketBurst[ports.length];
        for (int i = 0; i < ports.length; i++)
        {
            ports[i].onPollerStart();
            rxBursts[i] = ports[i].newBurst(burstCapacity);
        }
        output.onStart();
    }

    public int doWork()
    {
        if (null == rxBursts)
        {
            onStart();
        }
        final long now = clock.nanoTime();
        int received = 0;
        for (int i = 0; i < ports.length; i++)
        {
            final PacketBurst burst = rxBursts[i];
            final int n = ports[i].receive(burst);
            try
            {
                for (int j = 0; j < n; j++)
                {
                    try
                    {
                        if (parser.parse(burst.memory(), burst.offset(j), burst.length(j), frame) == FrameClass.ROCE)
                        {
                            engine.onFrame(frame, now);
                        }
                    }
                    catch (final RuntimeException | AssertionError ex)
                    {
                        onFault("frame", ex);
                    }
                }
            }
            finally
            {
                if (burst.size() > 0)
                {
                    ports[i].release(burst);
                }
            }
            received += n;
        }
        int work = 0;
        try
        {
            work = engine.onTick(now);
            output.flush();
        }
        catch (final RuntimeException | AssertionError ex)
        {
            onFault("tick", ex);
        }
        return received + work;
    }

    // out of line: the loops stay small for the JIT; the exceptional path may allocate
    private void onFault(final String where, final Throwable fault)
    {
        faults++;
        faultLog.record(where, fault);
    }

    /** @return frames and ticks that threw (caught, dropped); agent thread. */
    public long faults()
    {
        return faults;
    }

    public void onClose()
    {
        if (null != rxBursts)
        {
            for (int i = 0; i < ports.length; i++)
            {
                ports[i].release(rxBursts[i]);
                rxBursts[i].close();
                ports[i].onPollerClose();
            }
            rxBursts = null;
        }
        output.close();
    }

    public String roleName()
    {
        return roleName;
    }

    /** @return the engine. */
    public SprayEngine engine()
    {
        return engine;
    }

    /** @return the parser's counters. */
    public ParseCounters parseCounters()
    {
        return parser.counters();
    }
}
