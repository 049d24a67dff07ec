package io.spraynic.datapath.telemetry;

import io.spraynic.datapath.transport.spray.SprayConnection;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * A spray connection's current rates in the counters file, beside its event counters: each path's
 * congestion window and smoothed RTT, and the rate the peer's receiver last asked for (S8.3).
 */
public final class SprayGauges implements AutoCloseable
{
    private final SprayConnection connection;
    private final AtomicCounter peerRateHint;
    private final AtomicCounter[] windows;
    private final AtomicCounter[] srtts;

    public SprayGauges(final CountersFile file, final String prefix, final SprayConnection connection)
    {
        this.connection = connection;
        this.peerRateHint = CounterMirror.tryNewCounter(file, prefix + "peer_rate_hint_mbps");
        this.windows = new AtomicCounter[connection.paths()];
        this.srtts = new AtomicCounter[connection.paths()];
        for (int p = 0; p < windows.length; p++)
        {
            windows[p] = CounterMirror.tryNewCounter(file, prefix + "path " + p + " window_packets");
            srtts[p] = CounterMirror.tryNewCounter(file, prefix + "path " + p + " srtt_ns");
        }
    }

    /** Copies the current values (worker thread). */
    public void publish()
    {
        if (null != peerRateHint)
        {
            peerRateHint.setRelease(connection.peerRateHintMbps());
        }
        for (int p = 0; p < windows.length; p++)
        {
            if (null != windows[p])
            {
                windows[p].setRelease(connection.congestionControl().window(p));
            }
            if (null != srtts[p])
            {
                srtts[p].setRelease(connection.rtt().srttNanos(p));
            }
        }
    }

    public void close()
    {
        if (null != peerRateHint)
        {
            peerRateHint.close();
        }
        for (int p = 0; p < windows.length; p++)
        {
            if (null != windows[p])
            {
                windows[p].close();
            }
            if (null != srtts[p])
            {
                srtts[p].close();
            }
        }
    }
}
