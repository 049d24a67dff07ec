package io.spraynic.cli;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SprayNicTest
{
    @Test
    void shouldListPresets()
    {
        final CliTestSupport.Run run = CliTestSupport.run("config");
        assertEquals(0, run.exitCode(), run.err());
        for (final String preset : new String[] {"net_null", "net_ring", "net_tap", "net_af_packet", "net_memif", "net_pcap"})
        {
            assertTrue(run.out().contains("  " + preset + "\n"), run.out());
        }
    }

    @Test
    void shouldShowEalArgumentsOfPresetWithParameters()
    {
        final CliTestSupport.Run run = CliTestSupport.run("config", "net_af_packet", "-p", "iface=veth9");
        assertEquals(0, run.exitCode(), run.err());
        assertTrue(run.out().contains("--vdev=net_af_packet0,iface=veth9"), run.out());
        assertTrue(run.out().contains("--no-huge"), run.out());
    }

    @Test
    void shouldExplainBadPresetInOneSentence()
    {
        final CliTestSupport.Run run = CliTestSupport.run("config", "net_bogus");
        assertEquals(1, run.exitCode());
        assertTrue(run.err().startsWith("spraynic config: "), run.err());
        assertTrue(run.err().contains("net_null"), "lists the presets: " + run.err());
        assertEquals(1, run.err().strip().lines().count(), run.err());
        assertFalse(run.err().contains("\tat "), "no stack trace: " + run.err());
    }

    @Test
    void shouldExplainBadParameterWithKey()
    {
        final CliTestSupport.Run run = CliTestSupport.run("config", "net_ring", "-p", "descriptors=1000");
        assertEquals(1, run.exitCode());
        assertTrue(run.err().contains("descriptors") && run.err().contains("1000"), run.err());
    }

    @Test
    void shouldRefuseUnknownOptionAsUsageError()
    {
        final CliTestSupport.Run run = CliTestSupport.run("demo", "--no-such-option");
        assertEquals(2, run.exitCode());
        assertTrue(run.err().contains("--no-such-option"), run.err());
    }

    @Test
    void shouldRefuseBadSizeSuffix()
    {
        final CliTestSupport.Run run = CliTestSupport.run("demo", "--frames", "12q");
        assertEquals(2, run.exitCode());
        assertTrue(run.err().contains("k, m or g suffix"), run.err());
    }

    @Test
    void shouldPrintEveryCommandsHelpWithoutPicocliWarnings()
    {
        final java.util.List<String[]> paths = new java.util.ArrayList<>();
        collect(new picocli.CommandLine(new SprayNic()), new java.util.ArrayList<>(), paths);
        assertTrue(paths.size() > 15, "every command and subcommand: " + paths.size());
        for (final String[] path : paths)
        {
            final String[] args = java.util.Arrays.copyOf(path, path.length + 1);
            args[path.length] = "--help";
            final CliTestSupport.Run run = CliTestSupport.run(args);
            final String name = String.join(" ", path);
            assertEquals(0, run.exitCode(), name + ": " + run.err());
            assertTrue(run.out().startsWith("Usage: spraynic"), name + ": " + run.out());
            assertFalse(run.err().contains("picocli WARN") || run.out().contains("picocli WARN"),
                name + " (a bare % in a description?): " + run.err());
        }
    }

    private static void collect(final picocli.CommandLine command, final java.util.List<String> path,
        final java.util.List<String[]> paths)
    {
        paths.add(path.toArray(new String[0]));
        for (final java.util.Map.Entry<String, picocli.CommandLine> sub : command.getSubcommands().entrySet())
        {
            if (sub.getValue().getCommandName().equals(sub.getKey()) && !sub.getKey().equals("help"))
            {
                final java.util.List<String> next = new java.util.ArrayList<>(path);
                next.add(sub.getKey());
                collect(sub.getValue(), next, paths);
            }
        }
    }

    @Test
    void shouldPrintVersion()
    {
        final CliTestSupport.Run run = CliTestSupport.run("--version");
        assertEquals(0, run.exitCode());
        assertTrue(run.out().startsWith("spraynic "), run.out());
    }
}
