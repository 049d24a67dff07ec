package io.spraynic.cli;

import io.spraynic.bench.e2e.Idle;
import io.spraynic.bench.e2e.LatencyComparison;
import io.spraynic.bench.e2e.RingNic;
import io.spraynic.datapath.transport.rocev2.PathMtu;
import io.spraynic.pmd.HugepageMode;
import io.spraynic.bench.e2e.ThroughputResult;
import io.spraynic.bench.e2e.TransportPair;
import io.spraynic.bench.e2e.UdpBaseline;
import io.spraynic.bench.nic.ConnectionScale;
import io.spraynic.bench.nic.WorkerScaling;
import io.spraynic.bench.raw.RawLoop;
import io.spraynic.bench.raw.RawLoopComparison;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * {@code spraynic bench}: datapath benchmarks that are commands (the JMH suites live in
 * {@code benchmarks/}).
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
    description = "Datapath benchmarks.",
    subcommands = {BenchCommand.Raw.class, BenchCommand.Nic.class, BenchCommand.Workers.class, BenchCommand.Latency.class,
        BenchCommand.Throughput.class, BenchCommand.Capture.class, BenchCommand.Ipc.class,
        BenchCommand.Connections.class})
final class BenchCommand implements Runnable
{
    public void run()
    {
        throw new IllegalArgumentException("name a benchmark: spraynic bench raw --help");
    }

    /** What every bench command takes: {@code --json}, which replaces the lines it prints with one object. */
    abstract static class Common implements Callable<Integer>
    {
        @Option(names = "--json", description = "Print one JSON object.")
        boolean json;

        /** Prints a line of progress or results, unless the JSON object alone was asked for. */
        void log(final String line)
        {
            if (!json)
            {
                System.out.println(line);
            }
        }

        /** Prints, with --json, the object {@code {FIELDS,"cores":N,"points":[POINTS]}} (FIELDS may be empty). */
        void printPoints(final String fields, final List<String> points)
        {
            if (json)
            {
                System.out.println("{" + (fields.isEmpty() ? "" : fields + ",") + "\"cores\":" +
                    Runtime.getRuntime().availableProcessors() + ",\"points\":[" + String.join(",", points) + "]}");
            }
        }
    }

    /** The end-to-end transport benchmarks' options: which transports, and how their poll threads idle. */
    abstract static class TransportCommon extends Common
    {
        @Option(names = "--transport", defaultValue = "both", description = "spray, rocev2 or both (default ${DEFAULT-VALUE}).")
        String transport;

        @Option(names = "--idle", defaultValue = "spin",
            description = "What an idle transport poll thread does: spin or yield (default ${DEFAULT-VALUE}).")
        String idle;

        List<TransportPair.Kind> kinds()
        {
            return "both".equalsIgnoreCase(transport) ? List.of(TransportPair.Kind.SPRAY, TransportPair.Kind.ROCEV2) :
                List.of(TransportPair.Kind.parse(transport));
        }

        Idle idleStrategy()
        {
            return Idle.parse(idle);
        }
    }

    @Command(name = "raw", mixinStandardHelpOptions = true,
        description = {
            "The raw RX/TX loop on one core through the C shim, 64 B frames in bursts of 32 by default.",
            "With --with-c, the same loop in C runs in the same invocation, alternating with the Java one, and the " +
            "Java / C ratio is printed: by default each run in a process of its own (spraynic-rawloop); with " +
            "--same-process both in one process (the C loop loaded from libspraynic_rawloop.so) on one port, pool " +
            "and set of mbufs, in slices of --seconds."})
    static final class Raw extends Common
    {
        @Option(names = "--pmd", defaultValue = "net_null", description = "net_null or net_ring (default ${DEFAULT-VALUE}).")
        String pmd;

        @Option(names = "--mode", defaultValue = "tx", description = "rx, tx, io or txrx (io forwarding with one transmit-and-receive call per burst; default ${DEFAULT-VALUE}).")
        String mode;

        @Option(names = "--touch", defaultValue = "length",
            description = "length (rx, io and txrx read every frame's length, tx sets it) or none (no mbuf is read or " +
                "written, as DPDK testpmd's io forwarding; default ${DEFAULT-VALUE}).")
        String touch;

        @Option(names = "--seconds", defaultValue = "5", description = "Measured seconds per run (default ${DEFAULT-VALUE}).")
        double seconds;

        @Option(names = "--burst", defaultValue = "32", description = "Burst size (default ${DEFAULT-VALUE}).")
        int burst;

        @Option(names = "--length", defaultValue = "64", description = "Frame length in bytes (default ${DEFAULT-VALUE}).")
        int length;

        @Option(names = "--with-c", description = "Also run the C loop and print the Java / C ratio.")
        boolean withC;

        @Option(names = "--rounds", defaultValue = "3", description = "With --with-c: alternating rounds (default ${DEFAULT-VALUE}).")
        int rounds;

