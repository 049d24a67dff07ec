package io.spraynic.datapath.transport.spray;

import org.agrona.collections.Long2LongHashMap;

/**
 * Which packets of each message being received were placed (docs/PROTOCOL.md S4.4), so that a packet placed
 * twice (a copy moved to another path, S7.4) counts once. The marks live in chunks of {@link #CHUNK_PACKETS}
 * bits drawn from a fixed pool and found by (owner, chunk index): an owner is an inbound message record, or
 * the record count plus the send slot of a READ awaiting its responses. The caller checks {@link #roomToMark}
 * before the path layer accepts a packet, so {@link #mark} never runs out. Allocation-free after construction.
 */
final class PlacementMarks
{
    /** Packets one chunk covers. */
    static final int CHUNK_PACKETS = 512;
    /** {@link #mark}: the packet had not been placed before. */
    static final int NEW = 0;
    /** {@link #mark}: the packet had been placed before. */
    static final int DUPLICATE = 1;

    private static final int CHUNK_WORDS = CHUNK_PACKETS / Long.SIZE;
    private static final int MISSING = -1;
    private static final long NO_KEY = Long.MIN_VALUE; // no chunk key: owners are never negative

    private final int chunkCount;
    private long[] chunkBits;
    private int[] freeChunks;
    private int freeChunkCount;
    private Long2LongHashMap chunks;
    // the last chunk looked up, until the chunks change: the packets of a message mostly follow one another, and
    // each is looked up by roomToMark (when no chunk is free) and mark
    private long lookedUpKey = NO_KEY;
    private int lookedUpChunk;
    private Storage storage;

    /** Marks with a pool of chunks of their own, attached for good. */
    PlacementMarks(final int chunkCount)
    {
        this(chunkCount, new Storage(chunkCount));
    }

    /** @param storage the chunks, or null: detached and empty until {@link #attach}. */
    PlacementMarks(final int chunkCount, final Storage storage)
    {
        this.chunkCount = chunkCount;
        freeChunkCount = chunkCount;
        if (null != storage)
        {
            attach(storage);
        }
    }

    /** Takes the chunks of a pooled, cleared {@link Storage}; no chunk may be in use and none attached. */
    void attach(final Storage storage)
    {
        if (null != this.storage || freeChunkCount != chunkCount || storage.chunkCount != chunkCount)
        {
            throw new IllegalStateException("attach needs empty, detached marks and storage of their size");
        }
        this.storage = storage;
        chunkBits = storage.chunkBits;
        freeChunks = storage.freeChunks;
        chunks = storage.chunks;
        lookedUpKey = NO_KEY;
    }

    /** @return whether the chunks are held. */
    boolean isAttached()
    {
        return null != storage;
    }

    /** @return whether {@link #detach} may run: no chunk in use. */
    boolean isDetachable()
    {
        return null != storage && freeChunkCount == chunkCount && chunks.isEmpty();
    }

    /** Gives the chunks back (the marks are {@link #isDetachable detachable}); the caller clears and pools them. */
    Storage detach()
    {
        final Storage detached = storage;
        storage = null;
        chunkBits = null;
        freeChunks = null;
        chunks = null;
        lookedUpKey = NO_KEY;
        return detached;
    }

    /** The chunks of one pool size, drawn from and returned to a connection storage pool. */
    static final class Storage
    {
        final int chunkCount;
        final long[] chunkBits;
        final int[] freeChunks;
        final Long2LongHashMap chunks;

        Storage(final int chunkCount)
        {
            this.chunkCount = chunkCount;
            chunkBits = new long[chunkCount * CHUNK_WORDS];
            freeChunks = new int[chunkCount];
            chunks = new Long2LongHashMap(4 * chunkCount, 0.5f, MISSING);
            clear();
        }

        /** @return bytes of the chunks and their map (S10.1). */
        long bytes()
        {
            return (long)chunkCount * (CHUNK_WORDS * Long.BYTES + Integer.BYTES) + 16L * chunks.capacity();
        }

        /** Every chunk free, in a new pool's order (a chunk's bits are zeroed when {@link #mark} takes it). */
        void clear()
        {
            ConnectionStorage.freeListInOrder(freeChunks);
            chunks.clear();
        }
    }

    private static long chunkKey(final int owner, final int packet)
    {
        return ((long)owner << 32) | (packet / CHUNK_PACKETS);
    }

    /** @return whether a chunk is free (a new message can be marked). */
    boolean hasFreeChunk()
    {
        return freeChunkCount > 0;
    }

    /** @return whether {@link #mark} of this packet would find its chunk or a free one. */
    boolean roomToMark(final int owner, final int packet)
    {
        return freeChunkCount > 0 || chunkOf(chunkKey(owner, packet)) != MISSING;
    }

    // the chunk of a key, or MISSING: the last lookup answers again while the chunks have not changed
    private int chunkOf(final long key)
    {
        if (key != lookedUpKey)
        {
            lookedUpChunk = (int)chunks.get(key);
            lookedUpKey = key;
        }
        return lookedUpChunk;
    }

    /**
     * Records that a packet of an owner's message was placed; {@link #roomToMark} was checked.
     *
     * @return {@link #NEW}, or {@link #DUPLICATE} if it had been.
     */
    int mark(final int owner, final int packet)
    {
        final long key = chunkKey(owner, packet);
        int chunk = chunkOf(key);
        if (chunk == MISSING)
        {
            chunk = freeChunks[--freeChunkCount];
            java.util.Arrays.fill(chunkBits, chunk * CHUNK_WORDS, (chunk + 1) * CHUNK_WORDS, 0L);
            chunks.put(key, chunk);
            lookedUpChunk = chunk; // the key's lookup now
        }
        final int bit = packet % CHUNK_PACKETS;
        final int word = chunk * CHUNK_WORDS + (bit >>> 6);
        final long mask = 1L << (bit & 63);
        if ((chunkBits[word] & mask) != 0)
        {
            return DUPLICATE;
        }
        chunkBits[word] |= mask;
        return NEW;
    }

    /** Returns the chunks of an owner's message of {@code expected} packets to the pool. */
    void release(final int owner, final int expected)
    {
        lookedUpKey = NO_KEY;
        for (int index = 0, n = (expected - 1) / CHUNK_PACKETS + 1; index < n; index++)
        {
            final int chunk = (int)chunks.remove(((long)owner << 32) | index);
            if (chunk != MISSING)
            {
                freeChunks[freeChunkCount++] = chunk;
            }
        }
    }

    /** @return chunks in use. */
    int inUse()
    {
        return chunkCount - freeChunkCount;
    }

    /** @return bytes of state (S10.1). */
    long stateBytes()
    {
        return (long)chunkCount * (CHUNK_WORDS * Long.BYTES + Integer.BYTES) + 16L * ConnectionStorage.mapCapacity(4 * chunkCount);
    }
}
