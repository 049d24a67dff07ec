package io.spraynic.datapath.fault;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FaultLogTest
{
    private long now = 1_000;
    private final List<String> lines = new ArrayList<>();
    private final FaultLog log = new FaultLog("worker-0", 10_000L, () -> now, lines::add);

    @Test
    void shouldWriteOneLinePerReasonPerIntervalAndCountTheRest()
    {
        for (int i = 0; i < 1000; i++)
        {
            log.record("frame", new IllegalArgumentException("paths must be in 1..64: 0"));
        }
        assertEquals(1, lines.size(), lines.toString());
        assertTrue(lines.get(0).startsWith("worker-0: caught java.lang.IllegalArgumentException handling a frame: " +
            "paths must be in 1..64: 0 (at "), lines.get(0));
        assertFalse(lines.get(0).contains("\n"), "one line, no stack trace");

        now += 10_000;
        log.record("frame", new IllegalArgumentException("again"));
        assertEquals(2, lines.size());
        assertTrue(lines.get(1).contains("(999 more like it not logged in the last"), lines.get(1));
        assertEquals(1001, log.total());
        assertEquals(Map.of("frame java.lang.IllegalArgumentException", 1001L), log.counts());
    }

    @Test
    void shouldLogEachReasonSeparately()
    {
        log.record("frame", new IllegalStateException());
        log.record("frame", new IllegalArgumentException());
        log.record("command", new IllegalArgumentException());
        log.record("command", new IllegalArgumentException());
        assertEquals(3, lines.size(), lines.toString());
        assertEquals(4, log.total());
    }
}
