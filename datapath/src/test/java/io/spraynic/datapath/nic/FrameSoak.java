package io.spraynic.datapath.nic;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The soak (off CI; {@code benchmarks/soak.sh} runs it): hostile and lossy traffic for as long as asked, with a
 * legitimate connection carrying verified transfers all the while. On a {@link HostileWire} (two embedded NICs on
 * DPDK {@code net_ring} pairs through a switch thread), the switch loses {@code loss} of the legitimate frames both
 * ways and an attacker merges mutated frames of every spray opcode and of RoCEv2 RC ({@link FrameFuzz}) into B's
 * queues, in rounds; after each round one line reports the frames, what B's parser and transport refused by reason,
 * the transfers verified, faults, and heap, direct and resident memory, so a leak shows as a trend.
 * <p>
 * {@code FrameSoak totalFrames [roundFrames [lossPercent [transferBytes]]]}; defaults 10^8, 10^6, 1 %, 4 MiB. Exits
 * non-zero at the first transfer that does not verify, the first fault, or a resident size that grew by more than
 * half from the second round to the last.
 */
final class FrameSoak
{
    private FrameSoak()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final long total = args.length > 0 ? Long.parseLong(args[0]) : 100_000_000L;
        final long round = args.length > 1 ? Long.parseLong(args[1]) : 1_000_000L;
        final double lossPercent = args.length > 2 ? Double.parseDouble(args[2]) : 1.0;
        final long transferBytes = args.length > 3 ? Long.parseLong(args[3]) : 4L << 20;
        if (total <= 0 || round <= 0 || !(lossPercent >= 0 && lossPercent < 50) || transferBytes <= 0)
        {
            System.err.println("FrameSoak totalFrames [roundFrames [lossPercent (0 to below 50) [transferBytes]]]");
            System.exit(2);
        }
        final Path dir = Files.createTempDirectory("spraynic-soak");
        final Duration timeout = Duration.ofSeconds(60);
        final long start = System.nanoTime();
        long injected = 0;
        long transfers = 0;
        long verified = 0;
        long faults = 0;
        long rssSecond = -1;
        long rssLast = 0;
        final Map<String, Long> parseTotal = new TreeMap<>();
        final Map<String, Long> dropTotal = new TreeMap<>();
        System.out.printf(Locale.ROOT, "soak: %,d hostile frames in rounds of %,d, %.2f %% loss both ways, %,d B per " +
            "verified transfer%n", total, round, lossPercent, transferBytes);
        try (HostileWire wire = new HostileWire(dir, "soak", c -> { }))
        {
            final FrameFuzz.Session session = FrameFuzz.prepare(wire, timeout);
            wire.loss(lossPercent / 100);
            for (int r = 1; injected < total; r++)
            {
                final FrameFuzz.Report report = session.round(Math.min(round, total - injected), transferBytes, timeout);
                injected += report.injected();
                transfers += report.transfers();
                verified += report.bytesVerified();
                faults += report.frameFaults() + report.loopFaults();
                report.parse().forEach((k, v) -> parseTotal.merge(k, v, Long::sum));
                report.drops().forEach((k, v) -> dropTotal.merge(k, v, Long::sum));
                System.gc();
                final long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
                long direct = 0;
                for (final BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class))
                {
                    direct += pool.getMemoryUsed();
                }
                rssLast = residentBytes();
                if (r == 2)
                {
                    rssSecond = rssLast;
                }
                System.out.printf(Locale.ROOT, "round %d at %.0f s: %,d hostile frames (%,.0f/s), %d transfers verified " +
                    "(%,d B), legitimate frames lost %,d, faults %d; heap %.1f MiB, direct %.1f MiB, resident %.1f MiB; " +
                    "parse %s; transport %s%n", r, (System.nanoTime() - start) / 1e9, injected,
                    report.injected() / report.seconds(), transfers, verified, wire.framesLost(), faults, heap / 1048576.0,
                    direct / 1048576.0, rssLast / 1048576.0, report.parse(), report.drops());
                if (faults > 0)
                {
                    System.out.println("FAILED: faults " + report.faults());
                    System.exit(1);
                }
            }
            System.out.printf(Locale.ROOT, "soak done in %.0f s: %,d hostile frames, %d transfers verified (%,d B), " +
                "legitimate frames lost %,d; refused by B's parser %s; by its transport %s; faults %d%n",
                (System.nanoTime() - start) / 1e9, injected, transfers, verified, wire.framesLost(), parseTotal, dropTotal,
                faults);
        }
        if (rssSecond > 0 && rssLast > rssSecond * 3 / 2)
        {
            System.out.printf(Locale.ROOT, "FAILED: resident memory grew from %.1f to %.1f MiB%n", rssSecond / 1048576.0,
                rssLast / 1048576.0);
            System.exit(1);
        }
        System.out.println("OK");
        System.exit(0);
    }

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
        catch (final java.io.IOException | NumberFormatException ignored)
        {
            // not Linux: reported as 0
        }
        return 0;
    }
}
