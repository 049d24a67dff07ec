package io.spraynic.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The demo with the poll-thread mode that {@code --threads auto} would not choose on this host (dedicated below 4
 * cores, shared from 4), in text: both transfers verified, and each run's header names the cores and the mode. The
 * other mode runs in {@link DemoSprayCommandTest}. One EAL per JVM, so a class of its own.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class DemoThreadsCommandTest
{
    @Test
    void shouldVerifyBothTransfersInTheOtherThreadsModeAndNameItWithTheCores()
    {
        final int cores = Runtime.getRuntime().availableProcessors();
        final String other = cores < 4 ? "dedicated" : "shared";
        final CliTestSupport.Run run = CliTestSupport.run("demo", "--size", "8m", "--threads", other);
        assertEquals(0, run.exitCode(), run.out() + run.err());
        final String header = cores + " cores, threads " + other + ": " +
            (other.equals("shared") ? "one poll thread for both NICs and the fabric" :
                "a poll thread each for both NICs and the fabric");
        assertEquals(2, run.out().split(header, -1).length - 1, "spray's and RoCEv2's headers name it: " + run.out());
        assertEquals(2, run.out().split("VERIFIED: 8 MiB of 8 MiB written", -1).length - 1, run.out());
        assertTrue(run.out().contains("spray ÷ RoCEv2 goodput on the same fabric and loss:"), run.out());
    }
}
