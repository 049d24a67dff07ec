package io.spraynic.apps.demo;

import io.spraynic.datapath.nic.DpdkNic;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
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

    @Test
    void shouldFinishSprayAndFailRocev2WhenAPlaneIsBlackholedMidTransfer()
    {
        // 2 ms into the transfer: 48 MiB takes longer than that at any rate these NICs reach (it is 200 Gb/s), so the
        // plane dies while data is in flight; at 20 ms a quiet machine had finished before the blackhole took effect
        final FabricDemo.Blackhole blackhole = new FabricDemo.Blackhole(1, 2_000_000L);
        final FabricDemo.Result spray = FabricDemo.run(nic,
            new FabricDemo.Settings(FabricDemo.Mode.SPRAY, 4, 8, 0, 48L << 20, 64 * 1024, 4, Duration.ofSeconds(120), blackhole),
            port -> port, progress -> { });
        assertTrue(spray.verified(), "spray carries on over the live planes by itself: " + spray);
        assertTrue(spray.blackholedAtNanos() >= 2_000_000L, "blackholed at " + spray.blackholedAtNanos());
        assertTrue(spray.nanos() > spray.blackholedAtNanos(), "the plane died mid-transfer: " + spray);
        assertEquals(48L << 20, Arrays.stream(spray.completedPerBin()).sum(), "the timeline accounts for every byte");
        assertTrue(spray.lost() > 0, "the blackhole dropped data packets");

        final FabricDemo.Result rocev2 = FabricDemo.run(nic,
            new FabricDemo.Settings(FabricDemo.Mode.ROCEV2, 4, 4, 0, 48L << 20, 64 * 1024, 4, Duration.ofSeconds(120), blackhole),
            port -> port, progress -> { });
        assertTrue(!rocev2.verified() && rocev2.bytesCompleted() < rocev2.bytes(), "RoCEv2 cannot finish: " + rocev2);
        assertTrue(null != rocev2.firstFailure() && rocev2.firstFailure().contains("RETRY_EXC_ERR"),
            "the dead plane's QP exhausts its retries: " + rocev2.firstFailure());
        assertEquals(rocev2.bytesCompleted(), Arrays.stream(rocev2.completedPerBin()).sum());
    }

    @Test
    void shouldNeverCarryMoreThanTheLinksWhenTheFabricRunsBelowWhatTheHostsCanDo()
    {
        // 4 planes of 50 Mb/s links: 0.2 Gb/s in all, a fraction of what two NICs on this project's smallest host
        // move over 100 Gb/s links (0.9-2.9 Gb/s, RESULTS.md section 30): the links, not the CPUs, bound the transfer
        final long perPlane = 50_000_000L;
        final FabricDemo.Settings settings = new FabricDemo.Settings(FabricDemo.Mode.SPRAY, 4, 8, 1.0, 8L << 20, 1 << 20, 4,
            Duration.ofSeconds(120)).withLinkRate(perPlane);
        assertEquals(perPlane, settings.fabricConfig().hostLink().rateBitsPerSecond());
        assertEquals(perPlane, settings.fabricConfig().fabricLink().rateBitsPerSecond());
        final FabricDemo.Result result = FabricDemo.run(nic, settings, port -> port, progress -> { });
        assertTrue(result.verified(), "every byte placed: " + result);
        assertTrue(result.goodputGbps() <= 4 * perPlane / 1e9, "the links bound the goodput: " + result.goodputGbps() +
            " Gb/s over 4 x " + perPlane / 1e9 + " Gb/s");
        assertTrue(result.lost() > 0 && result.retransmitted() + result.moved() >= result.lost(), result.toString());
    }

    @ParameterizedTest
    @EnumSource(FabricDemo.Threads.class)
    void shouldVerifyBothTransportsOnTheThreadsEachModeNames(final FabricDemo.Threads threads)
    {
        for (final FabricDemo.Mode mode : FabricDemo.Mode.values())
        {
            final Set<String> running = new TreeSet<>();
            final FabricDemo.Result result = FabricDemo.run(nic, new FabricDemo.Settings(mode, 4, mode == FabricDemo.Mode.SPRAY ?
                8 : 4, 1.0, 8L << 20, 1 << 20, 4, Duration.ofSeconds(120)).withThreads(threads), port -> port, progress ->
                {
                    if (running.isEmpty()) // the first report comes once both NICs run, before the first post
                    {
                        Thread.getAllStackTraces().keySet().forEach(thread -> running.add(thread.getName()));
                    }
                });
            assertTrue(result.verified(), threads + " " + mode + ": every byte placed: " + result);
            assertTrue(result.lost() > 0 && result.retransmitted() + result.moved() >= result.lost(), result.toString());
            assertTrue(result.coresBusy() > 0, "the process's CPU over the transfer: " + result.coresBusy());
            final long workerThreads = running.stream().filter(name -> name.startsWith("spraynic-worker")).count();
            if (threads == FabricDemo.Threads.SHARED)
            {
                assertTrue(running.contains("spraynic-demo-poll"), running.toString());
                assertTrue(!running.contains("fabric") && workerThreads == 0, "no thread of their own: " + running);
            }
            else
            {
                assertTrue(running.contains("fabric") && !running.contains("spraynic-demo-poll"), running.toString());
                assertEquals(1, workerThreads, "two NICs' workers, both named for worker 0: " + running);
            }
        }
    }

    @Test
    void shouldShareThePollThreadOnlyWhereCoresAreFewerThanTheBusyThreads()
    {
        assertEquals(FabricDemo.Threads.SHARED, FabricDemo.Threads.forCores(1));
        assertEquals(FabricDemo.Threads.SHARED, FabricDemo.Threads.forCores(2));
        assertEquals(FabricDemo.Threads.SHARED, FabricDemo.Threads.forCores(3));
        assertEquals(FabricDemo.Threads.DEDICATED, FabricDemo.Threads.forCores(4));
        assertEquals(FabricDemo.Threads.forCores(Runtime.getRuntime().availableProcessors()),
            new FabricDemo.Settings(FabricDemo.Mode.SPRAY, 4, 8, 0, 1L << 20, 1 << 20, 4, Duration.ofSeconds(1)).threads());
    }

    @Test
    void shouldRefuseToBlackholeAPlaneThatDoesNotExist()
    {
        final IllegalArgumentException ex = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
            () -> FabricDemo.run(nic, new FabricDemo.Settings(FabricDemo.Mode.SPRAY, 4, 8, 0, 1L << 20, 1 << 20, 4,
                Duration.ofSeconds(10), new FabricDemo.Blackhole(4, 0)), port -> port, progress -> { }));
        assertEquals("cannot blackhole plane 4 of 4", ex.getMessage());
    }
}
