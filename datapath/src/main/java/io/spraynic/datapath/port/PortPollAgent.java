package io.spraynic.datapath.port;

import io.spraynic.datapath.fault.FaultLog;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * A run-to-completion poll loop over one {@link PacketPort}: receive a burst, hand it to a
 * {@link BurstHandler}, release what is left. Run it with Agrona's {@code AgentRunner} and an
 * {@code IdleStrategy}; the work count it returns is the number of packets received, so an idle
 * port backs off and a busy one spins.
 * <p>
 * A handler that throws is caught, counted ({@link #faults()}) and logged with rate limiting; the burst is
 * released whatever happens, so one bad frame cannot wedge the queue.
 */
public final class PortPollAgent implements Agent
{
    private final String roleName;
    private final PacketPort port;
    private final int burstCapacity;
    private final BurstHandler handler;
    private final AtomicCounter rxPackets;
    private final FaultLog faultLog;
    private PacketBurst burst;
    private long faults;

    /**
     * @param rxPackets counter of packets received; may be null.
     */
    public PortPollAgent(
        final String roleName,
        final PacketPort port,
        final int burstCapacity,
        final BurstHandler handler,
        final AtomicCounter rxPackets)
    {
        this.roleName = roleName;
        this.port = port;
        this.burstCapacity = burstCapacity;
        this.handler = handler;
        this.rxPackets = rxPackets;
        this.faultLog = new FaultLog(roleName);
    }

    public void onStart()
    {
        port.onPollerStart();
        burst = port.newBurst(burstCapacity);
    }

    public int doWork()
    {
        final int received = port.receive(burst);
        if (received == 0)
        {
            return 0;
        }
        if (null != rxPackets)
        {
            rxPackets.getAndAddRelease(received);
        }
        int work = 0;
        try
        {
            work = handler.onBurst(port, burst);
        }
        catch (final RuntimeException | AssertionError ex)
        {
            onFault(ex);
        }
        finally
        {
            if (burst.size() > 0)
            {
                port.release(burst);
            }
        }
        return Math.max(work, received);
    }

    // out of line: the exceptional path may allocate
    private void onFault(final Throwable fault)
    {
        faults++;
        faultLog.record("burst", fault);
    }

    /** @return bursts whose handler threw (caught; the burst was released); poll thread. */
    public long faults()
    {
        return faults;
    }

    public void onClose()
    {
        if (null != burst)
        {
            port.release(burst);
            burst.close();
        }
        port.onPollerClose();
    }

    public String roleName()
    {
        return roleName;
    }
}
