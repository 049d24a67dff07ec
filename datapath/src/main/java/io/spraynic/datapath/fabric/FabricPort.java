package io.spraynic.datapath.fabric;

import java.lang.foreign.MemorySegment;

/**
 * A host's NIC port on one plane, as its {@link Endpoint} sees it: send frames, set timers, and learn the
 * addresses frames need. The fabric routes on destination IP: a frame sent here reaches host {@code h}
 * on this plane if its IPv4 destination is {@link #addressOf}{@code (h)} (MAC addresses are carried,
 * not checked; {@link #macOf} gives the right ones anyway).
 */
public interface FabricPort
{
    /** @return the host this port belongs to. */
    int hostIndex();

    /** @return this port's index on its host, which is also its plane. */
    int portIndex();

    /** @return this port's IPv4 address. */
    int localAddress();

    /** @return this port's MAC address (low 48 bits). */
    long localMac();

    /** @return the number of hosts in the fabric. */
    int hostCount();

    /** @return the IPv4 address of host {@code host}'s port on this port's plane. */
    int addressOf(int host);

    /** @return the MAC address of host {@code host}'s port on this port's plane. */
    long macOf(int host);

    /**
     * Sends a frame: copies it into the fabric (the copy happens now, so the source may be reused at once)
     * and queues it on this port's egress link, the NIC's transmit queue.
     *
     * @return false if it could not be taken: the transmit queue is full (a NIC pushes back, it does not
     * drop its own frames: retry later, see {@link #queuedBytes}), no frame slot is free, or the frame is
     * longer than {@link #maxFrameLength}. True does not mean it will arrive: the fabric may still drop
     * it (a down or blackholed link, loss, a full switch queue), and counts why.
     */
    boolean send(MemorySegment source, long offset, int length);

    /**
     * Asks for {@link Endpoint#onTimer} at {@code atNs} (or now, if that is past).
     */
    void scheduleTimer(long atNs);

    /** @return the fabric's time now. */
    long now();

    /** @return true while the port's links are up (a failed plane takes them down). */
    boolean isUp();

    /** @return bytes waiting in this port's transmit queue, for senders that pace themselves. */
    int queuedBytes();

    /** @return the most bytes this port's transmit queue holds. */
    int queueCapacityBytes();

    /** @return the longest frame the fabric carries. */
    int maxFrameLength();
}
