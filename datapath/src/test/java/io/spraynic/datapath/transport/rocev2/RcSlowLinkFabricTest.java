package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.api.SeededPattern;
import io.spraynic.datapath.fabric.Fabric;
import io.spraynic.datapath.fabric.FabricConfig;
import io.spraynic.datapath.fabric.FabricPort;
import io.spraynic.datapath.fabric.Link;
import io.spraynic.datapath.fabric.LinkConfig;
import io.spraynic.datapath.fabric.RcFabricEndpoint;
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
 * RoCEv2 in virtual time over the Linux lab's loss test in miniature (benchmarks/RESULTS.md section 61): one 10 Mb/s
 * link each way between the switches with a drop-tail queue of 50 ms plus a 16 KiB bucket (the lab's TBF), 1 %
 * random loss, CE marked above a 4-frame queue, a 1 KiB path MTU, the IB ACK timeout 4.096 us x 2^14 (67 ms) with 7
 * retries; 2 MiB written in 64 KiB WRITEs and read back in 64 KiB READs, as {@code spraynic transfer} does.
 */
class RcSlowLinkFabricTest
{
    private static final long LINK = 10_000_000L;
    private static final int DATA_FRAME = 1110;
    private static final int SIZE = 2 << 20;
    private static final int MESSAGE = 64 << 10;

    record Outcome(String status, long nanos, long tailDrops, long randomDrops, long marks,
        io.spraynic.datapath.transport.TransportCounters sender)
    {
    }

    @Test
    void shouldHoldAQueuePairUnderASlowMarkedLinkWhenTheNicKnowsItsLineRate()
    {
        // what an operator sets: the fabric's line rate, DCQCN derived from it (steps of 4 kb/s, not 40 Mb/s)
        final Outcome outcome = transfer(DcqcnConfig.forLineRate(LINK), true, 1);
        assertEquals("ok", outcome.status(), outcome.toString());
        assertEquals(0, outcome.tailDrops(), "paced at its line, the QP never overflows the link's queue: " + outcome);
        final double mbps = 2.0 * SIZE * 8 / outcome.nanos() * 1e3;
        assertTrue(mbps > 8.0, "most of the 10 Mb/s link each way: " + mbps + " Mb/s, " + outcome);
    }

    @Test
    void shouldRunOutOfRetriesWhenPacedSteadilyAboveADropTailLink()
    {
        // The lab's RETRY_EXC_ERR: a QP paced at five times the link (as the paper's 40 Mb/s steps hold a QP told a
        // 100 Gb/s line between CNPs) keeps the link's queue full with its own packets. After a loss it goes back N
        // to the lost PSN, but that packet reaches a full queue and is tail-dropped; the responder NAKs a gap once
        // (IBA), so only the ACK timeout resends it, into the queue the resent window keeps full again, seven times.
        final Outcome paced = transfer(DcqcnConfig.paperDefaults(5 * LINK), false, 2);
        assertEquals("WRITE " + WorkCompletionStatus.RETRY_EXC_ERR, paced.status(), paced.toString());
        assertTrue(paced.tailDrops() > 10 * paced.sender().get(RcCounters.RX_NAKS), paced.toString());
        // the same link and seed: a QP that empties its whole window at 100 Gb/s in microseconds and then waits lets
        // the queue drain before its timer fires, so the resent head packet gets in; told its line, it never fills it
        assertEquals("ok", transfer(DcqcnConfig.paperDefaults(), false, 2).status());
        assertEquals("ok", transfer(DcqcnConfig.forLineRate(LINK), false, 2).status());
    }

    private static Outcome transfer(final DcqcnConfig dcqcn, final boolean mark, final long seed)
    {
        final LinkConfig core = new LinkConfig(LINK, 50_000, (int)(LINK / 8 / 20) + 16_384,
            mark ? 4 * DATA_FRAME : Integer.MAX_VALUE, 0.01, LinkConfig.ETHERNET_OVERHEAD_BYTES);
        try (Fabric fabric = Topology.backToBack(FabricConfig.DEFAULT.withFabricLink(core).withSeed(seed), 1, 1);
            Arena arena = Arena.ofShared())
        {
            final ProtectionDomain pdA = new ProtectionDomain(new SplittableRandom(1));
            final ProtectionDomain pdB = new ProtectionDomain(new SplittableRandom(2));
            final FabricPort portA = fabric.host(0).port(0);
            final FabricPort portB = fabric.host(1).port(0);
            final RcFabricEndpoint a = new RcFabricEndpoint(portA, pdA,
                (mac, ip) -> RcEngineConfig.defaults(mac, ip).withDcqcn(dcqcn), new ParseCounters(), 10_000, arena);
            final RcFabricEndpoint b = new RcFabricEndpoint(portB, pdB,
                (mac, ip) -> RcEngineConfig.defaults(mac, ip).withDcqcn(dcqcn), new ParseCounters(), 10_000, arena);
            fabric.host(0).attach(a);
            fabric.host(1).attach(b);
            final CompletionQueue cqA = new CompletionQueue(256);
            final CompletionQueue cqB = new CompletionQueue(256);
            final RcQueuePair qpA = a.engine().createQueuePair(cqA, cqA, 64, 64);
            final RcQueuePair qpB = b.engine().createQueuePair(cqB, cqB, 64, 64);
            qpA.toInit(AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
            qpB.toInit(AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
            final long timeout = RcConnectionAttributes.ackTimeoutNanos(14);
            qpA.toRtr(RcConnectionAttributes.of(qpB.qpNumber(), portB.localMac(), portB.localAddress(), 0xC001,
                PathMtu.MTU_1024, 100, 7).withRetry(timeout, 7));
            qpB.toRtr(RcConnectionAttributes.of(qpA.qpNumber(), portA.localMac(), portA.localAddress(), 0xC002,
                PathMtu.MTU_1024, 7, 100).withRetry(timeout, 7));
            qpA.toRts();
            qpB.toRts();
            final MemorySegment source = SeededPattern.allocate(arena, SIZE, seed);
            final MemorySegment back = arena.allocate(SIZE, 64);
            final MemoryRegion local = pdA.register(source, AccessFlags.LOCAL_WRITE);
            final MemoryRegion readInto = pdA.register(back, AccessFlags.LOCAL_WRITE);
            final MemoryRegion remote = pdB.register(arena.allocate(SIZE, 64),
                AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ | AccessFlags.LOCAL_WRITE);
            a.start();
            b.start();
            final long start = fabric.now();
            String status = "ok";
            for (final boolean read : new boolean[]{false, true})
            {
                status = phase(fabric, qpA, cqA, read ? readInto : local, remote, read, start);
                if (!status.equals("ok"))
                {
                    break;
                }
            }
            if (status.equals("ok") && back.mismatch(source) != -1)
            {
                status = "read back differs";
            }
            long tail = 0;
            long random = 0;
            long marks = 0;
            for (final Link link : fabric.fabricLinks())
            {
                tail += link.tailDrops();
                random += link.randomLossDrops();
            }
            marks += b.engine().counters().get(RcCounters.TX_CNP) + a.engine().counters().get(RcCounters.TX_CNP);
            return new Outcome(status, fabric.now() - start, tail, random, marks, a.engine().counters());
        }
    }

    /** 2 MiB in 64 KiB requests, 32 outstanding; @return "ok", or the first failure, or "timed out". */
    private static String phase(final Fabric fabric, final RcQueuePair qp, final CompletionQueue cq,
        final MemoryRegion local, final MemoryRegion remote, final boolean read, final long start)
    {
        final int messages = SIZE / MESSAGE;
        final WorkCompletion completion = new WorkCompletion();
        final long deadline = fabric.now() + 30_000_000_000L;
        int posted = 0;
        int done = 0;
        while (done < messages)
        {
            while (posted < messages && posted - done < 32 && qp.postSend(new SendWorkRequest().wrId(posted)
                .opcode(read ? WorkRequestOpcode.RDMA_READ : WorkRequestOpcode.RDMA_WRITE)
                .local(local, local.address() + (long)posted * MESSAGE, MESSAGE)
                .remote(remote.address() + (long)posted * MESSAGE, remote.rkey()).signaled(true)) == PostResult.OK)
            {
                posted++;
            }
            if (cq.poll(completion))
            {
                if (completion.status() != WorkCompletionStatus.SUCCESS)
                {
                    return (read ? "READ " : "WRITE ") + completion.status();
                }
                done++;
            }
            else if (fabric.now() >= deadline)
            {
                return "timed out after " + (fabric.now() - start) / 1_000_000 + " ms";
            }
            else
            {
                fabric.runUntil(fabric.now() + 100_000);
            }
        }
        return "ok";
    }
}
