package io.spraynic.datapath.telemetry;

import io.spraynic.datapath.transport.spray.SprayConnection;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * A spray connection's current rates in the counters file, beside its event counters: each path's
 * congestion window, smoothed RTT and retransmission timeout (the one its timer uses now, S6.8), the connection's
 * late margin (S6.8.1), and the rate the peer's receiver last asked for (S8.3). The RTO and the margin tell how long
 * a silent link goes unnoticed, in the units a recovery is judged in (issue 14).
 */
public final class SprayGauges implements AutoCloseable
{
    private final SprayConnection connection;
    private final AtomicCounter peerRateHint;
    private final AtomicCounter[] windows;
    private final AtomicCounter[] srtts;
    private final AtomicCounter[] rtos;
    private final AtomicCounter lateMargin;

    public SprayGauges(final CountersFile file, final String prefix, final SprayConnection connection)
    {
        this.connection = connection;
        this.peerRateHint = CounterMirror.tryNewCounter(file, prefix + "peer_rate_hint_mbps");
        this.windows = new AtomicCounter[connection.paths()];
        this.srtts = new AtomicCounter[connection.paths()];
        this.rtos = new AtomicCounter[connection.paths()];
        this.lateMargin = CounterMirror.tryNewCounter(file, prefix + "late_margin_ns");
        for (int p = 0; p < windows.length; p++)
        {
            windows[p] = CounterMirror.tryNewCounter(file, prefix + "path " + p + " window_packets");
            srtts[p] = CounterMirror.tryNewCounter(file, prefix + "path " + p + " srtt_ns");
            rtos[p] = CounterMirror.tryNewCounter(file, prefix + "path " + p + " rto_ns");
        }
    }

    /** Copies the current values (worker thread). */
    public void publish()
    {
        if (null != peerRateHint)
        {
            peerRateHint.setRelease(connection.peerRateHintMbps());
        }
        if (null != lateMargin)
        {
            lateMargin.setRelease(connection.rtt().lateMarginNanos());
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
            if (null != rtos[p])
            {
                rtos[p].setRelease(connection.rtoNanos(p));
            }
        }
    }

    public void close()
    {
        if (null != peerRateHint)
        {
            peerRateHint.close();
        }
        if (null != lateMargin)
        {
            lateMargin.close();
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
            if (null != rtos[p])
            {
                rtos[p].close();
            }
        }
    }
}
