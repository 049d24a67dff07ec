package io.spraynic.bench.e2e;

import io.spraynic.datapath.nic.DpdkNic;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Tiny runs of the end-to-end harnesses over a real {@code net_ring} pair (EAL once in this class's JVM):
 * every ping answered with what was sent, one histogram entry per measured round trip, every byte of a
 * throughput run where it belongs.
 */
class EndToEndRingTest
{
    private static DpdkNic nic;

    @BeforeAll
    static void start()
    {
        nic = RingNic.start();
    }

    @AfterAll
    static void stop()
    {
        nic.eal().registerCurrentThread();
        RingNic.drain(nic);
        assertEquals(nic.pool().size(), nic.pool().availableCount(), "mbufs leaked");
        nic.close();
    }

    @ParameterizedTest
    @EnumSource(TransportPair.Kind.class)
    void shouldAnswerEveryPingWithTheBytesSent(final TransportPair.Kind kind)
    {
        final LatencyResult result = PingPong.run(nic, kind, 64, 50, 500, Duration.ofSeconds(60));
        assertEquals(500, result.iterations(), "one histogram entry per measured round trip");
        assertEquals(0, result.mismatches());
        assertTrue(result.p50Ns() > 0 && result.p50Ns() <= result.p99Ns() && result.p99Ns() <= result.p999Ns());
    }

    @Test
    void shouldBounceEveryRawFrameBack()
    {
        final LatencyResult result = RawPingPong.run(nic, 64, 100, 2000, Duration.ofSeconds(30));
        assertEquals(2000, result.iterations());
        assertEquals(0, result.mismatches());
    }

    @ParameterizedTest
    @EnumSource(TransportPair.Kind.class)
    void shouldMoveAndVerifyEveryByteOnOneThread(final TransportPair.Kind kind)
    {
        for (final int mtu : new int[]{1024, 4096})
        {
            final ThroughputResult result = Throughput.run(nic, kind, mtu, 4096, 0.1, 0.3, 1, Idle.SPIN);
            assertTrue(result.verified(), result::toText);
            assertTrue(result.messages() > 0 && result.packets() == 4096 / mtu * result.messages(), result::toText);
            assertEquals(result.messages() * 4096, result.bytes());
        }
    }

    @Test
    void shouldMoveAndVerifyEveryByteWithAThreadPerEndpoint()
    {
        final ThroughputResult result = Throughput.run(nic, TransportPair.Kind.SPRAY, 100_000, 0.1, 0.3, 2, Idle.YIELD);
        assertTrue(result.verified(), result::toText);
        assertEquals(25 * result.messages(), result.packets(), "100,000 B = 25 packets of up to 4096 B, the default MTU");
    }
}
