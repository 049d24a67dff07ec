package io.spraynic.datapath.nic;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A connection's ring and completion queues grow up to what {@link EmbeddedNicConfig#queues} gives, so a hostile or
 * mistaken capacity or depth (0, negative, 2^31 - 1) is refused there, naming the setting and its range, before any
 * connection is made with it.
 */
@Timeout(10)
class EmbeddedNicQueuesConfigTest
{
    private static final int[] HOSTILE = {0, -1, Integer.MIN_VALUE, Integer.MAX_VALUE};

    @Test
    void refusesACapacityOrDepthOutOfRangeNamingIt()
    {
        for (final int value : HOSTILE)
        {
            assertRefused("ring", value, "1..2^20", () -> new EmbeddedNicConfig().queues(value, 4096, 1024, 1024));
            assertRefused("cq", value, "1..2^24", () -> new EmbeddedNicConfig().queues(1024, value, 1024, 1024));
            assertRefused("send queue depth", value, "1..65536",
                () -> new EmbeddedNicConfig().queues(1024, 4096, value, 1024));
            assertRefused("receive queue depth", value, "1..65536",
                () -> new EmbeddedNicConfig().queues(1024, 4096, 1024, value));
        }
        assertRefused("ring", (1 << 20) + 1, "1..2^20", () -> new EmbeddedNicConfig().queues((1 << 20) + 1, 1, 1, 1));
        assertRefused("cq", (1 << 24) + 1, "1..2^24", () -> new EmbeddedNicConfig().queues(1, (1 << 24) + 1, 1, 1));
    }

    @Test
    void refusesAnIdlePeriodUnderAMillisecond()
    {
        for (final long value : new long[]{0, -1, 999_999, Long.MIN_VALUE})
        {
            final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new EmbeddedNicConfig().queuesIdle(value));
            assertEquals("embedded NIC setting 'queues idle ns' = " + value + " is out of range: use 1 ms or more",
                e.getMessage());
        }
        assertEquals(EmbeddedNicConfig.DEFAULT_QUEUES_IDLE_NANOS, new EmbeddedNicConfig().queuesIdleNanos);
        assertEquals(Long.MAX_VALUE, new EmbeddedNicConfig().queuesIdle(Long.MAX_VALUE).queuesIdleNanos);
        assertEquals(1_000_000L, new EmbeddedNicConfig().queuesIdle(1_000_000L).queuesIdleNanos);
    }

    @Test
    void takesTheLimitsOfTheRingAndQueueThemselves()
    {
        final EmbeddedNicConfig config = new EmbeddedNicConfig().queues(1 << 20, 1 << 24, 1 << 16, 1 << 16);
        assertEquals(1 << 20, config.ringCapacity);
        assertEquals(1 << 24, config.completionQueueCapacity);
        final EmbeddedNicConfig smallest = new EmbeddedNicConfig().queues(1, 1, 1, 1);
        assertEquals(1, smallest.ringCapacity);
        assertEquals(1, WorkRequestRing.growing(smallest.ringCapacity).capacity());
    }

    private static void assertRefused(final String key, final int value, final String range, final Runnable setting)
    {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, setting::run);
        assertEquals("embedded NIC setting '" + key + "' = " + value + " is out of range: use " + range, e.getMessage());
    }
}
