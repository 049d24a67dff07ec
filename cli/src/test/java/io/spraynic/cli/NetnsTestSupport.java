package io.spraynic.cli;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Commands for tests that build network namespaces: run one (failing loudly or quietly), or start {@code spraynic}. */
final class NetnsTestSupport
{
    private NetnsTestSupport()
    {
    }

    /** @return the command line of this JVM running {@code spraynic} with {@code arguments}. */
    static List<String> java(final List<String> arguments)
    {
        final List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElseThrow());
        command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
            .filter(argument -> argument.startsWith("--")).toList());
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), SprayNic.class.getName()));
        command.addAll(arguments);
        return command;
    }

    /** @return its output; throws when it fails or takes over 30 s. */
    static String run(final String... command) throws IOException, InterruptedException
    {
        final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0)
        {
            throw new IllegalStateException(String.join(" ", command) + " failed: " + out);
        }
        return out;
    }

    /** Runs it, whatever comes of it (clean-up). */
    static void runQuietly(final String... command) throws IOException, InterruptedException
    {
        final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        p.waitFor(30, TimeUnit.SECONDS);
    }
}
