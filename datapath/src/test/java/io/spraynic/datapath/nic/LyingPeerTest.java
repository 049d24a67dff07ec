package io.spraynic.datapath.nic;

import io.spraynic.datapath.api.BulkTransfer;
import io.spraynic.datapath.api.SeededPattern;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A serving NIC that says it exposes more than it registered (issue 12, item 10): the visitor's WRITEs past the
 * registered end draw a remote access error, and the visitor learns it at once, as a failed work request, instead
 * of faults in its worker and probes until its time-out. (The same through the tools' visit, which reads the lie
 * from a peer's exchange directory: apps' {@code PeerExchangeTest}.)
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LyingPeerTest
{
    private static final Duration WAIT = Duration.ofSeconds(20);

    /** Paths of a connection, from {@code connections(8, 4, 1024)} below. */
    private static final long PATHS = 8;

    /** {@code probeMin} of {@link EmbeddedNicConfig#sharedCoreSprayConfig()}: 2 ms. */
    private static final long PROBE_MIN_MILLIS = 2;

    /**
     * How long no probe must go out for the visitor to count as quiet: longer than a resync probe's longest wait
     * ({@code rtoMax}, 200 ms in {@link EmbeddedNicConfig#sharedCoreSprayConfig()}) and than a tail-loss probe's on
     * loaded hosts (2 x SRTT), so a visitor still probing on any of its 8 paths probes in it.
     */
    private static final long QUIET_MILLIS = 500;

    /** Half the connection time-out of {@link EmbeddedNicConfig#sharedCoreSprayConfig()} (10 s): well before it. */
    private static final long QUIET_WITHIN_MILLIS = 5_000;

    @TempDir
    Path dir;

    @AutoClose
    private InMemoryNicPair pair;

    private EmbeddedNic[] start()
    {
        pair = new InMemoryNicPair(dir, "lying", (config, host) -> config.workers(1).connections(8, 4, 1024)
            .sprayConfig(EmbeddedNicConfig::sharedCoreSprayConfig).listen(host == 1));
        return new EmbeddedNic[]{pair.nic(0), pair.nic(1)};
    }

    /**
     * @return milliseconds from now until the visitor sent no probe for {@link #QUIET_MILLIS}; fails when it is still
     * probing after {@link #QUIET_WITHIN_MILLIS}, as a visitor that learned nothing would until its time-out.
     */
    private static long millisUntilProbingStops(final EmbeddedNic visitor) throws InterruptedException
    {
        final long start = System.nanoTime();
        long probes = HostileWire.sum(HostileWire.counters(visitor), ": probes_sent");
        long lastProbeSeen = start;
        while (System.nanoTime() - lastProbeSeen < TimeUnit.MILLISECONDS.toNanos(QUIET_MILLIS))
        {
            final long probingMillis = (System.nanoTime() - start) / 1_000_000;
            assertTrue(probingMillis < QUIET_WITHIN_MILLIS, "still probing " + probingMillis + " ms after the failure: " +
                probes + " probes");
            Thread.sleep(20);
            final long now = HostileWire.sum(HostileWire.counters(visitor), ": probes_sent");
            if (now != probes)
            {
                probes = now;
                lastProbeSeen = System.nanoTime();
            }
        }
        return (System.nanoTime() - start) / 1_000_000;
    }

    @Test
    void shouldFailWritesPastTheRegisteredEndAtOnceWithARemoteAccessError() throws Exception
    {
        final EmbeddedNic[] nics = start();
        final EmbeddedNic visitor = nics[0];
        final EmbeddedNic server = nics[1];
        final long registered = 256 * 1024;
        final long claimed = 4 * registered; // what the lying nic.addr says
        final MemoryRegion exposed = pair.expose(1, registered);
        final MemorySegment source = SeededPattern.allocate(pair.arena(), claimed, 5);
        final MemoryRegion local = visitor.register(source, AccessFlags.NONE);
        final NicConnection connection = visitor.connect(new int[]{server.localIpv4(0)}, WAIT);

        final long start = System.nanoTime();
        final IllegalStateException failure = assertThrows(IllegalStateException.class,
            () -> BulkTransfer.write(connection, local, exposed.address(), exposed.rkey(), 64 * 1024, false, WAIT));
        final long millis = (System.nanoTime() - start) / 1_000_000;
        assertTrue(failure.getMessage().contains("REM_ACCESS_ERR"), failure.getMessage());
        assertTrue(millis < 5_000, "failed after " + millis + " ms: " + failure.getMessage());

        final long quietMillis = millisUntilProbingStops(visitor);
        final Map<String, Long> v = HostileWire.counters(visitor);
        assertEquals(0, InMemoryNicPair.faults(visitor), v::toString);
        assertEquals(0, InMemoryNicPair.faults(server), () -> HostileWire.counters(server).toString());
        // the probes follow the wall clock, not the attempt: a start probe after each pause, and a tail-loss probe per
        // path quiet for 2 x SRTT (at least probeMin), also after the failure while the failed message's packets
        // still in flight are recovered; a loaded host (SRTT of 170 ms seen, retransmissions) sends more of them, so a
        // constant bound on their number flaked (110 at load 27). What the visitor must not do is probe until its
        // time-out: its probing stops soon after the failure (checked above), and is never a storm: at most one
        // tail-loss probe per path per probeMin
        final long probes = HostileWire.sum(v, ": probes_sent");
        final long tailProbes = probes - HostileWire.sum(v, ": start_probes_sent");
        final long probingMillis = millis + quietMillis;
        assertTrue(tailProbes <= PATHS * (probingMillis / PROBE_MIN_MILLIS + 1), "tail-loss probes: " + tailProbes +
            " in " + probingMillis + " ms on " + PATHS + " paths");
    }
}
