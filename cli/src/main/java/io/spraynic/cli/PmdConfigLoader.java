package io.spraynic.cli;

import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PmdConfigs;

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
        final NicConfig loaded = PmdConfigs.load(presetOrFile, params);
        return verbose || !loaded.eal().logLevels().isEmpty() ?
            loaded : loaded.withEal(loaded.eal().withLogLevels(List.of("lib.eal:warning")));
    }
}
