package io.spraynic.datapath.transport.spray;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertTrue;

class PathSchedulerPickCpuTimeTest
{
    @Test
    void shouldTimeBothPicksThroughTheSameHistoryMostlyInTheSecondRound()
    {
        final PrintStream out = System.out;
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
        try
        {
            // throws if the build's pick and the copy of the two-pass pick ever chose different paths
            PathSchedulerPickCpuTime.main(new String[]{"4", "1", "20000"});
        }
        finally
        {
            System.setOut(out);
        }
        final String line = printed.toString(StandardCharsets.UTF_8);
        final java.util.regex.Matcher share = java.util.regex.Pattern.compile("(\\d+) % of the picks").matcher(line);
        assertTrue(share.find(), line);
        // the history it times is the one that made the two-pass pick walk twice: the draining paths' second round
        assertTrue(Integer.parseInt(share.group(1)) > 50, line);
    }
}
