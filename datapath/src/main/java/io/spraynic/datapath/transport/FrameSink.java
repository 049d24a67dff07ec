package io.spraynic.datapath.transport;

import java.lang.foreign.MemorySegment;

/**
 * Where a protocol engine writes the frames it sends, one plane (port) at a time: claim a buffer on a plane,
 * write the frame at {@link #buffer()} + {@link #offset()}, commit its length. The engine knows nothing else about
 * the output, so the same engine drives DPDK or in-JVM ports ({@code port.PortFrameSink}), a virtual-time
 * fabric ({@code fabric.FabricFrameSink}) or a test's capture. Both transports write through it: spray over
 * every plane of a connection, an RC engine (one port) and the neighbour agents on plane 0.
 * <p>
 * A claim may fail (no buffers, a full TX ring or transmit queue): the engine then keeps the frame's state and
 * tries again on a later tick. Each successful claim is followed by exactly one commit before the next claim.
 * Implementations are allocation-free per frame.
 */
public interface FrameSink
{
    /**
     * @return the largest frame a claim can hold: a queue pair refuses a path MTU whose frames would not fit.
     */
    int maxFrameLength();

    /**
     * @param plane     the plane (port index) the frame leaves on; 0 for an output of one port.
     * @param maxLength the most bytes the frame will take, at most {@link #maxFrameLength()}.
     * @return true with {@link #buffer()} and {@link #offset()} set, false when no buffer is available now.
     */
    boolean claim(int plane, int maxLength);

    /** @return memory of the claimed buffer. */
    MemorySegment buffer();

    /** @return offset of the claimed buffer's first byte in {@link #buffer()}. */
    long offset();

    /**
     * Queues the claimed frame for transmission.
     *
     * @param length bytes written.
     */
    void commit(int length);
}
