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
     * Looks packet {@code index} up once for a frame about to be written into it (a TX claim): the handle gives its
     * offset ({@link #offsetOf}) and sets its length ({@link #lengthOf}) without a second look-up. A handle stays
     * valid while the burst does not change (no transmit, release or allocation in between).
     *
     * @param index  a packet of the burst.
     * @param length bytes about to be written from its offset.
     * @return a handle (>= 0), or -1 when fewer than {@code length} bytes can be written there.
     */
    default long writable(final int index, final int length)
    {
        return room(index) >= length ? index : -1;
    }

    /** @param handle from {@link #writable}. @return the offset in {@link #memory()} of the packet's first byte. */
    default long offsetOf(final long handle)
    {
        return offset((int)handle);
    }

    /** Sets the length of the packet of {@code handle}, from {@link #writable}, after writing it. */
    default void lengthOf(final long handle, final int length)
    {
        length((int)handle, length);
    }

    /**
     * Frees the burst's memory; packets still held go back to their port.
     */
    void close();
}
