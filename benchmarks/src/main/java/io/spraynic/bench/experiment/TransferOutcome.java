package io.spraynic.bench.experiment;

/**
 * What one bulk transfer achieved (simulated, or in real time for {@link RealTimeLossSweep}).
 *
 * @param bytesRequested bytes the workload asked to move.
 * @param bytesCompleted bytes of messages completed successfully (and verified) in the time allowed.
 * @param nanos          time (virtual, or real) from the first post to the last completion (or the time limit).
 * @param lost           data packets the fabric dropped (random loss, tail drops, blackholes); dropped
 *                       acknowledgements and control packets are not counted.
 * @param retransmitted  data packets the transport sent again.
 * @param verified       whether every completed message's bytes arrived intact at their place.
 * @param timeouts       retransmission timeouts and tail-loss probes the sender fired (timer-driven sends,
 *                       as opposed to loss detected from acknowledgements); -1 where the run does not count
 *                       them (the real-time loss sweep).
 */
public record TransferOutcome(
    long bytesRequested, long bytesCompleted, long nanos, long lost, long retransmitted, boolean verified, long timeouts)
{
    public double goodputGbps()
    {
        return nanos == 0 ? 0 : bytesCompleted * 8.0 / nanos;
    }

    public boolean complete()
    {
        return bytesCompleted == bytesRequested;
    }

    /**
     * @return retransmitted / lost packets, or NaN when nothing was lost.
     */
    public double retransmitPerLoss()
    {
        return lost == 0 ? Double.NaN : (double)retransmitted / lost;
    }
}
