package io.spraynic.cli;

import java.util.Locale;

/**
 * A command-line value out of range: one sentence that names the option, the value given, what is allowed
 * and a value that works ({@code --burst 1000: must be 1..512; try --burst 512}). The command line's handler
 * prints it alone (no usage) and exits with 2, as for a value of the wrong type.
 * <p>
 * The checks return the value, so a command validates where it reads: {@code BadOption.range("--burst", burst, 1, 512)}.
 */
final class BadOption extends IllegalArgumentException
{
    private static final long serialVersionUID = 1L;

    BadOption(final String option, final String value, final String allowed, final String fix)
    {
        super(option + " " + value + ": " + allowed + "; " + fix);
    }

    /** A whole number in {@code min..max}; the fix is the nearest allowed value. */
    static long range(final String option, final long value, final long min, final long max)
    {
        if (value < min || value > max)
        {
            throw new BadOption(option, Long.toString(value), "must be " + min + ".." + max,
                "try " + option + " " + Math.clamp(value, min, max));
        }
        return value;
    }

    /** {@link #range(String, long, long, long)} for an int. */
    static int range(final String option, final int value, final int min, final int max)
    {
        return (int)range(option, (long)value, min, max);
    }

    /** A whole number at least {@code min}. */
    static long atLeast(final String option, final long value, final long min)
    {
        if (value < min)
        {
            throw new BadOption(option, Long.toString(value), "must be at least " + min, "try " + option + " " + min);
        }
        return value;
    }

    /** A size (k/m/g suffixes) in {@code min..max} bytes; the fix is the nearest allowed size. */
    static long size(final String option, final long value, final long min, final long max)
    {
        if (value < min || value > max)
        {
            throw new BadOption(option, size(value), "must be " + (max == Long.MAX_VALUE ? "at least " + size(min) :
                size(min) + ".." + size(max)), "try " + option + " " + size(Math.clamp(value, min, max)));
        }
        return value;
    }

    /**
     * A size of at least {@code min} bytes of which a command holds {@code copies} in memory at once: refused when they
     * would not fit the host's memory (before, a terabyte ended in an allocation failure after DPDK had started, and
     * tens of gigabytes in the kernel's OOM killer once the pattern was written).
     */
    static long sizeInMemory(final String option, final long value, final long min, final int copies)
    {
        final long hostBytes = hostMemoryBytes();
        final long most = Math.max(min, hostBytes / copies & -(1L << 20)); // whole MiB
        if (value >= min && value <= most)
        {
            return value;
        }
        if (value < min)
        {
            return size(option, value, min, most);
        }
        throw new BadOption(option, size(value), "is held " + copies + " times over in memory, and this host's " +
            size(hostBytes) + " holds " + size(most) + " that often", "try " + option + " " + size(most));
    }

    /**
     * @return the memory this process may use: the host's ({@code /proc/meminfo}), or its control group's limit where
     * lower (a container's); {@code Long.MAX_VALUE} where neither says. From files, not {@code com.sun.management}:
     * the container image's runtime has no jdk.management.
     */
    private static long hostMemoryBytes()
    {
        long bytes = Long.MAX_VALUE;
        try
        {
            for (final String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/meminfo")))
            {
                if (line.startsWith("MemTotal:"))
                {
                    bytes = Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024; // "MemTotal:  23456789 kB"
                }
            }
        }
        catch (final java.io.IOException | NumberFormatException ignored)
        {
            // not Linux: no bound from the host
        }
        // the container's limit: cgroup v2, else v1 (whose "no limit" is a huge number, which min leaves alone)
        for (final String limitFile : new String[]{"/sys/fs/cgroup/memory.max",
            "/sys/fs/cgroup/memory/memory.limit_in_bytes"})
        {
            try
            {
                final String limit = java.nio.file.Files.readString(java.nio.file.Path.of(limitFile)).strip();
                if (!limit.equals("max"))
                {
                    bytes = Math.min(bytes, Long.parseLong(limit));
                }
            }
            catch (final java.io.IOException | NumberFormatException ignored)
            {
                // not this cgroup version
            }
        }
        return bytes;
    }

    /** A finite number {@code min <= value < maxExclusive}, e.g. a loss rate below 100 %. */
    static double below(final String option, final double value, final double min, final double maxExclusive,
        final double example)
    {
        if (!(value >= min && value < maxExclusive))
        {
            throw new BadOption(option, number(value), "must be at least " + number(min) + " and below " +
                number(maxExclusive), "try " + option + " " + number(example));
        }
        return value;
    }

    /** A finite number in {@code min..max}. */
    static double range(final String option, final double value, final double min, final double max, final double example)
    {
        if (!(value >= min && value <= max))
        {
            throw new BadOption(option, number(value), "must be " + number(min) + ".." + number(max),
                "try " + option + " " + number(example));
        }
        return value;
    }

    /** @return a size as the options take it: 64k, 1m, 3g, or bytes. */
    static String size(final long bytes)
    {
        for (final String unit : new String[]{"g", "m", "k"})
        {
            final int shift = unit.equals("g") ? 30 : unit.equals("m") ? 20 : 10;
            if (bytes != 0 && bytes % (1L << shift) == 0)
            {
                return (bytes >> shift) + unit;
            }
        }
        return Long.toString(bytes);
    }

    static String number(final double value)
    {
        return value == Math.rint(value) && Math.abs(value) < 1e15 ? Long.toString((long)value) :
            String.format(Locale.ROOT, "%s", value);
    }
}
