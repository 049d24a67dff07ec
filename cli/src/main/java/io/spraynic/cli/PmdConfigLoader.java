package io.spraynic.cli;

import io.spraynic.pmd.ConfigTemplate;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PmdConfigs;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How the commands that bring DPDK up read {@code --config} and {@code -p}: a preset or file, its parameters,
 * and DPDK's start-up log kept to warnings unless {@code --verbose} or the config sets log levels itself.
 */
final class PmdConfigLoader
{
    private PmdConfigLoader()
    {
    }

    /**
     * @return the pcapng file to capture into: the command's {@code --capture} when given, else the config's
     * {@code capture} key, else null.
     */
    static java.nio.file.Path capture(final java.nio.file.Path option, final NicConfig config)
    {
        return null != option ? option : config.capture().isEmpty() ? null : java.nio.file.Path.of(config.capture());
    }

    static NicConfig load(final String presetOrFile, final Map<String, String> params, final boolean verbose)
    {
        return load(presetOrFile, params, Map.of(), verbose);
    }

    /**
     * @param implied values the command derives (a queue per worker, a runtime directory of its own), given to the
     *                document only where it has that placeholder and {@code -p} did not set it: a file written
     *                without them keeps its own values (and is checked against the workers when the NIC starts)
     *                rather than being refused for a parameter it never asked for.
     */
    static NicConfig load(final String presetOrFile, final Map<String, String> params, final Map<String, String> implied,
        final boolean verbose)
    {
        final ConfigTemplate template = PmdConfigs.template(presetOrFile);
        final Map<String, String> filled = new LinkedHashMap<>(params);
        for (final ConfigTemplate.Parameter parameter : template.parameters())
        {
            final String value = implied.get(parameter.name());
            if (null != value)
            {
                filled.putIfAbsent(parameter.name(), value);
            }
        }
        final NicConfig loaded = template.toConfig(filled);
        return verbose || !loaded.eal().logLevels().isEmpty() ?
            loaded : loaded.withEal(loaded.eal().withLogLevels(List.of("lib.eal:warning")));
    }
}
