package io.spraynic.pmd;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Loads configurations from the built-in presets or from files, filling in their {@code ${name}}
 * placeholders from parameters (see {@link ConfigTemplate}).
 * <p>
 * A name with no {@code /} and no {@code .toml} suffix is a preset, anything else is a file path, so a
 * CLI can take one argument for both: {@code --pmd net_af_packet iface=veth1} or {@code --pmd ./my-nic.toml}.
 */
public final class PmdConfigs
{
    /**
     * The presets, in the order a listing shows them: the virtual devices that run anywhere first,
     * then the examples for real NICs.
     */
    private static final List<String> PRESET_NAMES = List.of(
        "net_null", "net_ring", "net_tap", "net_af_packet", "net_af_xdp", "net_memif", "net_pcap", "udp",
        "mlx5-bifurcated", "vfio-pci-hugepages");

    private static final String PRESET_DIRECTORY = "presets/";
    private static final String SUFFIX = ".toml";

    private PmdConfigs()
    {
    }

    /**
     * @return the names of the built-in presets.
     */
    public static List<String> presetNames()
    {
        return PRESET_NAMES;
    }

    /**
     * @param presetNameOrPath what a user typed.
     * @return true when it names a preset rather than a file: no {@code /} and no {@code .toml} suffix.
     */
    public static boolean isPresetName(final String presetNameOrPath)
    {
        return presetNameOrPath.indexOf('/') < 0 && !presetNameOrPath.endsWith(SUFFIX);
    }

    /**
     * @param presetNameOrPath a preset name, or a path to a TOML file.
     * @param params           placeholder values by name.
     * @return the configuration, valid.
     * @throws ConfigException for an unknown preset, an unreadable file, a bad parameter or a bad value.
     */
    public static NicConfig load(final String presetNameOrPath, final Map<String, String> params)
    {
        return template(presetNameOrPath).toConfig(params);
    }

    /**
     * @param name   a preset name from {@link #presetNames()}.
     * @param params placeholder values by name.
     * @return the configuration, valid.
     * @throws ConfigException for an unknown preset, a bad parameter or a bad value.
     */
    public static NicConfig preset(final String name, final Map<String, String> params)
    {
        return presetTemplate(name).toConfig(params);
    }

    /**
     * @param path   a TOML file, placeholders allowed.
     * @param params placeholder values by name.
     * @return the configuration, valid.
     * @throws ConfigException for an unreadable file, a bad parameter or a bad value.
     */
    public static NicConfig file(final Path path, final Map<String, String> params)
    {
        return fileTemplate(path).toConfig(params);
    }

    /**
     * @param presetNameOrPath a preset name, or a path to a TOML file.
     * @return its template, e.g. to list its parameters.
     */
    public static ConfigTemplate template(final String presetNameOrPath)
    {
        return isPresetName(presetNameOrPath) ? presetTemplate(presetNameOrPath) : fileTemplate(Path.of(presetNameOrPath));
    }

    /**
     * @param name a preset name from {@link #presetNames()}.
     * @return the preset's template, e.g. to list its parameters or print its text.
     * @throws ConfigException naming the presets when there is no such preset.
     */
    public static ConfigTemplate presetTemplate(final String name)
    {
        if (!PRESET_NAMES.contains(name))
        {
            final String closest = Toml.closest(name, PRESET_NAMES);
            throw new ConfigException("preset", Toml.quote(name),
                "must be one of " + String.join(", ", PRESET_NAMES) + ", or a path to a .toml file",
                closest == null ? "" : "did you mean " + closest + "?");
        }

        final String resource = PRESET_DIRECTORY + name + SUFFIX;
        try (InputStream in = PmdConfigs.class.getResourceAsStream(resource))
        {
            if (in == null)
            {
                throw new IllegalStateException("preset resource missing from the build: " + resource);
            }

            return ConfigTemplate.of(new String(in.readAllBytes(), StandardCharsets.UTF_8), "preset " + name);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot read preset resource " + resource, ex);
        }
    }

    /**
     * @param path a TOML file, placeholders allowed.
     * @return the file's template.
     * @throws ConfigException when the file cannot be read.
     */
    public static ConfigTemplate fileTemplate(final Path path)
    {
        try
        {
            return ConfigTemplate.of(Files.readString(path, StandardCharsets.UTF_8), path.toString());
        }
        catch (final IOException ex)
        {
            throw new ConfigException("file", Toml.quote(path.toString()),
                "must be a readable UTF-8 TOML file (" + ex.getClass().getSimpleName() + ")");
        }
    }
}
