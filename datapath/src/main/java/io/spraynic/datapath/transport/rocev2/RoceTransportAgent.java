package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.fault.FaultLog;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.port.PortFrameSink;
import io.spraynic.datapath.wire.FrameClass;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceParser;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.NanoClock;

import java.util.Map;

/**
 * Glues an {@link RcEngine} to a {@link PacketPort}, run-to-completion: receive a burst, parse each frame
 * ({@link RoceParser}: malformed frames are counted there and never reach the engine), give RoCEv2 packets
 * to the engine, free the burst, tick the engine with the driver's clock, transmit what it wrote. Run it on
 * an Agrona {@code AgentRunner}, or call {@link #doWork()} from a test loop to step it deterministically.
 * <p>
 * The engine, its QPs and the protection domain belong to this agent's thread: post work requests and poll
 * completions from that thread (completion queues may be polled from another).
 * <p>
 * A frame, tick or flush that throws is caught, counted ({@link #faults()}) and logged with rate limiting
 * ({@link FaultLog}), and the loop goes on; the receive burst is always released.
 */
public final class RoceTransportAgent implements Agent
{
    private final String roleName;
    private final PacketPort port;
    private final PortFrameSink sink;
    private final RcEngine engine;
    private final RoceParser parser;
    private final NanoClock clock;
    private final int burstCapacity;
    private final RoceFrame frame = new RoceFrame();
    private final FaultLog faultLog;
    private PacketBurst rxBurst;
    private long faults;

    /**
     * @param roleName      for logs.
     * @param port          the port.
     * @param sink          the engine's sink, over the same port.
     * @param engine        the engine.
     * @param parseCounters where parse outcomes are counted.
     * @param clock         the time the engine sees.
     * @param burstCapacity frames per RX burst.
     */
    public RoceTransportAgent(
        final String roleName,
        final PacketPort port,
        final PortFrameSink sink,
        final RcEngine engine,
        final ParseCounters parseCounters,
        final NanoClock clock,
        final int burstCapacity)
    {
        this.roleName = roleName;
        this.port = port;
        this.sink = sink;
        this.engine = engine;
        this.parser = new RoceParser(parseCounters);
        this.clock = clock;
        this.burstCapacity = burstCapacity;
        this.faultLog = new FaultLog(roleName);
    }

    public void onStart()
    {
        port.onPollerStart();
        rxBurst = port.newBurst(burstCapacity);
        sink.onStart();
    }

    public int doWork()
    {
        if (null == rxBurst)
        {
            onStart();
        }
        final long now = clock.nanoTime();
        final int received = receive(now);
        int work = 0;
        try
        {
            work = engine.onTick(now);
        }
        catch (final RuntimeException | AssertionError ex)
        {
            onFault("tick", ex);
        }
        try
        {
            sink.flush(); // also after a tick that threw: what it wrote completely still goes out
        }
        catch (final RuntimeException | AssertionError ex)
        {
            onFault("flush", ex);
        }
        return received + work;
    }

    private int receive(final long now)
    {
        final PacketBurst burst = rxBurst;
        final int n = port.receive(burst);
        if (n == 0)
        {
            return 0;
        }
        try
        {
            for (int i = 0; i < n; i++)
            {
                try
                {
                    if (parser.parse(burst.memory(), burst.offset(i), burst.length(i), frame) == FrameClass.ROCE)
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
            port.release(burst); // never left to the next poll, which would append to it
        }
        return n;
    }

    // out of line: the loops stay small for the JIT; the exceptional path may allocate
    private void onFault(final String where, final Throwable fault)
    {
        faults++;
        faultLog.record(where, fault);
    }

    /** @return frames, ticks and flushes that threw (caught, dropped); agent thread. */
    public long faults()
    {
        return faults;
    }

    /** @return faults per reason ("where class"), a copy: what a test or a report reads. */
    public Map<String, Long> faultCounts()
    {
        return faultLog.counts();
    }

    public void onClose()
    {
        if (null != rxBurst)
        {
            port.release(rxBurst);
            rxBurst.close();
            rxBurst = null;
        }
        sink.close();
        port.onPollerClose();
    }

    public String roleName()
    {
        return roleName;
    }

    /** @return the engine. */
    public RcEngine engine()
    {
        return engine;
    }

    /** @return the parser's counters. */
    public ParseCounters parseCounters()
    {
        return parser.counters();
    }
}
