package io.spraynic.datapath.port;

import java.lang.foreign.MemorySegment;

/**
 * A burst of packets owned by one poll thread: received from, or to be transmitted on, a
 * {@link PacketPort}. Packet {@code i}'s bytes are {@code length(i)} bytes at
 * {@code offset(i)} in {@link #memory()}: a zero-copy view, Aeron style, that costs no
 * allocation to take. Only the port that made a burst ({@link PacketPort#newBurst(int)}) may fill
 * or drain it.
 */
public interface PacketBurst extends AutoCloseable
{
    /**
     * @return packets currently in the burst.
     */
    int size();

    /**
     * @return most packets the burst holds.
     */
    int capacity();

    /**
     * @return the memory that every packet's offset is relative to.
     */
    MemorySegment memory();

    /**
     * @return offset in {@link #memory()} of packet {@code index}'s first byte.
     */
    long offset(int index);

    /**
     * @return bytes in packet {@code index}.
     */
    int length(int index);

    /**
     * Sets the length of packet {@code index} (after writing it).
     */
    void length(int index, int length);

    /**
     * @return bytes that can be written to packet {@code index} from {@link #offset(int)}.
     */
    int room(int index);

    /**
     * Frees the burst's memory; packets still held go back to their port.
     */
    void close();
}
