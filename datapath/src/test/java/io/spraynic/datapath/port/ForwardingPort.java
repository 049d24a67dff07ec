package io.spraynic.datapath.port;

/**
 * A test's {@link PacketPort} around another that forwards the port's own methods to it, so that a test wrapper
 * (one that records, drops, corrupts or injects frames) overrides only what it changes. The interface's default
 * methods are not forwarded: a wrapper that needs one overrides it.
 */
public abstract class ForwardingPort implements PacketPort
{
    /** The port that does the work. */
    protected final PacketPort inner;
    private final String nameSuffix;

    /**
     * @param inner      the port that does the work.
     * @param nameSuffix what this wrapper adds to the inner port's name.
     */
    protected ForwardingPort(final PacketPort inner, final String nameSuffix)
    {
        this.inner = inner;
        this.nameSuffix = nameSuffix;
    }

    public String name()
    {
        return inner.name() + nameSuffix;
    }

    public PacketBurst newBurst(final int capacity)
    {
        return inner.newBurst(capacity);
    }

    public int receive(final PacketBurst burst)
    {
        return inner.receive(burst);
    }

    public boolean allocate(final PacketBurst burst, final int count)
    {
        return inner.allocate(burst, count);
    }

    public int transmit(final PacketBurst burst)
    {
        return inner.transmit(burst);
    }

    public void release(final PacketBurst burst)
    {
        inner.release(burst);
    }

    public void close()
    {
        inner.close();
    }
}
