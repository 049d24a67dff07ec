package io.spraynic.datapath.nic;

import io.spraynic.datapath.port.TestNetwork;
import io.spraynic.pmd.EalConfig;
import io.spraynic.pmd.MempoolConfig;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PortConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * A port's {@code mac} key is applied, not only checked: {@code net_af_packet} on a veth this test creates (and
 * removes, also on failure) takes the configured MAC on its kernel interface. Needs root (CI is root).
 * {@link PortMacRingTest} has the driver that cannot (one EAL per process).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PortMacAfPacketTest
{
    private static final String CONFIGURED = "02:5e:00:00:0a:01";

    @Test
    void shouldSetTheConfiguredMacOnAnAfPacketPortsKernelInterface() throws Exception
    {
        final String netns = TestNetwork.name("spmac");
        final String local = TestNetwork.name("spmcl");
        try (TestNetwork network = TestNetwork.create("a network namespace and a veth pair", netns))
        {
            network.veth(null, local, netns, TestNetwork.name("spmci"));
            final Path address = Path.of("/sys/class/net", local, "address");
            assertNotEquals(CONFIGURED, Files.readString(address).strip(), "the kernel chose another MAC");
            final PortConfig port = PortConfig.vdev("afp0", "net_af_packet0", "iface=" + local + ",qpairs=1")
                .withMac(CONFIGURED);
            try (DpdkNic dpdk = DpdkNic.start(NicConfig.of(EalConfig.DEFAULT.withFilePrefix("spraynic-mac-" + TestNetwork.ID)
                .withLogLevels(List.of("lib.eal:warning")), MempoolConfig.DEFAULT, List.of(port))))
            {
                assertEquals(CONFIGURED, dpdk.port("afp0").macAddressText(), "the port's own MAC, what the NIC sends from");
                assertEquals(CONFIGURED, Files.readString(address).strip(), "the kernel interface's");
            }
        }
    }
}
