package io.spraynic.bench.e2e;

import java.util.Locale;

/**
 * One throughput point.
 *
 * @param name         what carried it ({@code spray}, {@code rocev2}, {@code udp}).
 * @param mtu          payload bytes per packet (datagram for UDP).
 * @param messageBytes bytes per message.
 * @param messages     messages completed in the measured window.
 * @param packets      data packets (datagrams for UDP) of those messages.
 * @param bytes        payload bytes of those messages.
 * @param nanos        the window.
 * @param cpuNanos     CPU time the sending and receiving threads used in the window (user + system).
 * @param verified     every byte arrived where it should (UDP: every datagram's length and stamp checked).
 * @param retransmitted data packets sent again (0 for UDP, which never resends).
 */
public record ThroughputResult(String name, int mtu, int messageBytes, long messages, long packets, long bytes, long nanos,
    long cpuNanos, boolean verified, long retransmitted)
{
    public double mpps()
    {
        return packets * 1e3 / nanos;
    }

    public double gbps()
    {
        return bytes * 8.0 / nanos;
    }

    /** @return cores the two threads kept busy on average. */
    public double cores()
    {
        return (double)cpuNanos / nanos;
    }

    /** @return packets per second for each core's worth of CPU time used. */
    public double mppsPerCore()
    {
        return cpuNanos == 0 ? 0 : packets * 1e3 / cpuNanos;
    }

    public String toJson()
    {
        return String.format(Locale.ROOT,
            "{\"name\":\"%s\",\"mtu\":%d,\"messageBytes\":%d,\"messages\":%d,\"packets\":%d,\"seconds\":%.3f,\"mpps\":%.4f," +
            "\"gbps\":%.3f,\"cores\":%.3f,\"mppsPerCore\":%.4f,\"verified\":%b,\"retransmitted\":%d}",
            name, mtu, messageBytes, messages, packets, nanos / 1e9, mpps(), gbps(), cores(), mppsPerCore(), verified,
            retransmitted);
    }

    public String toText()
    {
        return String.format(Locale.ROOT, "%-7s mtu %4d %8d B: %8.3f Mpps %8.2f Gb/s  %.2f cores -> %.3f Mpps/core  %s%s",
            name, mtu, messageBytes, mpps(), gbps(), cores(), mppsPerCore(), verified ? "verified" : "NOT VERIFIED",
            retransmitted > 0 ? "  (" + retransmitted + " retransmitted)" : "");
    }
}
