package io.spraynic.cli;

import io.spraynic.datapath.capture.CapturingPacketPort;
import io.spraynic.datapath.capture.PcapMerge;
import io.spraynic.datapath.capture.PcapWriter;
import io.spraynic.datapath.port.PacketPort;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code --capture FILE} for commands that run poll threads: each wrapped port records into a part
 * file of its own (its thread's, so no lock on the datapath), and {@link #finish()} merges the
 * parts into FILE in timestamp order.
 */
final class PortCapture
{
    private final Path file;
    private final List<Path> parts = new ArrayList<>();
    private final List<PcapWriter> writers = new ArrayList<>();

    private PortCapture(final Path file)
    {
        this.file = file;
    }

    /**
     * @param file where the merged capture goes, or null for no capture.
     */
    static PortCapture open(final Path file)
    {
        if (null != file)
        {
            final Path parent = file.toAbsolutePath().getParent();
            if (null != parent && !Files.isDirectory(parent))
            {
                throw new IllegalArgumentException("--capture " + file + ": directory " + parent + " does not exist");
            }
        }
        return new PortCapture(file);
    }

    PacketPort wrap(final PacketPort port)
    {
        if (null == file)
        {
            return port;
        }
        try
        {
            final Path part = file.resolveSibling(file.getFileName() + ".part" + parts.size());
            // a part left by an earlier run is removed; one made again under the name before ours is refused (no
            // writing through a link another user planted beside the output)
            java.nio.file.Files.deleteIfExists(part);
            final PcapWriter writer = PcapWriter.pcapngNew(part);
            parts.add(part);
            writers.add(writer);
            return new CapturingPacketPort(port, writer);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot create capture file next to " + file + ": " + ex.getMessage(), ex);
        }
    }

    /**
     * Closes the parts (their threads have stopped) and merges them.
     *
     * @return frames captured.
     */
    long finish()
    {
        if (null == file)
        {
            return 0;
        }
        try
        {
            for (final PcapWriter writer : writers)
            {
                writer.close();
            }
            final long frames = PcapMerge.merge(parts, file);
            for (final Path part : parts)
            {
                Files.deleteIfExists(part);
            }
            return frames;
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot write capture " + file + ": " + ex.getMessage(), ex);
        }
    }
}
