package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.capture.CaptureFilter;
import io.spraynic.datapath.capture.CaptureRingReader;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

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

    /** Maps the capture memory the NIC named: only a path into the NIC process's own descriptors is accepted. */
    static ClientCapture map(final NicClient client, final long id, final CaptureFilter filter, final String path)
    {
        final String prefix = "/proc/" + client.nicPid() + "/fd/";
        if (!path.startsWith(prefix) || !path.substring(prefix.length()).matches("[0-9]{1,9}"))
        {
            throw new IllegalStateException("the NIC named capture memory at " + path + ", not one of its descriptors");
        }
        final Arena arena = Arena.ofShared();
        try (FileChannel channel = FileChannel.open(Path.of(path), StandardOpenOption.READ, StandardOpenOption.WRITE))
        {
            final MemorySegment memory = channel.map(FileChannel.MapMode.READ_WRITE, 0, channel.size(), arena);
            return new ClientCapture(client, id, filter, arena, memory);
        }
        catch (final IOException | RuntimeException ex)
        {
            arena.close();
            throw new IllegalStateException("cannot map the capture memory " + path + " of the NIC: " + ex.getMessage(), ex);
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
