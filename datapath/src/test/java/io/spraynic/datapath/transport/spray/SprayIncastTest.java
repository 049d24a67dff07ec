package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.fabric.Fabric;
import io.spraynic.datapath.fabric.FabricConfig;
import io.spraynic.datapath.fabric.Link;
import io.spraynic.datapath.fabric.LinkConfig;
import io.spraynic.datapath.fabric.Topology;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.datapath.wire.ParseCounters;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Incast 32 -> 1 on the emulated fabric in virtual time (S8.3, S8.4): a two-tier Clos of 3 leaves with 11
 * hosts each under 4 spines, one plane of 100 Gb/s links with 512 KiB queues marking above 100 KiB; hosts 1-32
 * each WRITE 2 MiB to host 0 at once, each over its own connection of 8 paths. Measured, every 5 us: the rate
 * hint each sender holds, each sender's delivered rate over the last 100 us, and the queue of the link into
 * host 0.
 * <p>
 * <b>The goal, convergence within 2 RTTs, is not met.</b> Measured (seed 1): base RTT 8.9 us; every
 * sender holds the fair-share hint (3.125 Gb/s +- 10 %) after 150 us (17 base RTTs, about 3 RTTs inflated by
 * the full queue); every sender's delivered rate is within 20 % of its share after 2.6 ms; the queue fills
 * (524,282 of 524,288 B) in the first RTT and falls below the marking threshold only after about 1 ms; 4,399
 * tail drops; all 64 MiB delivered in 6.5 ms (5.4 ms at line rate). Why: before its first ACK a sender only
 * knows its own line rate, so 32 senders start at up to 100 Gb/s each and fill the queue within the first
 * round trip; the hint C / N then holds the senders at exactly the link rate, which keeps a full queue full
 * (it drains only as senders finish, lose packets or wait for RTOs), and the first ACKs of senders whose
 * first packets were dropped come an RTO later. A hint with headroom, or a first-RTT budget carried in the
 * handshake, would be needed for 2 RTTs. The assertions below hold the measured values (with a margin) so
 * that a regression shows.
 */
class SprayIncastTest
{
    private static final int SENDERS = 32;
    private static final long SAMPLE_NS = 5_000;
    private static final long RATE_WINDOW_NS = 100_000;
    private static final int ECN_THRESHOLD = 100 * 1024;

