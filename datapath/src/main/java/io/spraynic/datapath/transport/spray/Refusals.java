package io.spraynic.datapath.transport.spray;

/**
 * The refusal numbers of one connection (docs/PROTOCOL.md S9.3). This end numbers its own refusals 1, 2, ...
 * and carries the count in every SACKH; from the peer it learns the count (from its SACKHs and NACKs) and the
 * individual refusals (each NACK names one). While a refusal the peer made is still unknown here, a message
 * whose packets were all acknowledged may be that refusal, so its completion is held ({@link #anyUnlearned}).
 * Counts use serial arithmetic: they wrap. Allocation-free, but for the first late refusal ({@link #refuseLate}).
 */
final class Refusals
{
    /** READ responses refused after their READ was accepted (S9.3.2) that this end still answers queries about. */
    static final int LATE_CAPACITY = 4;

    private int made;
    private int peerMade;
    private int learned;
    private long learnedAbove; // bit i: refusal learned + 1 + i is known
    // made at the first late refusal (a READ's region deregistered while its response was sent: an error, rare):
    // a connection that never refuses a response holds none of them (issue 13: an idle connection's bytes)
    private int[] lateStream;
    private int[] lateMsn;
    private int[] lateRefusal;
    private long[] lateAt;
    private int lateCount;

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

    /** @return the refusals the peer made, as far as this end knows. */
    int peerMade()
    {
        return peerMade;
    }

    /** @return whether the peer made a refusal this end has not learned of yet. */
    boolean anyUnlearned()
    {
        return learned - peerMade < 0;
    }

    /**
     * Numbers the refusal of a READ response this end could not finish (S9.3.2: the region it reads was
     * deregistered) and keeps it for {@code keepNanos}, so that a query about that READ is answered with it. The
     * oldest kept one is forgotten only once its time is over.
     *
     * @return the refusal's number, or 0 if {@link #LATE_CAPACITY} refusals younger than {@code keepNanos} are
     * kept already (the caller fails the connection rather than answer a query wrongly).
     */
    int refuseLate(final int streamId, final int msn, final long now, final long keepNanos)
    {
        if (null == lateAt)
        {
            lateStream = new int[LATE_CAPACITY];
            lateMsn = new int[LATE_CAPACITY];
            lateRefusal = new int[LATE_CAPACITY];
            lateAt = new long[LATE_CAPACITY];
        }
        int entry = lateCount;
        if (lateCount == LATE_CAPACITY)
        {
            entry = 0;
            for (int i = 1; i < LATE_CAPACITY; i++)
            {
                if (lateAt[i] - lateAt[entry] < 0)
                {
                    entry = i;
                }
            }
            if (now - lateAt[entry] < keepNanos)
            {
                return 0;
            }
        }
        else
        {
            lateCount++;
        }
        lateStream[entry] = streamId;
        lateMsn[entry] = msn;
        lateAt[entry] = now;
        lateRefusal[entry] = next();
        return lateRefusal[entry];
    }

    /** @return the number of the kept refusal of the READ response (stream, msn), or 0 if none is kept. */
    int lateRefusal(final int streamId, final int msn)
    {
        for (int i = 0; i < lateCount; i++)
        {
            if (lateStream[i] == streamId && lateMsn[i] == msn)
            {
                return lateRefusal[i];
            }
        }
        return 0;
    }

    /** @return how many refusals of READ responses are kept; entry {@code i} by the accessors below. */
    int lateCount()
    {
        return lateCount;
    }

    int lateStream(final int entry)
    {
        return lateStream[entry];
    }

    int lateMsn(final int entry)
    {
        return lateMsn[entry];
    }

    int lateNumber(final int entry)
    {
        return lateRefusal[entry];
    }
}
