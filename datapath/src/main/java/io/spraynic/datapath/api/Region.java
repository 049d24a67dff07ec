package io.spraynic.datapath.api;

import java.lang.foreign.MemorySegment;

/**
 * Memory registered with a {@link Nic}, as {@code ibv_mr}: its bytes as this process sees them, the virtual address
 * range {@code [address, address + length)} by which work requests ({@link #lkey()}) and peers ({@link #rkey()})
 * name them, and the access it grants. The address of byte {@code i} of {@link #segment()} is {@code address() + i}.
 */
public interface Region
{
    /** @return this process's view of the bytes. */
    MemorySegment segment();

    /** @return the virtual address of the first byte, as work requests and a peer's RETH name it. */
    long address();

    /** @return bytes in the region. */
    long length();

    /** @return the local key, which names the region in this application's work requests. */
    int lkey();

    /** @return the remote key, which a peer puts in its RDMA WRITEs and READs. */
    int rkey();

    /** @return the {@link io.spraynic.datapath.verbs.AccessFlags} granted. */
    int access();

    /** @return false once deregistered: its keys then name nothing. */
    boolean isRegistered();
}
