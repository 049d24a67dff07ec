package io.spraynic.cli;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

/**
 * The command line that runs the CLI in a process of its own, with this JVM's binary, module options and class path:
 * for tests that put a NIC in a network namespace ({@code ip netns exec NS} + this).
 */
final class CliProcesses
{
    private CliProcesses()
    {
    }

    /** @return {@code java [--options] -cp CLASSPATH io.spraynic.cli.SprayNic ARGUMENTS...}. */
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
}
