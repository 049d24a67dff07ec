package io.spraynic.datapath.transport;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@link FrameSink} for the unit tests of the parts that write frames: keeps a copy of every committed frame
 * (with {@link #keep} clear it only counts them, allocating nothing), refuses claims while {@link #full}, and fills
 * its buffer with {@link #STALE} at each claim so that a byte a writer forgot shows in the frame.
 */
public final class RecordingFrameSink implements FrameSink
{
    /** What each claimed buffer holds before the writer writes. */
    public static final byte STALE = 0x5A;

    /** The committed frames, oldest first (none while {@link #keep} is clear). */
    public final List<byte[]> frames = new ArrayList<>();
    /** Claims fail while set: a full output. */
    public boolean full;
    /** Copies each committed frame into {@link #frames} while set; else only counts it. */
    public boolean keep = true;
    /** Frames committed, kept or not. */
    public long commits;
    private final MemorySegment buffer;

    /** @param maxFrameLength the longest frame it takes. */
    public RecordingFrameSink(final int maxFrameLength)
    {
        buffer = MemorySegment.ofArray(new byte[maxFrameLength]);
    }

    /** @return a sink that only counts the frames committed ({@link #keep} clear). */
    public static RecordingFrameSink counting(final int maxFrameLength)
    {
        final RecordingFrameSink sink = new RecordingFrameSink(maxFrameLength);
        sink.keep = false;
        return sink;
    }

    public int maxFrameLength()
    {
        return (int)buffer.byteSize();
    }

    public boolean claim(final int plane, final int maxLength)
    {
        if (full)
        {
            return false;
        }
        buffer.fill(STALE);
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
        if (keep)
        {
            frames.add(buffer.asSlice(0, length).toArray(ValueLayout.JAVA_BYTE));
        }
    }

    /** @return the frame committed {@code index}-th (of those kept). */
    public MemorySegment frame(final int index)
    {
        return MemorySegment.ofArray(frames.get(index));
    }

    /** @return the last frame committed. */
    public MemorySegment last()
    {
        return MemorySegment.ofArray(frames.getLast());
    }

    /** @return the oldest frame kept, removed. */
    public MemorySegment take()
    {
        return MemorySegment.ofArray(frames.removeFirst());
    }
}
