package io.spraynic.cli;

import io.spraynic.datapath.telemetry.CountersFileDescriptor;
import io.spraynic.datapath.telemetry.CountersFileReader;
import io.spraynic.datapath.telemetry.PortStatsCounters;
import io.spraynic.datapath.nic.ipc.IpcFileDescriptor;
import io.spraynic.datapath.nic.ipc.NicClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * {@code spraynic health}: a probe for an orchestrator (Kubernetes' exec probes, a container's HEALTHCHECK). Live: a
 * NIC serves the IPC directory and its conductor's heartbeat is fresh (the conductor starts after the ports). Ready:
 * live, its live counters file holds the ports' counters, and no port's link is down (DPDK ports report their link
 * state; a kernel UDP socket port has no link, and a PMD that cannot tell is not held against readiness). Exit 0 and one line when so, else 1 and one sentence
 * saying why not.
 */
@Command(name = "health", mixinStandardHelpOptions = true,
    description = "Exit 0 when a NIC serves the IPC directory with a fresh heartbeat (liveness); with --ready, when " +
        "its counters file also holds started ports whose links are up (readiness). Else say why and exit 1.")
final class HealthCommand implements Callable<Integer>
{
    /** Each port's counters carry this label prefix from the moment the port has started. */
    static final String PORT_COUNTER_PREFIX = "port ";

    @Option(names = "--ipc-dir", paramLabel = "DIR",
        description = "The NIC's IPC directory (default: $SPRAYNIC_IPC_DIR, else /dev/shm/spraynic-$USER).")
    Path ipcDir;

    @Option(names = "--dir", paramLabel = "DIR",
        description = "Where the NIC's counters file is (default: $SPRAYNIC_RUN_DIR or /dev/shm/spraynic).")
    Path runDir;

    @Option(names = "--max-age", paramLabel = "SECONDS", defaultValue = "5",
        description = "The oldest heartbeat taken for a live NIC (default ${DEFAULT-VALUE}).")
    double maxAgeSeconds;

    @Option(names = "--ready", description = "Also require started ports, none with its link down, in the live counters file.")
    boolean ready;

    public Integer call()
    {
        BadOption.range("--max-age", maxAgeSeconds, 0.1, 3_600, 5);
        final Path ipc = null == ipcDir ? IpcFileDescriptor.defaultDirectory() : ipcDir;
        final String problem = NicClient.checkServed(ipc, (long)(maxAgeSeconds * 1000));
        if (null != problem)
        {
            System.err.println("spraynic health: not live: " + problem);
            return 1;
        }
        if (ready)
        {
            final Path dir = null == runDir ? CountersFileDescriptor.defaultDirectory() : runDir;
            final Path file = CountersFileReader.findLive(dir).orElse(null);
            if (null == file)
            {
                System.err.println("spraynic health: not ready: no live counters file in " + dir);
                return 1;
            }
            try (CountersFileReader reader = CountersFileReader.open(file))
            {
                final List<CountersFileReader.Counter> counters = reader.read();
                if (counters.stream().noneMatch(counter -> counter.label().startsWith(PORT_COUNTER_PREFIX)))
                {
                    System.err.println("spraynic health: not ready: " + file + " has no port counters yet (ports not started)");
                    return 1;
                }
                final List<String> down = portsWithLinkDown(counters);
                if (!down.isEmpty())
                {
                    System.err.println("spraynic health: not ready: link down on port " + String.join(", ", down));
                    return 1;
                }
            }
        }
        System.out.printf(Locale.ROOT, "spraynic health: %s: %s%n", ready ? "ready" : "live", ipc);
        return 0;
    }

    /** @return the names of the ports whose link-state counter says down (0), in the file's order. */
    static List<String> portsWithLinkDown(final List<CountersFileReader.Counter> counters)
    {
        final String suffix = ": " + PortStatsCounters.LINK_UP_LABEL;
        final List<String> down = new ArrayList<>();
        for (final CountersFileReader.Counter counter : counters)
        {
            final String label = counter.label();
            if (label.startsWith(PORT_COUNTER_PREFIX) && label.endsWith(suffix) && 0 == counter.value())
            {
                down.add(label.substring(PORT_COUNTER_PREFIX.length(), label.length() - suffix.length()));
            }
        }
        return down;
    }
}
