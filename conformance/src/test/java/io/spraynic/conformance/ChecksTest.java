package io.spraynic.conformance;

import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/** How one check is run and reported, over two loopback sockets: the target's part played by hand. */
class ChecksTest
{
    /**
     * A packet a wait skipped for being shorter than the fields read of it is no verdict, but the check it happened
     * in says so: before, the count stayed inside the suite, and a target's author never learnt of the short packet.
     */
    @Test
    void shouldReportThePacketsAWaitSkippedInTheCheckThatSkippedThem() throws Exception
    {
        final InetSocketAddress suite = TestAddresses.loopback(86, 40_000);
        final InetSocketAddress target = TestAddresses.loopback(87, 40_000);
        final List<CheckResult> results = new ArrayList<>();
        try (UdpLink link = new UdpLink(suite, target); java.net.DatagramSocket targetSocket =
            new java.net.DatagramSocket(target))
        {
            final Checks checks = new Checks(new Target(target, suite, 1, 0, 1, ConformanceSuite.REGION_BYTES), link,
                results)
            {
            };
            final ScriptedPeer peer = new ScriptedPeer(link, new ConnectRequest());
            checks.must("handshake.version-3", "S9.1-1", "a REJECT after a short packet", () ->
            {
                targetSocket.send(new java.net.DatagramPacket(new byte[4], 4, suite));
                final byte[] reject = FrameBuilder.bth(SprayWire.CONNECT_REJECT, 7, 0, false).zeros(64).bytes();
                targetSocket.send(new java.net.DatagramPacket(reject, reject.length, suite));
                final Packet answer = peer.awaitPacket(5_000_000_000L, p -> p.destQp() == 7 &&
                    ScriptedPeer.isHandshakeAnswer(p.opcode()));
                assertNotNull(answer);
                return null;
            });
            checks.must("handshake.retry", "S9.1-3", "nothing short", () -> null);
        }
        assertEquals(Verdict.PASS, results.get(0).verdict());
        assertEquals("1 packet(s) of the target shorter than the fields read of them were skipped",
            results.get(0).reason());
        assertNull(results.get(1).reason(), "counted in the check it happened in only");
    }
}
