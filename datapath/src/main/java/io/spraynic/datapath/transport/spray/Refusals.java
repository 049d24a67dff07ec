package io.spraynic.datapath.transport.spray;

/**
 * The refusal numbers of one connection (docs/PROTOCOL.md S9.3). This end numbers its own refusals 1, 2, ...
 * and carries the count in every SACKH; from the peer it learns the count (from its SACKHs and NACKs) and the
 * individual refusals (each NACK names one). While a refusal the peer made is still unknown here, a message
 * whose packets were all acknowledged may be that refusal, so its completion is held ({@link #anyUnlearned}).
 * Counts use serial arithmetic: they wrap. Allocation-free.
 */
final class Refusals
{
    private int made;
    private int peerMade;
    private int learned;
    private long learnedAbove; // bit i: refusal learned + 1 + i is known

    /** @return the number of a new refusal made here. */
    int next()
    {
        return ++made;
    }

    /** @return refusals made here so far (what every SACKH carries). */
    int made()
    {
        return made;
    }

    /** The peer made at least {@code count} refusals (a SACKH's count, or a NACK's number). */
    void onPeerCount(final int count)
    {
        if (count - peerMade > 0)
        {
            peerMade = count;
        }
    }

    /**
     * A refusal named by a NACK of the peer.
     *
     * @return true the first time it is learned (a repeat, or one already passed, is false).
     */
    boolean learn(final int refusal)
    {
        final int ahead = refusal - learned;
        if (ahead <= 0)
        {
            return false;
        }
        if (ahead > Long.SIZE)
        {
            return true; // too far ahead to record: the queries bring it again once the ones before it are known
        }
        final long bit = 1L << (ahead - 1);
        if ((learnedAbove & bit) != 0)
        {
            return false;
        }
        learnedAbove |= bit;
        while ((learnedAbove & 1) != 0)
        {
            learnedAbove >>>= 1;
            learned++;
        }
        return true;
    }

    /** @return whether the peer made a refusal this end has not learned of yet. */
    boolean anyUnlearned()
    {
        return learned - peerMade < 0;
    }
}
