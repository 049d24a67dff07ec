package io.spraynic.datapath.telemetry;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A {@link CounterMirror} over a counters file that fills up: it keeps the counters it got, publishes those, and a
 * mirror that got none publishes nothing and does not throw (thousands of connections find the file full).
 */
class CounterMirrorTest
{
    @TempDir
    Path directory;

    @Test
    void shouldKeepAndPublishOnlyTheCountersTheFileHadRoomFor()
    {
        try (CountersFile file = CountersFile.create(directory, "mirror", 3))
        {
            final long[] values = {10, 11, 12, 13};
            final CounterMirror first = new CounterMirror(file, "first ", slot -> values[slot], slot -> "slot " + slot,
                new int[]{0, 1});
            final CounterMirror second = new CounterMirror(file, "second ", slot -> values[slot], slot -> "slot " + slot,
                new int[]{2, 3});
            final CounterMirror third = new CounterMirror(file, "third ", slot -> values[slot], slot -> "slot " + slot,
                new int[]{0, 1, 2, 3});
            first.publish();
            second.publish();
            third.publish();
            assertEquals(Map.of("first slot 0", 10L, "first slot 1", 11L, "second slot 2", 12L), read(file));
            values[2] = 42;
            second.publish();
            assertEquals(42L, read(file).get("second slot 2"));
            third.close();
            second.close();
            first.close();
        }
    }

    private static Map<String, Long> read(final CountersFile file)
    {
        final Map<String, Long> values = new TreeMap<>();
        file.counters().forEach((value, id, label) -> values.put(label, value));
        return values;
    }
}
