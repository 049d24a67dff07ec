package io.spraynic.datapath.neighbour;

import io.spraynic.datapath.transport.FrameSink;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@link FrameSink} that keeps every committed frame as a byte array ({@link #keep} false: only counts them,
 * allocating nothing); {@link #full} refuses claims.
 */
final class CapturingSink implements FrameSink
{
    final List<byte[]> frames = new ArrayList<>();
    boolean full;
    boolean keep = true;
    long commits;
    private final MemorySegment buffer = MemorySegment.ofArray(new byte[2048]);

    public int maxFrameLength()
    {
        return 1500;
    }

    public boolean claim(final int plane, final int maxLength)
    {
        if (full)
        {
            return false;
        }
        buffer.fill((byte)0x5A); // stale bytes a writer forgot would show
        return true;
    }

    public MemorySegment buffer()
    {
        return buffer;
    }

    public long offset()
    {
        return 0;
    }

    public void commit(final int length)
    {
        commits++;
        if (!keep)
        {
            return;
        }
        frames.add(buffer.asSlice(0, length).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
    }

    MemorySegment last()
    {
        return MemorySegment.ofArray(frames.getLast());
    }

    MemorySegment take()
    {
        return MemorySegment.ofArray(frames.removeFirst());
    }
}
