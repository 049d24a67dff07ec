package io.spraynic.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * picocli prints each element of a {@code description} array as a line of its own and wraps it alone, so an element
 * that stops mid-sentence leaves a ragged half line in {@code --help}, and the command list of {@code spraynic help}
 * shows only the first element. A paragraph is therefore one element; an element ends a sentence or a list's
 * introduction or a list item, or is a row of an indented list.
 */
class UsageTextTest
{
    @Test
    void everyDescriptionLineShouldEndASentenceOrBeAListRow()
    {
        final List<String> ragged = new ArrayList<>();
        walk(new CommandLine(new SprayNic()).getCommandSpec(), ragged);
        assertEquals(List.of(), ragged, "description elements that stop mid-sentence (join them into one string)");
    }

    @Test
    void theCommandListShouldShowEachCommandsWholeFirstSentence()
    {
        final CliTestSupport.Run run = CliTestSupport.run("help");
        assertEquals(0, run.exitCode(), run.err());
        final String flat = run.out().replaceAll("\\s+", " ");
        assertTrue(flat.contains("each with one DPDK net_ring port per plane"), run.out());
        assertTrue(flat.contains("into a pcapng file for tshark, Wireshark or spraynic decode"), run.out());
    }

    @Test
    void demoHelpShouldWrapItsDescriptionAsOneParagraph()
    {
        final CliTestSupport.Run run = CliTestSupport.run("demo", "--help");
        assertEquals(0, run.exitCode(), run.err());
        for (final String line : run.out().lines().toList())
        {
            assertTrue(line.length() <= 80, "wider than 80 columns: " + line);
        }
        final String flat = run.out().replaceAll("\\s+", " ");
        assertTrue(flat.contains("each with one DPDK net_ring port per plane, joined through the fabric emulator"), run.out());
        assertTrue(flat.contains("(deploy/lab/lab, needs root): kernel routers"), run.out());
    }

    private static void walk(final CommandSpec command, final List<String> ragged)
    {
        check(command.qualifiedName(), command.usageMessage().description(), ragged);
        for (final ArgSpec arg : command.args())
        {
            final String name = arg instanceof CommandLine.Model.OptionSpec option ? option.longestName() : arg.paramLabel();
            check(command.qualifiedName() + " " + name, arg.description(), ragged);
        }
        for (final CommandLine sub : command.subcommands().values())
        {
            if (sub.getCommandSpec().parent() == command)
            {
                walk(sub.getCommandSpec(), ragged);
            }
        }
    }

    private static void check(final String where, final String[] lines, final List<String> ragged)
    {
        for (int i = 0; i + 1 < lines.length; i++)
        {
            final String line = lines[i];
            final String next = lines[i + 1];
            if (line.isBlank() || next.isBlank() || next.startsWith(" ") || line.startsWith(" "))
            {
                continue;
            }
            final String end = line.stripTrailing();
            final char last = end.charAt(end.length() - 1);
            if (".:;!?)".indexOf(last) < 0)
            {
                ragged.add(where + ": \"" + end.substring(Math.max(0, end.length() - 40)) + "\" | \"" +
                    next.substring(0, Math.min(30, next.length())) + "\"");
            }
        }
    }
}
