package io.spraynic.datapath.api;


import java.time.Duration;

/**
 * A NIC as an application sees it, in its own process or in another: it registers memory and opens connections,
 * as an ibverbs device context with its protection domain. Control calls block until the NIC answered and throw
 * when it refuses ({@link IllegalArgumentException}, {@link IllegalStateException}, or a subclass naming the NIC's
 * reason); posting and polling go through the {@link Connection}s and never block.
 * <pre>
 *   Region mr = nic.register(1 &lt;&lt; 20, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
 *   Connection c = nic.connect(peerIps, Duration.ofSeconds(10));
 *   c.postSend(0, request.reset().opcode(RDMA_WRITE).local(mr, mr.address(), 4096).remote(addr, rkey));
 *   while (!c.sendCompletionQueue().poll(completion)) { ... }
 * </pre>
 */
public interface Nic extends AutoCloseable
{
    /** @return the transport its connections use: spray connections ({@link #connect}, {@link #accept}) or RoCEv2 queue pairs ({@link #createQueuePair}). */
    Connection.Kind mode();

    /** @return its planes (ports). */
    int planes();

    /**
     * @param plane 0..planes-1.
     * @return its IPv4 address on that plane: what a peer connects to.
     */
    int localIpv4(int plane);

    /**
     * Registers {@code bytes} of new, zeroed memory that this process and the NIC share.
     *
     * @param bytes  size.
     * @param access {@link io.spraynic.datapath.verbs.AccessFlags}.
     * @return the region.
     */
    Region register(long bytes, int access);

    /**
     * Deregisters a region: its keys name nothing from now on, operations under way that use it are cut short,
     * and its memory is released (this process's view of it too).
     *
     * @param region a region this NIC registered for this application.
     * @throws IllegalArgumentException for a region of another kind of NIC, or of another in-process NIC.
     * @throws IllegalStateException    for a region already deregistered (across processes: any region the NIC
     *                                  does not hold for this application, which it refuses).
     */
    void deregister(Region region);

    /**
     * Opens a spray connection to a peer NIC.
     *
     * @param peerIpv4 the peer's address on each plane.
     * @param timeout  how long ARP and the handshake may take.
     * @return the connection, established.
     */
    Connection connect(int[] peerIpv4, Duration timeout);

    /**
     * Takes the next spray connection a peer opened to the NIC.
     *
     * @param timeout how long to wait.
     * @return the connection, or null when none came in time.
     */
    Connection accept(Duration timeout);

    /**
     * Creates a RoCEv2 RC queue pair on a plane, in INIT; connect it with {@link Connection#connect} once the peer's
     * {@link RocevEndpoint} is known.
     *
     * @param plane the port it sends on.
     * @return the queue pair's connection.
     */
    Connection createQueuePair(int plane);

    /** Closes the NIC (in process) or leaves it (across processes): every connection and region goes with it. */
    void close();
}
