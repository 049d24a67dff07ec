package io.spraynic.bench.nic;

import io.spraynic.datapath.api.SeededPattern;
import io.spraynic.datapath.api.SendRequest;
import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.datapath.nic.DpdkNic;
import io.spraynic.datapath.nic.EmbeddedNic;
import io.spraynic.datapath.nic.EmbeddedNicConfig;
import io.spraynic.datapath.nic.NicConnection;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.pmd.EalConfig;
import io.spraynic.pmd.MempoolConfig;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PortConfig;
import org.agrona.concurrent.BusySpinIdleStrategy;

import java.lang.foreign.Arena;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * How the embedded NIC's goodput grows with its workers: two NICs in one process on a DPDK {@code net_ring}
 * pair with one queue per worker, one connection per worker (so each worker carries one), the application
 * thread keeping 8 writes of 64 KiB in flight on each, for a fixed time after a warm-up. Each worker count
 * runs in a fresh JVM (one EAL per process). On a machine with C cores, 2 x workers poll threads plus the
 * application share them: the numbers only show scaling where cores are not the limit.
 */
public final class WorkerScaling
{
    private static final int MESSAGE = 64 * 1024;
    private static final int IN_FLIGHT = 32;

    /** One measurement. */
    public record Result(String mode, int workers, double seconds, long bytes, double goodputGbps, double mpps)
    {
        String toLine()
        {
            return String.format(Locale.ROOT, "%s %d %.6f %d %.6f %.6f", mode, workers, seconds, bytes, goodputGbps, mpps);
        }

        static Result parse(final String line)
        {
            final String[] f = line.trim().split(" ");
            return new Result(f[0], Integer.parseInt(f[1]), Double.parseDouble(f[2]), Long.parseLong(f[3]),
                Double.parseDouble(f[4]), Double.parseDouble(f[5]));
        }
    }

    private WorkerScaling()
    {
    }