        @Option(names = "--same-process", description = "With --with-c: run the C loop in the Java loop's process.")
        boolean sameProcess;

        @Option(names = "--processes", defaultValue = "3",
            description = "With --same-process: processes of --rounds rounds each, pooled, since each compiles its own " +
                "Java loop (default ${DEFAULT-VALUE}).")
        int processes;

        public Integer call() throws Exception
        {
            final RawLoop.Pmd parsedPmd = RawLoop.Pmd.parse(pmd);
            final RawLoop.Mode parsedMode = RawLoop.Mode.parse(mode);
            final RawLoop.Touch parsedTouch = RawLoop.Touch.parse(touch);
            if (sameProcess && !withC)
            {
                throw new IllegalArgumentException("--same-process places the C loop: add --with-c");
            }
            BadOption.atLeast("--rounds", rounds, 1);
            BadOption.atLeast("--processes", processes, 1);
            BadOption.range("--seconds", seconds, 0.001, 86_400, 5);
            BadOption.range("--burst", burst, 1, 512);
            BadOption.range("--length", length, 60, 2048);
            if (!withC)
            {
                final RawLoop.Result result = RawLoop.run(parsedPmd, parsedMode, parsedTouch, seconds, burst, length);
                System.out.println(json ? RawLoop.toJson(result) : String.format(Locale.ROOT,
                    "java %s %s, touch %s: %d packets in %.2f s = %.2f Mpps, %.2f per CPU second (burst %d, %d B)",
                    result.pmd(), result.mode(), result.touch(), result.packets(), result.seconds(), result.mpps(),
                    result.cpuMpps(), burst, length));
                return 0;
            }
            final RawLoopComparison.Summary summary = RawLoopComparison.run(
                parsedPmd, parsedMode, parsedTouch,
                sameProcess ? RawLoopComparison.Placement.SAME_PROCESS : RawLoopComparison.Placement.PROCESSES,
                seconds, burst, length, rounds, sameProcess ? processes : 1, this::log);
            System.out.println(json ? summary.toJson() : summary.toText());
            return 0;
        }
    }

    @Command(name = "nic", mixinStandardHelpOptions = true,
        description = {
            "The NIC runtime's receive side on net_null: one poll thread per RX queue, each parsing, classifying " +
            "and counting every frame; prints Mpps for 1..N queues, measured in one invocation from the counters."})
    static final class Nic extends Common
    {
        @Option(names = "--queues", defaultValue = "2", description = "Largest queue count measured (default ${DEFAULT-VALUE}).")
        int queues;

        @Option(names = "--seconds", defaultValue = "3", description = "Measured seconds per queue count (default ${DEFAULT-VALUE}).")
        double seconds;

        public Integer call() throws Exception
        {
            BadOption.range("--queues", queues, 1, 16);
            BadOption.range("--seconds", seconds, 0.001, 86_400, 3);
            final List<String> points = new ArrayList<>();
            for (int q = 1; q <= queues; q++)
            {
                // EAL starts once per process: each queue count runs in a process of its own.
                final double mpps = NicScaling.measureInChild(q, seconds);
                points.add(String.format(Locale.ROOT, "{\"queues\":%d,\"mpps\":%.3f}", q, mpps));
                log(String.format(Locale.ROOT, "net_null, %d RX queue(s) / poll thread(s): %.2f Mpps classified", q, mpps));
            }
            printPoints("\"pmd\":\"net_null\"", points);
            return 0;
        }
    }

    @Command(name = "workers", mixinStandardHelpOptions = true,
        description = {
            "The embedded NIC's goodput by worker count: two NICs on a net_ring pair with one queue per worker, " +
            "one connection per worker, 8 writes of 64 KiB in flight on each; each point in a process of its own."})
    static final class Workers extends Common
    {
        @Option(names = "--workers", defaultValue = "2", description = "Largest worker count measured (default ${DEFAULT-VALUE}).")
        int workers;

        @Option(names = "--mode", defaultValue = "spray", description = {
            "spray or rocev2: two NICs writing to each other over net_ring (default ${DEFAULT-VALUE});",
            "receive: one NIC alone on net_null, its workers' receive loop (frames parsed per second)."})
        String mode;

        @Option(names = "--seconds", defaultValue = "3", description = "Measured seconds per point (default ${DEFAULT-VALUE}).")
        double seconds;

        public Integer call() throws Exception
        {
            BadOption.range("--workers", workers, 1, 16);
            BadOption.range("--seconds", seconds, 0.001, 86_400, 3);
            if (!(mode.equals("spray") || mode.equals("rocev2") || mode.equals("receive")))
            {
                throw new BadOption("--mode", mode, "must be spray, rocev2 or receive", "try --mode spray");
            }
            final List<String> points = new ArrayList<>();
            for (int w = 1; w <= workers; w++)
            {
                final WorkerScaling.Result r = WorkerScaling.measureInChild(mode, w, seconds);
                points.add(String.format(Locale.ROOT,
                    "{\"workers\":%d,\"goodputGbps\":%.4f,\"mpps\":%.4f,\"bytes\":%d,\"seconds\":%.3f}",
                    w, r.goodputGbps(), r.mpps(), r.bytes(), r.seconds()));
                log(String.format(Locale.ROOT, mode.equals("receive") ? "receive on net_null, %2$d worker(s): %4$.2f Mpps" :
                    "%s, %d worker(s) per NIC: %.3f Gb/s, %.3f Mpps of 1 KiB packets", mode, w, r.goodputGbps(), r.mpps()));
            }
            printPoints("\"mode\":\"" + mode + "\"", points);
            return 0;
        }
    }

