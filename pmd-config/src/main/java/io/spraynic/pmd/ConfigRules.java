package io.spraynic.pmd;

import java.util.List;

/**
 * Every rule a {@link NicConfig} must satisfy, checked in one place so that a configuration built in
 * code is held to the same rules as one read from a file, and every failure names its key.
 * <p>
 * This class holds the ranges the parser shares and the order of the checks; the rules themselves are grouped by
 * what they check: {@link EalRules}, {@link MempoolRules}, {@link PortRules} and {@link DriverArgumentRules}.
 * <p>
 * The limits are DPDK 22.11's where DPDK has one ({@code RTE_MEMPOOL_CACHE_MAX_SIZE}, the mempool name
 * length, {@code RTE_MAX_ETHPORTS}), and SprayNIC's choice where it does not (64 queues per direction).
 */
final class ConfigRules
{
    /** How the values a rule accepts are spaced. */
    enum Step
    {
        ANY, POWER_OF_TWO, MULTIPLE_OF_8
    }

    /**
     * An integer range, shared by the parser (for values that do not even fit an int) and the rules,
     * so the message for a value is the same wherever it fails.
     *
     * @param min  smallest accepted value.
     * @param max  largest accepted value.
     * @param step spacing of accepted values.
     */
    record IntRule(long min, long max, Step step)
    {
        boolean accepts(final long value)
        {
            if (value < min || value > max)
            {
                return false;
            }

            return switch (step)
            {
                case ANY -> true;
                case POWER_OF_TWO -> Long.bitCount(value) == 1;
                case MULTIPLE_OF_8 -> (value & 7) == 0;
            };
        }

        String allowed()
        {
            return switch (step)
            {
                case ANY -> "must be an integer between " + min + " and " + max;
                case POWER_OF_TWO -> "must be a power of two between " + min + " and " + max;
                case MULTIPLE_OF_8 -> "must be a multiple of 8 between " + min + " and " + max;
            };
        }

        long nearest(final long value)
        {
            final long clamped = Math.clamp(value, min, max);
            return switch (step)
            {
                case ANY -> clamped;
                case POWER_OF_TWO ->
                {
                    final long below = Long.highestOneBit(clamped);
                    final long above = below == clamped ? clamped : below << 1;
                    yield above <= max && above - clamped < clamped - below ? above : below;
                }
                case MULTIPLE_OF_8 -> clamped & ~7L;
            };
        }

        void check(final String key, final long value)
        {
            if (!accepts(value))
            {
                throw new ConfigException(key, Long.toString(value), allowed(), "use " + nearest(value));
            }
        }
    }

    static final IntRule QUEUES = new IntRule(1, 64, Step.ANY);
    static final IntRule DESCRIPTORS = new IntRule(64, 32768, Step.POWER_OF_TWO);
    static final IntRule MTU = new IntRule(68, 9600, Step.ANY);
    static final IntRule MEMORY_MB = new IntRule(64, 1 << 20, Step.ANY);
    static final IntRule SOCKET_MEM_MB = new IntRule(0, 1 << 20, Step.ANY);
    static final IntRule MBUFS = new IntRule(64, (1 << 24) - 1, Step.ANY);
    static final IntRule CACHE = new IntRule(0, 512, Step.ANY);
    static final IntRule DATA_ROOM = new IntRule(MempoolConfig.HEADROOM + 128, 65535, Step.ANY);
    static final IntRule PRIV_SIZE = new IntRule(0, 65528, Step.MULTIPLE_OF_8);
    static final IntRule SOCKET_ID = new IntRule(MempoolConfig.SOCKET_ID_ANY, 31, Step.ANY);

    /** {@code memory_mb}: 0 leaves {@code -m} out, anything else is a real size. */
    static final String MEMORY_MB_ALLOWED =
        "must be 0 (let EAL decide) or an integer between " + MEMORY_MB.min() + " and " + MEMORY_MB.max();

    private ConfigRules()
    {
    }

    /**
     * Checks a whole configuration, throwing on the first failure.
     *
     * @param eal     the EAL table.
     * @param mempool the mempool table.
     * @param ports   the ports in file order.
     */
    static void check(final EalConfig eal, final MempoolConfig mempool, final List<PortConfig> ports)
    {
        EalRules.check(eal);
        MempoolRules.check(mempool);
        PortRules.checkCount(ports);
        for (int i = 0; i < ports.size(); i++)
        {
            PortRules.check(prefix(i), ports.get(i));
        }
        PortRules.checkUniqueness(ports);
        PortRules.checkKindsAgree(ports);
        PortRules.checkRingPairs(ports);
        DriverArgumentRules.check(eal, ports);
        EalRules.checkPciBus(eal, ports);
        MempoolRules.checkSize(eal, mempool, ports);
    }

    /** @return the key prefix of the port at {@code index} in file order, e.g. {@code port[1].}. */
    static String prefix(final int index)
    {
        return "port[" + index + "].";
    }

    /** @return the key of {@code field} of the port at {@code index}, e.g. {@code port[1].mtu}. */
    static String key(final int index, final String field)
    {
        return prefix(index) + field;
    }
}
