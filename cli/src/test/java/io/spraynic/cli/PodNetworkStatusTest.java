package io.spraynic.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class PodNetworkStatusTest
{
    /** As Multus writes it for a pod with the cluster network and two SR-IOV VFs bound to vfio-pci. */
    static final String STATUS = """
        [{
            "name": "cbr0",
            "interface": "eth0",
            "ips": ["10.244.1.5"],
            "mac": "2a:11:5e:01:02:03",
            "default": true,
            "dns": {}
        },{
            "name": "spraynic/spraynic-plane0",
            "interface": "net1",
            "ips": ["10.100.0.7"],
            "dns": {},
            "device-info": {"type": "pci", "version": "1.1.0", "pci": {"pci-address": "0000:3b:02.1"}}
        },{
            "name": "spraynic/spraynic-plane1",
            "interface": "net2",
            "ips": ["fd00:101::7", "10.101.0.7"],
            "dns": {},
            "device-info": {"type": "pci", "version": "1.1.0", "pci": {"pci-address": "0000:3b:0a.3"}}
        }]""";

    @TempDir
    Path dir;

    @Test
    void shouldTakeTheIpv4AddressMultusRecordedForEachInterface() throws Exception
    {
        final Path file = dir.resolve("network-status");
        Files.writeString(file, STATUS);
        assertEquals("10.100.0.7", PodNetworkStatus.address("netstatus:net1", file, 0));
        assertEquals("10.101.0.7", PodNetworkStatus.address("netstatus:net2", file, 0));
    }

    @Test
    void shouldWaitForTheKubeletToWriteTheAnnotation() throws Exception
    {
        final Path file = dir.resolve("network-status");
        Files.writeString(file, ""); // mounted before Multus annotated the pod
        final Thread kubelet = Thread.ofPlatform().start(() ->
        {
            try
            {
                Thread.sleep(600);
                final Path next = dir.resolve("next");
                Files.writeString(next, STATUS);
                Files.move(next, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            }
            catch (final Exception ex)
            {
                throw new IllegalStateException(ex);
            }
        });
        final long start = System.nanoTime();
        assertEquals("10.100.0.7", PodNetworkStatus.address("netstatus:net1", file, 20));
        assertTrue(System.nanoTime() - start >= 500_000_000L, "it waited for the file");
        kubelet.join();
    }

    @Test
    void shouldRefuseWhatDoesNotNameTheInterfaceWithOneAddressAfterTheTimeout() throws Exception
    {
        final Path file = dir.resolve("network-status");
        assertRefused("netstatus:net1", null, "needs --network-status");
        assertRefused("netstatus:", file, "names no interface");
        assertRefused("netstatus:net1", file, "there is no " + file);
        Files.writeString(file, STATUS);
        assertRefused("netstatus:net3", file, "names interfaces [eth0, net1, net2], not net3");
        Files.writeString(file, STATUS.replace("\"10.100.0.7\"", "\"10.100.0.7\", \"10.100.0.8\""));
        assertRefused("netstatus:net1", file, "has 2 IPv4 addresses");
        Files.writeString(file, STATUS.replace("\"10.100.0.7\"", "\"localhost\""));
        assertRefused("netstatus:net1", file, "has 0 IPv4 addresses");
        Files.writeString(file, STATUS.replace("\"10.100.0.7\"", "\"10.100.0.256\""));
        assertRefused("netstatus:net1", file, "has 0 IPv4 addresses");
        Files.writeString(file, STATUS.substring(0, 100));
        assertRefused("netstatus:net1", file, "is not JSON");
        Files.writeString(file, "{\"interface\": \"net1\", \"ips\": [\"10.100.0.7\"]}");
        assertRefused("netstatus:net1", file, "is not a JSON array");
        Files.writeString(file, "[" + " ".repeat(PodNetworkStatus.MAX_BYTES) + "]");
        assertRefused("netstatus:net1", file, "is over");
        Files.writeString(file, "[1, \"net1\", null, {\"interface\": {}}]");
        assertRefused("netstatus:net1", file, "not net1");
    }

    private static void assertRefused(final String ip, final Path file, final String reason)
    {
        final long start = System.nanoTime();
        final BadOption refused = assertThrows(BadOption.class, () -> PodNetworkStatus.address(ip, file, 0.3));
        assertTrue(refused.getMessage().contains(reason), refused.getMessage());
        assertTrue(refused.getMessage().startsWith("--ip " + ip + ": "), refused.getMessage());
        assertTrue(System.nanoTime() - start < 5_000_000_000L, "bounded by the timeout");
    }
}
