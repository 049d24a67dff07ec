package io.spraynic.datapath.nic;

import io.spraynic.dpdk.EthPort;
import io.spraynic.dpdk.PortStats;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * A DPDK port's statistics ({@code rte_eth_stats_get}) mirrored into the counters file, like
 * {@code ethtool -S}: copied by a control thread every so often (the PMD keeps them; reading them does not
 * disturb the poll threads).
 */
final class PortStatsCounters implements AutoCloseable
{
    private final EthPort port;
    private final AtomicCounter[] counters;

    PortStatsCounters(final CountersFile file, final EthPort port, final String name)
    {
        this.port = port;
        final String prefix = "port " + name + ": dpdk ";
        final String[] labels = {"rx packets", "tx packets", "rx bytes", "tx bytes", "rx missed", "rx errors", "tx errors",
            "rx no mbuf"};
        counters = new AtomicCounter[labels.length];
        for (int i = 0; i < labels.length; i++)
        {
            counters[i] = file.newCounter(prefix + labels[i]);
        }
    }

    /** Copies the port's statistics now (control path: allocates the statistics record). */
    void publish()
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
    }

    public void close()
    {
        for (final AtomicCounter counter : counters)
        {
            counter.close();
        }
    }
}
