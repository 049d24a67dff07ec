package io.spraynic.pmd;

/**
 * Decides how a {@link NicConfig}'s EAL gets its memory under a {@link HugepageMode} on a host: with
 * hugepages it reserves what the mbuf pool needs plus {@link #EAL_OVERHEAD_MB} for EAL's own heap (rings,
 * ethdev data) up front ({@code -m}) on the host's hugetlbfs, and unlinks the page files as soon as they are
 * mapped ({@code --huge-unlink}) so the pages go back to the host when the process ends, however it ends.
 *
 * @param config the configuration to start EAL with.
 * @param notice one line saying which memory it runs from and why, for the log.
 */
public record HugepageChoice(NicConfig config, String notice)
{
    /** MiB EAL takes beside the mbuf pool: its heap, rings, ethdev and mempool headers. */
    public static final int EAL_OVERHEAD_MB = 64;

    /**
     * @param config a loaded configuration.
     * @param mode   auto, on or off.
     * @param host   the host's hugepages, {@link HostHugepages#probe()}.
     * @return the configuration to start with and a notice.
     * @throws IllegalArgumentException for {@link HugepageMode#ON} on a host without enough.
     */
    public static HugepageChoice choose(final NicConfig config, final HugepageMode mode, final HostHugepages host)
    {
        final EalConfig eal = config.eal();
        final int neededMb = memoryNeededMb(config.mempool());
        final int neededPages = (int)((((long)neededMb << 20) + HostHugepages.PAGE_BYTES - 1) / HostHugepages.PAGE_BYTES);
        final boolean hostHasThem = host.mounted() && host.available() >= neededPages;
        if (mode == HugepageMode.OFF)
        {
            final int memoryMb = Math.max(neededMb, eal.noHuge() && eal.memoryMb() != EalConfig.MEMORY_UNSET ?
                eal.memoryMb() : EalConfig.DEFAULT_NO_HUGE_MEMORY_MB);
            return new HugepageChoice(config.withEal(eal.withoutHugepages(memoryMb)),
                "hugepages: off (--hugepages off): EAL runs with --no-huge from " + memoryMb + " MiB of ordinary memory");
        }
        if (!eal.noHuge())
        {
            return new HugepageChoice(config, "hugepages: as configured (eal.no_huge = false)");
        }
        if (hostHasThem)
        {
            return new HugepageChoice(config.withEal(eal.withHugepages(host.mount(), neededPages * 2)),
                "hugepages: " + neededPages + " x 2 MiB from " + host.mount() + " (" + host.available() + " were free)");
        }
        final String lacking = "the host has " + host.describe() + "; the mbuf pool and EAL need " + neededPages;
        if (mode == HugepageMode.ON)
        {
            throw new IllegalArgumentException("--hugepages on: " + lacking +
                " (reserve them with deploy/prepare-host.sh --apply --hugepages " + Math.max(1, neededMb * 2 >> 10) +
                "G, or use --hugepages auto)");
        }
        return new HugepageChoice(config, "hugepages: none used (" + lacking + "); EAL runs with --no-huge");
    }

    /**
     * @param mempool the pool.
     * @return MiB EAL must reserve for it and for itself.
     */
    public static int memoryNeededMb(final MempoolConfig mempool)
    {
        return (int)((mempool.bytesNeeded() + (1 << 20) - 1) >> 20) + EAL_OVERHEAD_MB;
    }
}
