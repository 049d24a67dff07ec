package io.spraynic.cli;

import io.spraynic.datapath.capture.CaptureFilter;
import io.spraynic.datapath.capture.CaptureRingLayout;
import io.spraynic.datapath.capture.CaptureRingReader;
import io.spraynic.datapath.capture.LinkType;
import io.spraynic.datapath.capture.PcapWriter;
import io.spraynic.datapath.capture.TappingPacketPort;
import io.spraynic.datapath.nic.ipc.ClientCapture;
import io.spraynic.datapath.nic.ipc.IpcFileDescriptor;
import io.spraynic.datapath.nic.ipc.NicClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code spraynic capture FILE}: a live capture of a running NIC ({@code spraynic nic --ipc-dir}), as
 * {@code dpdk-pdump} takes one of a DPDK application: the NIC's workers copy the frames the filter takes into shared
 * rings, this process drains them into a pcapng file (one interface per port, queue and direction, nanosecond
 * timestamps) and ends it with each interface's statistics (frames dropped because a ring was full).
 */
@Command(name = "capture", mixinStandardHelpOptions = true,
    description = {
        "Capture the frames of a running NIC (spraynic nic --ipc-dir) into a pcapng file for tshark, Wireshark or " +
        "spraynic decode: the NIC's workers copy what the filter takes into shared rings, never waiting for this " +
        "process (a full ring drops the frame and counts it; the counts end the file and are in spraynic stat).",
        "",
        "Filter: terms joined by 'and', each at most once (default: every frame):",
        "  rx | tx              direction (default both)",
        "  port N[,N...]        the NIC's ports (planes) by index (default all)",
        "  queue N[,N...]       queues, one per worker (default all)",
        "  spray | rocev2       UDP 4791 frames with a spray opcode (0xC0-0xDF), or any other",
        "  udp dst port N       UDP destination port",
        "  host A.B.C.D         IPv4 source or destination",
        "e.g. --filter 'rx and port 0 and queue 0,1 and spray and host 10.0.0.2'",
        "",
        "--sample N: each worker writes the 1st, (N+1)th, (2N+1)th... of the frames the filter takes (counted over its " +
        "ports and directions); the others cost it next to nothing (no copy, no clock read, and without frame terms no " +
        "read of the frame). The file says so: each interface's comment reads 'sampled: 1 in N frames ...'.",
        "",
        "Rings: each worker's ring is sized in bytes, not frames: records are packed by each frame's own length, so " +
        "--snaplen 64 keeps the default ring's 8,421,376 B (105,267 records of 64 B frames) instead of shrinking it " +
        "51-fold. --ring-size sets the bytes, --ring-slots instead the records of the full snap length it holds.",
        ""})
final class CaptureCommand implements Callable<Integer>
{
    /** Frames read in one go before the client waits again (a client that reads this many reads again at once). */
    private static final long READ_LIMIT = 1 << 20;
    private static final Pattern DURATION = Pattern.compile("([0-9]{1,9}(?:\\.[0-9]{1,9})?)(ms|s|m|h|)");

    @Parameters(paramLabel = "FILE", description = "The pcapng file to write.")
    Path file;

    @Option(names = "--ipc-dir", paramLabel = "DIR",
        description = "The NIC's IPC directory (default: $SPRAYNIC_IPC_DIR, else /dev/shm/spraynic-$USER).")
    Path ipcDir;

    @Option(names = "--duration", defaultValue = "5s", paramLabel = "TIME",
        description = "How long to capture: 500ms, 5s, 2m, 1h or seconds (default ${DEFAULT-VALUE}; at most 1h). Ctrl-C ends it early.")
    String duration;

    @Option(names = "--filter", defaultValue = "", paramLabel = "EXPR", description = "Which frames (see above).")
    String filter;

    @Option(names = "--snaplen", defaultValue = "" + CaptureRingLayout.DEFAULT_SNAP_LENGTH, paramLabel = "BYTES",
        description = "Bytes kept of each frame, " + CaptureRingLayout.MIN_SNAP_LENGTH + "-" + CaptureRingLayout.MAX_SNAP_LENGTH +
            " (default ${DEFAULT-VALUE}: whole frames).")
    int snapLength;

