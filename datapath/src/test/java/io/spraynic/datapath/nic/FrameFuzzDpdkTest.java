package io.spraynic.datapath.nic;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link FrameFuzz} in CI: 100,000 mutated frames of every spray opcode and of RoCEv2 RC, correct ICRCs
 * recomputed over the mutations, through a live NIC's DPDK queues while legitimate transfers run. Every transfer
 * verifies, no worker caught an exception, and B's counters account for every hostile frame.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class FrameFuzzDpdkTest
{
    /** 100,000 in CI; {@code -Dspraynic.fuzz.frames=1000000} for the soak figure. */
    private static final long FRAMES = Long.getLong("spraynic.fuzz.frames", 100_000);

    @TempDir
    Path dir;

    @Test
    void shouldKeepTransfersVerifiedAndWorkersAliveUnderMutatedFrames() throws Exception
    {
        final FrameFuzz.Report report = FrameFuzz.run(dir, FRAMES, 2L << 20, Duration.ofSeconds(30));
        System.out.println(report.describe());
        assertTrue(report.injected() >= FRAMES, report.describe());
        assertTrue(report.transfers() >= 2, report.describe());
        // every hostile frame reached B's workers and was classified once by the parser
        assertTrue(report.rxFrames() >= report.injected(), report.describe());
        final Map<String, Long> parse = report.parse();
        final long parsedDrops = parse.entrySet().stream().filter(e -> !e.getKey().equals("roce"))
            .mapToLong(Map.Entry::getValue).sum();
        final long transportDrops = FrameFuzz.refusals(report.drops());
        assertTrue(parsedDrops > 0 && transportDrops > 0, report.describe());
        // most hostile frames are refused and counted by reason; the rest were plausible to the transport
        // (duplicates, stale acknowledgements, probes of a connection) and counted by the connection they reached
        assertTrue(parsedDrops + transportDrops >= report.injected() / 2, report.describe());
        assertEquals(0, report.frameFaults() + report.loopFaults(), "exceptions caught in B's workers: " + report.describe());
    }
}