    @Command(name = "capture", mixinStandardHelpOptions = true,
        description = {
            "What a live capture of every frame costs the workers, in alternating rounds in one process: their " +
            "throughput per second of their own CPU time without a capture and while one takes every frame (the shipped " +
            "tap and ring, emptied by a drainer thread as spraynic capture would), and the ratio, capturing / off.",
            "--workload receive (the worst case: the cheapest loop, one embedded NIC alone on net_null receiving, " +
            "parsing and counting frames of --size bytes); spray or rocev2 (the workload that ships: bench throughput " +
            "--threads 1's transfer over a crossed net_ring pair, RDMA WRITEs of --size bytes, every frame of both " +
            "endpoints and directions captured; messages per worker CPU second). Also the capture's cost: ns of the " +
            "poll thread's CPU per frame captured (capturing - off), and for spray and rocev2 both without the poll " +
            "thread's empty loops (its idle spin, at what an empty loop costs it once the transfer drained). Exit 1 if " +
            "a transfer did not verify or a capture of every frame missed one."})
    static final class Capture extends Common
    {
        @Option(names = "--workload", defaultValue = "receive", description = {
            "receive, spray or rocev2 (default ${DEFAULT-VALUE}); each is measured by its own run: the goal holds only " +
            "if it holds on each."})
        String workload;

        @Option(names = "--workers", defaultValue = "1", description = "Workers, --workload receive only (default ${DEFAULT-VALUE}).")
        int workers;

        @Option(names = "--size", defaultValue = "64", description = {
            "Bytes per frame net_null hands out (receive: 60..9000), or per RDMA WRITE (spray, rocev2: 1..1048576)",
            "(default ${DEFAULT-VALUE})."})
        int size;

        @Option(names = "--seconds", defaultValue = "2", description = "Measured seconds per phase (default ${DEFAULT-VALUE}).")
        double seconds;

        @Option(names = "--rounds", defaultValue = "3", description = "Rounds of off, then capturing (default ${DEFAULT-VALUE}).")
        int rounds;

        @Option(names = "--snaplen", defaultValue = "4096", description = "Bytes the capture keeps of each frame, 64..9216 (default ${DEFAULT-VALUE}).")
        int snapLength;

        @Option(names = "--sample", defaultValue = "1", paramLabel = "N", description = {
            "The capture takes one frame in N of those the filter takes, as spraynic capture --sample (default " +
            "${DEFAULT-VALUE}: every frame)."})
        int sample;

        @Option(names = "--ring-size", paramLabel = "BYTES", converter = SizeConverter.class, defaultValue = "" + io.spraynic.bench.nic.CaptureOverhead.DEFAULT_RING_BYTES,
            description = {"Bytes of records of each worker's capture ring, as spraynic capture --ring-size (default " +
            "${DEFAULT-VALUE}: 4,096 whole frames of 4,096 B, whatever --snaplen; 4,096 frames of a longer one)."})
        long ringSize;

        @picocli.CommandLine.Spec
        picocli.CommandLine.Model.CommandSpec spec;

        @Option(names = "--no-drain", description = "A capture client that never drains: every frame finds the ring full.")
        boolean noDrain;

        @Option(names = "--filter", defaultValue = "", paramLabel = "EXPR", description = {
            "Which frames the capture takes, as spraynic capture --filter (default: every frame); 'tx' takes none of " +
            "the received frames: the client polls as ever, the workers copy nothing."})
        String filter;

