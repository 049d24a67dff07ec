package io.spraynic.dpdk;

/**
 * A port's basic counters ({@code rte_eth_stats}).
 */
public record PortStats(
    long rxPackets,
    long txPackets,
    long rxBytes,
    long txBytes,
    long rxMissed,
    long rxErrors,
    long txErrors,
    long rxNoMbuf)
{
}
