package io.spraynic.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.spraynic.cli.BenchCaptureCommandTest.longField;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code spraynic bench capture --workload receive --sample 8 --json} in a JVM (an EAL) of its own, tiny: the shipped
 * tap and ring write exactly one frame in 8 of those the worker received while each round's capture ran, the 1st, the
 * 9th..., and count the rest sampled out.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class BenchCaptureSampleCommandTest
{
    @Test
    void shouldSampleOneFrameInNOfThoseTheWorkerReceivedAndCountTheRest()
    {
        final CliTestSupport.Run run = CliTestSupport.run("bench", "capture", "--workload", "receive", "--sample", "8",
            "--seconds", "0.3", "--rounds", "1", "--json");
        assertEquals(0, run.exitCode(), run.err() + run.out());
        assertTrue(run.out().startsWith("{\"workload\":\"receive\",\"workers\":1,\"size\":64,\"sample\":8,"), run.out());
        final Matcher point = Pattern.compile("\\{\"offMpps\"[^}]*}").matcher(run.out());
        assertTrue(point.find(), run.out());
        final String p = point.group();
        final long written = longField(p, "captured") + longField(p, "dropped");
        final long offered = written + longField(p, "sampledOut");
        assertTrue(written > 0 && offered > written, p);
        // one capture per round, its writer fresh: the 1st, 9th, 17th... frame the worker offered, exactly
        assertEquals((offered + 7) / 8, written, p);
    }
}
