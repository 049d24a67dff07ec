package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.capture.CaptureFilter;
import io.spraynic.datapath.capture.CaptureRingReader;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A live capture a {@link NicClient} started ({@link NicClient#startCapture}): this process's mapping of the rings the
 * NIC's workers fill, drained through {@link #reader()}. The NIC ends the capture when {@link #stop()} asks, when its
 * duration is up, or when this client goes; {@link CaptureRingReader#ended()} then turns true, and what the rings still
 * hold stays readable until {@link #close()}.
 */
public final class ClientCapture implements AutoCloseable
{
    private final NicClient client;
    private final long id;
    private final CaptureFilter filter;
    private final Arena arena;
    private final MemorySegment memory;
    private final CaptureRingReader reader;
    private boolean stopped;

    private ClientCapture(final NicClient client, final long id, final CaptureFilter filter, final Arena arena,
        final MemorySegment memory)
    {
        this.client = client;
        this.id = id;
        this.filter = filter;
        this.arena = arena;
        this.memory = memory;
        this.reader = new CaptureRingReader(memory);
    }

    /**
     * Maps the capture memory the NIC sent on OPEN_MEMORY ({@code fd}, a sealed memfd of at least {@code length} bytes;
     * the descriptor stays the caller's): a descriptor reaches this process across pid namespaces, where a
     * {@code /proc/<pid>/fd} path of the NIC's does not.
     */
    static ClientCapture map(final NicClient client, final long id, final CaptureFilter filter, final int fd,
        final long length)
    {
        final Arena arena = Arena.ofShared();
        try
        {
            final MemorySegment memory = SealedMemory.mapChecked(fd, length, arena, "capture " + id + "'s memory");
            return new ClientCapture(client, id, filter, arena, memory);
        }
        catch (final RuntimeException ex)
        {
            arena.close();
            throw ex;
        }
    }

    /** @return the NIC's id of this capture. */
    public long id()
    {
        return id;
    }

    /** @return what it takes. */
    public CaptureFilter filter()
    {
        return filter;
    }

    /** @return the reader of the rings. */
    public CaptureRingReader reader()
    {
        return reader;
    }

    /** @return the mapped capture memory (tests play a client that tampers with it). */
    MemorySegment memory()
    {
        return memory;
    }

    /** Asks the NIC to end the capture now, unless it ended already; its frames stay readable. */
    public void stop()
    {
        if (stopped)
        {
            return;
        }
        stopped = true;
        if (!reader.ended())
        {
            try
            {
                client.stopCapture(id);
            }
            catch (final NicRefusedException ex)
            {
                if (ex.code() != IpcMessages.ERR_UNKNOWN_OBJECT)
                {
                    throw ex; // unknown: it ended on its own meanwhile
                }
            }
        }
    }

    /** Unmaps the rings (stop first to end the capture early). */
    public void close()
    {
        arena.close();
    }
}
