package io.spraynic.cli;

import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PmdConfigs;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code spraynic config}: lists the presets, or shows what a preset or file resolves to (the EAL
 * argument vector and every port), without starting DPDK.
 */
@Command(name = "config", mixinStandardHelpOptions = true,
    description = "List PMD presets, or show the EAL arguments and ports a preset or TOML file resolves to.")
final class ConfigCommand implements Callable<Integer>
{
    @Parameters(arity = "0..1", paramLabel = "PRESET_OR_FILE",
        description = "A preset name (see the list without arguments) or a TOML file.")
    String source;

    @Option(names = {"-p", "--param"}, paramLabel = "NAME=VALUE", description = "Fill a preset parameter, e.g. -p iface=veth0.")
    Map<String, String> params = new LinkedHashMap<>();

    @Option(names = "--toml", description = "Print the resolved configuration as TOML.")
    boolean toml;

    public Integer call()
    {
        if (null == source)
        {
            System.out.println("Presets (spraynic config NAME shows one):");
            for (final String name : PmdConfigs.presetNames())
            {
                System.out.println("  " + name);
            }
            return 0;
        }
        final NicConfig config = PmdConfigs.load(source, params);
        System.out.println(toml ? config.toToml() : config.describe());
        return 0;
    }
}
