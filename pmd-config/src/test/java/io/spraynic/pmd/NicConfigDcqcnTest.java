package io.spraynic.pmd;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@code [dcqcn]} table: a RoCEv2 NIC's congestion control as the operator writes it, kept as written (the NIC
 * checks each value), shown, written back, and refused for a key it does not know or a value that is no scalar.
 */
class NicConfigDcqcnTest
{
    private static final String PORTS = TwoRingPairs.PORTS;

    @Test
    void shouldReadShowAndWriteBackTheTable()
    {
        final NicConfig config = NicConfig.parse(PORTS + """
            [dcqcn]
            line_rate = "10mbit"
            rate_ai = "4kbit"
            threshold = 5
            g = 0.00390625
            enabled = true
            """, "test.toml");
        assertEquals(Map.of("line_rate", "10mbit", "rate_ai", "4kbit", "threshold", "5", "g", "0.00390625",
            "enabled", "true"), config.dcqcn());
        assertTrue(config.describe().contains("dcqcn: line_rate=10mbit rate_ai=4kbit threshold=5"), config.describe());
        assertEquals(config, NicConfig.parse(config.toToml(), "round trip"));
        assertEquals(Map.of(), NicConfig.parse(PORTS, "test.toml").dcqcn(), "no table: the NIC's own derivation");
    }

    @Test
    void shouldRefuseAnUnknownKeyNamingTheKnownOnes()
    {
        final ConfigException error = assertThrows(ConfigException.class,
            () -> NicConfig.parse(PORTS + "[dcqcn]\nrpg_ai_rate = 5\n", "test.toml"));
        assertTrue(error.getMessage().contains("dcqcn.rpg_ai_rate") && error.getMessage().contains("rate_ai"),
            error.getMessage());
    }

    @Test
    void shouldRefuseAValueThatIsNoScalar()
    {
        final ConfigException error = assertThrows(ConfigException.class,
            () -> NicConfig.parse(PORTS + "[dcqcn]\nrate_ai = [1, 2]\n", "test.toml"));
        assertTrue(error.getMessage().contains("dcqcn.rate_ai") && error.getMessage().contains("string, number or " +
            "boolean"), error.getMessage());
        assertThrows(ConfigException.class, () -> NicConfig.parse(PORTS + "dcqcn = 5\n", "test.toml"));
    }
}