    /**
     * Runs one measurement in a child JVM with the same classpath and JVM options.
     */
    public static Result measureInChild(final String mode, final int workers, final double seconds) throws Exception
    {
        final List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElse("java"));
        command.addAll(List.of("--enable-native-access=ALL-UNNAMED", "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED"));
        command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
            .filter(argument -> argument.startsWith("-Dspraynic")).toList());
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), WorkerScaling.class.getName(), mode,
            Integer.toString(workers), Double.toString(seconds)));
        final Process child = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        final String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (!child.waitFor((long)seconds * 2 + 60, TimeUnit.SECONDS) || child.exitValue() != 0)
        {
            child.destroyForcibly();
            throw new IllegalStateException("worker scaling run (" + mode + ", " + workers + " workers) failed: " + output);
        }
        return Result.parse(output.lines().reduce((first, second) -> second).orElseThrow());
    }

    /**
     * Child process: args {@code spray|rocev2 workers seconds}; prints the result on its last line.
     */
    public static void main(final String[] args) throws Exception
    {
        final int workers = Integer.parseInt(args[1]);
        final double seconds = Double.parseDouble(args[2]);
        if (args[0].equalsIgnoreCase("receive"))
        {
            System.out.println(receive(workers, seconds).toLine());
            return;
        }
        final NicConnection.Kind mode = NicConnection.Kind.valueOf(args[0].toUpperCase(Locale.ROOT));
        System.out.println(run(mode, workers, seconds).toLine());
    }

    /**
     * One embedded NIC (spray) alone on {@code net_null}, whose queues hand out zero-filled frames for free:
     * each worker receives bursts, parses every frame (it is not a RoCE packet: counted as such) and frees
     * them, so the rate is the workers' receive loop (bursts, parse, steering decision, counters) with
     * nothing else competing for the cores; read from the workers' own counters after a warm-up.
     */
    static Result receive(final int workers, final double seconds) throws Exception
    {
        final NicConfig config = io.spraynic.pmd.PmdConfigs.load("net_null", java.util.Map.of("queues",
            Integer.toString(workers), "file_prefix", "spraynic-workers-rx-" + ProcessHandle.current().pid()));
        final Path directory = Files.createTempDirectory("spraynic-workers-rx");
        try (CountersFile counters = CountersFile.create(directory, "rx", 8192))
        {
            final java.util.function.Supplier<org.agrona.concurrent.IdleStrategy> idle =
                workers <= Runtime.getRuntime().availableProcessors() ? BusySpinIdleStrategy::new :
                org.agrona.concurrent.BackoffIdleStrategy::new;
            final EmbeddedNic nic = EmbeddedNic.startOnDpdk(config.withEal(config.eal().withLogLevels(List.of("lib.eal:warning"))),
                new EmbeddedNicConfig().workers(workers).planes(1).local(0, 0x0A00_0001, 0).idleStrategy(idle), counters,
                port -> port);
            try
            {
                Thread.sleep((long)(seconds * 250)); // warm-up
                final long before = rxFrames(counters);
                final long start = System.nanoTime();
                Thread.sleep((long)(seconds * 1000));
                final long frames = rxFrames(counters) - before;
                final double elapsed = (System.nanoTime() - start) / 1e9;
                return new Result("receive", workers, elapsed, frames * 64, frames * 64 * 8 / elapsed / 1e9,
                    frames / elapsed / 1e6);
            }
            finally
            {
                nic.close(Duration.ofSeconds(1));
            }
        }
    }

    private static long rxFrames(final CountersFile counters)
    {
        final long[] sum = new long[1];
        counters.counters().forEach((value, id, label) ->
        {
            if (label.startsWith("worker ") && label.endsWith(": rx frames"))
            {
                sum[0] += value;
            }
        });
        return sum[0];
    }

    static Result run(final NicConnection.Kind mode, final int workers, final double seconds) throws Exception
    {
        // busy-spinning poll threads only pay where each has a core; here 2 x workers of them plus the application
        // may share fewer, so they back off when idle
        final java.util.function.Supplier<org.agrona.concurrent.IdleStrategy> idle =
            workers * 2 + 1 <= Runtime.getRuntime().availableProcessors() ? BusySpinIdleStrategy::new :
            org.agrona.concurrent.BackoffIdleStrategy::new;
        final NicConfig config = NicConfig.of(EalConfig.DEFAULT.withFilePrefix("spraynic-workers-" + ProcessHandle.current().pid())
            .withLogLevels(List.of("lib.eal:warning")), MempoolConfig.DEFAULT.withMbufs(65535), List.of(
            PortConfig.ringPair("a", "b").withQueues(workers, workers).withDescriptors(1024, 1024),
            PortConfig.ringPair("b", "a").withQueues(workers, workers).withDescriptors(1024, 1024)));
        final Path directory = Files.createTempDirectory("spraynic-workers");
        try (DpdkNic dpdk = DpdkNic.start(config);
            CountersFile countersA = CountersFile.create(directory, "a", 8192);
            CountersFile countersB = CountersFile.create(directory, "b", 8192);
            Arena arena = Arena.ofShared())
        {
            final EmbeddedNic[] nics = new EmbeddedNic[2];
            final CountersFile[] counters = {countersA, countersB};
            for (int h = 0; h < 2; h++)
            {
                final PacketPort[][] ports = new PacketPort[workers][1];
                for (int w = 0; w < workers; w++)
                {
                    ports[w][0] = dpdk.packetPort(h == 0 ? "a" : "b", w);
                }
                nics[h] = EmbeddedNic.start(new EmbeddedNicConfig().mode(mode).workers(workers).planes(1)
                    .local(0, 0x0A00_0001 + h, 0x02_00_00_00_00_01L + h).connections(8, 4, 1024).bursts(32, 2048 - 128)
                    .sprayConfig(EmbeddedNicConfig::sharedCoreSprayConfig).idleStrategy(idle),
                    ports, counters[h]);
            }
            try
            {
                final NicConnection[] senders = connect(nics, mode, workers);
                final long regionBytes = (long)MESSAGE * IN_FLIGHT;
                final MemoryRegion source = nics[0].register(SeededPattern.allocate(arena, regionBytes, 1), AccessFlags.NONE);
                final MemoryRegion target = nics[1].register(arena.allocate(regionBytes, 64),
                    AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
                pump(senders, source, target, 1.0); // warm-up: JIT, windows, rates
                final long start = System.nanoTime();
                final long bytes = pump(senders, source, target, seconds);
                final double elapsed = (System.nanoTime() - start) / 1e9;
                if (Boolean.getBoolean("spraynic.debug"))
                {
                    nics[0].counters().counters().forEach((value, id, label) ->
                    {
                        if (value != 0 && label.startsWith("conn") && !label.contains(" path "))
                        {
                            System.err.println(label + " = " + value);
                        }
                    });
                }
                final int mtu = 1024;
                return new Result(mode.name().toLowerCase(Locale.ROOT), workers, elapsed, bytes, bytes * 8 / elapsed / 1e9,
                    (double)((bytes + mtu - 1) / mtu) / elapsed / 1e6);
            }
            finally
            {
                nics[0].close(Duration.ofSeconds(1));
                nics[1].close(Duration.ofSeconds(1));
            }
        }
    }

    private static NicConnection[] connect(final EmbeddedNic[] nics, final NicConnection.Kind mode, final int workers)
    {
        final Duration timeout = Duration.ofSeconds(10);
        final NicConnection[] senders = new NicConnection[workers];
        for (int i = 0; i < workers; i++)
        {
            if (mode == NicConnection.Kind.SPRAY)
            {
                senders[i] = nics[0].connect(new int[]{nics[1].localIpv4(0)}, timeout);
                nics[1].accept(timeout);
            }
            else
            {
                senders[i] = nics[0].createQueuePair(0);
                final NicConnection receiver = nics[1].createQueuePair(0);
                senders[i].connect(receiver.rocevEndpoint(), timeout);
                receiver.connect(senders[i].rocevEndpoint(), timeout);
            }
        }
        return senders;
    }

    /** Keeps IN_FLIGHT writes in flight on every connection for a while; returns the bytes completed. */
    private static long pump(final NicConnection[] senders, final MemoryRegion source, final MemoryRegion target,
        final double seconds)
    {
        final SendRequest request = new SendRequest();
        final WorkCompletion completion = new WorkCompletion();
        final int[] inFlight = new int[senders.length];
        final long[] nextSlot = new long[senders.length];
        final long end = System.nanoTime() + (long)(seconds * 1e9);
        long bytes = 0;
        boolean stopping = false;
        while (true)
        {
            stopping |= System.nanoTime() >= end;
            int pending = 0;
            for (int i = 0; i < senders.length; i++)
            {
                final NicConnection c = senders[i];
                while (!stopping && inFlight[i] < IN_FLIGHT)
                {
                    final long offset = (nextSlot[i] % IN_FLIGHT) * MESSAGE;
                    request.reset().wrId(nextSlot[i]).opcode(WorkRequestOpcode.RDMA_WRITE)
                        .local(source, source.address() + offset, MESSAGE).remote(target.address() + offset, target.rkey())
                        .signaled(true);
                    if (c.postSend((int)(nextSlot[i] % c.streams()), request) != PostResult.OK)
                    {
                        break;
                    }
                    nextSlot[i]++;
                    inFlight[i]++;
                }
                while (c.sendCompletionQueue().poll(completion))
                {
                    if (completion.status() != WorkCompletionStatus.SUCCESS)
                    {
                        throw new IllegalStateException("write failed: " + completion);
                    }
                    inFlight[i]--;
                    bytes += MESSAGE;
                }
                pending += inFlight[i];
            }
            if (stopping && pending == 0)
            {
                return bytes;
            }
            Thread.onSpinWait();
        }
    }
}
