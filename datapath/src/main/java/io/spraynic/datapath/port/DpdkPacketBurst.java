package io.spraynic.datapath.port;

import io.spraynic.dpdk.MbufBurst;
import io.spraynic.dpdk.PacketMemory;

import java.lang.foreign.MemorySegment;

/**
 * A {@link PacketBurst} over a DPDK {@link MbufBurst}: packet offsets point into the one
 * {@link PacketMemory} segment that spans the mbuf pools.
 */
public final class DpdkPacketBurst implements PacketBurst
{
    private final MbufBurst mbufs;

    DpdkPacketBurst(final int capacity, final PacketMemory memory)
    {
        this.mbufs = new MbufBurst(capacity, memory);
    }

    /**
     * @return the underlying mbuf array, for DPDK-specific code.
     */
    public MbufBurst mbufs()
    {
        return mbufs;
    }

    public int size()
    {
        return mbufs.size();
    }

    public int capacity()
    {
        return mbufs.capacity();
    }

    public MemorySegment memory()
    {
        return mbufs.memory();
    }

    public long offset(final int index)
    {
        return mbufs.dataOffset(index);
    }

    public int length(final int index)
    {
        return mbufs.dataLength(index);
    }

    public void length(final int index, final int length)
    {
        mbufs.dataLength(index, length);
    }

    public int room(final int index)
    {
        return mbufs.dataRoom(index);
    }

    // the handle is the mbuf's offset in the packet memory: one pointer look-up per claimed frame, not three
    public long writable(final int index, final int length)
    {
        return mbufs.writableMbuf(index, length);
    }

    public long offsetOf(final long handle)
    {
        return mbufs.dataOffsetOf(handle);
    }

    public void lengthOf(final long handle, final int length)
    {
        mbufs.dataLengthOf(handle, length);
    }

    public void close()
    {
        mbufs.close();
    }

    public String toString()
    {
        return "DpdkPacketBurst{" + mbufs + '}';
    }
}
