package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.verbs.MemoryRegion;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.status.AtomicCounter;

import java.lang.foreign.Arena;
import java.nio.MappedByteBuffer;
import java.nio.file.Path;

/**
 * What one client of an {@link IpcConductor} holds: its token, its answer ring, its regions and
 * its connections. Conductor thread only.
 */
final class IpcClient
{
    final long id;
    final long pid;
    final long token;
    final Path answerFile;
    final MappedByteBuffer answerMapping;
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

    IpcClient(final long id, final long pid, final long token, final Path answerFile, final MappedByteBuffer answerMapping,
        final long nowMs)
    {
        this.id = id;
        this.pid = pid;
        this.token = token;
        this.answerFile = answerFile;
        this.answerMapping = answerMapping;
        this.answers = new OneToOneRingBuffer(new UnsafeBuffer(answerMapping));
        this.lastSeenMs = nowMs;
    }

    /** @return the client's protection domain at the NIC: its id (ids stay below 2^31). */
    int domain()
    {
        return (int)id;
    }
}
