package io.spraynic.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code spraynic bench latency --json} in this JVM (its EAL: one per test class): both transports and the
 * raw Java ping-pong answer every round trip, each histogram holds exactly the round trips asked for.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class BenchLatencyCommandTest
{
    @Test
    void shouldMeasureEveryRoundTripOfBothTransportsAndTheRawFrames()
    {
        final CliTestSupport.Run run = CliTestSupport.run("bench", "latency", "--iterations", "300", "--warmup", "50",
            "--rounds", "1", "--no-c", "--json");
        assertEquals(0, run.exitCode(), run.err());
        for (final String name : new String[] {"spray", "rocev2", "raw-java"})
        {
            final Matcher round = Pattern.compile("\\{\"name\":\"" + name + "\",\"iterations\":(\\d+),\"mismatches\":(\\d+)")
                .matcher(run.out());
            assertTrue(round.find(), name + " missing: " + run.out());
            assertEquals("300", round.group(1), name);
            assertEquals("0", round.group(2), name);
        }
    }
}