        public Integer call() throws Exception
        {
            final boolean receive = "receive".equals(workload);
            if (!receive && !"spray".equals(workload) && !"rocev2".equals(workload))
            {
                throw new BadOption("--workload", workload, "must be receive, spray or rocev2", "try --workload spray");
            }
            BadOption.range("--workers", workers, 1, 16);
            if (!receive && workers != 1)
            {
                throw new BadOption("--workers", Integer.toString(workers), "must be 1 with --workload " + workload +
                    " (one worker thread carries both endpoints, as bench throughput --threads 1)", "try --workers 1");
            }
            if (receive)
            {
                BadOption.range("--size", size, 60, 9000);
            }
            else
            {
                BadOption.range("--size", size, 1, 1 << 20);
            }
            BadOption.range("--rounds", rounds, 1, 100);
            BadOption.range("--snaplen", snapLength, io.spraynic.datapath.capture.CaptureRingLayout.MIN_SNAP_LENGTH,
                io.spraynic.datapath.capture.CaptureRingLayout.MAX_SNAP_LENGTH);
            BadOption.range("--sample", sample, io.spraynic.datapath.capture.CaptureRingLayout.MIN_SAMPLE,
                io.spraynic.datapath.capture.CaptureRingLayout.MAX_SAMPLE);
            BadOption.range("--seconds", seconds, 0.001, 86_400, 2);
            if (!GivenOptions.given(spec, "--ring-size"))
            {
                ringSize = io.spraynic.bench.nic.CaptureOverhead.defaultRingBytes(snapLength);
            }
            final String ring = io.spraynic.datapath.capture.CaptureRingLayout.ringBytesProblem(receive ? workers : 2,
                ringSize, snapLength, sample);
            if (null != ring)
            {
                final int rings = receive ? workers : 2;
                throw new BadOption("--ring-size", Long.toString(ringSize), ring, "try --ring-size " + (Math.clamp(ringSize,
                    io.spraynic.datapath.capture.CaptureRingLayout.minRingBytes(snapLength),
                    io.spraynic.datapath.capture.CaptureRingLayout.maxRingBytes(rings)) & -16L));
            }
            final io.spraynic.datapath.capture.CaptureFilter parsedFilter;
            try
            {
                parsedFilter = io.spraynic.datapath.capture.CaptureFilter.parse(filter);
            }
            catch (final IllegalArgumentException ex)
            {
                throw new BadOption("--filter", filter, ex.getMessage(), "try --filter rx");
            }
            return receive ? receive(parsedFilter) : transport(parsedFilter);
        }

        private int receive(final io.spraynic.datapath.capture.CaptureFilter parsedFilter) throws Exception
        {
            final List<String> points = new ArrayList<>();
            final List<Double> ratios = new ArrayList<>();
            final List<Double> perFrame = new ArrayList<>();
            for (final io.spraynic.bench.nic.CaptureOverhead.Round r :
                io.spraynic.bench.nic.CaptureOverhead.run(workers, size, snapLength, sample, ringSize, seconds, rounds, !noDrain,
                    parsedFilter))
            {
                log("capture on net_null, " + workers + " worker(s), " + size + " B frames" + sampling() + ": " + r);
                ratios.add(r.ratio());
                perFrame.add(r.nanosPerCapturedFrame());
                points.add(String.format(Locale.ROOT, "{\"offMpps\":%.4f,\"offCpuMpps\":%.4f,\"onMpps\":%.4f," +
                    "\"onCpuMpps\":%.4f,\"ratio\":%.4f,\"captured\":%d,\"dropped\":%d,\"sampledOut\":%d,\"offFrames\":%d," +
                    "\"offCpuNanos\":%d," +
                    "\"onFrames\":%d,\"onCpuNanos\":%d,\"capturedInWindow\":%d,\"emptyLoopsOff\":%d,\"emptyLoopsOn\":%d," +
                    "\"nsPerFrameOff\":%s,\"nsPerCapturedFrame\":%s}", r.off().mpps(), r.off().cpuMpps(), r.on().mpps(),
                    r.on().cpuMpps(), r.ratio(), r.captured(), r.dropped(), r.sampledOut(), r.off().frames(), r.off().cpuNanos(),
                    r.on().frames(), r.on().cpuNanos(), r.on().captured(), r.off().emptyLoops(), r.on().emptyLoops(),
                    json(r.nanosPerFrameOff()), json(r.nanosPerCapturedFrame())));
            }
            final double median = median(ratios);
            log(verdict(median) + perFrameVerdict(median(perFrame)));
            printPoints(String.format(Locale.ROOT, "\"workload\":\"receive\",\"workers\":%d,\"size\":%d,\"sample\":%d," +
                "\"snapLength\":%d,\"ringBytes\":%d,\"drain\":%b,\"medianRatio\":%.4f,\"medianNsPerCapturedFrame\":%s", workers,
                size, sample, snapLength, ringSize, !noDrain, median,
                json(median(perFrame))), points);
            return 0;
        }

