package io.spraynic.cli;

import io.spraynic.datapath.nic.EmbeddedNicConfig;
import io.spraynic.datapath.transport.rocev2.DcqcnConfig;
import io.spraynic.pmd.ConfigException;
import io.spraynic.pmd.NicConfig;
import picocli.CommandLine.Option;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code --rocev2-line-rate RATE} and {@code --dcqcn NAME=VALUE}, mixed into the commands that run a RoCEv2 NIC: what
 * an operator tells a NIC's DCQCN about its fabric, as mlx5 exposes rpg_ai_rate, rpg_hai_rate, the timers and the
 * minimum rate; the same as a TOML config's {@code [dcqcn]} table, which these options override. The line rate derives
 * the rest ({@link DcqcnConfig#forLineRate}); each key then sets one parameter, checked, or the command refuses to start
 * naming it.
 */
final class DcqcnOption
{
    @Option(names = "--rocev2-line-rate", paramLabel = "RATE", description = {
        "rocev2 mode: the line rate of each plane's port, at which a queue pair starts and which DCQCN recovers to, " +
        "in bits per second with an optional unit (e.g. 10mbit, 25gbit; default 100gbit); DCQCN's rate steps, floor, " +
        "byte counter and pacing burst scale with it. Give a fabric slower than its ports the fabric's link rate."})
    String lineRate;

    @Option(names = "--dcqcn", paramLabel = "NAME=VALUE", description = {
        "rocev2 mode: one DCQCN parameter, after --rocev2-line-rate derived the rest (repeatable): rate_ai, " +
        "rate_hai, " +
        "min_rate, line_rate (rates, e.g. 4kbit), time_reset, alpha_period, cnp_interval (periods, e.g. 55us), " +
        "byte_reset, pacing_burst (bytes), threshold, g, initial_alpha, enabled (true|false)."})
    Map<String, String> parameters = new LinkedHashMap<>();

    /**
     * @param table the TOML config's {@code [dcqcn]} table (empty: none); these options take precedence over it.
     * @return the DCQCN parameters the table and these options give, or null when none were given (the NIC's
     * defaults).
     * @throws BadOption naming the option and value that are wrong; ConfigException naming the table's key.
     */
    DcqcnConfig config(final Map<String, String> table)
    {
        if (null == lineRate && parameters.isEmpty() && table.isEmpty())
        {
            return null;
        }
        DcqcnConfig config;
        final String line = null != lineRate ? lineRate : table.get("line_rate");
        try
        {
            config = DcqcnConfig.forLineRate(null == line ? DcqcnConfig.DEFAULT_LINE_RATE : DcqcnConfig.rate(line));
        }
        catch (final IllegalArgumentException e)
        {
            if (null == lineRate)
            {
                throw new ConfigException("dcqcn.line_rate", "\"" + line + "\"", e.getMessage(), "e.g. \"10mbit\"");
            }
            throw new BadOption("--rocev2-line-rate", lineRate, e.getMessage(), "try --rocev2-line-rate 10mbit");
        }
        for (final Map.Entry<String, String> e : table.entrySet())
        {
            if (e.getKey().equals("line_rate"))
            {
                continue; // the line rate derived the rest above
            }
            try
            {
                config = config.with(e.getKey(), e.getValue());
            }
            catch (final IllegalArgumentException ex)
            {
                throw new ConfigException("dcqcn." + e.getKey(), "\"" + e.getValue() + "\"", reason(ex),
                    "e.g. rate_ai = \"4kbit\", time_reset = \"55us\"");
            }
        }
        for (final Map.Entry<String, String> e : parameters.entrySet())
        {
            try
            {
                config = config.with(e.getKey(), e.getValue());
            }
            catch (final IllegalArgumentException ex)
            {
                throw new BadOption("--dcqcn", e.getKey() + "=" + e.getValue(), reason(ex),
                    "try --dcqcn rate_ai=4kbit (rates), --dcqcn time_reset=55us (periods)");
            }
        }
        return config;
    }

    private static String reason(final IllegalArgumentException e)
    {
        return null != e.getCause() ? e.getCause().getMessage() : e.getMessage();
    }

    /** Sets {@code nic}'s DCQCN when these options or the config's {@code [dcqcn]} table gave any. */
    void apply(final EmbeddedNicConfig nic, final NicConfig loaded)
    {
        final DcqcnConfig config = config(loaded.dcqcn());
        if (null != config)
        {
            nic.rocevDcqcn(config);
        }
    }
}
