package io.spraynic.datapath.nic;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The main job's path, smaller: spray between two NIC endpoints over DPDK net_ring ports joined by
 * the real-time fabric emulator (4 planes, 8 paths, 1 % loss), every byte verified, every path used.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class FabricDemoTest
{
    @Test
    void shouldTransferVerifiedOverEveryPathThroughLossyFabric()
    {
        try (DpdkNic nic = DpdkNic.start(FabricDemo.config(4, "spraynic-fabric-demo-" + ProcessHandle.current().pid())))
        {
            final FabricDemo.Result result = FabricDemo.run(nic,
                new FabricDemo.Settings(4, 8, 1.0, 32L << 20, 1 << 20, 4, Duration.ofSeconds(120)), port -> port, progress -> { });
            System.out.println(result + " paths " + Arrays.toString(result.paths()));
            assertTrue(result.verified(), "every byte placed: " + result);
            assertEquals(32L << 20, result.bytesCompleted());
            assertTrue(result.lost() > 0, "the fabric dropped data packets");
            assertTrue(result.retransmitted() >= result.lost(), "every lost packet retransmitted: " + result);
            assertTrue(Arrays.stream(result.paths()).allMatch(count -> count > 0), "every path carried traffic: " +
                Arrays.toString(result.paths()));
        }
    }
}
