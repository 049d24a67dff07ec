package io.spraynic.datapath.nic;

import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceParser;

/**
 * What a {@link NicWorker} needs of the transport it drives (spray or RoCEv2): a parser for its packets,
 * who owns a packet, the packet and the time. One instance per worker, used on that worker's thread only.
 */
interface WorkerTransport
{
    /** @return a parser over the transport's opcodes, counting into the worker's parse counters. */
    RoceParser parser();

    /**
     * @param frame   a parsed packet of this transport.
     * @param workers workers of the NIC.
     * @return the worker whose engine owns the packet's connection (0..workers-1).
     */
    int owner(RoceFrame frame, int workers);

    /** Takes a packet this worker owns, received on {@code plane}. */
    void onFrame(int plane, RoceFrame frame, long nowNanos);

    /** The loop's receive bursts (steered packets and every plane's) begin: {@link #onFrame} calls follow. */
    default void onReceiveStart()
    {
    }

    /**
     * The loop's receive bursts ended (before the engine's timers): what their packets called for goes out once
     * (spray: one ACK per path for all its packets of the burst, docs/PROTOCOL.md S6.4-2).
     *
     * @return work done.
     */
    default int onReceiveEnd()
    {
        return 0;
    }

    /** @return work done by the engine's timers and transmissions. */
    int onTick(long nowNanos);

    /** Creates TX bursts (on the worker thread, before the first frame). */
    void onStart();

    /** Transmits what the engine wrote. */
    void flush();

    /** Releases TX bursts. */
    void onClose();

    /**
     * Cuts short every operation that uses a region this worker's domain just deregistered, so nothing touches
     * its memory once the deregistration returns (worker thread).
     *
     * @param region the worker's copy of the region.
     */
    void revoke(MemoryRegion region);

    /** @return true when the engine has nothing in flight outside its connections (e.g. no pending handshake). */
    boolean isIdle();
}
