package io.spraynic.datapath.fabric;

import io.spraynic.datapath.capture.LinkType;
import io.spraynic.datapath.capture.PcapWriter;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Writes what tapped links send (and, if asked, drop) to one pcapng file, one interface per link named
 * after it ({@code p0/sw0->sw1#1}, and {@code p0/sw0->sw1#1 dropped}), with fabric time as nanosecond
 * timestamps from a chosen epoch: Wireshark then shows a fabric run hop by hop.
 * <p>
 * A write failure must not stop the fabric: it is counted ({@link #writeErrors()}) and the first kept
 * ({@link #firstError()}); the tap writes nothing more after one.
 */
public final class PcapLinkTap implements LinkTap, AutoCloseable
{
    private final PcapWriter writer;
    private final long epochNanos;
    private final boolean includeDrops;
    private int[] sentInterfaces = new int[0];
    private int[] dropInterfaces = new int[0];
    private long framesWritten;
    private long writeErrors;
    private IOException firstError;

    /**
     * @param file         the pcapng file to create (or truncate).
     * @param epochNanos   the timestamp, in nanoseconds since the Unix epoch, of fabric time 0.
     * @param includeDrops also write dropped frames, on a second interface per link.
     * @throws IOException if the file cannot be created.
     */
    public PcapLinkTap(final Path file, final long epochNanos, final boolean includeDrops) throws IOException
    {
        this.writer = PcapWriter.pcapng(file);
        this.epochNanos = epochNanos;
        this.includeDrops = includeDrops;
    }

    /**
     * Taps a link: adds its interfaces and sets this as its tap. Control path.
     *
     * @throws IOException if writing the interface description fails.
     */
    public void attach(final Link link) throws IOException
    {
        final int id = link.id();
        if (id >= sentInterfaces.length)
        {
            final int length = Math.max(id + 1, sentInterfaces.length * 2);
            final int oldLength = sentInterfaces.length;
            sentInterfaces = Arrays.copyOf(sentInterfaces, length);
            dropInterfaces = Arrays.copyOf(dropInterfaces, length);
            Arrays.fill(sentInterfaces, oldLength, length, -1);
            Arrays.fill(dropInterfaces, oldLength, length, -1);
        }
        if (sentInterfaces[id] < 0)
        {
            sentInterfaces[id] = writer.addInterface(link.name(), LinkType.ETHERNET, PcapWriter.DEFAULT_SNAP_LENGTH);
            if (includeDrops)
            {
                dropInterfaces[id] = writer.addInterface(link.name() + " dropped", LinkType.ETHERNET,
                    PcapWriter.DEFAULT_SNAP_LENGTH);
            }
        }
        link.tap(this);
    }

    public void onFrameSent(
        final long nowNs, final Link link, final MemorySegment segment, final long offset, final int length)
    {
        write(sentInterfaces, nowNs, link, segment, offset, length);
    }

    public void onFrameDropped(
        final long nowNs,
        final Link link,
        final DropReason reason,
        final MemorySegment segment,
        final long offset,
        final int length)
    {
        if (includeDrops)
        {
            write(dropInterfaces, nowNs, link, segment, offset, length);
        }
    }

    private void write(
        final int[] interfaces,
        final long nowNs,
        final Link link,
        final MemorySegment segment,
        final long offset,
        final int length)
    {
        final int id = link.id();
        if (null != firstError || id >= interfaces.length || interfaces[id] < 0)
        {
            return;
        }
        try
        {
            writer.write(interfaces[id], segment, offset, length, length, epochNanos + nowNs);
            framesWritten++;
        }
        catch (final IOException ex)
        {
            writeErrors++;
            firstError = ex;
        }
    }

    /** @return frames written. */
    public long framesWritten()
    {
        return framesWritten;
    }

    /** @return writes that failed. */
    public long writeErrors()
    {
        return writeErrors;
    }

    /** @return the first write failure, or null. */
    public IOException firstError()
    {
        return firstError;
    }

    /**
     * Flushes and closes the file. Untap the links first if the fabric keeps running.
     *
     * @throws IOException if the last writes fail.
     */
    public void close() throws IOException
    {
        writer.close();
    }
}
