package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.verbs.MemoryRegion;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.status.AtomicCounter;

import java.lang.foreign.Arena;

/**
 * What one client of an {@link IpcConductor} holds: its token, its answer ring (sealed memory of the NIC's), its regions and
 * its connections. Conductor thread only.
 */
final class IpcClient
{
    final long id;
    final long pid;
    final long token;
    /**
     * Whether it may start a live capture, which sees every tenant's frames: its process is the NIC's user's or root's,
     * as the kernel saw it connect (not only a member of {@code --ipc-group}).
     */
    final boolean mayCapture;
    /** The answer ring's sealed memory: its descriptor goes once ADD_CLIENT's answer carried it; unmapped at release. */
    final SealedMemory answerMemory;
    final OneToOneRingBuffer answers;
    final Long2ObjectHashMap<Region> regions = new Long2ObjectHashMap<>();
    final Long2ObjectHashMap<ServedConnection> connections = new Long2ObjectHashMap<>();
    long lastSeenMs;
    int pendingRegions;
    int pendingConnections;
    boolean released;
    AtomicCounter dropReason;
    String dropWhy;

    /** A region a client registered: the NIC's mapping of the client's sealed memfd. */
    record Region(long id, Arena arena, MemoryRegion region)
    {
    }

    /** @param mayCapture whether it may start a live capture: its process is the NIC's user's or root's. */
    IpcClient(final long id, final long pid, final long token, final SealedMemory answerMemory, final long nowMs,
        final boolean mayCapture)
    {
        this.mayCapture = mayCapture;
        this.id = id;
        this.pid = pid;
        this.token = token;
        this.answerMemory = answerMemory;
        this.answers = new OneToOneRingBuffer(new UnsafeBuffer(answerMemory.memory().address(),
            (int)answerMemory.memory().byteSize()));
        this.lastSeenMs = nowMs;
    }

    /** @return the client's protection domain at the NIC: its id (ids stay below 2^31). */
    int domain()
    {
        return (int)id;
    }
}
