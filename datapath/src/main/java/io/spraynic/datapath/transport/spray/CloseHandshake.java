package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.TransportCounters;

import java.util.random.RandomGenerator;

import static io.spraynic.datapath.transport.spray.SprayConnection.State;

/**
 * The state of one spray connection from the moment it is open (docs/PROTOCOL.md S9.1, S9.2) and its graceful
 * close: DRAINING while this end's outstanding messages finish (those still unfinished after
 * {@code connectionTimeout} are flushed), then CLOSING, a {@code SPRAY_CLOSE} with a secret token sent with
 * exponential backoff until the {@code SPRAY_CLOSE_ACK} that carries the token answers, or
 * {@link SprayConnection#CLOSE_TRIES} tries passed; then CLOSED. Writing the packets, flushing and forgetting
 * the connection are the caller's, as {@link #onTimer} says. Allocation-free.
 */
final class CloseHandshake
{
    /** {@link #onTimer}: nothing to do. */
    static final int NOTHING = 0;
    /** {@link #onTimer} bit: draining took too long: flush what is unfinished and resend none of it. */
    static final int FLUSH = 1;
    /** {@link #onTimer} bit: send a {@code SPRAY_CLOSE} with {@link #token()}. */
    static final int SEND_CLOSE = 2;
    /** {@link #onTimer}: every try went unanswered: forget the connection anyway. */
    static final int GIVE_UP = 4;

    private final long connectionTimeoutNanos;
    private final RandomGenerator secrets;
    private final TransportCounters counters;
    private State state = State.ESTABLISHED;
    private long startedAt;
    private long nextTryAt;
    private long backoffNanos;
    private int tries;
    private long token;

    /** @param secrets where the token comes from: a secret, like every token (S12.2). */
    CloseHandshake(final long connectionTimeoutNanos, final RandomGenerator secrets, final TransportCounters counters)
    {
        this.connectionTimeoutNanos = connectionTimeoutNanos;
        this.secrets = secrets;
        this.counters = counters;
    }

    State state()
    {
        return state;
    }

    /** Starts a graceful close. @return false if the connection was not ESTABLISHED. */
    boolean begin(final long now)
    {
        if (state != State.ESTABLISHED)
        {
            return false;
        }
        state = State.DRAINING;
        startedAt = now;
        return true;
    }

    /** The connection is closed (gracefully, forcefully, or after an error). */
    void closed()
    {
        state = State.CLOSED;
    }

    /**
     * @param drained whether nothing of this end's messages is unfinished or in flight.
     * @return {@link #NOTHING}, {@link #GIVE_UP}, or {@link #SEND_CLOSE} with {@link #FLUSH} when draining ends
     * by timeout.
     */
    int onTimer(final long now, final boolean drained)
    {
        int actions = NOTHING;
        if (state == State.DRAINING)
        {
            final boolean late = now - startedAt >= connectionTimeoutNanos;
            if (!drained && !late)
            {
                return NOTHING;
            }
            if (!drained)
            {
                counters.increment(SprayCounters.CLOSE_TIMEOUTS);
                actions = FLUSH;
            }
            state = State.CLOSING;
            token = secrets.nextLong();
            backoffNanos = SprayHandshake.CONNECT_BACKOFF_NANOS;
            tries = 0;
            nextTryAt = now;
        }
        if (state == State.CLOSING && now >= nextTryAt)
        {
            if (tries >= SprayConnection.CLOSE_TRIES)
            {
                counters.increment(SprayCounters.CLOSE_TIMEOUTS); // the peer stays silent: forget it anyway
                return GIVE_UP;
            }
            tries++; // a CLOSE that found no room in the output counts as a lost one
            nextTryAt = now + backoffNanos;
            backoffNanos *= 2;
            return actions | SEND_CLOSE;
        }
        return actions;
    }

    /** @return the token of this end's {@code SPRAY_CLOSE}. */
    long token()
    {
        return token;
    }

    /** @return whether a {@code SPRAY_CLOSE_ACK} carrying {@code ackToken} answers this end's close. */
    boolean isAnsweredBy(final long ackToken)
    {
        return state == State.CLOSING && ackToken == token;
    }
}
