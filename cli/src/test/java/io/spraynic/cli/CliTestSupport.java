package io.spraynic.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Runs the CLI in-process and captures what it prints.
 */
final class CliTestSupport
{
    record Run(int exitCode, String out, String err)
    {
    }

    private CliTestSupport()
    {
    }

    static synchronized Run run(final String... args)
    {
        final PrintStream originalOut = System.out;
        final PrintStream originalErr = System.err;
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        try
        {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            final int exitCode = SprayNic.execute(args);
            return new Run(exitCode, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        }
        finally
        {
            System.setOut(originalOut);
            System.setErr(originalErr);
        }
    }
}
