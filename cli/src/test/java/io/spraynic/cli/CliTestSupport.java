package io.spraynic.cli;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

/**
 * Runs the CLI in-process and captures what it prints, or starts it in a process of its own.
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

    /**
     * Starts the CLI in a JVM of its own (as the launcher does), with this JVM's module options and class path, its
     * output and errors merged.
     *
     * @param runDir where its counters file goes (SPRAYNIC_RUN_DIR).
     */
    static Process start(final Path runDir, final String... args) throws IOException
    {
        final ProcessBuilder builder = new ProcessBuilder(javaCommand(List.of(args))).redirectErrorStream(true);
        builder.environment().put("SPRAYNIC_RUN_DIR", runDir.toString());
        return builder.start();
    }

    /**
     * The command line that runs the CLI in a process of its own, with this JVM's binary, module options and class
     * path; for tests that put a NIC in a network namespace ({@code ip netns exec NS} + this).
     *
     * @return {@code java [--options] -cp CLASSPATH io.spraynic.cli.SprayNic ARGUMENTS...}.
     */
    static List<String> javaCommand(final List<String> arguments)
    {
        return LinuxFabricDemo.javaCommand(arguments);
    }

    /** @return {@link #javaCommand} as one line for {@code sh -c}, every word single-quoted. */
    static String shellCommand(final List<String> arguments)
    {
        final StringBuilder line = new StringBuilder();
        for (final String word : javaCommand(arguments))
        {
            line.append(line.isEmpty() ? "" : " ").append('\'').append(word.replace("'", "'\\''")).append('\'');
        }
        return line.toString();
    }
}