        private int transport(final io.spraynic.datapath.capture.CaptureFilter parsedFilter)
        {
            final TransportPair.Kind kind = TransportPair.Kind.parse(workload);
            final List<io.spraynic.bench.nic.TransportCaptureOverhead.Round> results;
            try (var nic = RingNic.start(HugepageMode.OFF))
            {
                results = io.spraynic.bench.nic.TransportCaptureOverhead.run(nic, kind, size, snapLength, sample, ringSize,
                    Math.min(1, seconds / 2), seconds, rounds, !noDrain, parsedFilter,
                    line -> log("capture on " + workload + " over net_ring, " + size + " B writes" + sampling() + ": " + line));
            }
            final List<String> points = new ArrayList<>();
            final List<Double> ratios = new ArrayList<>();
            final List<Double> busyRatios = new ArrayList<>();
            final List<Double> perFrame = new ArrayList<>();
            boolean ok = true;
            for (final io.spraynic.bench.nic.TransportCaptureOverhead.Round r : results)
            {
                ratios.add(r.ratio());
                busyRatios.add(r.busyRatio());
                perFrame.add(r.nanosPerCapturedFrame());
                ok &= r.off().verified() && r.on().verified() && (!r.everyFrame() || r.complete());
                points.add(String.format(Locale.ROOT, "{\"offMessagesPerCpuSecond\":%.1f,\"offMpps\":%.4f," +
                    "\"onMessagesPerCpuSecond\":%.1f,\"onMpps\":%.4f,\"ratio\":%.4f,\"captured\":%d,\"dropped\":%d," +
                    "\"sampledOut\":%d," +
                    "\"drained\":%d,\"portFrames\":%d,\"complete\":%b,\"verified\":%b,\"offMessages\":%d," +
                    "\"offCpuNanos\":%d,\"offEmptyLoops\":%d,\"offEmptyLoopNanos\":%s,\"offBusyCpuNanos\":%s," +
                    "\"onMessages\":%d,\"onCpuNanos\":%d,\"onEmptyLoops\":%d,\"onEmptyLoopNanos\":%s,\"onBusyCpuNanos\":%s," +
                    "\"capturedInWindow\":%d,\"busyRatio\":%s,\"nsPerMessageOff\":%s,\"nsPerCapturedFrame\":%s}",
                    io.spraynic.bench.nic.TransportCaptureOverhead.messagesPerCpuSecond(r.off()), r.off().mpps(),
                    io.spraynic.bench.nic.TransportCaptureOverhead.messagesPerCpuSecond(r.on()), r.on().mpps(), r.ratio(),
                    r.captured(), r.dropped(), r.sampledOut(), r.drained(), r.portFrames(), r.complete(), r.off().verified() &&
                    r.on().verified(), r.off().messages(), r.off().cpuNanos(), r.offWindow().emptyLoops(),
                    json(r.offWindow().emptyLoopNanos()), json(r.busyOffNanos()), r.on().messages(), r.on().cpuNanos(),
                    r.onWindow().emptyLoops(), json(r.onWindow().emptyLoopNanos()), json(r.busyOnNanos()),
                    r.onWindow().captured(), json(r.busyRatio()), json(r.nanosPerMessageOff()),
                    json(r.nanosPerCapturedFrame())));
            }
            final double median = median(ratios);
            log(ok ? verdict(median) + String.format(Locale.ROOT, "; without the poll thread's empty loops %.3f",
                median(busyRatios)) + perFrameVerdict(median(perFrame)) : "workload " + workload + ": a transfer did " +
                "not verify or the capture missed a frame (NOT ALL CAPTURED above): no ratio to judge");
            printPoints(String.format(Locale.ROOT, "\"workload\":\"%s\",\"size\":%d,\"sample\":%d,\"snapLength\":%d," +
                "\"ringBytes\":%d,\"drain\":%b,\"medianRatio\":%.4f,\"medianBusyRatio\":%s,\"medianNsPerCapturedFrame\":%s",
                workload, size, sample, snapLength, ringSize, !noDrain, median,
                json(median(busyRatios)), json(median(perFrame))), points);
            return ok ? 0 : 1;
        }

        private String sampling()
        {
            return (sample == 1 ? "" : ", sampling 1 frame in " + sample) + ", snap length " + snapLength + " B, rings of " +
                ringSize + " B";
        }

        private static String perFrameVerdict(final double nanos)
        {
            return Double.isNaN(nanos) ? "; the capture's cost per frame: not measurable in any round" : String.format(
                Locale.ROOT, "; the capture's median cost: %.1f ns of the poll thread's busy CPU per frame captured", nanos);
        }

        /** @return a busy CPU time as a JSON number, null when it is unknown (negative). */
        private static String json(final long busyNanos)
        {
            return busyNanos < 0 ? "null" : Long.toString(busyNanos);
        }

        /** @return {@code value} as a JSON number, null when it is not one (NaN: nothing to divide by). */
        private static String json(final double value)
        {
            return Double.isFinite(value) ? String.format(Locale.ROOT, "%.4f", value) : "null";
        }

        private String verdict(final double median)
        {
            return String.format(Locale.ROOT, "workload %s: median ratio (throughput per worker CPU second, capturing / " +
                "off): %.3f, goal >= 0.8 %s on this workload; each workload is its own run (--workload receive, spray, " +
                "rocev2)", workload, median, median >= 0.8 ? "met" : "NOT met");
        }

        /** @return the median of the values that are numbers (a cost not measurable in a round is NaN); NaN for none. */
        private static double median(final List<Double> values)
        {
            final List<Double> sorted = new ArrayList<>();
            for (final Double value : values)
            {
                if (!value.isNaN())
                {
                    sorted.add(value);
                }
            }
            sorted.sort(null);
            return sorted.isEmpty() ? Double.NaN : sorted.get(sorted.size() / 2);
        }
    }

