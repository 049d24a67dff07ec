package io.spraynic.conformance;

import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
        final InetSocketAddress suite = TestAddresses.loopback(81, 40_000);
        final InetSocketAddress target = TestAddresses.loopback(82, 40_000);
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

    @Test
    void shouldSkipAPacketTooShortForWhatTheWaitReadsOfItAndTakeTheNext() throws Exception
    {
        final InetSocketAddress suite = TestAddresses.loopback(84, 40_000);
        final InetSocketAddress target = TestAddresses.loopback(85, 40_000);
        try (UdpLink suiteLink = new UdpLink(suite, target); java.net.DatagramSocket targetSocket =
            new java.net.DatagramSocket(target))
        {
            final ScriptedPeer peer = new ScriptedPeer(suiteLink, new ConnectRequest());
            // 4 bytes, then an answer: before, reading the first one's destination QP threw out of the wait, and out
            // of the suite, with no report written
            targetSocket.send(new java.net.DatagramPacket(new byte[4], 4, suite));
            final byte[] reject = FrameBuilder.bth(SprayWire.CONNECT_REJECT, 7, 0, false).zeros(64).bytes();
            targetSocket.send(new java.net.DatagramPacket(reject, reject.length, suite));
            final Packet answer = peer.awaitPacket(5_000_000_000L, p -> p.destQp() == 7 &&
                ScriptedPeer.isHandshakeAnswer(p.opcode()));
            assertNotNull(answer);
            assertEquals(SprayWire.CONNECT_REJECT, answer.opcode());
            assertEquals(1, suiteLink.truncatedPackets());
        }
    }

    @Test
    void shouldEndAWaitThatOnlyFindsAnotherAddressesDatagramsAFewReadsLate() throws Exception
    {
        final InetSocketAddress suite = TestAddresses.loopback(86, 40_000);
        final InetSocketAddress target = TestAddresses.loopback(87, 40_000);
        final InetSocketAddress stranger = TestAddresses.loopback(88, 40_000);
        try (UdpLink suiteLink = new UdpLink(suite, target); UdpLink strangerLink = new UdpLink(stranger, suite);
            UdpLink targetLink = new UdpLink(target, suite))
        {
            // before, a wait read past its deadline for as long as another address kept sending (a flood faster than
            // the suite drains held it for good): now it gives up after a few of theirs
            final byte[] frame = FrameBuilder.bth(SprayWire.NACK, 7, 0, false).zeros(16).bytes();
            for (int i = 0; i < 3 * UdpLink.MAX_OTHERS_PAST_DEADLINE; i++)
            {
                strangerLink.send(frame, false);
            }
            targetLink.send(frame, false);
            Thread.sleep(100);
            assertNull(suiteLink.receive(0), "the wait is over once " + UdpLink.MAX_OTHERS_PAST_DEADLINE +
                " of another address's datagrams were read past its end");
            assertNotNull(suiteLink.receive(1_000_000_000L), "the target's datagram is read by the next wait");
        }
    }
}
