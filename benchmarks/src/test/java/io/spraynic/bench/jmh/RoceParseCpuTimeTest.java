package io.spraynic.bench.jmh;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RoceParseCpuTimeTest
{
    @Test
    void shouldTimeBothParsersOverFramesTheyAgreeOnInEitherOrder()
    {
        for (final String order : new String[]{"copy-first", "build-first"})
        {
            final PrintStream out = System.out;
            final ByteArrayOutputStream printed = new ByteArrayOutputStream();
            System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
            try
            {
                // throws if the parsers disagree on a frame or a frame did not parse as RoCE
                RoceParseCpuTime.main(new String[]{"64", "1", "global", order});
            }
            finally
            {
                System.setOut(out);
            }
            final String line = printed.toString(StandardCharsets.UTF_8);
            assertTrue(line.contains(order.replace('-', ' ')), line);
            // four positive times per packet, best / median, and the ratios between them
            final Matcher times = Pattern.compile("(\\d+\\.\\d) / (\\d+\\.\\d)").matcher(line);
            int pairs = 0;
            while (times.find())
            {
                assertTrue(Double.parseDouble(times.group(1)) > 0, line);
                pairs++;
            }
            assertEquals(4, pairs, line);
        }
    }
}