    @Command(name = "latency", mixinStandardHelpOptions = true,
        description = {
            "64 B RDMA WRITE-with-immediate ping-pong over a crossed net_ring pair, one busy-spinning poll thread per " +
            "endpoint, through the spray and RoCEv2 transports; beside them, in the same invocation, the raw-frame " +
            "ping-pong in Java and in C (spraynic-pingpong) through the same shim. Prints p50 / p99 / p99.9 round " +
            "trips (HdrHistogram) as medians over alternating rounds, and raw Java / C (raw ping-pongs always spin)."})
    static final class Latency extends TransportCommon
    {
        @Option(names = "--length", defaultValue = "64", description = "Bytes per WRITE and raw frame (default ${DEFAULT-VALUE}).")
        int length;

        @Option(names = "--iterations", defaultValue = "100000", description = "Round trips measured per run (default ${DEFAULT-VALUE}).")
        int iterations;

        @Option(names = "--warmup", defaultValue = "20000", description = "Round trips before measuring (default ${DEFAULT-VALUE}).")
        int warmup;

        @Option(names = "--rounds", defaultValue = "3", description = "Alternating rounds (default ${DEFAULT-VALUE}).")
        int rounds;

        @Option(names = "--no-raw", description = "Skip the raw-frame ping-pongs (Java and C).")
        boolean noRaw;

        @Option(names = "--no-c", description = "Skip the C raw-frame ping-pong.")
        boolean noC;

        public Integer call() throws Exception
        {
            BadOption.range("--length", length, 8, TransportPair.MTU);
            BadOption.atLeast("--iterations", iterations, 1);
            BadOption.atLeast("--warmup", warmup, 0);
            BadOption.atLeast("--rounds", rounds, 1);
            final LatencyComparison.Summary summary = LatencyComparison.run(kinds(), length, warmup,
                iterations, rounds, !noRaw, !noRaw && !noC, idleStrategy(), this::log);
            System.out.print(json ? summary.toJson() + System.lineSeparator() : summary.toText());
            return 0;
        }
    }

    @Command(name = "throughput", mixinStandardHelpOptions = true,
        description = {
            "RDMA WRITE throughput over a crossed net_ring pair, one busy-spinning poll thread per endpoint, spray and " +
            "RoCEv2, for each message size: Mpps (data packets), Gb/s (payload), and packets per second per core of " +
            "CPU time the two poll threads used, for each --mtu. With --with-udp, Java DatagramChannels over loopback " +
            "carry the same messages (cut into datagrams of the default 4096 B MTU) in the same invocation."})
    static final class Throughput extends TransportCommon
    {
        @Option(names = "--sizes", split = ",", defaultValue = "64,256,1024,4096,16384,65536,262144,1048576",
            description = "Message sizes in bytes (default ${DEFAULT-VALUE}).")
        int[] sizes;

        @Option(names = "--seconds", defaultValue = "2", description = "Measured seconds per point (default ${DEFAULT-VALUE}).")
        double seconds;

        @Option(names = "--warmup", defaultValue = "1", description = "Warm-up seconds per point (default ${DEFAULT-VALUE}).")
        double warmup;

        @Option(names = "--with-udp", description = "Also run the kernel UDP baseline on loopback.")
        boolean withUdp;

        @Option(names = "--mtu", split = ",", defaultValue = "4096",
            description = "Path MTUs the transports cut messages into, each measured in turn: 256, 512, 1024, 2048 or 4096 " +
                "(default ${DEFAULT-VALUE}).")
        int[] mtus;

        @picocli.CommandLine.Mixin
        HugepagesOption hugepagesOption = new HugepagesOption();

        @Option(names = "--threads", defaultValue = "2",
            description = "Poll threads: 2 (one per endpoint) or 1 (both endpoints on one thread) (default ${DEFAULT-VALUE}).")
        int threads;

        public Integer call() throws Exception
        {
            BadOption.range("--seconds", seconds, 0.001, 86_400, 2);
            BadOption.range("--warmup", warmup, 0, 3600, 1);
            BadOption.range("--threads", threads, 1, 2);
            for (final int size : sizes)
            {
                BadOption.range("--sizes", size, 1, io.spraynic.bench.e2e.Throughput.MAX_MESSAGE_BYTES);
            }
            for (final int mtu : mtus)
            {
                if (!PathMtu.isValid(mtu))
                {
                    throw new BadOption("--mtu", Integer.toString(mtu), "must be 256, 512, 1024, 2048 or 4096 (a path MTU " +
                        "whose frames fit the default mbufs)", "try --mtu 4096");
                }
            }
            final HugepageMode hugepages = hugepagesOption.mode();
            final List<ThroughputResult> results = new ArrayList<>();
            try (var nic = RingNic.start(hugepages))
            {
                // untimed: compiles the transports' paths before the first measured point, so that the first
                // point does not pay for the JIT (it did: 64 B spray at a tenth of its later rate)
                for (final TransportPair.Kind kind : kinds())
                {
                    io.spraynic.bench.e2e.Throughput.run(nic, kind, mtus[0], 4096, 0, Math.max(1, warmup), threads, idleStrategy());
                    io.spraynic.bench.e2e.Throughput.run(nic, kind, mtus[0], 64, 0, Math.max(1, warmup), threads, idleStrategy());
                }
                for (final int size : sizes)
                {
                    for (final int mtu : mtus)
                    {
                        for (final TransportPair.Kind kind : kinds())
                        {
                            add(results, io.spraynic.bench.e2e.Throughput.run(nic, kind, mtu, size, warmup, seconds, threads,
                                idleStrategy()));
                        }
                    }
                    if (withUdp)
                    {
                        add(results, UdpBaseline.run(size, warmup, seconds));
                    }
                }
            }
            printPoints("", results.stream().map(ThroughputResult::toJson).toList());
            return results.stream().allMatch(ThroughputResult::verified) ? 0 : 1;
        }

