package io.spraynic.datapath.port;

/**
 * One RX/TX queue pair of a NIC port, driven by one poll thread: the datapath's view of a port,
 * whether it is DPDK ({@link DpdkPacketPort}) or in the JVM ({@link InMemoryPacketPort}).
 * <p>
 * Ownership of packet buffers moves with the calls: {@link #receive} and {@link #allocate} give
 * buffers to the caller; {@link #transmit} takes those it sends; {@link #release} takes the rest.
 * None of these calls allocate, lock or throw on the fast path.
 */
public interface PacketPort extends AutoCloseable
{
    /**
     * @return a name for logs and counters, e.g. {@code net_ring_demoa/q0}.
     */
    String name();

    /**
     * Creates a burst this port can fill and drain. Control path: call it once per poll thread.
     */
    PacketBurst newBurst(int capacity);

    /**
     * Receives into the free tail of {@code burst}.
     *
     * @return the number of packets received.
     */
    int receive(PacketBurst burst);

    /**
     * Writes into received frames {@code from} (inclusive) to {@code to} (exclusive) of {@code burst} what this port
     * left out because nothing on the data path reads it, before someone outside the data path looks at them (a
     * capture tap, which calls it only while it takes frames): the {@link UdpSocketPacketPort}'s IPv6 UDP checksums,
     * which the kernel verified. Frames already complete stay as they are. Most ports leave nothing out: nothing to do.
     */
    default void completeReceived(final PacketBurst burst, final int from, final int to)
    {
    }

    /**
     * Whether the UDP checksum of a frame this port transmits is written by something below it (the kernel, for
     * the {@link UdpSocketPacketPort}, which sends only the UDP payload), so that a writer need not compute one
     * over IPv6, where it covers the whole payload. A port that puts the frame on a wire as written says no.
     *
     * @return true when a transmitted frame's UDP checksum is never read from the frame.
     */
    default boolean writesUdpChecksum()
    {
        return false;
    }

    /**
     * Appends {@code count} empty buffers to {@code burst} for the caller to fill, all or none.
     *
     * @return true when appended, false when no buffers are free right now.
     */
    boolean allocate(PacketBurst burst, int count);

    /**
     * Appends one empty buffer to {@code burst}, for a writer that fills frames one at a time ({@link PortFrameSink}).
     * A port whose allocation costs a call of its own per request (DPDK: a downcall into the mempool) takes it from
     * a reserve the burst keeps, refilled in bulk; {@link #release} gives the reserve back with the burst's packets.
     * The default allocates one.
     *
     * @return true when appended, false when no buffer is free right now or the burst is full.
     */
    default boolean allocateOne(final PacketBurst burst)
    {
        return burst.size() < burst.capacity() && allocate(burst, 1);
    }

    /**
     * Transmits the packets of {@code burst}; those the port could not take yet move to its front
     * and stay the caller's, to retry or {@link #release}.
     *
     * @return the number sent.
     */
    int transmit(PacketBurst burst);

    /**
     * {@link #transmit} then {@link #receive}: what was not sent stays at the front of
     * {@code burst}, received packets follow it. A port may do both in one step (DPDK: one downcall).
     *
     * @return the number sent.
     */
    default int transmitAndReceive(final PacketBurst burst)
    {
        final int sent = transmit(burst);
        receive(burst);
        return sent;
    }

    /**
     * Gives every packet in {@code burst} back to its pool, and the spare buffers {@link #allocateOne} keeps with it.
     */
    void release(PacketBurst burst);

    /**
     * Gives the last packet of {@code burst} back to its pool: a buffer claimed for a frame whose writer failed,
     * which must not go on the wire empty. Not on the normal fast path.
     */
    default void releaseLast(final PacketBurst burst)
    {
        throw new UnsupportedOperationException(name() + " cannot give back one packet of a burst");
    }

    /**
     * Called on the poll thread before its first burst (a DPDK port registers it as an lcore).
     */
    default void onPollerStart()
    {
    }

    /**
     * Called on the poll thread after its last burst.
     */
    default void onPollerClose()
    {
    }

    /**
     * Releases what the port holds.
     */
    void close();
}
