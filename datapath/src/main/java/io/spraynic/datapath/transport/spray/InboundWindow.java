package io.spraynic.datapath.transport.spray;

/**
 * The inbound message window of one spray connection and the reserve of records beyond it (docs/PROTOCOL.md
 * S10.2). A message being placed takes a record inside the window, which CONH advertises; a message beyond it
 * takes a reserve record only to be refused with an RNR NACK (no resources) and retried, and its record joins
 * the window when a retry finds room. This counts records only: whether a record came from the reserve is the
 * record's own ({@link InboundMessageRecords}).
 */
final class InboundWindow
{
    final int window;
    final int reserve;
    private int windowInUse;
    private int reserveInUse;

    InboundWindow(final int capacity)
    {
        reserve = reserveFor(capacity);
        window = capacity - reserve;
    }

    /**
     * @return the records of a table of {@code capacity} kept in reserve: an eighth, at least one when there are
     * two or more.
     */
    static int reserveFor(final int capacity)
    {
        return capacity < 2 ? 0 : Math.max(1, capacity / 8);
    }

    /** @return the inbound message window of a table of {@code capacity}: what CONH advertises. */
    static int windowFor(final int capacity)
    {
        return capacity - reserveFor(capacity);
    }

    /** @return whether a message can take a record inside the window. */
    boolean hasRoom()
    {
        return windowInUse < window;
    }

    /** @return whether a record can hold a refusal: one inside the window, else one of the reserve. */
    boolean hasRoomToRefuse()
    {
        return windowInUse < window || reserveInUse < reserve;
    }

    /** Counts a record taken, from the reserve or inside the window. */
    void take(final boolean fromReserve)
    {
        if (fromReserve)
        {
            reserveInUse++;
        }
        else
        {
            windowInUse++;
        }
    }

    /** Counts a record freed, which had been taken from the reserve or inside the window. */
    void release(final boolean fromReserve)
    {
        if (fromReserve)
        {
            reserveInUse--;
        }
        else
        {
            windowInUse--;
        }
    }

    /** Moves a reserve record into the window (its message's retry found room). */
    void joinWindow()
    {
        reserveInUse--;
        windowInUse++;
    }

    /** @return records in use inside the window. */
    int windowInUse()
    {
        return windowInUse;
    }

    /** @return reserve records in use. */
    int reserveInUse()
    {
        return reserveInUse;
    }
}