        private void add(final List<ThroughputResult> results, final ThroughputResult result)
        {
            results.add(result);
            log(result.toText());
        }
    }

    @Command(name = "ipc", mixinStandardHelpOptions = true,
        description = {
            "What posting from another process costs: two embedded spray NICs on an in-JVM link (the shipped worker loop, " +
            "no DPDK), one served to other processes in an IPC directory. In alternating rounds the same loop posts 64 B " +
            "RDMA WRITEs and polls their completions in this process and in a client JVM of its own: one at a time " +
            "(post-to-completion latency p10 / p50 / p99), then --depth in flight in 0.1 s slices taken in turn (writes " +
            "per second). Prints each round and " +
            "the medians of the rate ratio (across ÷ in process) and of the extra p50 latency across processes."})
    static final class Ipc extends Common
    {
        @Option(names = "--iterations", defaultValue = "20000", description = "Lone writes timed per round (default ${DEFAULT-VALUE}).")
        int iterations;

        @Option(names = "--seconds", defaultValue = "2", description = "Seconds of the rate measurement per round (default ${DEFAULT-VALUE}).")
        double seconds;

        @Option(names = "--depth", defaultValue = "64", description = "Writes in flight for the rate (default ${DEFAULT-VALUE}).")
        int depth;

        @Option(names = "--rounds", defaultValue = "3", description = "Alternating rounds (default ${DEFAULT-VALUE}).")
        int rounds;

        @Option(names = "--idle", defaultValue = "spin",
            description = "What idle workers do: spin or yield (default ${DEFAULT-VALUE}).")
        String idle;

        public Integer call() throws Exception
        {
            BadOption.range("--iterations", iterations, 100, 10_000_000);
            BadOption.range("--seconds", seconds, 0.001, 86_400, 2);
            BadOption.range("--depth", depth, 1, 1024);
            BadOption.range("--rounds", rounds, 1, 100);
            final List<io.spraynic.bench.nic.IpcOverhead.Round> results = io.spraynic.bench.nic.IpcOverhead.run(
                io.spraynic.bench.e2e.Idle.parse(idle), iterations, seconds, depth, rounds, this::log);
            final List<Double> ratios = new ArrayList<>();
            final List<Double> extra = new ArrayList<>();
            final List<Double> extraP10 = new ArrayList<>();
            final List<String> points = new ArrayList<>();
            for (final io.spraynic.bench.nic.IpcOverhead.Round r : results)
            {
                ratios.add(r.rateRatio());
                extra.add(r.extraP50Micros());
                extraP10.add(r.ipc().p10Micros() - r.embedded().p10Micros());
                points.add(String.format(Locale.ROOT, "{\"embeddedP10Us\":%.3f,\"embeddedP50Us\":%.3f," +
                    "\"embeddedP99Us\":%.3f,\"embeddedWritesPerSecond\":%.1f,\"ipcP10Us\":%.3f,\"ipcP50Us\":%.3f," +
                    "\"ipcP99Us\":%.3f,\"ipcWritesPerSecond\":%.1f,\"rateRatio\":%.4f,\"extraP50Us\":%.3f}",
                    r.embedded().p10Micros(), r.embedded().p50Micros(), r.embedded().p99Micros(),
                    r.embedded().writesPerSecond(), r.ipc().p10Micros(), r.ipc().p50Micros(), r.ipc().p99Micros(),
                    r.ipc().writesPerSecond(), r.rateRatio(), r.extraP50Micros()));
            }
            ratios.sort(null);
            extra.sort(null);
            extraP10.sort(null);
            final double ratio = ratios.get(ratios.size() / 2);
            final double extraP50 = extra.get(extra.size() / 2);
            log(String.format(Locale.ROOT, "median rate ratio (across processes / in process): %.3f (goal >= 0.8); " +
                "median extra p50 latency across processes: %.2f us (goal <= 1); median extra p10: %.2f us", ratio,
                extraP50, extraP10.get(extraP10.size() / 2)));
            printPoints(String.format(Locale.ROOT, "\"idle\":\"%s\",\"depth\":%d,\"medianRateRatio\":%.4f," +
                "\"medianExtraP50Us\":%.3f", idle, depth, ratio, extraP50), points);
            return 0;
        }
    }

