package io.spraynic.datapath.nic;

import io.spraynic.datapath.port.InMemoryLink;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.telemetry.CountersFile;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ObjIntConsumer;

/**
 * Two spray NICs, 10.0.0.1 and 10.0.0.2, on one in-memory link (one plane, 2048 B frames), each with its own
 * counters file: the fixture of tests that drive one embedded NIC from another (also other modules' tests, through
 * datapath's tests jar). Closing it closes the NICs, their
 * counters and the link, last made first, also after a failed start.
 */
public final class InMemoryNicPair implements AutoCloseable
{
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final EmbeddedNic[] nics = new EmbeddedNic[2];

    /**
     * @param dir    where the counters files go.
     * @param name   of the link and (with the host's index) of the counters files.
     * @param tailor sets what a test needs beyond the shared defaults, given each config and its host's index.
     */
    public InMemoryNicPair(final Path dir, final String name, final ObjIntConsumer<EmbeddedNicConfig> tailor)
    {
        try
        {
            final InMemoryLink link = new InMemoryLink(name, 1024, 2048 + InMemoryLink.HEADROOM);
            closeables.add(link);
            final PacketPort[][][] ports = {{{link.first()}}, {{link.second()}}};
            for (int h = 0; h < 2; h++)
            {
                final EmbeddedNicConfig config = new EmbeddedNicConfig().mode(NicConnection.Kind.SPRAY).planes(1)
                    .bursts(32, 2048).local(0, 0x0A00_0001 + h, 0x02_00_00_00_00_01L + h);
                tailor.accept(config, h);
                final CountersFile counters = CountersFile.create(dir, name + h, 4096);
                closeables.add(counters);
                nics[h] = EmbeddedNic.start(config, ports[h], counters);
                closeables.add(nics[h]);
            }
        }
        catch (final RuntimeException | Error e)
        {
            try
            {
                close();
            }
            catch (final Exception suppressed)
            {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /** @param host 0 or 1. @return its NIC. */
    public EmbeddedNic nic(final int host)
    {
        return nics[host];
    }

    public void close() throws Exception
    {
        for (int i = closeables.size() - 1; i >= 0; i--)
        {
            closeables.remove(i).close();
        }
    }
}
