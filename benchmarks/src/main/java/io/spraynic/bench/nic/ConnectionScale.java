package io.spraynic.bench.nic;

import io.spraynic.datapath.api.SeededPattern;
import io.spraynic.datapath.api.SendRequest;
import io.spraynic.datapath.nic.DpdkNic;
import io.spraynic.datapath.nic.EmbeddedNic;
import io.spraynic.datapath.nic.EmbeddedNicConfig;
import io.spraynic.datapath.nic.NicConnection;
import io.spraynic.datapath.nic.SprayNicConnection;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.transport.spray.SprayCounters;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.pmd.EalConfig;
import io.spraynic.pmd.HostHugepages;
import io.spraynic.pmd.HugepageChoice;
import io.spraynic.pmd.HugepageMode;
import io.spraynic.pmd.MempoolConfig;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PortConfig;
import org.agrona.concurrent.BackoffIdleStrategy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Many connections at once over DPDK in real time (issue 13, {@code spraynic bench connections}): two embedded NICs
 * (the shipped {@code NicWorker} loop) on a crossed {@code net_ring} pair open N connections through the real
 * handshake, then every connection writes its messages (RDMA WRITE, all connections posting at once, {@code depth}
 * in flight on each), each message into its own place of the receiver's region, and every byte is compared with the
 * seeded pattern it was written from. Reported: the set-up time, goodput, messages per second, message completion
 * times (post to completion, p50 / p99), heap and off-heap memory at four points, how many connections held tables
 * of the engines' storage pools at once, and the counters that say what went wrong (drops, refusals,
 * retransmissions).
 */
public final class ConnectionScale
{
    private static final int NIC_A = 0x0A00_0001;
    private static final int NIC_B = 0x0A00_0002;
    private static final int MBUFS = 32767;
    private static final int RING_SLOTS = 1024;
    private static final int OPENERS = 16;
    private static final String[] SPRAY_SUMS = {"retransmitted", "lost", "timeouts", "rnr_retries", "no_resources",
        "nacks_sent", "output_full", "path_failures", "msn_out_of_window", "cq_overruns"};

    /** The most messages of a run, all connections together: each keeps two timestamps (64 MiB of them). */
    public static final int MAX_MESSAGES = 1 << 22;

    /**
     * What to run.
     *
     * @param connections   connections opened (spray: through the handshake; RoCEv2: queue pairs).
     * @param messageBytes  bytes per RDMA WRITE.
     * @param messages      writes per connection.
     * @param depth         writes in flight per connection.
     * @param workers       workers per NIC.
     * @param storageLimit  sets of connection tables each spray engine may lend at once (-1: one per connection).
     * @param timeoutSeconds the transfer's bound: what is not complete by then is reported as such.
     */
    public record Options(NicConnection.Kind kind, int connections, int messageBytes, int messages, int depth,
        int workers, HugepageMode hugepages, int storageLimit, double timeoutSeconds)
    {
        public Options
        {
            if (connections < 1 || messageBytes < 1 || messages < 1 || depth < 1 || workers < 1 || timeoutSeconds <= 0)
            {
                throw new IllegalArgumentException("connections, bytes, messages, depth, workers and timeout must be positive");
            }
            if ((long)connections * messages * messageBytes > 1L << 31)
            {
                throw new IllegalArgumentException("connections x messages x bytes must be at most 2 GiB: " +
                    (long)connections * messages * messageBytes);
            }
            if ((long)connections * messages > MAX_MESSAGES)
            {
                throw new IllegalArgumentException("connections x messages must be at most " + MAX_MESSAGES + ": " +
                    (long)connections * messages);
            }
        }

        int perWorker()
        {
            return (connections + workers - 1) / workers;
        }
    }