    @Command(name = "connections", mixinStandardHelpOptions = true,
        description = {
            "Many connections at once over DPDK in real time: two embedded NICs (the shipped worker loop) on a crossed " +
            "net_ring pair open --connections connections through the real handshake (RoCEv2: queue pairs), then every " +
            "connection writes --messages RDMA WRITEs of --bytes, --depth in flight on each, all at once; every byte is " +
            "compared at the receiver. Prints the set-up time, goodput, messages per second, completion p50 / p99, " +
            "heap and off-heap memory before and after opening, while active and after idle, the connection-table " +
            "pools' sets lent at peak and refusals, and the transport counters that matter. Exit 1 unless every " +
            "connection opened, every message was verified and every connection closed."})
    static final class Connections extends Common
    {
        @Option(names = "--connections", defaultValue = "4000", description = "Connections (default ${DEFAULT-VALUE}).")
        int connections;

        @Option(names = "--bytes", defaultValue = "16384", description = "Bytes per write (default ${DEFAULT-VALUE}).")
        int bytes;

        @Option(names = "--messages", defaultValue = "2", description = "Writes per connection (default ${DEFAULT-VALUE}).")
        int messages;

        @Option(names = "--depth", defaultValue = "2", description = "Writes in flight per connection (default ${DEFAULT-VALUE}).")
        int depth;

        @Option(names = "--workers", defaultValue = "1", description = "Workers per NIC (default ${DEFAULT-VALUE}).")
        int workers;

        @Option(names = "--storage-limit", defaultValue = "256", description = {
            "Sets of connection tables each spray worker lends at once, -1 for one per connection; a connection with " +
            "traffic beyond it waits (its posts stay queued, its peer's packets are refused with RNR NO_RESOURCES)",
            "(default ${DEFAULT-VALUE})."})
        int storageLimit;

        @Option(names = "--timeout", defaultValue = "120", description = "Seconds the transfer may take (default ${DEFAULT-VALUE}).")
        double timeout;

        @Option(names = "--transport", defaultValue = "spray", description = "spray or rocev2 (default ${DEFAULT-VALUE}).")
        String transport;

        @picocli.CommandLine.Mixin
        HugepagesOption hugepagesOption = new HugepagesOption();

        public Integer call() throws Exception
        {
            BadOption.range("--connections", connections, 1, 100_000);
            BadOption.range("--bytes", bytes, 1, 1 << 24);
            BadOption.range("--messages", messages, 1, 1 << 16);
            BadOption.range("--depth", depth, 1, 1024);
            BadOption.range("--workers", workers, 1, 16);
            BadOption.range("--timeout", timeout, 0.001, 86_400, 120);
            if (storageLimit != -1 && storageLimit < 1)
            {
                throw new BadOption("--storage-limit", Integer.toString(storageLimit), "must be -1 or at least 1",
                    "try --storage-limit 256");
            }
            if ((long)connections * messages * bytes > 1L << 31)
            {
                final long fitting = (1L << 31) / ((long)connections * bytes); // messages that fit; 0: none at these bytes
                throw new BadOption("--messages", Integer.toString(messages), "connections x messages x bytes must be " +
                    "at most 2 GiB (the receiver's region)", fitting > 0 ? "try --messages " + fitting :
                    "try --messages 1 with --bytes " + (1L << 31) / connections);
            }
            if ((long)connections * messages > ConnectionScale.MAX_MESSAGES)
            {
                throw new BadOption("--messages", Integer.toString(messages), "connections x messages must be at most " +
                    ConnectionScale.MAX_MESSAGES + " (two timestamps are kept of each)",
                    "try --messages " + Math.max(1, ConnectionScale.MAX_MESSAGES / connections));
            }
            final io.spraynic.datapath.nic.NicConnection.Kind kind = switch (transport.toLowerCase(Locale.ROOT))
            {
                case "spray" -> io.spraynic.datapath.nic.NicConnection.Kind.SPRAY;
                case "rocev2" -> io.spraynic.datapath.nic.NicConnection.Kind.ROCEV2;
                default -> throw new BadOption("--transport", transport, "must be spray or rocev2", "try --transport spray");
            };
            final ConnectionScale.Result result = ConnectionScale.run(
                new ConnectionScale.Options(kind, connections, bytes, messages, depth, workers,
                    hugepagesOption.mode(), storageLimit, timeout), this::log);
            if (json)
            {
                System.out.println("{\"cores\":" + Runtime.getRuntime().availableProcessors() + ",\"points\":[" +
                    result.toJson() + "]}");
            }
            else
            {
                System.out.print(result.toText());
            }
            return result.ok() ? 0 : 1;
        }
    }
}
