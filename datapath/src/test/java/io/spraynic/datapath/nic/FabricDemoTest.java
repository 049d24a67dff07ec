package io.spraynic.datapath.nic;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The main job's path, smaller: two NIC endpoints over DPDK net_ring ports joined by the real-time
 * fabric emulator (4 planes, 1 % loss), every byte verified, every path used; spray, then the
 * RoCEv2 baseline over the same ports (one EAL per JVM: one NIC for the class).
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class FabricDemoTest
{
    private static DpdkNic nic;

    @BeforeAll
    static void start()
    {
        nic = DpdkNic.start(FabricDemo.config(4, "spraynic-fabric-demo-" + ProcessHandle.current().pid()));
    }

    @AfterAll
    static void stop()
    {
        nic.close();
    }

    @Test
    void shouldTransferVerifiedOverEveryPathThroughLossyFabricWithSpray()
    {
        final FabricDemo.Result result = FabricDemo.run(nic,
            new FabricDemo.Settings(FabricDemo.Mode.SPRAY, 4, 8, 1.0, 32L << 20, 1 << 20, 4, Duration.ofSeconds(120)),
            port -> port, progress -> { });
        assertTrue(result.verified(), "every byte placed: " + result);
        assertEquals(32L << 20, result.bytesCompleted());
        assertTrue(result.lost() > 0, "the fabric dropped data packets");
        assertTrue(result.retransmitted() + result.moved() >= result.lost(), "every lost packet sent again: " + result);
        assertEquals(8, result.paths().length);
        assertTrue(Arrays.stream(result.paths()).allMatch(count -> count > 0), "every path carried traffic: " +
            Arrays.toString(result.paths()));
    }

    @Test
    void shouldCarryTheSameTransferWithRocev2OnePathPerPlane()
    {
        final FabricDemo.Result result = FabricDemo.run(nic,
            new FabricDemo.Settings(FabricDemo.Mode.ROCEV2, 4, 4, 0.1, 16L << 20, 1 << 20, 4, Duration.ofSeconds(120)),
            port -> port, progress -> { });
        assertTrue(result.verified(), "every byte placed: " + result);
        assertEquals(4, result.paths().length);
        assertTrue(Arrays.stream(result.paths()).allMatch(count -> count > 0), Arrays.toString(result.paths()));
    }
}
