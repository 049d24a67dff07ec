package io.spraynic.pmd;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The top-level {@code capture} key: a pcapng file for RX and TX, checked, shown and written back.
 */
class NicConfigCaptureTest
{
    private static final String PORTS = TwoRingPairs.PORTS;

    @Test
    void shouldReadShowAndWriteBackTheCaptureFile()
    {
        final NicConfig config = NicConfig.parse("capture = \"/tmp/nic.pcapng\"\n" + PORTS, "test.toml");
        assertEquals("/tmp/nic.pcapng", config.capture());
        assertTrue(config.describe().contains("capture: every frame received and sent to /tmp/nic.pcapng"), config.describe());
        assertEquals(config, NicConfig.parse(config.toToml(), "round trip"));
        assertEquals("", NicConfig.parse(PORTS, "test.toml").capture(), "no key: no capture");
    }

    @Test
    void shouldNameTheKeyAndTheFixForAFileThatIsNotPcapng()
    {
        final ConfigException error = assertThrows(ConfigException.class,
            () -> NicConfig.parse("capture = \"nic.txt\"\n" + PORTS, "test.toml"));
        assertTrue(error.getMessage().contains("capture") && error.getMessage().contains(".pcapng"), error.getMessage());
    }

    @Test
    void shouldSuggestCaptureForAMisspelledKey()
    {
        final ConfigException error = assertThrows(ConfigException.class,
            () -> NicConfig.parse("captur = \"nic.pcapng\"\n" + PORTS, "test.toml"));
        assertTrue(error.getMessage().contains("capture"), error.getMessage());
    }
}
