package io.spraynic.datapath.verbs;

import io.spraynic.datapath.api.Region;

import java.lang.foreign.MemorySegment;

/**
 * Off-heap memory registered with a {@link ProtectionDomain}, as {@code ibv_mr}: the region's bytes,
 * its virtual address range {@code [address, address + length)}, the access rights it grants and two
 * keys. The {@link #lkey()} names the region in local work requests; the {@link #rkey()} is what a peer
 * puts in an RDMA WRITE or READ to reach it. Both come from a {@code SecureRandom}-seeded generator, so
 * a peer cannot guess the rkey of a region it was not told about.
 * <p>
 * The virtual address is the segment's native address, as in ibverbs, so the addresses a peer sends are
 * real pointers and two regions never overlap. Made only by {@link ProtectionDomain#register}.
 */
public final class MemoryRegion implements Region
{
    private final ProtectionDomain protectionDomain;
    private final MemorySegment segment;
    private final long address;
    private final long length;
    private final int access;
    private final int lkey;
    private final int rkey;
    private boolean registered = true;

    MemoryRegion(
        final ProtectionDomain protectionDomain,
        final MemorySegment segment,
        final int access,
        final int lkey,
        final int rkey)
    {
        this.protectionDomain = protectionDomain;
        this.segment = segment;
        this.address = segment.address();
        this.length = segment.byteSize();
        this.access = access;
        this.lkey = lkey;
        this.rkey = rkey;
    }

    /** @return the domain the region belongs to. */
    public ProtectionDomain protectionDomain()
    {
        return protectionDomain;
    }

    /** @return the registered memory. */
    public MemorySegment segment()
    {
        return segment;
    }

    /** @return the virtual address of the first byte (what a peer puts in a RETH). */
    public long address()
    {
        return address;
    }

    /** @return bytes in the region. */
    public long length()
    {
        return length;
    }

    /** @return the {@link AccessFlags} granted. */
    public int access()
    {
        return access;
    }

    /** @return the local key. */
    public int lkey()
    {
        return lkey;
    }

    /** @return the remote key. */
    public int rkey()
    {
        return rkey;
    }

    /**
     * The region's state, valid or invalidated. Deregistration flips it on the thread that runs the domain's
     * queue pairs, so a transport that checks it wherever it touches a region it holds (a WRITE under way, a READ
     * response, a posted receive, a send's data) never touches the memory after the deregistration returned.
     *
     * @return false once deregistered: its keys then name nothing.
     */
    public boolean isRegistered()
    {
        return registered;
    }

    void markDeregistered()
    {
        registered = false;
    }

    /**
     * @param virtualAddress an address in the region.
     * @return the offset of that address in {@link #segment()}.
     */
    public long offsetOf(final long virtualAddress)
    {
        return virtualAddress - address;
    }

    /**
     * @param virtualAddress first byte.
     * @param byteCount      bytes (non-negative).
     * @return true when {@code [virtualAddress, virtualAddress + byteCount)} lies inside the region,
     * with no overflow for any input.
     */
    public boolean contains(final long virtualAddress, final long byteCount)
    {
        final long offset = virtualAddress - address;
        // unsigned compares reject addresses below the start, whose difference wraps to a huge value
        return byteCount >= 0 &&
            Long.compareUnsigned(offset, length) <= 0 &&
            Long.compareUnsigned(byteCount, length - offset) <= 0;
    }

    public String toString()
    {
        return "MemoryRegion{address=0x" + Long.toHexString(address) + ", length=" + length +
            ", access=" + AccessFlags.toString(access) + ", lkey=0x" + Integer.toHexString(lkey) +
            ", rkey=0x" + Integer.toHexString(rkey) + (registered ? "" : ", deregistered") + '}';
    }
}
