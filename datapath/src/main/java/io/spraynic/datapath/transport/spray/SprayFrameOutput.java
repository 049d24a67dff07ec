package io.spraynic.datapath.transport.spray;

import java.lang.foreign.MemorySegment;

/**
 * Where the spray engine writes the frames it sends, one plane (port) at a time: claim a buffer on a
 * plane, write the frame at {@link #buffer()} + {@link #offset()}, commit its length. The multi-plane
 * form of {@code rocev2.FrameSink}: the engine knows nothing else about the output, so the same engine
 * runs over DPDK ports ({@link PortsFrameOutput}), in-JVM links, or a virtual-time fabric.
 * <p>
 * A claim may fail (no buffer, full TX ring): the engine keeps the frame's state and retries later.
 * Each successful claim is followed by exactly one commit before the next claim.
 */
public interface SprayFrameOutput
{
    /**
     * @param plane     the plane (port index) the frame leaves on.
     * @param maxLength the most bytes the frame will take.
     * @return true with {@link #buffer()} and {@link #offset()} set; false when no buffer is free now.
     */
    boolean claim(int plane, int maxLength);

    /** @return memory of the claimed buffer. */
    MemorySegment buffer();

    /** @return offset of the claimed buffer's first byte. */
    long offset();

    /**
     * Queues the claimed frame for transmission.
     *
     * @param length bytes written.
     */
    void commit(int length);
}
