package io.spraynic.cli;

import io.spraynic.pmd.HostHugepages;
import io.spraynic.pmd.HugepageChoice;
import io.spraynic.pmd.HugepageMode;
import io.spraynic.pmd.NicConfig;
import picocli.CommandLine.Option;

/**
 * {@code --hugepages auto|on|off}, mixed into every command that brings DPDK up: auto runs EAL from 2 MiB
 * hugepages when the host has enough free and a hugetlbfs mounted, else with {@code --no-huge}; the choice is
 * one line on stderr.
 */
final class HugepagesOption
{
    static final String DESCRIPTION = "auto: 2 MiB hugepages when the host has enough free and a hugetlbfs mounted, " +
        "else --no-huge, said on stderr; on: hugepages or refuse to start; off: --no-huge (default ${DEFAULT-VALUE}).";

    @Option(names = "--hugepages", defaultValue = "auto", paramLabel = "auto|on|off", description = DESCRIPTION)
    String hugepages;

    /**
     * @param config the loaded configuration.
     * @return the configuration EAL starts with, after the notice is printed.
     */
    NicConfig apply(final NicConfig config)
    {
        if (config.onlyUdpPorts())
        {
            return config; // kernel UDP sockets: no EAL, nothing to choose
        }
        final HugepageChoice choice = HugepageChoice.choose(config, mode(), HostHugepages.probe());
        System.err.println("spraynic: " + choice.notice());
        return choice.config();
    }

    /** @return the mode given. */
    HugepageMode mode()
    {
        try
        {
            return HugepageMode.parse(hugepages);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new BadOption("--hugepages", hugepages, "must be auto, on or off", "try --hugepages auto");
        }
    }
}
