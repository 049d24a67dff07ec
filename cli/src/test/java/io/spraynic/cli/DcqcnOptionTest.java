package io.spraynic.cli;

import io.spraynic.datapath.transport.rocev2.DcqcnConfig;
import io.spraynic.pmd.ConfigException;
import io.spraynic.pmd.NicConfig;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.util.LinkedHashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code --rocev2-line-rate} and {@code --dcqcn} over a TOML config's {@code [dcqcn]}: the line rate derives the rest,
 * single keys follow, the options win over the table, and a bad key or value is refused naming it.
 */
class DcqcnOptionTest
{
    private static DcqcnOption parse(final String... args)
    {
        final DcqcnOption option = new DcqcnOption();
        new CommandLine(option).parseArgs(args);
        return option;
    }

    @Test
    void shouldLeaveTheNicItsDefaultsWhenNothingIsGiven()
    {
        assertNull(parse().config(Map.of()));
    }

    @Test
    void shouldDeriveFromTheLineRateThenSetSingleParameters()
    {
        final DcqcnConfig config = parse("--rocev2-line-rate", "10mbit", "--dcqcn", "rate_ai=8kbit", "--dcqcn",
            "time_reset=300us").config(Map.of());
        assertEquals(DcqcnConfig.forLineRate(10_000_000L).with("rate_ai", "8kbit").with("time_reset", "300us"), config);
    }

    @Test
    void shouldTakeTheTomlTableAndLetTheOptionsWin()
    {
        final Map<String, String> table = new LinkedHashMap<>();
        table.put("line_rate", "25mbit");
        table.put("rate_ai", "1kbit");
        table.put("threshold", "3");
        assertEquals(DcqcnConfig.forLineRate(25_000_000L).with("rate_ai", "1kbit").with("threshold", "3"),
            parse().config(table));
        assertEquals(DcqcnConfig.forLineRate(10_000_000L).with("rate_ai", "2kbit").with("threshold", "3"),
            parse("--rocev2-line-rate", "10mbit", "--dcqcn", "rate_ai=2kbit").config(table));
    }

    @Test
    void shouldNameTheTableKeyOrTheOptionThatIsWrong()
    {
        final ConfigException table = assertThrows(ConfigException.class,
            () -> parse().config(Map.of("time_reset", "55")));
        assertTrue(table.getMessage().contains("dcqcn.time_reset") && table.getMessage().contains("not a period"),
            table.getMessage());
        final ConfigException line = assertThrows(ConfigException.class,
            () -> parse().config(Map.of("line_rate", "0")));
        assertTrue(line.getMessage().contains("dcqcn.line_rate"), line.getMessage());
        final BadOption option = assertThrows(BadOption.class,
            () -> parse("--dcqcn", "cnp_interval=-4us").config(Map.of()));
        assertTrue(option.getMessage().contains("--dcqcn") && option.getMessage().contains("cnp_interval=-4us"),
            option.getMessage());
    }

    @Test
    void shouldKeepTheTableKeysAndTheDatapathParametersTheSame()
    {
        assertEquals(DcqcnConfig.PARAMETERS, NicConfig.DCQCN_KEYS);
    }
}
