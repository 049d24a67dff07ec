package io.spraynic.datapath.fabric;

/**
 * A host: one NIC port per plane ({@link HostPort}) and the {@link Endpoint} running on it.
 */
public final class Host implements EventTarget
{
    private static final int TIMER = 0;

    private final int index;
    private final String name;
    private final Simulator simulator;
    private final HostPort[] ports;
    private final int targetId;
    private final long planeHashSeed;
    private Endpoint endpoint;
    private long timersFired;

    Host(
        final int index,
        final String name,
        final int planes,
        final FabricAddresses addresses,
        final Simulator simulator,
        final FramePool pool,
        final long planeHashSeed)
    {
        this.planeHashSeed = planeHashSeed;
        this.index = index;
        this.name = name;
        this.simulator = simulator;
        this.ports = new HostPort[planes];
        for (int p = 0; p < planes; p++)
        {
            ports[p] = new HostPort(this, p, addresses, simulator, pool);
        }
        this.targetId = simulator.register(this);
    }

    /**
     * Attaches the endpoint that receives this host's frames and timers, replacing any other. Frames
     * arriving while none is attached are counted and dropped.
     */
    public void attach(final Endpoint newEndpoint)
    {
        this.endpoint = newEndpoint;
    }

    /** @return the endpoint attached, or null. */
    public Endpoint endpoint()
    {
        return endpoint;
    }

    /** @return the host's index in its fabric. */
    public int index()
    {
        return index;
    }

    /** @return its name. */
    public String name()
    {
        return name;
    }

    /** @return its number of ports (= planes). */
    public int portCount()
    {
        return ports.length;
    }

    /** @return its port on {@code plane}. */
    public HostPort port(final int plane)
    {
        return ports[plane];
    }

    /**
     * The plane a single-path flow should use, as a NIC bonding its ports would choose it: a seeded hash of
     * the peer and the flow's entropy (for RoCEv2, the QP's UDP source port) onto the planes. Spray does
     * not need it: it chooses planes itself.
     *
     * @return a port index in {@code [0, portCount())}, the same for the same arguments.
     */
    public int planeFor(final int peerHost, final int entropy)
    {
        final long hash = FrameInspector.finish(planeHashSeed ^ (((long)peerHost << 32) | (entropy & 0xFFFF_FFFFL)));
        return (int)(((hash >>> 32) * ports.length) >>> 32);
    }

    /** @return timers delivered so far. */
    public long timersFired()
    {
        return timersFired;
    }

    void scheduleTimer(final long atNs)
    {
        simulator.schedule(Math.max(atNs, simulator.now()), targetId, TIMER, 0);
    }

    public void onEvent(final long nowNs, final int kind, final long arg)
    {
        timersFired++;
        if (null != endpoint)
        {
            endpoint.onTimer(nowNs);
        }
    }

    public String toString()
    {
        return "Host{" + name + ", ports=" + ports.length + '}';
    }
}
