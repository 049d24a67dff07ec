package io.spraynic.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code spraynic bench connections --json} in this JVM (its EAL: one per test class), tiny: every connection opened,
 * every message verified, every table back in its pool and no connection left; and options it refuses.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class BenchConnectionsCommandTest
{
    @Test
    void shouldOpenWriteVerifyAndCloseEveryConnection()
    {
        final CliTestSupport.Run run = CliTestSupport.run("bench", "connections", "--connections", "32", "--bytes",
            "8192", "--messages", "3", "--storage-limit", "8", "--hugepages", "off", "--json");
        assertEquals(0, run.exitCode(), run.out() + run.err());
        final String out = run.out();
        assertTrue(out.contains("\"connections\":32,\"opened\":32,"), out);
        assertTrue(out.contains("\"messagesCompleted\":96,\"messagesVerified\":96,"), out);
        assertTrue(out.contains("\"openAfterClose\":0,\"ok\":true"), out);
        assertTrue(out.contains("\"a_sets_lent\":0,") && out.contains("\"b_sets_lent\":0,"), "tables back: " + out);
        assertTrue(out.contains("\"a_sets_lent_at_peak\":8,"), "the limit held and was reached: " + out);
    }

    @Test
    void shouldRefuseAStorageLimitOfZero()
    {
        final CliTestSupport.Run run = CliTestSupport.run("bench", "connections", "--storage-limit", "0");
        assertEquals(2, run.exitCode(), run.err());
        assertTrue(run.err().contains("--storage-limit 0: must be -1 or at least 1"), run.err());
    }
}
