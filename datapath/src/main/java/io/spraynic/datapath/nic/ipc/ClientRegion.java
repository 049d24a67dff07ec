package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.api.Region;
import io.spraynic.datapath.verbs.AccessFlags;

import java.lang.foreign.MemorySegment;

/**
 * A region a {@link NicClient} registered with a NIC process: a memfd this process made and sealed against resizing
 * (so no process can truncate it under the NIC), passed to the NIC, which maps it too. {@link #segment()} is this process's view of the bytes; {@link #address()} is the region's
 * virtual address as the NIC (and a peer, in a RETH) names it, so work requests and rkeys handed to peers use
 * {@code address() + offset}, as with an {@code EmbeddedNic}'s {@code MemoryRegion}.
 */
public final class ClientRegion implements Region
{
    private final long id;
    private final long address;
    private final long length;
    private final int lkey;
    private final int rkey;
    private final int access;
    private final SealedMemory memory;
    private final MemorySegment segment;
    private boolean registered = true;

    ClientRegion(final long id, final long address, final long length, final int lkey, final int rkey, final int access,
        final SealedMemory memory)
    {
        this.id = id;
        this.address = address;
        this.length = length;
        this.lkey = lkey;
        this.rkey = rkey;
        this.access = access;
        this.memory = memory;
        this.segment = memory.memory();
    }

    /** @return the NIC's id for it. */
    public long id()
    {
        return id;
    }

    /** @return the virtual address of the first byte, as the NIC and peers name it. */
    public long address()
    {
        return address;
    }

    /** @return bytes. */
    public long length()
    {
        return length;
    }

    /** @return the local key, for this client's work requests. */
    public int lkey()
    {
        return lkey;
    }

    /** @return the remote key, for peers' RDMA WRITEs and READs. */
    public int rkey()
    {
        return rkey;
    }

    /** @return the {@link AccessFlags} granted. */
    public int access()
    {
        return access;
    }

    /** @return the memfd of the region, open while it is registered. */
    int fd()
    {
        return memory.fd();
    }

    /** @return this process's view of the region's bytes (closed once deregistered). */
    public MemorySegment segment()
    {
        return segment;
    }

    /** @return the offset in {@link #segment()} of a virtual address in the region. */
    public long offsetOf(final long virtualAddress)
    {
        return virtualAddress - address;
    }

    /** @return false once deregistered. */
    public boolean isRegistered()
    {
        return registered;
    }

    void unmap()
    {
        if (registered)
        {
            registered = false;
            memory.close();
        }
    }

    public String toString()
    {
        return "ClientRegion{id=" + id + ", address=0x" + Long.toHexString(address) + ", length=" + length + ", access=" +
            AccessFlags.toString(access) + ", lkey=0x" + Integer.toHexString(lkey) + ", rkey=0x" + Integer.toHexString(rkey) +
            (registered ? "" : ", deregistered") + '}';
    }
}
