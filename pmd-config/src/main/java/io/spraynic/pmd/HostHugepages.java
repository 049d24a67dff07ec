package io.spraynic.pmd;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Predicate;

/**
 * What a host offers of 2 MiB hugepages, read from sysfs and {@code /proc/mounts}: pages free and not promised
 * to a mount's {@code min_size} or a mapping already ({@code free_hugepages - resv_hugepages}, as EAL counts
 * them), and the first hugetlbfs of that page size this process may write to.
 *
 * @param available pages free for a new process.
 * @param mount     a hugetlbfs mount point of 2 MiB pages, or empty when none is mounted.
 */
public record HostHugepages(int available, String mount)
{
    /** Bytes per page: x86's default hugepage. */
    public static final long PAGE_BYTES = 2L << 20;

    /** Where the kernel counts 2 MiB pages. */
    public static final Path SYSFS = Path.of("/sys/kernel/mm/hugepages/hugepages-2048kB");

    /** A host without hugepages (or one whose counts cannot be read). */
    public static final HostHugepages NONE = new HostHugepages(0, "");

    /**
     * @return this host's hugepages; {@link #NONE} where sysfs or {@code /proc/mounts} cannot be read.
     */
    public static HostHugepages probe()
    {
        try
        {
            return parse(Files.readString(SYSFS.resolve("free_hugepages")), Files.readString(SYSFS.resolve("resv_hugepages")),
                Files.readString(Path.of("/proc/mounts"), StandardCharsets.UTF_8), mount -> Files.isWritable(Path.of(mount)));
        }
        catch (final IOException | RuntimeException ex)
        {
            return NONE;
        }
    }

    /**
     * @param free     {@code free_hugepages}.
     * @param reserved {@code resv_hugepages}.
     * @param mounts   {@code /proc/mounts}.
     * @param usable   whether this process may create files in a mount point (root's /dev/hugepages is not the
     *                 unprivileged NIC's; deploy/prepare-host.sh --owner mounts one of its own).
     * @return what they say; a count that is not a number counts as none.
     */
    static HostHugepages parse(final String free, final String reserved, final String mounts, final Predicate<String> usable)
    {
        int available;
        try
        {
            available = Math.max(0, Integer.parseInt(free.trim()) - Integer.parseInt(reserved.trim()));
        }
        catch (final NumberFormatException ex)
        {
            available = 0;
        }
        return new HostHugepages(available, twoMegabyteMount(mounts, usable));
    }

    private static String twoMegabyteMount(final String mounts, final Predicate<String> usable)
    {
        for (final String line : mounts.split("\n"))
        {
            final String[] fields = line.trim().split("\\s+");
            // a mount point with a space is written with \040; EAL would have to unescape it too: skip it
            if (fields.length >= 4 && "hugetlbfs".equals(fields[2]) && !fields[1].contains("\\") &&
                pageSizeIsTwoMegabytes(fields[3]) && usable.test(fields[1]))
            {
                return fields[1];
            }
        }
        return "";
    }

    private static boolean pageSizeIsTwoMegabytes(final String options)
    {
        for (final String option : options.split(","))
        {
            if (option.startsWith("pagesize="))
            {
                return option.equals("pagesize=2M") || option.equals("pagesize=2048k");
            }
        }
        return true; // the default hugepage size, 2 MiB on x86
    }

    /** @return whether a hugetlbfs of 2 MiB pages is mounted. */
    public boolean mounted()
    {
        return !mount.isEmpty();
    }

    /** @return a few words for a notice: "12 free 2 MiB hugepages, hugetlbfs at /dev/hugepages". */
    public String describe()
    {
        return available + " free 2 MiB hugepage" + (available == 1 ? "" : "s") + ", " +
            (mounted() ? "hugetlbfs at " + mount : "no hugetlbfs mounted");
    }
}
