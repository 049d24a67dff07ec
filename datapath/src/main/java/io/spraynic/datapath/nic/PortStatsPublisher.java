package io.spraynic.datapath.nic;

import io.spraynic.datapath.telemetry.PortStatsCounters;
import java.util.List;
import java.util.function.BooleanSupplier;

/** A daemon thread that copies the ports' DPDK statistics into the counters file every 100 ms until the NIC closes. */
final class PortStatsPublisher
{
    static final long INTERVAL_MILLIS = 100;

    private final Thread thread;

    private PortStatsPublisher(final Thread thread)
    {
        this.thread = thread;
    }

    /**
     * @param ports   what to publish; their counters are freed when the thread ends.
     * @param closing true once the NIC closes: the thread then publishes no more.
     */
    static PortStatsPublisher start(final List<PortStatsCounters> ports, final BooleanSupplier closing)
    {
        final Thread publisher = new Thread(() ->
        {
            try
            {
                while (!closing.getAsBoolean())
                {
                    for (final PortStatsCounters port : ports)
                    {
                        port.publish();
                    }
                    Thread.sleep(INTERVAL_MILLIS);
                }
            }
            catch (final InterruptedException ignored)
            {
                Thread.currentThread().interrupt();
            }
            finally
            {
                ports.forEach(PortStatsCounters::close);
            }
        }, "spraynic-port-stats");
        publisher.setDaemon(true);
        publisher.start();
        return new PortStatsPublisher(publisher);
    }

    /** Waits (up to a second) for the thread to see the NIC closing and free its counters. */
    void join()
    {
        try
        {
            thread.join(1000);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
