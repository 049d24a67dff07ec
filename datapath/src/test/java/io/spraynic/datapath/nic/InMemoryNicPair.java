package io.spraynic.datapath.nic;

import io.spraynic.datapath.port.InMemoryLink;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;

import java.lang.foreign.Arena;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.ObjIntConsumer;

/**
 * Two spray NICs, 10.0.0.1 and 10.0.0.2, on one in-memory link (one plane, 2048 B frames), each with its own
 * counters file: the fixture of tests that drive one embedded NIC from another (also other modules' tests, through
 * datapath's tests jar). Closing it closes the NICs, their
 * counters and the link, last made first, also after a failed start; then the memory of {@link #arena}, which the
 * NICs may touch until they stop.
 */
public final class InMemoryNicPair implements AutoCloseable
{
    /** What a serving NIC registers for its visitors ({@code spraynic nic --expose}). */
    public static final int EXPOSED_ACCESS = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;
    private static final String FRAME_FAULTS = "frame faults (exception handling a frame, dropped)";
    private static final String LOOP_FAULTS = "loop faults (exception in a command, poller, post or tick)";

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final EmbeddedNic[] nics = new EmbeddedNic[2];
    private final Arena arena = Arena.ofShared();

    /**
     * @param dir    where the counters files go.
     * @param name   of the link and (with the host's index) of the counters files.
     * @param tailor sets what a test needs beyond the shared defaults, given each config and its host's index.
     */
    public InMemoryNicPair(final Path dir, final String name, final ObjIntConsumer<EmbeddedNicConfig> tailor)
    {
        closeables.add(arena);
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

    /** @return memory freed only after both NICs have stopped: what their registrations may point at. */
    public Arena arena()
    {
        return arena;
    }

    /**
     * @param host  0 or 1.
     * @param bytes how much.
     * @return {@code bytes} of page-aligned memory of {@link #arena}, registered on the host's NIC with
     * {@link #EXPOSED_ACCESS}.
     */
    public MemoryRegion expose(final int host, final long bytes)
    {
        return nics[host].register(arena.allocate(bytes, 4096), EXPOSED_ACCESS);
    }

    /** @return the exceptions a NIC's workers caught, over workers: frame faults and loop faults. */
    public static long faults(final EmbeddedNic nic)
    {
        final Map<String, Long> counters = HostileWire.counters(nic);
        return HostileWire.sum(counters, FRAME_FAULTS) + HostileWire.sum(counters, LOOP_FAULTS);
    }

    public void close() throws Exception
    {
        for (int i = closeables.size() - 1; i >= 0; i--)
        {
            closeables.remove(i).close();
        }
    }
}
