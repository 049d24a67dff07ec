package io.spraynic.bench.e2e;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The baselines: the C ping-pong (its own process and EAL) answers every ping, and the UDP loopback run
 * counts datagrams of the right sizes in order.
 */
class BaselinesTest
{
    @Test
    void shouldRunTheCPingPongThroughTheShim() throws Exception
    {
        System.setProperty(CPingPong.BINARY_PROPERTY, Path.of("target", "native", "spraynic-pingpong").toString());
        final LatencyResult result = CPingPong.run(64, 100, 2000);
        assertEquals("raw-c", result.name());
        assertEquals(2000, result.iterations());
        assertEquals(0, result.mismatches());
        assertTrue(result.p50Ns() > 0 && result.p50Ns() <= result.p99Ns());
    }

    @Test
    void shouldCarryTheSameMessagesOverKernelUdp()
    {
        final ThroughputResult result = UdpBaseline.run(4000, 0.1, 0.3);
        assertTrue(result.verified(), result::toText);
        assertTrue(result.packets() > 0 && result.cpuNanos() > 0, result::toText);
        // 4000 B = three 1024 B datagrams and one of 928 B
        assertTrue(result.bytes() >= result.packets() * 928 && result.bytes() <= result.packets() * 1024, result::toText);
    }
}
