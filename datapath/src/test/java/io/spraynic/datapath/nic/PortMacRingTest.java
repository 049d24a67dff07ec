package io.spraynic.datapath.nic;

import io.spraynic.datapath.port.TestNetwork;
import io.spraynic.pmd.EalConfig;
import io.spraynic.pmd.MempoolConfig;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PortConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A port's {@code mac} key on a driver that cannot set a MAC ({@code net_ring}) is refused by name, rather than the
 * port run with a MAC the config did not ask for.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PortMacRingTest
{
    private static final String CONFIGURED = "02:5e:00:00:0a:01";

    @Test
    void shouldRefuseAMacOnAPortWhoseDriverCannotSetOne()
    {
        final List<PortConfig> ports = List.of(PortConfig.ringPair("a", "b").withMac(CONFIGURED), PortConfig.ringPair("b", "a"));
        final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
            () -> DpdkNic.start(NicConfig.of(EalConfig.DEFAULT.withFilePrefix("spraynic-mac-ring-" + TestNetwork.ID)
                .withLogLevels(List.of("lib.eal:warning")), MempoolConfig.DEFAULT, ports)).close());
        assertTrue(refused.getMessage().startsWith("port a: cannot set mac = \"" + CONFIGURED + "\" ("), refused.getMessage());
        assertTrue(refused.getMessage().endsWith("): remove mac to keep the device's own"), refused.getMessage());
    }
}