    /** Memory at one point: heap used, the JVM's direct and mapped buffer pools, DPDK mbufs in use. */
    public record Memory(String point, long heapBytes, long directBytes, long mappedBytes, long residentBytes,
        long mbufsInUse)
    {
        String toJson()
        {
            return String.format(Locale.ROOT, "{\"point\":\"%s\",\"heapBytes\":%d,\"directBytes\":%d,\"mappedBytes\":%d," +
                "\"residentBytes\":%d,\"mbufsInUse\":%d}", point, heapBytes, directBytes, mappedBytes, residentBytes,
                mbufsInUse);
        }

        String toText()
        {
            return String.format(Locale.ROOT, "%-16s heap %8.1f MB, direct %6.1f MB, mapped %6.1f MB, process resident " +
                "%8.1f MB, mbufs in use %d", point, heapBytes / 1e6, directBytes / 1e6, mappedBytes / 1e6,
                residentBytes / 1e6, mbufsInUse);
        }
    }

    /**
     * One run's outcome. {@code storage} holds, per NIC ("a" sends, "b" receives), the spray pools' figures summed
     * over its workers; {@code counters} the transport's counters that matter, summed over both NICs' connections.
     */
    public record Result(Options options, int opened, double setupSeconds, long messagesCompleted, long messagesVerified,
        long postsRefused, double transferSeconds, double p50Micros, double p99Micros, List<Memory> memory,
        long applicationRegionBytes, long mempoolBytes, Map<String, Long> storage, Map<String, Long> counters,
        int openAfterClose, String failure)
    {
        /** @return whether every connection opened, every message completed and verified, and all were closed. */
        public boolean ok()
        {
            return null == failure && opened == options.connections() &&
                messagesVerified == (long)options.connections() * options.messages() && openAfterClose == 0;
        }

        public long bytes()
        {
            return messagesCompleted * options.messageBytes();
        }

        public double goodputGbps()
        {
            return transferSeconds > 0 ? bytes() * 8 / transferSeconds / 1e9 : 0;
        }

        public double messagesPerSecond()
        {
            return transferSeconds > 0 ? messagesCompleted / transferSeconds : 0;
        }

        public String toText()
        {
            final StringBuilder text = new StringBuilder();
            text.append(String.format(Locale.ROOT, "%s: %d of %d connections opened in %.2f s (%.0f per second)%n",
                name(), opened, options.connections(), setupSeconds, opened / Math.max(setupSeconds, 1e-9)));
            text.append(String.format(Locale.ROOT, "%s: %d x %d writes of %d B, %d in flight per connection: %d completed, " +
                "%d verified in %.3f s: %.3f Gb/s, %.0f messages/s, completion p50 %.1f us, p99 %.1f us; posts refused " +
                "(QUEUE_FULL) %d%n", name(), options.connections(), options.messages(), options.messageBytes(),
                options.depth(), messagesCompleted, messagesVerified, transferSeconds, goodputGbps(), messagesPerSecond(),
                p50Micros, p99Micros, postsRefused));
            for (final Memory point : memory)
            {
                text.append(name()).append(": memory ").append(point.toText()).append(System.lineSeparator());
            }
            text.append(String.format(Locale.ROOT, "%s: application regions %.1f MB (in direct), DPDK mempool %.1f MB%n",
                name(), applicationRegionBytes / 1e6, mempoolBytes / 1e6));
            text.append(name()).append(": storage pools ").append(storage).append(System.lineSeparator());
            text.append(name()).append(": counters ").append(counters).append(System.lineSeparator());
            text.append(String.format(Locale.ROOT, "%s: connections open after close: %d%s%n", name(), openAfterClose,
                null == failure ? "" : "; FAILED: " + failure));
            return text.toString();
        }

        public String toJson()
        {
            final StringBuilder json = new StringBuilder();
            json.append(String.format(Locale.ROOT, "{\"name\":\"%s\",\"connections\":%d,\"opened\":%d,\"setupSeconds\":%.4f," +
                "\"messageBytes\":%d,\"messagesPerConnection\":%d,\"depth\":%d,\"workers\":%d,\"storageLimit\":%d," +
                "\"messagesCompleted\":%d,\"messagesVerified\":%d,\"postsRefused\":%d,\"transferSeconds\":%.4f," +
                "\"goodputGbps\":%.4f,\"messagesPerSecond\":%.1f,\"p50Us\":%.2f,\"p99Us\":%.2f,\"applicationRegionBytes\":%d," +
                "\"mempoolBytes\":%d,\"openAfterClose\":%d,\"ok\":%b,\"memory\":[", name(), options.connections(), opened,
                setupSeconds, options.messageBytes(), options.messages(), options.depth(), options.workers(),
                options.storageLimit(), messagesCompleted, messagesVerified, postsRefused, transferSeconds, goodputGbps(),
                messagesPerSecond(), p50Micros, p99Micros, applicationRegionBytes, mempoolBytes, openAfterClose, ok()));
            json.append(String.join(",", memory.stream().map(Memory::toJson).toList())).append("],\"storage\":");
            json.append(object(storage)).append(",\"counters\":").append(object(counters));
            json.append(",\"failure\":").append(null == failure ? "null" : "\"" + failure.replace("\\", "\\\\")
                .replace("\"", "\\\"").replace("\n", " ") + "\"").append('}');
            return json.toString();
        }

        private String name()
        {
            return options.kind().name().toLowerCase(Locale.ROOT);
        }

        private static String object(final Map<String, Long> values)
        {
            final List<String> fields = new ArrayList<>();
            values.forEach((key, value) -> fields.add("\"" + key.replace(' ', '_') + "\":" + value));
            return "{" + String.join(",", fields) + "}";
        }
    }

