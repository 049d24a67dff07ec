package io.spraynic.bench.nic;

import io.spraynic.bench.e2e.Idle;
import io.spraynic.datapath.api.CompletionQueue;
import io.spraynic.datapath.api.Connection;
import io.spraynic.datapath.api.Region;
import io.spraynic.datapath.api.SendRequest;
import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.datapath.nic.EmbeddedNic;
import io.spraynic.datapath.nic.EmbeddedNicConfig;
import io.spraynic.datapath.nic.NicConnection;
import io.spraynic.datapath.nic.ipc.ClientConnection;
import io.spraynic.datapath.nic.ipc.ClientRegion;
import io.spraynic.datapath.nic.ipc.IpcConductor;
import io.spraynic.datapath.nic.ipc.NicClient;
import io.spraynic.datapath.port.InMemoryLink;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.HdrHistogram.Histogram;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * What posting from another process costs against posting in process, in one run: two embedded spray NICs joined by
 * an in-JVM link (the shipped {@code NicWorker} loop on each, no DPDK), NIC A served to other processes by an
 * {@link IpcConductor}. In alternating rounds, the same loop posts 64 B RDMA WRITEs from A to a region of B and
 * polls their completions, once through an {@link NicConnection} in this process and once through a
 * {@link ClientConnection} in a child JVM ({@link #main}) that reaches A only through the IPC directory: one write
 * at a time (post-to-completion latency, p10, p50 and p99) and then {@code depth} writes in flight for
 * {@code seconds}, in slices of 0.1 s alternating between the two placements (writes completed per second). The conductor idles as {@code spraynic nic} runs it (a backoff: it is on no
 * request's path, the workers read the clients' rings themselves).
 */
public final class IpcOverhead
{
    private static final int REGION_BYTES = 64 * 1024;
    private static final int ALL = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final long STALL_NANOS = 60_000_000_000L;
    private static final double SLICE_SECONDS = 0.1;

    /**
     * One placement's numbers: post-to-completion latency of a lone write (p10 too: on a host whose cores are
     * oversubscribed, what a write costs when no thread on its path was descheduled), and completed writes per second.
     */
    public record Measure(double p10Micros, double p50Micros, double p99Micros, double writesPerSecond)
    {
        public String toString()
        {
            return String.format(Locale.ROOT, "p10 %.2f us, p50 %.2f us, p99 %.2f us, %.4f M writes/s", p10Micros,
                p50Micros, p99Micros, writesPerSecond / 1e6);
        }
    }

    /** One round: in process, then across processes. */
    public record Round(Measure embedded, Measure ipc)
    {
        /** @return writes per second across processes ÷ in process. */
        public double rateRatio()
        {
            return ipc.writesPerSecond() / embedded.writesPerSecond();
        }

        /** @return extra p50 post-to-completion latency across processes, in µs. */
        public double extraP50Micros()
        {
            return ipc.p50Micros() - embedded.p50Micros();
        }

        public String toString()
        {
            return String.format(Locale.ROOT, "in process: %s; across processes: %s; rate ratio %.3f, extra p50 %.2f us",
                embedded, ipc, rateRatio(), extraP50Micros());
        }
    }

    /** Posts one signaled 64 B WRITE and polls its completion, whichever the placement. */
    private interface Writer
    {
        /** @return a {@link PostResult}. */
        int post(long wrId);

        /** @return true when a completion was taken (a failed one throws). */
        boolean poll();
    }

    private IpcOverhead()
    {
    }

    /**
     * @param idle       how both NICs' workers idle.
     * @param iterations lone writes timed per round (as many again warm up before the first round).
     * @param seconds    seconds of the rate measurement per round.
     * @param depth      writes in flight during the rate measurement.
     * @param progress   told each round as it completes.
     */
    public static List<Round> run(final Idle idle, final int iterations, final double seconds, final int depth,
        final int rounds, final Consumer<String> progress) throws Exception
    {
        final Path base = Files.createTempDirectory("spraynic-ipc-bench");
        final Path dir = base.resolve("ipc");
        final List<Round> results = new ArrayList<>();
        try (InMemoryLink link = new InMemoryLink("ipc-bench", 1024, 2048 + InMemoryLink.HEADROOM);
            CountersFile servedCounters = CountersFile.create(base, "served", 4096);
            CountersFile peerCounters = CountersFile.create(base, "peer", 4096);
            EmbeddedNic served = EmbeddedNic.start(config(idle, 0), new PacketPort[][]{{link.first()}}, servedCounters);
            EmbeddedNic peer = EmbeddedNic.start(config(idle, 1), new PacketPort[][]{{link.second()}}, peerCounters);
            IpcConductor conductor = IpcConductor.start(served, dir, servedCounters, IpcConductor.DEFAULT_CLIENT_TIMEOUT,
                IpcConductor.Limits.DEFAULT, IpcConductor.newIdleStrategy());
            Arena arena = Arena.ofShared())
        {
            final MemoryRegion target = peer.register(arena.allocate(REGION_BYTES, 4096), ALL);
            final MemoryRegion source = served.register(arena.allocate(REGION_BYTES, 4096), ALL);
            final NicConnection embedded = served.connect(new int[]{ip(1)}, WAIT);
            if (null == peer.accept(WAIT))
            {
                throw new IllegalStateException("the peer NIC accepted no in-process connection");
            }
            final Writer inProcess = writer(embedded, source, target.address(), target.rkey());
            final List<String> command = new ArrayList<>();
            command.add(ProcessHandle.current().info().command().orElse("java"));
            command.addAll(List.of("--enable-native-access=ALL-UNNAMED", "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED"));
            command.addAll(List.of("-cp", System.getProperty("java.class.path"), IpcOverhead.class.getName(), dir.toString(),
                Integer.toString(ip(1)), Long.toString(target.address()), Integer.toString(target.rkey()),
                Integer.toString(iterations), Double.toString(seconds), Integer.toString(depth)));
            final Process child = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
                OutputStream in = child.getOutputStream())
            {
                expect(out, "CONNECTED");
                if (null == peer.accept(WAIT))
                {
                    throw new IllegalStateException("the peer NIC accepted no connection from the client process");
                }
                latency(inProcess, iterations); // warm-up, as the child's at its start
                rate(inProcess, Math.min(1, seconds), depth);
                final int slices = Math.max(1, (int)Math.round(seconds / SLICE_SECONDS));
                final double slice = seconds / slices;
                for (int r = 0; r < rounds; r++)
                {
                    final double[] e = latency(inProcess, iterations);
                    final double[] c = parse(tell(in, out, "LAT", "LAT"));
                    // the rate in alternating slices, so that the host's drift falls on both placements alike
                    long embeddedWrites = 0;
                    long embeddedNanos = 0;
                    long clientWrites = 0;
                    long clientNanos = 0;
                    for (int i = 0; i < slices; i++)
                    {
                        final long[] mine = rate(inProcess, slice, depth);
                        embeddedWrites += mine[0];
                        embeddedNanos += mine[1];
                        final double[] theirs = parse(tell(in, out, "RATE " + slice, "RATE"));
                        clientWrites += (long)theirs[0];
                        clientNanos += (long)theirs[1];
                    }
                    final Round round = new Round(new Measure(e[0], e[1], e[2], embeddedWrites * 1e9 / embeddedNanos),
                        new Measure(c[0], c[1], c[2], clientWrites * 1e9 / clientNanos));
                    results.add(round);
                    progress.accept("round " + (r + 1) + ": " + round);
                }
                in.write("END\n".getBytes(StandardCharsets.UTF_8));
                in.flush();
                expect(out, "DONE");
            }
            finally
            {
                if (!child.waitFor(30, TimeUnit.SECONDS))
                {
                    child.destroyForcibly();
                }
            }
            embedded.close(Duration.ofSeconds(1));
            conductor.close();
            served.close(Duration.ofSeconds(1));
            peer.close(Duration.ofSeconds(1));
        }
        return results;
    }

    private static EmbeddedNicConfig config(final Idle idle, final int host)
    {
        return new EmbeddedNicConfig().workers(1).planes(1).connections(1, 1, 1024).bursts(32, 2048)
            .sprayConfig(EmbeddedNicConfig::sharedCoreSprayConfig).idleStrategy(idle::newStrategy)
            .local(0, ip(host), 0x02_00_00_00_00_01L + host);
    }

    private static int ip(final int host)
    {
        return 0x0A00_0001 + host;
    }

    /** The one writer of both placements: the application API's connection, region and completion queue. */
    private static Writer writer(final Connection c, final Region source, final long targetAddress, final int rkey)
    {
        final SendRequest request = new SendRequest();
        final WorkCompletion completion = new WorkCompletion();
        final CompletionQueue cq = c.sendCompletionQueue();
        return new Writer()
        {
            public int post(final long wrId)
            {
                return c.postSend(0, request.reset().wrId(wrId).opcode(WorkRequestOpcode.RDMA_WRITE)
                    .local(source, source.address() + (wrId & 1023) * 64, 64)
                    .remote(targetAddress + (wrId & 1023) * 64, rkey));
            }

            public boolean poll()
            {
                return cq.poll(completion) && succeeded(completion);
            }
        };
    }

    private static boolean succeeded(final WorkCompletion completion)
    {
        if (completion.status() != WorkCompletionStatus.SUCCESS)
        {
            throw new IllegalStateException("a write completed as " + completion);
        }
        return true;
    }

    /** The one post-and-poll loop of a lone write both placements run, timed: @return p10, p50, p99 in µs. */
    private static double[] latency(final Writer writer, final int iterations)
    {
        final Histogram latency = new Histogram(10_000_000_000L, 3);
        for (int i = 0; i < iterations; i++)
        {
            final long start = System.nanoTime();
            final long giveUp = start + STALL_NANOS;
            post(writer, i, giveUp);
            while (!writer.poll())
            {
                check(giveUp);
            }
            latency.recordValue(System.nanoTime() - start);
        }
        return new double[]{latency.getValueAtPercentile(10) / 1e3, latency.getValueAtPercentile(50) / 1e3,
            latency.getValueAtPercentile(99) / 1e3};
    }

    /** The loop of {@code depth} writes in flight both placements run: @return writes completed, and nanoseconds. */
    private static long[] rate(final Writer writer, final double seconds, final int depth)
    {
        long wrId = 0;
        long completed = 0;
        int inFlight = 0;
        final long start = System.nanoTime();
        final long end = start + (long)(seconds * 1e9);
        long now = start;
        long giveUp = start + STALL_NANOS;
        while (now < end || inFlight > 0)
        {
            while (inFlight < depth && now < end && writer.post(wrId) == PostResult.OK)
            {
                wrId++;
                inFlight++;
            }
            now = System.nanoTime();
            while (writer.poll())
            {
                inFlight--;
                completed++;
                giveUp = now + STALL_NANOS;
            }
            check(giveUp);
        }
        return new long[]{completed, now - start};
    }

    private static void post(final Writer writer, final long wrId, final long giveUp)
    {
        int result;
        while ((result = writer.post(wrId)) == PostResult.QUEUE_FULL)
        {
            check(giveUp);
        }
        if (result != PostResult.OK)
        {
            throw new IllegalStateException("a write was refused: " + PostResult.name(result));
        }
    }

    private static void check(final long giveUp)
    {
        if (System.nanoTime() > giveUp)
        {
            throw new IllegalStateException("no write completed for " + STALL_NANOS / 1_000_000_000L + " s");
        }
    }

    /** Sends the client process a line and @return the rest of its answer, which starts with {@code prefix}. */
    private static String tell(final OutputStream in, final BufferedReader out, final String line, final String prefix)
        throws IOException
    {
        in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
        return expect(out, prefix);
    }

    private static double[] parse(final String numbers)
    {
        final String[] f = numbers.trim().split(" ");
        final double[] values = new double[f.length];
        for (int i = 0; i < f.length; i++)
        {
            values[i] = Double.parseDouble(f[i]);
        }
        return values;
    }

    private static String expect(final BufferedReader out, final String prefix) throws IOException
    {
        final String line = out.readLine();
        if (null == line || !line.startsWith(prefix))
        {
            throw new IllegalStateException("expected " + prefix + " from the client process, it said: " + line);
        }
        return line.substring(prefix.length());
    }

    /**
     * The client process: {@code DIR PEER_IP TARGET_ADDRESS RKEY ITERATIONS SECONDS DEPTH}; connects to the NIC served
     * in DIR and to the peer through it, prints CONNECTED, warms up, then answers each LAT line with its latency
     * percentiles (LAT p10 p50 p99, µs) and each RATE line (RATE seconds) with RATE, writes completed and nanoseconds,
     * until END.
     */
    public static void main(final String[] args) throws Exception
    {
        final Path dir = Path.of(args[0]);
        final int peerIp = Integer.parseInt(args[1]);
        final long targetAddress = Long.parseLong(args[2]);
        final int rkey = Integer.parseInt(args[3]);
        final int iterations = Integer.parseInt(args[4]);
        final double seconds = Double.parseDouble(args[5]);
        final int depth = Integer.parseInt(args[6]);
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try (NicClient client = NicClient.connect(dir, WAIT))
        {
            final ClientRegion source = client.register(REGION_BYTES, ALL);
            final ClientConnection c = client.connect(new int[]{peerIp}, WAIT);
            System.out.println("CONNECTED");
            System.out.flush();
            final Writer writer = writer(c, source, targetAddress, rkey);
            latency(writer, iterations); // warm-up
            rate(writer, Math.min(1, seconds), depth);
            String line;
            while (null != (line = in.readLine()) && !line.equals("END"))
            {
                if (line.equals("LAT"))
                {
                    final double[] l = latency(writer, iterations);
                    System.out.println(String.format(Locale.ROOT, "LAT %.4f %.4f %.4f", l[0], l[1], l[2]));
                }
                else if (line.startsWith("RATE "))
                {
                    final long[] r = rate(writer, Double.parseDouble(line.substring(5)), depth);
                    System.out.println("RATE " + r[0] + " " + r[1]);
                }
                System.out.flush();
            }
            c.close(Duration.ofSeconds(1));
        }
        System.out.println("DONE");
        System.out.flush();
    }
}
