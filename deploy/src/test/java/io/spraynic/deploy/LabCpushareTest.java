package io.spraynic.deploy;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code deploy/lab/cpushare}, the lab's diagnostic of where a host's CPUs go: a bad argument is one sentence and exit
 * code 2, refused before anything is read or started (no traceback, no perf left running); a good one measures until
 * the process it was given ends. Needs python3 only; reads /proc, changes nothing.
 */
class LabCpushareTest
{
    private static final Path CPUSHARE = DeployFiles.REPO.resolve("deploy/lab/cpushare");

    @Test
    void shouldRefuseEachBadArgumentInOneSentence() throws Exception
    {
        final long self = ProcessHandle.current().pid();
        final String[][] cases = {
            {},
            {"--until", "abc"},
            {"--until", "0"},
            {"--until", Long.toString(unusedPid())},
            {"--until", Long.toString(self), "--watch", "-4"},
            {"--until", Long.toString(self), "--max-seconds", "nan"},
            {"--until", Long.toString(self), "--max-seconds", "-1"},
            {"--until", Long.toString(self), "--max-seconds", "inf"},
            {"--until", Long.toString(self), "--top", "0"},
            {"--until", Long.toString(self), "--label", "nic-a"},
            {"--until", Long.toString(self), "--label", "x=nic-a"},
            {"--until", Long.toString(self), "--label", "12="},
            {"--until", Long.toString(self), "--ready", "/nonexistent-spraynic-dir/ready"},
            {"--until", Long.toString(self), "--perf", "/nonexistent-spraynic-dir/perf.data"},
        };
        for (final String[] arguments : cases)
        {
            final List<String> command = new ArrayList<>(List.of("python3", CPUSHARE.toString()));
            command.addAll(List.of(arguments));
            final DeployFiles.Result result = DeployFiles.run(30, command);
            final String what = String.join(" ", arguments) + ": " + result.err();
            assertEquals(2, result.exitCode(), what);
            assertEquals("", result.out(), what);
            assertTrue(result.err().contains("cpushare: error: "), what);
            assertTrue(!result.err().contains("Traceback"), what);
        }
    }

    @Test
    void shouldMeasureUntilTheProcessEnds() throws Exception
    {
        final Process sleeper = new ProcessBuilder("sleep", "4").start();
        final Path ready = Files.createTempFile("spraynic-cpushare", ".ready");
        Files.delete(ready);
        try
        {
            final DeployFiles.Result result = DeployFiles.run(60, "python3", CPUSHARE.toString(),
                "--until", Long.toString(sleeper.pid()), "--label", sleeper.pid() + "=the-sleeper", "--ready",
                ready.toString(), "--max-seconds", "30");
            assertEquals(0, result.exitCode(), result.err());
            assertTrue(result.out().startsWith("cpushare over "), result.out());
            assertTrue(result.out().contains("until pid " + sleeper.pid() + " ended"), result.out());
            assertTrue(result.out().contains("  cpu0: user "), result.out());
            assertTrue(result.out().contains("softirqs NET_RX raised per CPU"), result.out());
            assertTrue(result.out().contains("the-sleeper's threads"), result.out());
            assertTrue(Files.exists(ready), "--ready was written");
        }
        finally
        {
            sleeper.destroyForcibly();
            sleeper.waitFor(10, TimeUnit.SECONDS);
            Files.deleteIfExists(ready);
        }
    }

    /** @return the pid of a process that has ended and been reaped (free until the kernel wraps its pids). */
    private static long unusedPid() throws Exception
    {
        final Process ended = new ProcessBuilder("true").start();
        ended.waitFor(10, TimeUnit.SECONDS);
        return ended.pid();
    }
}