    @Test
    void shouldSettleAn32To1IncastAtTheFairShareWithABoundedQueueS83S84()
    {
        // 33 hosts: 3 leaves of 11 under 4 spines, one plane; host 0 receives from the 32 others
        try (Fabric fabric = Topology.twoTierClos(FabricConfig.DEFAULT.withSeed(1), 3, 4, 11, 1);
            Arena arena = Arena.ofShared())
        {
            final long capacityMbps = fabric.config().hostLink().rateBitsPerSecond() / 1_000_000;
            final double fairGbps = capacityMbps / 1000.0 / SENDERS;
            final SprayFabricEndpoint rx = new SprayFabricEndpoint(fabric.host(0), 1_000, new ParseCounters());
            final ProtectionDomain rxPd = new ProtectionDomain(new SplittableRandom(1));
            final SprayEngine receiver = new SprayEngine(rx.configure(new SprayConfig().capacityMbps(capacityMbps)
                .maxConnections(SENDERS)), rxPd, rx);
            rx.bind(receiver);
            final CompletionQueue rxCq = new CompletionQueue(1024);
            final int bytes = 2 << 20;
            final MemorySegment target = arena.allocate((long)SENDERS * bytes, 64);
            final MemoryRegion dst = rxPd.register(target, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
            final SprayConnection[] senders = new SprayConnection[SENDERS];
            final SprayConnection[] inbound = new SprayConnection[SENDERS];
            final SprayFabricEndpoint[] endpoints = new SprayFabricEndpoint[SENDERS];
            final CompletionQueue[] cqs = new CompletionQueue[SENDERS];
            final MemorySegment source = arena.allocate(bytes, 64);
            SprayTestBed.fill(source, 77);
            for (int i = 0; i < SENDERS; i++)
            {
                final int host = i + 1;
                endpoints[i] = new SprayFabricEndpoint(fabric.host(host), 1_000, new ParseCounters());
                final ProtectionDomain pd = new ProtectionDomain(new SplittableRandom(host));
                final SprayEngine engine = new SprayEngine(endpoints[i].configure(new SprayConfig().capacityMbps(capacityMbps)
                    .seed(host)), pd, endpoints[i]);
                endpoints[i].bind(engine);
                cqs[i] = new CompletionQueue(16);
                senders[i] = engine.open(endpoints[i].remote(new SprayConnectionConfig().cids(1, 100 + i).paths(8)
                    .mtu(4096).initialPsns(0, 0).completionQueues(cqs[i], cqs[i]).sourcePortBase(0xC000 + 16 * host), 0));
                inbound[i] = receiver.open(rx.remote(new SprayConnectionConfig().cids(100 + i, 1).paths(8).mtu(4096)
                    .initialPsns(0, 0).completionQueues(rxCq, rxCq).sourcePortBase(0xE000 + 16 * host), host));
                final MemoryRegion src = pd.register(source, AccessFlags.NONE);
                assertEquals(PostResult.OK, senders[i].postSend(0, new SendWorkRequest().wrId(i)
                    .opcode(WorkRequestOpcode.RDMA_WRITE).local(src, src.address(), bytes)
                    .remote(dst.address() + (long)i * bytes, dst.rkey())));
                endpoints[i].kick();
            }
            final Link bottleneck = fabric.link("p0/leaf0->host0");
            final long start = fabric.now();
            final int windows = (int)(RATE_WINDOW_NS / SAMPLE_NS);
            final long[][] history = new long[SENDERS][windows + 1]; // RX bytes per sender, last samples
            int done = 0;
            long hintConvergedAt = -1;
            long rateConvergedAt = -1;
            long queueDrainedAt = -1;
            final WorkCompletion wc = new WorkCompletion();
            long t = start;
            for (int sample = 1; done < SENDERS && t < start + 50_000_000; sample++)
            {
                t += SAMPLE_NS;
                fabric.runUntil(t);
                int hinted = 0;
                int fair = 0;
                for (int i = 0; i < SENDERS; i++)
                {
                    final long[] h = history[i];
                    System.arraycopy(h, 1, h, 0, windows);
                    h[windows] = inbound[i].counters().get(SprayCounters.RX_BYTES);
                    final double gbps = (h[windows] - h[0]) * 8.0 / RATE_WINDOW_NS;
                    if (sample > windows && Math.abs(gbps - fairGbps) <= 0.2 * fairGbps)
                    {
                        fair++;
                    }
                    final int hint = senders[i].peerRateHintMbps();
                    if (Math.abs(hint / 1000.0 - fairGbps) <= 0.1 * fairGbps)
                    {
                        hinted++;
                    }
                    while (cqs[i].poll(wc))
                    {
                        assertEquals(WorkCompletionStatus.SUCCESS, wc.status());
                        done++;
                    }
                }
                if (hintConvergedAt < 0 && hinted == SENDERS)
                {
                    hintConvergedAt = t - start;
                }
                if (rateConvergedAt < 0 && fair == SENDERS)
                {
                    rateConvergedAt = t - start;
                }
                if (queueDrainedAt < 0 && t - start > 20_000 && bottleneck.queueBytes() <= ECN_THRESHOLD)
                {
                    queueDrainedAt = t - start;
                }
            }
            long baseRtt = Long.MAX_VALUE;
            for (final SprayConnection c : senders)
            {
                for (int p = 0; p < c.paths(); p++)
                {
                    if (c.rtt(p).hasSample())
                    {
                        baseRtt = Math.min(baseRtt, c.rtt(p).srttNanos());
                    }
                }
            }
            final long totalNs = t - start;
            System.out.printf("incast %d -> 1: fair share %.3f Gb/s, base RTT %.1f us; every hint at fair share after " +
                "%.1f us (%.1f RTT), every rate within 20 %% after %.1f us (%.1f RTT); queue peak %d B of %d, " +
                "below the ECN threshold after %.1f us, %d tail drops; all done after %.1f us (line rate: %.1f us)%n",
                SENDERS, fairGbps, baseRtt / 1e3, hintConvergedAt / 1e3, (double)hintConvergedAt / baseRtt,
                rateConvergedAt / 1e3, (double)rateConvergedAt / baseRtt, bottleneck.peakQueueBytes(),
                LinkConfig.DATA_CENTRE.queueBytes(), queueDrainedAt / 1e3, bottleneck.tailDrops(), totalNs / 1e3,
                SENDERS * (double)bytes * 8 / capacityMbps);
            assertEquals(SENDERS, done, "every WRITE completed");
            assertTrue(bottleneck.peakQueueBytes() <= LinkConfig.DATA_CENTRE.queueBytes(), "bounded by the buffer");
            assertTrue(queueDrainedAt > 0 && queueDrainedAt < 1_500_000, "queue below the marking threshold: " + queueDrainedAt);
            assertTrue(hintConvergedAt > 0 && hintConvergedAt <= 200_000, "hint converged at " + hintConvergedAt + " ns");
            assertTrue(rateConvergedAt > 0 && rateConvergedAt <= 3_000_000, "rates converged at " + rateConvergedAt + " ns");
            assertTrue(bottleneck.tailDrops() < 6_000, "tail drops " + bottleneck.tailDrops());
            for (int i = 0; i < SENDERS; i++)
            {
                assertEquals(-1L, source.mismatch(target.asSlice((long)i * bytes, bytes)));
            }
        }
    }
}
