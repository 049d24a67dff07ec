package io.spraynic.datapath.port;

/**
 * What a {@link PortPollAgent} does with each received burst. The handler takes ownership of the
 * burst's packets: it transmits them (on this or another port), or releases them; whatever is
 * left in the burst when it returns is released by the agent.
 */
@FunctionalInterface
public interface BurstHandler
{
    /**
     * @return work done, for the agent's idle strategy (usually the packets handled).
     */
    int onBurst(PacketPort port, PacketBurst burst);
}