    @Option(names = "--ring-size", paramLabel = "BYTES", converter = SizeConverter.class,
        defaultValue = "" + CaptureRingLayout.DEFAULT_RING_BYTES,
        description = "Bytes of records each worker's ring has, with an optional k, m or g suffix: at least 16 " +
            "frames of the snap length, all rings together at most 1g (default ${DEFAULT-VALUE}: 2,048 whole frames " +
            "of 4,096 B, whatever the snap length; 2,048 frames of a longer one).")
    long ringSize;

    @Option(names = "--ring-slots", paramLabel = "N", defaultValue = "" + CaptureRingLayout.DEFAULT_SLOTS,
        description = "Instead of --ring-size: frames of the full snap length each worker's ring holds, a power of two, " +
            CaptureRingLayout.MIN_SLOTS + ".." + CaptureRingLayout.MAX_SLOTS + " (more of shorter frames).")
    int slots;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--sample", defaultValue = "1", paramLabel = "N",
        description = "Capture one frame in N of those the filter takes, " + CaptureRingLayout.MIN_SAMPLE + ".." +
            CaptureRingLayout.MAX_SAMPLE + " (default ${DEFAULT-VALUE}: every frame).")
    int sample;

    @Option(names = "--timeout", defaultValue = "5", description = "Seconds to wait for the NIC (default ${DEFAULT-VALUE}).")
    double timeoutSeconds;

    public Integer call() throws Exception
    {
        final Duration length = parseDuration(duration);
        final CaptureFilter frames = CaptureFilter.parse(filter);
        BadOption.range("--timeout", timeoutSeconds, 0.001, 3600, 5);
        BadOption.range("--snaplen", snapLength, CaptureRingLayout.MIN_SNAP_LENGTH, CaptureRingLayout.MAX_SNAP_LENGTH);
        BadOption.range("--sample", sample, CaptureRingLayout.MIN_SAMPLE, CaptureRingLayout.MAX_SAMPLE);
        final long ringBytes = ringBytes();
        final String layout = CaptureRingLayout.ringBytesProblem(1, ringBytes, snapLength, sample);
        if (null != layout)
        {
            throw new IllegalArgumentException("--snaplen " + snapLength + ", rings of " + ringBytes + " B: " + layout);
        }
        final Path parent = file.toAbsolutePath().getParent();
        if (null != parent && !Files.isDirectory(parent))
        {
            throw new IllegalArgumentException(file + ": directory " + parent + " does not exist");
        }
        final Path dir = null == ipcDir ? IpcFileDescriptor.defaultDirectory() : ipcDir;
        final CountDownLatch interrupted = new CountDownLatch(1);
        final CountDownLatch finished = new CountDownLatch(1);
        final Thread hook = new Thread(() ->
        {
            interrupted.countDown();
            try
            {
                finished.await(10, TimeUnit.SECONDS); // let the main thread end the file with its statistics
            }
            catch (final InterruptedException ignored)
            {
                Thread.currentThread().interrupt();
            }
        }, "spraynic-capture-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try (NicClient nic = NicClient.connect(dir, Duration.ofMillis((long)(timeoutSeconds * 1000)));
            PcapWriter writer = PcapWriter.pcapng(file);
            ClientCapture capture = nic.startCaptureRing(frames, length, snapLength, ringBytes, sample))
        {
            System.out.printf(Locale.ROOT, "spraynic capture: NIC pid %d in %s: capturing %s for %s into %s (%s)%n",
                nic.nicPid(), dir, frames.toString().isEmpty() ? "every frame" : "'" + frames + "'", duration, file,
                capture.reader().layout());
            System.out.flush();
            final long written = drain(nic, capture, writer, length, interrupted);
            System.out.println(summary(capture.reader(), written, file));
        }
        finally
        {
            finished.countDown();
            if (interrupted.getCount() > 0)
            {
                Runtime.getRuntime().removeShutdownHook(hook);
            }
        }
        return 0;
    }

    /** Writes frames until the NIC ends the capture (its duration, or Ctrl-C here), then the interfaces' statistics. */
    private static long drain(final NicClient nic, final ClientCapture capture, final PcapWriter writer,
        final Duration length, final CountDownLatch interrupted) throws IOException
    {
        final CaptureRingReader reader = capture.reader();
        final Interfaces interfaces = new Interfaces(writer, capture, reader.planes(), reader.layout().workers());
        final long[] written = new long[1];
        final CaptureRingReader.FrameHandler handler = (plane, queue, direction, timestamp, memory, offset, captured,
            original) -> written[0] += interfaces.write(plane, queue, direction, timestamp, memory, offset, captured, original);
        final long giveUp = System.nanoTime() + length.toNanos() + TimeUnit.SECONDS.toNanos(30);
        while (true)
        {
            if (interrupted.getCount() == 0)
            {
                capture.stop();
            }
            final boolean ended = reader.ended(); // read before the rings: what a worker wrote before it ended is there
            final long n = reader.pollAll(handler, READ_LIMIT);
            if (ended && n == 0)
            {
                break;
            }
            if (n == 0 && (nic.isNicStopped() || System.nanoTime() > giveUp))
            {
                System.err.println("spraynic capture: the NIC stopped before it ended the capture; the file has what came");
                break;
            }
            if (n < READ_LIMIT)
            {
                reader.pause(); // in batches (cheaper for the workers), as often as the rings' fill asks
            }
        }
        interfaces.writeStatistics(reader);
        return written[0];
    }

    /** @return each worker's ring in bytes as the options ask (checked against the snap length; the NIC checks it again). */
    private long ringBytes()
    {
        if (given("--ring-slots"))
        {
            if (given("--ring-size"))
            {
                throw new BadOption("--ring-slots", Integer.toString(slots), "sizes the ring as --ring-size does",
                    "try --ring-slots " + slots + " without --ring-size");
            }
            if (slots < CaptureRingLayout.MIN_SLOTS || slots > CaptureRingLayout.MAX_SLOTS || Integer.bitCount(slots) != 1)
            {
                throw new BadOption("--ring-slots", Integer.toString(slots), "must be a power of two, " +
                    CaptureRingLayout.MIN_SLOTS + ".." + CaptureRingLayout.MAX_SLOTS, "try --ring-slots " +
                    Math.clamp(Integer.highestOneBit(Math.max(slots, 1)), CaptureRingLayout.MIN_SLOTS,
                        CaptureRingLayout.MAX_SLOTS));
            }
            return CaptureRingLayout.ringBytes(slots, snapLength);
        }
        if (!given("--ring-size"))
        {
            return CaptureRingLayout.defaultRingBytes(snapLength);
        }
        final long min = CaptureRingLayout.minRingBytes(snapLength);
        final long max = CaptureRingLayout.maxRingBytes(1); // a NIC of more workers refuses what its rings cannot hold
        if (ringSize < min || ringSize > max)
        {
            throw new BadOption("--ring-size", Long.toString(ringSize), "must be " + min + ".." + max + " B (at least " +
                CaptureRingLayout.MIN_SLOTS + " frames of the " + snapLength + " B snap length)", "try --ring-size " +
                Math.clamp(ringSize, min, max));
        }
        // up to the records' alignment: a ring ends on a whole record (any size asked is a ring that size or a little more)
        return (ringSize + CaptureRingLayout.RECORD_ALIGNMENT - 1) & -CaptureRingLayout.RECORD_ALIGNMENT;
    }

    private boolean given(final String option)
    {
        return GivenOptions.given(spec, option);
    }

    private static String summary(final CaptureRingReader reader, final long written, final Path file)
    {
        long captured = 0;
        long dropped = 0;
        long filtered = 0;
        long sampledOut = 0;
        for (int w = 0; w < reader.layout().workers(); w++)
        {
            captured += reader.captured(w);
            dropped += reader.dropped(w);
            filtered += reader.filtered(w);
            sampledOut += reader.sampledOut(w);
        }
        final int sample = reader.layout().sample();
        return String.format(Locale.ROOT, "spraynic capture: wrote %,d frames to %s; the workers captured %,d, dropped %,d " +
            "(ring full), filtered out %,d%s%s", written, file, captured, dropped, filtered,
            sample == 1 ? "" : String.format(Locale.ROOT, ", sampled out %,d (1 in %d sampled)", sampledOut, sample),
            reader.malformed() == 0 ? "" : String.format(Locale.ROOT, "; %,d malformed slots skipped", reader.malformed()));
    }

    /** @return what every interface of a sampled capture says (null: every frame, nothing to say). */
    static String comment(final int sample)
    {
        return sample == 1 ? null : "sampled: 1 in " + sample + " frames the filter took (each worker's first, then every " +
            sample + "-th); isb_ifrecv and isb_ifdrop count the sampled frames only";
    }

    /** @return 500ms, 5s, 2m, 1h or a number of seconds, in 1 ms..1 h. */
    static Duration parseDuration(final String text)
    {
        final Matcher m = DURATION.matcher(text.trim().toLowerCase(Locale.ROOT));
        final double seconds = !m.matches() ? Double.NaN : Double.parseDouble(m.group(1)) * switch (m.group(2))
        {
            case "ms" -> 0.001;
            case "m" -> 60;
            case "h" -> 3600;
            default -> 1;
        };
        if (!(seconds >= 0.001 && seconds <= 3600))
        {
            throw new BadOption("--duration", text, "is not a time of 1ms to 1h (500ms, 5s, 2m)", "try --duration 5s");
        }
        return Duration.ofNanos((long)(seconds * 1e9));
    }

    /** The pcapng interfaces, one per port, queue and direction, added as their first frame (or drop) comes. */
    private static final class Interfaces
    {
        private final PcapWriter writer;
        private final ClientCapture capture;
        private final int planes;
        private final int queues;
        private final int[] ids;
        private final long[] frames;

        Interfaces(final PcapWriter writer, final ClientCapture capture, final int planes, final int queues)
        {
            this.writer = writer;
            this.capture = capture;
            this.planes = planes;
            this.queues = queues;
            this.ids = new int[planes * queues * 2];
            this.frames = new long[ids.length];
            Arrays.fill(ids, -1);
        }

        int write(final int plane, final int queue, final int direction, final long timestamp, final MemorySegment memory,
            final long offset, final int captured, final int original)
        {
            final int key = (plane * queues + queue) * 2 + direction;
            try
            {
                writer.write(id(key, plane, queue, direction), memory, offset, captured, original, timestamp);
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException("cannot write the capture: " + ex.getMessage(), ex);
            }
            frames[key]++;
            return 1;
        }

        private int id(final int key, final int plane, final int queue, final int direction) throws IOException
        {
            if (ids[key] < 0)
            {
                final String port = capture.reader().planeName(plane).replaceFirst("/q[0-9]+$", "");
                ids[key] = writer.addInterface(port + "/q" + queue + "-" + (direction == TappingPacketPort.RX ? "rx" : "tx"),
                    LinkType.ETHERNET, capture.reader().layout().snapLength(), comment(capture.reader().layout().sample()));
            }
            return ids[key];
        }

        /** An Interface Statistics Block per interface that saw a frame or a drop: frames received and dropped. */
        void writeStatistics(final CaptureRingReader reader) throws IOException
        {
            final long now = System.currentTimeMillis() * 1_000_000L;
            for (int plane = 0; plane < planes; plane++)
            {
                for (int queue = 0; queue < queues; queue++)
                {
                    for (int direction = 0; direction < 2; direction++)
                    {
                        final int key = (plane * queues + queue) * 2 + direction;
                        final long dropped = reader.dropped(queue, plane, direction);
                        if (ids[key] >= 0 || dropped > 0)
                        {
                            writer.writeInterfaceStatistics(id(key, plane, queue, direction), now, frames[key] + dropped,
                                dropped);
                        }
                    }
                }
            }
        }
    }
}
