package io.spraynic.conformance;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The suite's receive side: what its ACKs and keepalives claim (S5.1, S5.1-2, S12.10). */
class ReceiveWindowsTest
{
    private static final long[] KEY = {0x0123456789ABCDEFL, 0x0FEDCBA987654321L};
    private static final int CUMULATIVE = 5;
    private static final int ACK_SEQUENCE = 44;

    /**
     * A keepalive of a silent suite claims no more than its last ACK did, and repeats that ACK's sequence number, so
     * a receiver takes it as stale (S5.1-2) and learns nothing of what the suite withholds.
     */
    @Test
    void shouldKeepAliveWithTheLastAckAgainClaimingNothingWithheld()
    {
        final ReceiveWindows windows = new ReceiveWindows(2, 1_000);
        assertThrows(IllegalStateException.class, () -> windows.keepalive(7, 0, KEY),
            "before any ACK of the path its sequence number, 0, would not be stale");
        windows.record(0, 1_000);
        windows.record(0, 1_001);
        final Packet ack = packet(windows.ack(7, 0, 0, 0, KEY));
        assertEquals(1_002, ack.h24(CUMULATIVE));
        assertEquals(1, ack.h32(ACK_SEQUENCE));
        windows.record(0, 1_002); // received since, withheld
        windows.record(0, 1_003);
        final Packet keepalive = packet(windows.keepalive(7, 0, KEY));
        assertEquals(SprayWire.ACK, keepalive.opcode());
        assertEquals(7, keepalive.destQp());
        assertEquals(0, keepalive.h8(0), "path 0");
        assertEquals(1_002, keepalive.h24(CUMULATIVE), "what the last ACK claimed, not what came since");
        assertEquals(1, keepalive.h32(ACK_SEQUENCE), "the last ACK's sequence again: stale");
        assertEquals(1, windows.lastAckSequence(0));
        final Packet next = packet(windows.ack(7, 0, 0, 0, KEY));
        assertEquals(1_004, next.h24(CUMULATIVE), "the next real ACK claims what was withheld");
        assertEquals(2, next.h32(ACK_SEQUENCE));
    }

    private static Packet packet(final byte[] bytes)
    {
        return new Packet(bytes, true, -1);
    }
}
