package io.spraynic.cli;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Which options a command line named, as against their defaults: a mode that would ignore an option refuses it, so
 * that an operator never believes a setting took effect that did not (a key that authenticates nothing, a capture
 * file never written).
 */
final class GivenOptions
{
    private GivenOptions()
    {
    }

    /** @return whether the command line named {@code option} (false for a command run without picocli). */
    static boolean given(final CommandSpec spec, final String option)
    {
        return null != spec && spec.commandLine().getParseResult().hasMatchedOption(option);
    }

    /**
     * Refuses the first of {@code options} the command line named, as a usage error.
     *
     * @param where what ignores them, completing "does nothing ...": "with --mode rocev2 (no spray handshake)".
     */
    static void refuse(final CommandSpec spec, final String where, final String... options)
    {
        for (final String option : options)
        {
            if (given(spec, option))
            {
                final OptionSpec matched = spec.commandLine().getParseResult().matchedOption(option);
                throw new BadOption(option, String.join(",", matched.stringValues()), "does nothing " + where,
                    "drop " + option);
            }
        }
    }
}
