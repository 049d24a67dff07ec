package io.spraynic.datapath.wire;

/**
 * Advancing a reflected CRC-32 register (polynomial 0xEDB88320) over {@code n} zero bytes, {@code Z_n}, for the few
 * {@code n} a receiver sees: a linear map of the register, kept as four 256-entry tables (one per register byte) per
 * length, so that applying it costs four lookups. {@link Icrc} uses it to correct a CRC of the unmasked packet into
 * the ICRC: the masked bytes' difference sits at fixed offsets from the start, and {@code Z_n} carries its
 * contribution over the {@code n} bytes behind the headers.
 * <p>
 * Tables for {@value #SLOTS} lengths are cached, direct-mapped by length. A length not cached gets a table only if at
 * least {@value #CALLS_PER_BUILD} calls passed since the last one was built (a build costs some microseconds), so a
 * stream of ever-changing lengths costs at most one build per {@value #CALLS_PER_BUILD} packets; until then
 * {@link #table} answers null and the caller takes its other path. Not thread-safe: one per {@link Icrc}.
 */
final class CrcShift
{
    static final int SLOTS = 8;
    static final int CALLS_PER_BUILD = 1024;
    private static final int MAX_POWER = 16;
    /** POWERS[k][i]: Z_(2^k) of the register with only bit i set. */
    private static final int[][] POWERS = powers();

    private final int[] lengths = new int[SLOTS];
    private final int[][] tables = new int[SLOTS][4 * 256];
    private final int[] images = new int[32];
    private final int callsPerBuild;
    private int callsSinceBuild;

    /**
     * @param callsPerBuild the fewest calls between two builds ({@link #CALLS_PER_BUILD}; tests use 0).
     */
    CrcShift(final int callsPerBuild)
    {
        this.callsPerBuild = callsPerBuild;
        callsSinceBuild = callsPerBuild;
        java.util.Arrays.fill(lengths, -1);
    }

    /**
     * @param n bytes to advance over, 0 to 65,535.
     * @return the four tables of {@code Z_n} (byte k of the register indexes entries {@code 256 k} on), or null if
     * {@code n} is not cached and no build is due.
     */
    int[] table(final int n)
    {
        if (n < 0 || n >= 1 << MAX_POWER)
        {
            return null;
        }
        final int slot = n & (SLOTS - 1);
        callsSinceBuild++;
        if (lengths[slot] == n)
        {
            return tables[slot];
        }
        if (callsSinceBuild < callsPerBuild)
        {
            return null;
        }
        callsSinceBuild = 0;
        build(n, tables[slot]);
        lengths[slot] = n;
        return tables[slot];
    }

    /**
     * @return {@code Z_n(register)} through tables from {@link #table}.
     */
    static int apply(final int[] table, final int register)
    {
        return table[register & 0xFF] ^ table[256 + ((register >>> 8) & 0xFF)] ^
            table[512 + ((register >>> 16) & 0xFF)] ^ table[768 + (register >>> 24)];
    }

    /**
     * @return {@code Z_n(register)}, bit by bit from the powers: the slow reference {@link #table} is built from.
     */
    static int advance(final int register, final int n)
    {
        int value = register;
        for (int k = 0; k < MAX_POWER; k++)
        {
            if ((n & (1 << k)) != 0)
            {
                value = times(POWERS[k], value);
            }
        }
        return value;
    }

    private void build(final int n, final int[] table)
    {
        for (int i = 0; i < 32; i++)
        {
            images[i] = advance(1 << i, n);
        }
        for (int k = 0; k < 4; k++)
        {
            final int base = 256 * k;
            table[base] = 0;
            for (int b = 1; b < 256; b++)
            {
                table[base + b] = table[base + (b & (b - 1))] ^ images[8 * k + Integer.numberOfTrailingZeros(b)];
            }
        }
    }

    private static int times(final int[] images, final int register)
    {
        int value = 0;
        for (int bits = register; bits != 0; bits &= bits - 1)
        {
            value ^= images[Integer.numberOfTrailingZeros(bits)];
        }
        return value;
    }

    private static int[][] powers()
    {
        final int[][] powers = new int[MAX_POWER][32];
        for (int i = 0; i < 32; i++)
        {
            // one zero byte: eight steps of the reflected shift register
            int register = 1 << i;
            for (int bit = 0; bit < 8; bit++)
            {
                register = (register & 1) != 0 ? (register >>> 1) ^ 0xEDB8_8320 : register >>> 1;
            }
            powers[0][i] = register;
        }
        for (int k = 1; k < MAX_POWER; k++)
        {
            for (int i = 0; i < 32; i++)
            {
                powers[k][i] = times(powers[k - 1], powers[k - 1][i]);
            }
        }
        return powers;
    }
}