    private ConnectionScale()
    {
    }

    /** The DPDK set-up: one crossed {@code net_ring} pair, a queue per worker on each port. */
    static NicConfig dpdkConfig(final int workers)
    {
        return NicConfig.of(EalConfig.DEFAULT.withFilePrefix("spraynic-conns-" + ProcessHandle.current().pid())
            .withLogLevels(List.of("lib.eal:warning")), MempoolConfig.DEFAULT.withMbufs(MBUFS), List.of(
            PortConfig.ringPair("a", "b").withQueues(workers, workers).withDescriptors(RING_SLOTS, RING_SLOTS),
            PortConfig.ringPair("b", "a").withQueues(workers, workers).withDescriptors(RING_SLOTS, RING_SLOTS)));
    }

    /**
     * Runs once (EAL starts once per process: one run per process).
     *
     * @param options what to run.
     * @param log     progress lines.
     * @return what happened; a run that did not finish says so in {@link Result#failure()}, it does not throw.
     */
    public static Result run(final Options options, final Consumer<String> log) throws Exception
    {
        final HugepageChoice choice = HugepageChoice.choose(dpdkConfig(options.workers()), options.hugepages(),
            HostHugepages.probe());
        System.err.println("spraynic: " + choice.notice());
        final Path directory = Files.createTempDirectory("spraynic-conns");
        final List<Memory> memory = new ArrayList<>();
        try (DpdkNic dpdk = DpdkNic.start(choice.config());
            CountersFile countersA = CountersFile.create(directory, "a", 16384);
            CountersFile countersB = CountersFile.create(directory, "b", 16384);
            Arena arena = Arena.ofShared())
        {
            memory.add(snapshot("before NICs", dpdk, true));
            final EmbeddedNic[] nics = {start(options, dpdk, "a", NIC_A, countersA), start(options, dpdk, "b", NIC_B, countersB)};
            final List<NicConnection> opened = new ArrayList<>();
            String failure = null;
            int openAfterClose = -1;
            Transfer transfer = null;
            double setupSeconds = 0;
            long regionBytes = 0;
            final Map<String, Long> storage = new LinkedHashMap<>();
            try
            {
                memory.add(snapshot("before opening", dpdk, true));
                final long setupStart = System.nanoTime();
                final NicConnection[] senders = new NicConnection[options.connections()];
                try
                {
                    open(nics, options, senders, opened, log);
                }
                catch (final RuntimeException e)
                {
                    failure = "opening connections (" + opened.size() / 2 + " pairs so far): " + e.getMessage();
                }
                setupSeconds = (System.nanoTime() - setupStart) / 1e9;
                log.accept(String.format(Locale.ROOT, "opened %d connections in %.2f s", opened.size() / 2, setupSeconds));
                memory.add(snapshot("after opening", dpdk, true));
                if (null == failure)
                {
                    regionBytes = (long)options.connections() * options.messages() * options.messageBytes();
                    final MemorySegment pattern = SeededPattern.allocate(arena, regionBytes, 13);
                    final MemoryRegion source = nics[0].register(pattern, AccessFlags.NONE);
                    final MemorySegment landing = arena.allocate(regionBytes, 64);
                    final MemoryRegion target = nics[1].register(landing, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
                    transfer = new Transfer(options, senders, source, target);
                    transfer.run(dpdk, memory);
                    transfer.verify(pattern, landing);
                    failure = transfer.failure;
                    log.accept(String.format(Locale.ROOT, "%d messages completed, %d verified", transfer.completed,
                        transfer.verified));
                    // once idle, every connection gives its tables back (after the linger): wait for the pools to fill
                    awaitTablesBack(nics, 10_000);
                    storage.putAll(storageFigures(nics));
                    memory.add(snapshot("after idle", dpdk, true));
                }
                openAfterClose = closeAll(nics, opened);
            }
            finally
            {
                nics[0].close(Duration.ofSeconds(2));
                nics[1].close(Duration.ofSeconds(2));
            }
            if (storage.isEmpty())
            {
                storage.putAll(storageFigures(nics));
            }
            return new Result(options, opened.size() / 2, setupSeconds, null == transfer ? 0 : transfer.completed,
                null == transfer ? 0 : transfer.verified, null == transfer ? 0 : transfer.refused,
                null == transfer ? 0 : transfer.seconds, null == transfer ? 0 : transfer.percentileMicros(0.50),
                null == transfer ? 0 : transfer.percentileMicros(0.99), memory, 2 * regionBytes,
                MempoolConfig.DEFAULT.withMbufs(MBUFS).bytesNeeded(), storage, counters(opened), openAfterClose, failure);
        }
    }

    private static EmbeddedNic start(final Options options, final DpdkNic dpdk, final String port, final int ipv4,
        final CountersFile counters)
    {
        final PacketPort[][] ports = new PacketPort[options.workers()][1];
        for (int w = 0; w < options.workers(); w++)
        {
            ports[w][0] = dpdk.packetPort(port, w);
        }
        final int perWorker = options.perWorker();
        final int storageLimit = options.storageLimit();
        // the limits a NIC holding this many connections to one peer needs: every connection comes from one source
        // address (S12.9); the NIC sizes each engine from its accepted and opened limits
        final EmbeddedNicConfig config = new EmbeddedNicConfig().mode(options.kind()).workers(options.workers()).planes(1)
            .local(0, ipv4, 0x02_00_00_00_00_00L | ipv4).connections(8, 1, 4096)
            .queues(2 * options.depth() + 2, 4 * options.depth() + 4, Math.max(4, options.depth()), 16)
            .maxAcceptedConnections(options.connections()).maxOpenedConnections(options.connections())
            .busyConnections(storageLimit == -1 ? options.connections() : storageLimit)
            .sprayConfig(() -> EmbeddedNicConfig.sharedCoreSprayConfig().maxConnectionsPerSource(perWorker))
            .idleStrategy(BackoffIdleStrategy::new);
        return EmbeddedNic.start(config, ports, counters);
    }

    /**
     * Opens the connections: spray's in parallel from {@link #OPENERS} threads (one handshake is a few round trips
     * between two poll threads that park when idle: on shared cores tens of milliseconds, so one at a time would
     * measure the scheduler), accepted on this thread; RoCEv2's queue pairs one after the other (no handshake).
     */
    private static void open(final EmbeddedNic[] nics, final Options options, final NicConnection[] senders,
        final List<NicConnection> opened, final Consumer<String> log) throws InterruptedException
    {
        final Duration timeout = Duration.ofSeconds(30);
        if (options.kind() == NicConnection.Kind.ROCEV2)
        {
            for (int i = 0; i < senders.length; i++)
            {
                senders[i] = nics[0].createQueuePair(0);
                opened.add(senders[i]);
                final NicConnection receiver = nics[1].createQueuePair(0);
                opened.add(receiver);
                senders[i].connect(receiver.rocevEndpoint(), timeout);
                receiver.connect(senders[i].rocevEndpoint(), timeout);
                logProgress(i + 1, log);
            }
            return;
        }
        final java.util.concurrent.atomic.AtomicInteger next = new java.util.concurrent.atomic.AtomicInteger();
        final java.util.concurrent.atomic.AtomicReference<RuntimeException> failed =
            new java.util.concurrent.atomic.AtomicReference<>();
        final Thread[] openers = new Thread[Math.min(OPENERS, senders.length)];
        for (int t = 0; t < openers.length; t++)
        {
            openers[t] = Thread.ofPlatform().name("spraynic-opener-" + t).start(() ->
            {
                int i;
                while (null == failed.get() && (i = next.getAndIncrement()) < senders.length)
                {
                    try
                    {
                        senders[i] = nics[0].connect(new int[]{NIC_B}, timeout);
                    }
                    catch (final RuntimeException e)
                    {
                        failed.compareAndSet(null, e);
                    }
                }
            });
        }
        try
        {
            int accepted = 0;
            while (accepted < senders.length && null == failed.get())
            {
                final NicConnection connection = nics[1].accept(Duration.ofMillis(100));
                if (null != connection)
                {
                    opened.add(connection);
                    logProgress(++accepted, log);
                }
                else if (!anyAlive(openers))
                {
                    break; // every CONNECT answered, yet fewer accepted: said below
                }
            }
        }
        finally
        {
            for (final Thread opener : openers)
            {
                opener.join();
            }
            for (final NicConnection sender : senders)
            {
                if (null != sender)
                {
                    opened.add(sender);
                }
            }
        }
        if (null != failed.get())
        {
            throw failed.get();
        }
        if (opened.size() != 2 * senders.length)
        {
            throw new IllegalStateException((opened.size() - count(senders)) + " accepted for " + count(senders) + " opened");
        }
    }

    private static boolean anyAlive(final Thread[] threads)
    {
        for (final Thread thread : threads)
        {
            if (thread.isAlive())
            {
                return true;
            }
        }
        return false;
    }

    private static int count(final NicConnection[] connections)
    {
        int n = 0;
        for (final NicConnection connection : connections)
        {
            n += null == connection ? 0 : 1;
        }
        return n;
    }

    private static void logProgress(final int opened, final Consumer<String> log)
    {
        if (opened % 1000 == 0)
        {
            log.accept("opened " + opened + " connections");
        }
    }

    /** Closes every connection; @return how many both NICs still hold once the closes are done (0 expected). */
    private static int closeAll(final EmbeddedNic[] nics, final List<NicConnection> opened)
    {
        for (final NicConnection connection : opened)
        {
            connection.close(Duration.ofSeconds(2));
        }
        final long deadline = System.nanoTime() + 5_000_000_000L;
        while (System.nanoTime() < deadline && nics[0].connections().size() + nics[1].connections().size() > 0)
        {
            sleep(10);
        }
        return nics[0].connections().size() + nics[1].connections().size();
    }

    private static void awaitTablesBack(final EmbeddedNic[] nics, final long millis)
    {
        final long deadline = System.nanoTime() + millis * 1_000_000L;
        while (System.nanoTime() < deadline && counterSum(nics[0], ": spray storage sets lent") +
            counterSum(nics[1], ": spray storage sets lent") > 0)
        {
            sleep(5);
        }
    }

    private static Map<String, Long> storageFigures(final EmbeddedNic[] nics)
    {
        final Map<String, Long> figures = new LinkedHashMap<>();
        final String[] names = {"a", "b"};
        for (int n = 0; n < 2; n++)
        {
            figures.put(names[n] + " sets lent at peak", counterSum(nics[n], ": spray storage sets lent at peak"));
            figures.put(names[n] + " sets lent", counterSum(nics[n], ": spray storage sets lent"));
            figures.put(names[n] + " sets made", counterSum(nics[n], ": spray storage sets made"));
            figures.put(names[n] + " borrows refused", counterSum(nics[n], ": spray storage borrows refused at the limit"));
            figures.put(names[n] + " bytes", counterSum(nics[n], ": spray storage bytes"));
            figures.put(names[n] + " no_resources", counterSum(nics[n], ": spray no_resources"));
            figures.put(names[n] + " refused_no_resources", counterSum(nics[n], ": spray refused_no_resources"));
            figures.put(names[n] + " source_limited", counterSum(nics[n], ": spray source_limited"));
            figures.put(names[n] + " rate_limited", counterSum(nics[n], ": spray connect_responses_rate_limited"));
            figures.put(names[n] + " steering drops", counterSum(nics[n], ": steering drops (inbox full)"));
            figures.put(names[n] + " accepted over the limit", counterSum(nics[n], "connections: accepted over the limit, closed"));
        }
        return figures;
    }

    /** @return the sum of the NIC's counters whose label is a worker's and ends with {@code suffix}. */
    static long counterSum(final EmbeddedNic nic, final String suffix)
    {
        final long[] sum = new long[1];
        nic.counters().counters().forEach((value, id, label) ->
        {
            if (label.endsWith(suffix) && !label.startsWith("conn "))
            {
                sum[0] += value;
            }
        });
        return sum[0];
    }

    /** The transport counters that matter, summed over every connection of both NICs (read after they stopped). */
    private static Map<String, Long> counters(final List<NicConnection> connections)
    {
        final Map<String, Long> sums = new LinkedHashMap<>();
        for (final String name : SPRAY_SUMS)
        {
            sums.put(name, 0L);
        }
        for (final NicConnection connection : connections)
        {
            if (connection instanceof SprayNicConnection spray && null != spray.spray())
            {
                final TransportCounters counters = spray.spray().counters();
                for (int slot = 0; slot < SprayCounters.SLOT_COUNT; slot++)
                {
                    final String label = counters.label(slot);
                    if (sums.containsKey(label))
                    {
                        sums.merge(label, counters.get(slot), Long::sum);
                    }
                }
            }
        }
        return sums;
    }

    static Memory snapshot(final String point, final DpdkNic dpdk, final boolean collect)
    {
        if (collect)
        {
            for (int i = 0; i < 4; i++)
            {
                System.gc();
            }
        }
        long direct = 0;
        long mapped = 0;
        for (final BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class))
        {
            if (pool.getName().equals("direct"))
            {
                direct += pool.getMemoryUsed();
            }
            else if (pool.getName().equals("mapped"))
            {
                mapped += pool.getMemoryUsed();
            }
        }
        return new Memory(point, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed(), direct, mapped,
            residentBytes(), dpdk.pool().inUseCount());
    }

