package io.spraynic.dpdk;

/**
 * A port's link as {@code rte_eth_link_get_nowait} reports it.
 */
public record LinkStatus(boolean up, long speedMbps, boolean fullDuplex, boolean autonegotiated)
{
    public String toString()
    {
        return (up ? "up" : "down") + " " + speedMbps + " Mbps " + (fullDuplex ? "full-duplex" : "half-duplex") +
            (autonegotiated ? " autoneg" : "");
    }
}
