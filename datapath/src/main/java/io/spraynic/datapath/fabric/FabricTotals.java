package io.spraynic.datapath.fabric;

/**
 * A snapshot of a fabric's counters summed over all hosts, links and switches. Every frame a host sent is
 * either received, unclaimed, dropped (for one counted reason) or still inside: see {@link #isConserved}.
 *
 * @param framesSent          frames hosts' endpoints sent that the fabric took.
 * @param sendsRefused        sends refused (transmit queue full, no free slot, or too long).
 * @param framesReceived      frames handed to endpoints.
 * @param framesUnclaimed     frames that reached a host with no endpoint.
 * @param tailDrops           frames dropped at full queues.
 * @param randomLossDrops     frames lost at random.
 * @param blackholeDrops      frames dropped by blackholes.
 * @param linkDownDrops       frames dropped on down links.
 * @param switchDrops         frames dropped by switches (malformed, no route, no live port).
 * @param ecnMarked           frames marked Congestion Experienced (a frame may be marked at several hops
 *                            only once: marking needs an ECN-capable, not yet marked frame).
 * @param framesInFabric      frames queued, on a wire or being delivered now.
 */
public record FabricTotals(
    long framesSent,
    long sendsRefused,
    long framesReceived,
    long framesUnclaimed,
    long tailDrops,
    long randomLossDrops,
    long blackholeDrops,
    long linkDownDrops,
    long switchDrops,
    long ecnMarked,
    long framesInFabric)
{
    /** @return frames dropped inside the fabric, for any reason. */
    public long drops()
    {
        return tailDrops + randomLossDrops + blackholeDrops + linkDownDrops + switchDrops;
    }

    /**
     * @return true if every frame sent is accounted for: received, unclaimed, dropped, or still inside.
     * (Frames endpoints inject other than by sending, none today, would break it.)
     */
    public boolean isConserved()
    {
        return framesSent == framesReceived + framesUnclaimed + drops() + framesInFabric;
    }
}
