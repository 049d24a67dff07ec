package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.datapath.nic.EmbeddedNic;
import io.spraynic.datapath.nic.EmbeddedNicConfig;
import io.spraynic.datapath.nic.NicConnection;
import io.spraynic.datapath.port.InMemoryLink;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.pmd.InterfaceAddress;
import org.agrona.concurrent.BackoffIdleStrategy;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

/**
 * Two embedded NICs joined by in-JVM links: NIC A is served to clients through an {@link IpcConductor} in
 * {@code dir}, NIC B is used in-process by the test as the peer.
 */
final class IpcTestBed implements AutoCloseable
{
    static final Duration WAIT = Duration.ofSeconds(20);
    /** The served NIC's and the peer's address in a bed of IPv6 NICs. */
    static final String[] IPV6 = {"fd00:1::10", "fd00:1::20"};

    final Path dir;
    final EmbeddedNic served;
    final EmbeddedNic peer;
    final IpcConductor conductor;
    final CountersFile servedCounters;
    private final List<AutoCloseable> closeables = new ArrayList<>();

    IpcTestBed(final Path base, final NicConnection.Kind mode, final Duration clientTimeout)
    {
        this(base, mode, clientTimeout, IpcConductor.Limits.DEFAULT);
    }

    IpcTestBed(final Path base, final NicConnection.Kind mode, final Duration clientTimeout, final IpcConductor.Limits limits)
    {
        this(base, mode, clientTimeout, limits, false);
    }

    IpcTestBed(final Path base, final NicConnection.Kind mode, final Duration clientTimeout, final IpcConductor.Limits limits,
        final boolean ipv6)
    {
        this(base, mode, clientTimeout, limits, ipv6, IpcAccess.OWNER_ONLY);
    }

    /** @param ipv6 the NICs speak IPv6 only, {@link #IPV6} (served) and the next address (peer), neighbour discovery. */
    IpcTestBed(final Path base, final NicConnection.Kind mode, final Duration clientTimeout, final IpcConductor.Limits limits,
        final boolean ipv6, final IpcAccess access)
    {
        this.dir = base.resolve("ipc");
        final InMemoryLink link = new InMemoryLink("ipc", 1024, 2048 + InMemoryLink.HEADROOM);
        closeables.add(link);
        servedCounters = CountersFile.create(base, "served", 4096);
        closeables.add(servedCounters);
        served = EmbeddedNic.start(config(mode, 0, ipv6), new PacketPort[][]{{link.first()}}, servedCounters);
        closeables.add(served);
        final CountersFile peerCounters = CountersFile.create(base, "peer", 4096);
        closeables.add(peerCounters);
        peer = EmbeddedNic.start(config(mode, 1, ipv6), new PacketPort[][]{{link.second()}}, peerCounters);
        closeables.add(peer);
        conductor = IpcConductor.start(served, dir, servedCounters, clientTimeout, limits, access,
            new BackoffIdleStrategy(10, 10, 1_000, 500_000));
        closeables.add(conductor);
    }

    private static EmbeddedNicConfig config(final NicConnection.Kind mode, final int host, final boolean ipv6)
    {
        final EmbeddedNicConfig config = new EmbeddedNicConfig().mode(mode).workers(1).planes(1).connections(4, 4, 1024).bursts(32, 2048)
            // a RoCEv2 retry budget of 0.7 s: a test host under load (a child JVM starting) must not exhaust it
            .sprayConfig(EmbeddedNicConfig::sharedCoreSprayConfig).rocevRetry(100_000_000L, 7)
            .local(0, ip(host), mac(host));
        return ipv6 ? config.local(0, InterfaceAddress.parse(IPV6[host] + "/64", ""), mac(host)) : config;
    }

    static int ip(final int host)
    {
        return 0x0A00_0001 + host;
    }

    static long mac(final int host)
    {
        return 0x02_00_00_00_00_01L + host;
    }

    /** @return the value of the served NIC's counter with this label, or -1 when there is none. */
    long counter(final String label)
    {
        final long[] value = {-1};
        servedCounters.counters().forEach((counterId, typeId, keyBuffer, l) ->
        {
            if (l.equals(label))
            {
                value[0] = servedCounters.counters().getCounterValue(counterId);
            }
        });
        return value[0];
    }

    /** @return the sum of every {@code ipc: unexpected errors: ...} counter and the conductor errors. */
    long unexpectedErrors()
    {
        return counter("ipc: conductor errors") + counter("ipc: unexpected errors: commands") +
            counter("ipc: unexpected errors: control results") +
            counter("ipc: unexpected errors: client time-outs");
    }

    /** @return names of the region and connection files in the IPC directory. */
    List<String> objectFiles()
    {
        try (Stream<Path> files = Files.list(dir))
        {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("mr-") || n.startsWith("conn-"))
                .sorted().toList();
        }
        catch (final IOException ex)
        {
            throw new java.io.UncheckedIOException(ex);
        }
    }

    static void await(final BooleanSupplier condition, final Duration timeout, final String what)
    {
        final long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean())
        {
            if (System.nanoTime() >= deadline)
            {
                throw new AssertionError("not within " + timeout.toMillis() + " ms: " + what);
            }
            try
            {
                Thread.sleep(5);
            }
            catch (final InterruptedException ex)
            {
                throw new AssertionError(ex);
            }
        }
    }

    static WorkCompletion poll(final CompletionQueue cq, final String what)
    {
        final WorkCompletion completion = new WorkCompletion();
        await(() -> cq.poll(completion), WAIT, what);
        return completion;
    }

    static WorkCompletion poll(final ClientCompletionQueue cq, final String what)
    {
        final WorkCompletion completion = new WorkCompletion();
        await(() -> cq.poll(completion), WAIT, what);
        return completion;
    }

    /** Fills {@code bytes} at {@code offset} with the pattern of {@code seed}. */
    static void fill(final MemorySegment segment, final long offset, final long bytes, final long seed)
    {
        final SplittableRandom random = new SplittableRandom(seed);
        for (long i = 0; i < bytes; i += 8)
        {
            segment.set(ValueLayout.JAVA_LONG_UNALIGNED, offset + i, random.nextLong());
        }
    }

    /** @return the first offset where {@code bytes} at {@code offset} differ from the pattern of {@code seed}, or -1. */
    static long mismatch(final MemorySegment segment, final long offset, final long bytes, final long seed)
    {
        final SplittableRandom random = new SplittableRandom(seed);
        for (long i = 0; i < bytes; i += 8)
        {
            if (segment.get(ValueLayout.JAVA_LONG_UNALIGNED, offset + i) != random.nextLong())
            {
                return i;
            }
        }
        return -1;
    }

    public void close() throws Exception
    {
        for (int i = closeables.size() - 1; i >= 0; i--)
        {
            closeables.get(i).close();
        }
    }
}