    /** @return the process's resident set (VmRSS of /proc/self/status: heap, native, DPDK memory touched), 0 if unknown. */
    private static long residentBytes()
    {
        try
        {
            for (final String line : Files.readAllLines(Path.of("/proc/self/status")))
            {
                if (line.startsWith("VmRSS:"))
                {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        }
        catch (final java.io.IOException | NumberFormatException e)
        {
            return 0;
        }
        return 0;
    }

    private static void sleep(final long millis)
    {
        try
        {
            Thread.sleep(millis);
        }
        catch (final InterruptedException e)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /**
     * The application's side of the transfer: one thread posting every connection's writes (up to {@code depth} in
     * flight each, a QUEUE_FULL answered by trying again later) and polling their completions, timing each message
     * from its post to its completion.
     */
    private static final class Transfer
    {
        private final Options options;
        private final NicConnection[] senders;
        private final MemoryRegion source;
        private final MemoryRegion target;
        private final long[] postedAt;
        private final long[] completionNanos;
        private long completed;
        private long postedTotal;
        private long verified;
        private long refused;
        private double seconds;
        private String failure;

        Transfer(final Options options, final NicConnection[] senders, final MemoryRegion source, final MemoryRegion target)
        {
            this.options = options;
            this.senders = senders;
            this.source = source;
            this.target = target;
            final int total = options.connections() * options.messages();
            this.postedAt = new long[total];
            this.completionNanos = new long[total];
            Arrays.fill(completionNanos, -1);
        }

        void run(final DpdkNic dpdk, final List<Memory> memory)
        {
            final long start = System.nanoTime();
            try
            {
                pump(start, dpdk, memory);
            }
            finally
            {
                seconds = (System.nanoTime() - start) / 1e9;
            }
        }

        private void pump(final long start, final DpdkNic dpdk, final List<Memory> memory)
        {
            final SendRequest request = new SendRequest();
            final WorkCompletion completion = new WorkCompletion();
            final int connections = senders.length;
            final int messages = options.messages();
            final int[] posted = new int[connections];
            final int[] inFlight = new int[connections];
            final long total = (long)connections * messages;
            final long deadline = start + (long)(options.timeoutSeconds() * 1e9);
            boolean sampled = false;
            long progress = -1;
            while (completed < total)
            {
                if (progress == completed + postedTotal)
                {
                    // nothing posted or completed in a whole pass: leave the core to the NICs' poll threads
                    java.util.concurrent.locks.LockSupport.parkNanos(20_000);
                }
                progress = completed + postedTotal;
                final long now = System.nanoTime();
                if (now > deadline)
                {
                    failure = String.format(Locale.ROOT, "%d of %d messages complete after %.1f s", completed, total,
                        options.timeoutSeconds());
                    break;
                }
                for (int i = 0; i < connections; i++)
                {
                    final NicConnection connection = senders[i];
                    while (inFlight[i] < options.depth() && posted[i] < messages)
                    {
                        final int message = i * messages + posted[i];
                        final long offset = (long)message * options.messageBytes();
                        request.reset().wrId(message).opcode(WorkRequestOpcode.RDMA_WRITE)
                            .local(source, source.address() + offset, options.messageBytes())
                            .remote(target.address() + offset, target.rkey()).signaled(true);
                        postedAt[message] = System.nanoTime();
                        final int result = connection.postSend(0, request);
                        if (result == PostResult.QUEUE_FULL)
                        {
                            refused++;
                            break;
                        }
                        if (result != PostResult.OK)
                        {
                            failure = "post on connection " + i + ": " + PostResult.name(result);
                            return;
                        }
                        posted[i]++;
                        postedTotal++;
                        inFlight[i]++;
                    }
                    while (connection.sendCompletionQueue().poll(completion))
                    {
                        if (completion.status() != WorkCompletionStatus.SUCCESS)
                        {
                            failure = "write on connection " + i + " failed: " + completion;
                            return;
                        }
                        final int message = (int)completion.wrId();
                        completionNanos[message] = System.nanoTime() - postedAt[message];
                        inFlight[i]--;
                        completed++;
                    }
                }
                if (!sampled && completed >= total / 2)
                {
                    sampled = true; // halfway: every connection has posted, many still have traffic
                    memory.add(snapshot("while active", dpdk, false));
                }
            }
        }

        void verify(final MemorySegment pattern, final MemorySegment landing)
        {
            final long bytes = options.messageBytes();
            for (int message = 0; message < completionNanos.length; message++)
            {
                final long offset = message * bytes;
                if (completionNanos[message] >= 0 && -1 == MemorySegment.mismatch(pattern, offset, offset + bytes,
                    landing, offset, offset + bytes))
                {
                    verified++;
                }
            }
            if (null == failure && verified != completionNanos.length)
            {
                failure = (completionNanos.length - verified) + " messages differ from the pattern at the receiver";
            }
        }

        double percentileMicros(final double fraction)
        {
            final long[] done = Arrays.stream(completionNanos).filter(nanos -> nanos >= 0).sorted().toArray();
            return done.length == 0 ? 0 : done[(int)Math.min(done.length - 1, Math.floor(fraction * done.length))] / 1e3;
        }
    }
}
