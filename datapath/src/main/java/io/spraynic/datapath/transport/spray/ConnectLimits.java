package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.TokenBucket;

import java.util.HashMap;
import java.util.Map;

/**
 * The responder's limits (docs/PROTOCOL.md S12.9): accepted connections per source address, and a token bucket
 * that bounds the {@code SPRAY_CONNECT_RETRY}s and {@code SPRAY_CONNECT_REJECT}s an engine sends, so that
 * spoofed CONNECTs cannot turn it into a reflector beyond that rate. Control path only.
 */
final class ConnectLimits
{
    /** A source address: IPv4 as its IPv4-mapped IPv6 form. */
    record Source(long high, long low)
    {
    }

    private final int perSource;
    private final TokenBucket responses;
    private final Map<Source, int[]> bySource = new HashMap<>();

    /**
     * @param perSource     most accepted connections from one source address.
     * @param responsesPerSecond RETRYs and REJECTs this engine may send per second, on average.
     * @param burst         most it may send at once.
     */
    ConnectLimits(final int perSource, final int responsesPerSecond, final int burst)
    {
        this.perSource = perSource;
        this.responses = new TokenBucket(responsesPerSecond, burst);
    }

    /** @return whether a RETRY or REJECT may go now (takes a token if so). */
    boolean tryRespond(final long nowNanos)
    {
        return responses.tryTake(nowNanos);
    }

    /** @return whether {@code source} may open another connection. */
    boolean sourceHasRoom(final Source source)
    {
        final int[] n = bySource.get(source);
        return null == n || n[0] < perSource;
    }

    void opened(final Source source)
    {
        bySource.computeIfAbsent(source, s -> new int[1])[0]++;
    }

    void closed(final Source source)
    {
        final int[] n = bySource.get(source);
        if (null != n && --n[0] <= 0)
        {
            bySource.remove(source);
        }
    }

    /** @return accepted connections from {@code source} now. */
    int connections(final Source source)
    {
        final int[] n = bySource.get(source);
        return null == n ? 0 : n[0];
    }
}
