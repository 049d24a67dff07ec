package io.spraynic.datapath.telemetry;

import io.spraynic.dpdk.DpdkException;
import io.spraynic.dpdk.EthPort;
import io.spraynic.dpdk.LinkStatus;
import io.spraynic.dpdk.PortStats;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * A DPDK port's statistics ({@code rte_eth_stats_get}) mirrored into the counters file, like
 * {@code ethtool -S}: copied by a control thread every so often (the PMD keeps them; reading them does not
 * disturb the poll threads). The link's state goes with them, so that a readiness probe can tell a port whose link is
 * down (a cable pulled, a tap interface down) from one that carries traffic.
 */
public final class PortStatsCounters implements AutoCloseable
{
    /**
     * Label, after the port's {@code "port NAME: "} prefix, of the counter that is 1 while the link is up, 0 while it
     * is down, and -1 where the PMD cannot tell.
     */
    public static final String LINK_UP_LABEL = "link up (1 up, 0 down, -1 unknown)";
    /** Label, after the port's prefix, of the link's speed in Mb/s as the PMD reports it (0 when down or unknown). */
    public static final String LINK_SPEED_LABEL = "link speed mbps";

    private final EthPort port;
    private final AtomicCounter[] counters;
    private final AtomicCounter linkUp;
    private final AtomicCounter linkSpeedMbps;

    public PortStatsCounters(final CountersFile file, final EthPort port, final String name)
    {
        this.port = port;
        final String prefix = portPrefix(name) + "dpdk ";
        final String[] labels = {"rx packets", "tx packets", "rx bytes", "tx bytes", "rx missed", "rx errors", "tx errors",
            "rx no mbuf"};
        counters = new AtomicCounter[labels.length];
        for (int i = 0; i < labels.length; i++)
        {
            counters[i] = file.newCounter(prefix + labels[i]);
        }
        linkUp = file.newCounter(portPrefix(name) + LINK_UP_LABEL);
        linkSpeedMbps = file.newCounter(portPrefix(name) + LINK_SPEED_LABEL);
    }

    /** @return the prefix of every counter label of the port named {@code name}. */
    public static String portPrefix(final String name)
    {
        return "port " + name + ": ";
    }

    /** Copies the port's statistics now (control path: allocates the statistics record). */
    public void publish()
    {
        final PortStats stats = port.stats();
        counters[0].setRelease(stats.rxPackets());
        counters[1].setRelease(stats.txPackets());
        counters[2].setRelease(stats.rxBytes());
        counters[3].setRelease(stats.txBytes());
        counters[4].setRelease(stats.rxMissed());
        counters[5].setRelease(stats.rxErrors());
        counters[6].setRelease(stats.txErrors());
        counters[7].setRelease(stats.rxNoMbuf());
        try
        {
            final LinkStatus link = port.link();
            linkUp.setRelease(link.up() ? 1 : 0);
            linkSpeedMbps.setRelease(link.up() ? link.speedMbps() : 0);
        }
        catch (final DpdkException ex) // a PMD without link_update: its link state is unknown, not down
        {
            linkUp.setRelease(-1);
            linkSpeedMbps.setRelease(0);
        }
    }

    public void close()
    {
        for (final AtomicCounter counter : counters)
        {
            counter.close();
        }
        linkUp.close();
        linkSpeedMbps.close();
    }
}
