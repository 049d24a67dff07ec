package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.TransportCounters;

/**
 * A connection's idle timeout and keepalive (docs/PROTOCOL.md S12.10). It reads the connection's counters
 * instead of hooking every send and receive: what the peer sent counts only once the connection accepted it
 * (so a forged packet, dropped by the per-packet checks, keeps nothing alive), and the check runs once per
 * quarter keepalive interval, not per packet. A connection that accepted nothing from the peer for
 * {@code idleTimeout} is closed; one that sent nothing for {@code keepaliveInterval} sends a keepalive (an ACK
 * of its first live path), so a live idle connection is never closed by its peer. Allocation-free.
 */
final class Liveness
{
    /** {@link #check}: nothing to do. */
    static final int NOTHING = 0;
    /** {@link #check}: send a keepalive now. */
    static final int KEEPALIVE = 1;
    /** {@link #check}: the peer is gone; close the connection. */
    static final int IDLE = 2;

    private static final int[] RECEIVED = {SprayCounters.RX_PACKETS, SprayCounters.ACKS_RECEIVED,
        SprayCounters.ACKS_STALE, SprayCounters.PROBES_RECEIVED, SprayCounters.NACKS_RECEIVED,
        SprayCounters.QUERIES_RECEIVED, SprayCounters.CLOSES_RECEIVED};
    private static final int[] SENT = {SprayCounters.TX_PACKETS, SprayCounters.RETRANSMITTED,
        SprayCounters.ACKS_SENT, SprayCounters.PROBES_SENT, SprayCounters.NACKS_SENT, SprayCounters.QUERIES_SENT,
        SprayCounters.CLOSES_SENT};
    private static final long NONE = Long.MIN_VALUE;

    // the engine's configuration, whose idle timeout and keepalive interval every connection shares (issue 13: not
    // copied into each connection)
    private final SprayConfig config;
    private long nextCheckAt = NONE;
    private long received;
    private long sent;
    private long receivedAt;
    private long sentAt;

    /**
     * @param config its {@code idleTimeoutNanos} (0: never closed for idleness) and {@link SprayConfig#keepaliveNanos}
     *               (0: no keepalives).
     */
    Liveness(final SprayConfig config)
    {
        this.config = config;
    }

    /**
     * @return {@link #NOTHING}, {@link #KEEPALIVE} (the caller sends one, then calls {@link #keepaliveSent}) or
     * {@link #IDLE}.
     */
    int check(final TransportCounters counters, final long now)
    {
        final long idleTimeoutNanos = Math.max(0, config.idleTimeoutNanos);
        final long keepaliveNanos = Math.max(0, config.keepaliveNanos());
        final long checkEveryNanos = Math.max(1_000, (keepaliveNanos > 0 ? keepaliveNanos : idleTimeoutNanos) / 4);
        if (nextCheckAt == NONE)
        {
            received = sum(counters, RECEIVED);
            sent = sum(counters, SENT);
            receivedAt = now;
            sentAt = now;
            nextCheckAt = now + checkEveryNanos;
            return NOTHING;
        }
        if (now - nextCheckAt < 0 || (idleTimeoutNanos == 0 && keepaliveNanos == 0))
        {
            return NOTHING;
        }
        nextCheckAt = now + checkEveryNanos;
        final long r = sum(counters, RECEIVED);
        if (r != received)
        {
            received = r;
            receivedAt = now;
        }
        final long s = sum(counters, SENT);
        if (s != sent)
        {
            sent = s;
            sentAt = now;
        }
        if (idleTimeoutNanos > 0 && now - receivedAt >= idleTimeoutNanos)
        {
            return IDLE;
        }
        return keepaliveNanos > 0 && now - sentAt >= keepaliveNanos ? KEEPALIVE : NOTHING;
    }

    /** The caller sent a keepalive at {@code now}. */
    void keepaliveSent(final long now)
    {
        sentAt = now;
    }

    private static long sum(final TransportCounters counters, final int[] slots)
    {
        long sum = 0;
        for (final int slot : slots)
        {
            sum += counters.get(slot);
        }
        return sum;
    }
}
