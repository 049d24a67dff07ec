package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.TransportCounters;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.SplittableRandom;

import static io.spraynic.datapath.transport.spray.CloseHandshake.FLUSH;
import static io.spraynic.datapath.transport.spray.CloseHandshake.GIVE_UP;
import static io.spraynic.datapath.transport.spray.CloseHandshake.NOTHING;
import static io.spraynic.datapath.transport.spray.CloseHandshake.SEND_CLOSE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/PROTOCOL.md S9.1, S9.2: a graceful close drains, then sends SPRAY_CLOSE with backoff until the ACK with
 * its token answers or the tries run out.
 */
@Timeout(10)
class CloseHandshakeTest
{
    private static final long TIMEOUT = 1_000_000;
    private static final long BACKOFF = SprayHandshake.CONNECT_BACKOFF_NANOS;

    private final TransportCounters counters = SprayCounters.create();
    private final CloseHandshake close = new CloseHandshake(TIMEOUT, new SplittableRandom(3), counters);

    @Test
    void shouldCloseOnlyAnEstablishedConnectionOnce()
    {
        assertEquals(SprayConnection.State.ESTABLISHED, close.state());
        assertEquals(NOTHING, close.onTimer(0, true), "an established connection has no close timer");
        assertTrue(close.begin(10));
        assertEquals(SprayConnection.State.DRAINING, close.state());
        assertFalse(close.begin(20));
        close.closed();
        assertFalse(close.begin(30));
        assertEquals(NOTHING, close.onTimer(40, true));
    }

    @Test
    void shouldWaitForTheDrainThenSendCloseWithDoublingBackoffThenGiveUp()
    {
        close.begin(0);
        assertEquals(NOTHING, close.onTimer(TIMEOUT - 1, false), "still draining, in time");
        assertEquals(SEND_CLOSE, close.onTimer(500, true));
        assertEquals(SprayConnection.State.CLOSING, close.state());
        long at = 500;
        long backoff = BACKOFF;
        for (int tryNumber = 2; tryNumber <= SprayConnection.CLOSE_TRIES; tryNumber++)
        {
            assertEquals(NOTHING, close.onTimer(at + backoff - 1, true), "try " + tryNumber + " early");
            at += backoff;
            assertEquals(SEND_CLOSE, close.onTimer(at, true), "try " + tryNumber);
            backoff *= 2;
        }
        assertEquals(0, counters.get(SprayCounters.CLOSE_TIMEOUTS));
        assertEquals(NOTHING, close.onTimer(at + backoff - 1, true));
        assertEquals(GIVE_UP, close.onTimer(at + backoff, true), "every try unanswered");
        assertEquals(1, counters.get(SprayCounters.CLOSE_TIMEOUTS));
    }

    @Test
    void shouldFlushWhatIsUnfinishedAfterTheConnectionTimeoutAndCloseAtOnce()
    {
        close.begin(100);
        assertEquals(NOTHING, close.onTimer(100 + TIMEOUT - 1, false));
        assertEquals(FLUSH | SEND_CLOSE, close.onTimer(100 + TIMEOUT, false));
        assertEquals(1, counters.get(SprayCounters.CLOSE_TIMEOUTS));
        assertEquals(SprayConnection.State.CLOSING, close.state());
    }

    @Test
    void shouldTakeOnlyTheCloseAckThatCarriesItsSecretTokenWhileClosing()
    {
        close.begin(0);
        assertFalse(close.isAnsweredBy(close.token()), "no CLOSE sent yet");
        close.onTimer(0, true);
        final long token = close.token();
        assertFalse(close.isAnsweredBy(token + 1));
        assertFalse(close.isAnsweredBy(0));
        assertTrue(close.isAnsweredBy(token));
        close.closed();
        assertFalse(close.isAnsweredBy(token), "closed: a repeated CLOSE_ACK is not taken again");

        final CloseHandshake other = new CloseHandshake(TIMEOUT, new SplittableRandom(4), counters);
        other.begin(0);
        other.onTimer(0, true);
        assertNotEquals(token, other.token(), "tokens come from the secret source, not from a counter");
    }
}
