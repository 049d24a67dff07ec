package io.spraynic.conformance;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/** How the scripted peer waits (S13.2), over two loopback sockets, no target. */
class ScriptedPeerTest
{
    /**
     * A wait that ends still reads what is already queued: a suite descheduled for longer than the wait (here: a wait
     * of 0, after the packet arrived) must not miss an answer that came in time.
     */
    @Test
    void shouldReadWhatIsQueuedWhenTheWaitIsOver() throws Exception
    {
        final long pid = ProcessHandle.current().pid();
        final int port = 40_000 + (int)(pid % 20_000);
        final InetSocketAddress suite = new InetSocketAddress(InetAddress.getByName("127.81." + (pid >> 8 & 0xFF) +
            "." + (pid & 0xFF)), port);
        final InetSocketAddress target = new InetSocketAddress(InetAddress.getByName("127.82." + (pid >> 8 & 0xFF) +
            "." + (pid & 0xFF)), port);
        try (UdpLink suiteLink = new UdpLink(suite, target); UdpLink targetLink = new UdpLink(target, suite))
        {
            final ScriptedPeer peer = new ScriptedPeer(suiteLink, new ConnectRequest());
            assertNull(peer.awaitPacket(0, p -> true), "nothing queued yet");
            targetLink.send(FrameBuilder.bth(SprayWire.NACK, 7, 0, false).zeros(16).bytes(), false);
            Thread.sleep(50); // queued at the suite's socket before the wait begins
            final Packet late = peer.awaitPacket(0, p -> p.opcode() == SprayWire.NACK);
            assertNotNull(late, "a packet queued before a wait of 0 ended is read");
            assertEquals(1, peer.received.size());
            assertNull(peer.awaitPacket(0, p -> true), "and read once");
        }
    }
}
