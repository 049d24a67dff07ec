package io.spraynic.datapath.capture;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Merges several captures into one pcapng file in timestamp order, keeping every input interface
 * as an interface of its own. Each poll thread captures to a part file of its own (no lock on the
 * datapath); the parts are merged when the capture ends.
 */
public final class PcapMerge
{
    private PcapMerge()
    {
    }

    /**
     * @return frames written.
     */
    public static long merge(final List<Path> parts, final Path output) throws IOException
    {
        final List<PcapReader> readers = new ArrayList<>(parts.size());
        try (PcapWriter writer = PcapWriter.pcapng(output))
        {
            for (final Path part : parts)
            {
                readers.add(PcapReader.open(part));
            }
            final boolean[] hasFrame = new boolean[readers.size()];
            for (int i = 0; i < readers.size(); i++)
            {
                hasFrame[i] = readers.get(i).next();
            }
            final List<Map<Integer, Integer>> interfaceMaps = new ArrayList<>();
            for (int i = 0; i < readers.size(); i++)
            {
                interfaceMaps.add(new LinkedHashMap<>());
            }
            long written = 0;
            while (true)
            {
                int earliest = -1;
                for (int i = 0; i < readers.size(); i++)
                {
                    if (hasFrame[i] && (earliest < 0 ||
                        readers.get(i).timestampNanos() < readers.get(earliest).timestampNanos()))
                    {
                        earliest = i;
                    }
                }
                if (earliest < 0)
                {
                    return written;
                }
                final PcapReader reader = readers.get(earliest);
                final int sourceInterface = reader.interfaceId();
                Integer target = interfaceMaps.get(earliest).get(sourceInterface);
                if (null == target)
                {
                    final String name = reader.interfaceName();
                    target = writer.addInterface(null == name ? parts.get(earliest).getFileName() + "#" + sourceInterface : name,
                        reader.linkType(), reader.snapLength() == 0 ? PcapWriter.DEFAULT_SNAP_LENGTH :
                            Math.max(reader.snapLength(), reader.capturedLength()));
                    interfaceMaps.get(earliest).put(sourceInterface, target);
                }
                writer.write(target, reader.data(), reader.frameOffset(), reader.capturedLength(), reader.originalLength(),
                    reader.timestampNanos());
                written++;
                hasFrame[earliest] = reader.next();
            }
        }
        finally
        {
            for (final PcapReader reader : readers)
            {
                reader.close();
            }
        }
    }
}
