package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.fabric.Fabric;
import io.spraynic.datapath.fabric.FabricConfig;
import io.spraynic.datapath.fabric.Link;
import io.spraynic.datapath.fabric.LinkConfig;
import io.spraynic.datapath.fabric.SprayFabricEndpoint;
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
 * each WRITE 2 MiB to host 0 at once, each over its own connection of 8 paths. Measured every microsecond:
 * each sender's pacing rate (S8.4, what it lets itself send), the rate hint each sender holds, each sender's
 * delivered rate over the last 100 us, and the queue of the link into host 0.
 * <p>
 * The goal, convergence within 2 RTTs with a bounded queue, is met (seed 1, the farthest sender's base
 * RTT 9.4 us): every sender is paced within 20 % of its fair share (3.125 Gb/s) 15 us (1.6 RTT) after the start
 * and stays there until the first one finishes; the queue peaks at 303 KiB (of 512) and is below the marking
 * threshold after 146 us; no tail drop; all 64 MiB in 5.55 ms (line rate: 5.37 ms). Every hint is within 10 %
 * after 21 us (2.2 RTT: the drain of S8.3.3 holds back up to an eighth while the queue is above marking);
 * every delivered rate is within 20 % after 125 us, of which 100 us is the measuring window. What does it:
 * S8.3.1 (a start probe ahead of at most 8 KiB of data, so the receiver counts all 32 senders about one frame
 * each after the first arrivals), S8.3.2 (the receiver pushes the changed share on the reverse path), S8.3.3
 * (drain) and the pacer's bucket of 4 us. Before them: hints after 17 RTTs, every delivered rate within 20 %
 * after 2.6 ms, the queue full for 1 ms, 4,399 tail drops, 6.5 ms. The assertions keep a margin for timing
 * changes; the goal itself (2 RTTs) is asserted exactly.
 */
class SprayIncastTest
{
    private static final int SENDERS = 32;
    private static final long SAMPLE_NS = 1_000;
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
                .maxConnections(SENDERS)), rxPd, rx.output());
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
                    .seed(host)), pd, endpoints[i].output());
                endpoints[i].bind(engine);
                cqs[i] = new CompletionQueue(16);
                senders[i] = engine.open(endpoints[i].remote(new SprayConnectionConfig().cids(1, 100 + i).keysFromCids().paths(8)
                    .mtu(4096).initialPsns(0, 0).completionQueues(cqs[i], cqs[i]).sourcePortBase(0xC000 + 16 * host), 0));
                inbound[i] = receiver.open(rx.remote(new SprayConnectionConfig().cids(100 + i, 1).keysFromCids().paths(8).mtu(4096)
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
            long paceFirstInBandAt = -1;
            long paceLastOutOfBandAt = -1;
            long firstDoneAt = -1;
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
                int paced = 0;
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
                    final double pacedGbps = senders[i].pacingRate() * 8;
                    if (Math.abs(pacedGbps - fairGbps) <= 0.2 * fairGbps)
                    {
                        paced++;
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
                if (firstDoneAt < 0)
                {
                    if (done > 0)
                    {
                        firstDoneAt = t - start;
                    }
                    else if (paced == SENDERS && paceFirstInBandAt < 0)
                    {
                        paceFirstInBandAt = t - start;
                    }
                    else if (paced < SENDERS)
                    {
                        paceLastOutOfBandAt = t - start;
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
                    if (c.rtt().hasSample(p))
                    {
                        baseRtt = Math.min(baseRtt, c.rtt().srttNanos(p));
                    }
                }
            }
            final long totalNs = t - start;
            // the farthest senders cross leaf, spine, leaf: 4 links each way, a 4 KiB frame serialised on each
            final LinkConfig link = fabric.config().hostLink();
            final long farRtt = 8 * link.propagationDelayNs() + (long)Math.ceil(4 * (4096 + 128) * 8e3 / capacityMbps);
            System.out.printf("incast %d -> 1: fair share %.3f Gb/s, base RTT %.1f us (farthest sender; smallest srtt " +
                "%.1f us); every sender paced within 20 %% of its share after %.1f us (%.2f RTT), stayed from %.1f us " +
                "(%.2f RTT) until the first finished at %.1f us; every hint within 10 %% after %.1f us (%.1f RTT), every " +
                "delivered rate within 20 %% after %.1f us (%.1f RTT); queue peak %d B of %d, below the ECN threshold " +
                "after %.1f us, %d tail drops; all done after %.1f us (line rate: %.1f us)%n",
                SENDERS, fairGbps, farRtt / 1e3, baseRtt / 1e3, paceFirstInBandAt / 1e3, (double)paceFirstInBandAt / farRtt,
                (paceLastOutOfBandAt + SAMPLE_NS) / 1e3, (double)(paceLastOutOfBandAt + SAMPLE_NS) / farRtt,
                firstDoneAt / 1e3, hintConvergedAt / 1e3, (double)hintConvergedAt / farRtt,
                rateConvergedAt / 1e3, (double)rateConvergedAt / farRtt, bottleneck.peakQueueBytes(),
                LinkConfig.DATA_CENTRE.queueBytes(), queueDrainedAt / 1e3, bottleneck.tailDrops(), totalNs / 1e3,
                SENDERS * (double)bytes * 8 / capacityMbps);
            assertEquals(SENDERS, done, "every WRITE completed");
            assertTrue(paceFirstInBandAt > 0 && paceFirstInBandAt <= 2 * farRtt,
                "every sender paced at its share within 2 RTTs: " + paceFirstInBandAt + " ns, RTT " + farRtt);
            assertTrue(paceLastOutOfBandAt < paceFirstInBandAt, "and stayed there until the first finished");
            assertTrue(bottleneck.peakQueueBytes() <= 400 * 1024, "queue peak " + bottleneck.peakQueueBytes());
            assertTrue(queueDrainedAt > 0 && queueDrainedAt <= 300_000, "queue below the marking threshold: " + queueDrainedAt);
            assertTrue(hintConvergedAt > 0 && hintConvergedAt <= 4 * farRtt, "hint converged at " + hintConvergedAt + " ns");
            assertTrue(rateConvergedAt > 0 && rateConvergedAt <= 250_000, "rates converged at " + rateConvergedAt + " ns");
            assertTrue(bottleneck.tailDrops() <= 50, "tail drops " + bottleneck.tailDrops());
            assertTrue(totalNs <= 1.05 * SENDERS * (double)bytes * 8e3 / capacityMbps, "done after " + totalNs + " ns");
            for (int i = 0; i < SENDERS; i++)
            {
                assertEquals(-1L, source.mismatch(target.asSlice((long)i * bytes, bytes)));
            }
        }
    }
}
