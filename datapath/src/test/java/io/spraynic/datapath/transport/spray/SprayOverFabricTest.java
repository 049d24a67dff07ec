package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.fabric.Fabric;
import io.spraynic.datapath.fabric.FabricConfig;
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
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The same engine on the emulated fabric, in virtual time: two hosts, 2 planes of 4 parallel links (8 ECMP
 * routes), 8 paths; a WRITE arrives byte for byte and the simulation ends when the engines go idle.
 */
class SprayOverFabricTest
{
    private static final int SIZE = 4 << 20;

    /** What one 4 MiB WRITE from host 0 to host 1 left behind, after the simulation went idle and it was verified. */
    private record Written(SprayConnection sender, SprayFabricEndpoint senderEndpoint, long nanos)
    {
    }

    // host 0 WRITEs 4 MiB to host 1 over one connection of 8 paths; the WRITE completes and every byte arrives
    private static Written writeFourMebibytes(final Fabric fabric, final SprayConfig senderConfig, final int seed)
    {
        try (Arena arena = Arena.ofShared())
        {
            final ProtectionDomain pd0 = new ProtectionDomain(new SplittableRandom(1));
            final ProtectionDomain pd1 = new ProtectionDomain(new SplittableRandom(2));
            final SprayFabricEndpoint e0 = new SprayFabricEndpoint(fabric.host(0), 1_000, new ParseCounters());
            final SprayFabricEndpoint e1 = new SprayFabricEndpoint(fabric.host(1), 1_000, new ParseCounters());
            final SprayEngine engine0 = new SprayEngine(e0.configure(senderConfig), pd0, e0.output());
            final SprayEngine engine1 = new SprayEngine(e1.configure(new SprayConfig()), pd1, e1.output());
            e0.bind(engine0);
            e1.bind(engine1);
            final CompletionQueue cq0 = new CompletionQueue(64);
            final CompletionQueue cq1 = new CompletionQueue(64);
            final SprayConnection c0 = engine0.open(e0.remote(new SprayConnectionConfig().cids(1, 2).keysFromCids().paths(8).mtu(4096)
                .initialPsns(100, 200).completionQueues(cq0, cq0), 1));
            engine1.open(e1.remote(new SprayConnectionConfig().cids(2, 1).keysFromCids().paths(8).mtu(4096)
                .initialPsns(200, 100).completionQueues(cq1, cq1), 0));

            final MemoryRegion src = pd0.register(arena.allocate(SIZE, 64), AccessFlags.NONE);
            SprayTestBed.fill(src.segment(), seed);
            final MemoryRegion dst = pd1.register(arena.allocate(SIZE, 64), AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
            dst.segment().fill((byte)0);
            assertEquals(PostResult.OK, c0.postSend(0, new SendWorkRequest().wrId(9).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), SIZE).remote(dst.address(), dst.rkey())));
            e0.kick();
            fabric.runUntilIdle();

            final WorkCompletion wc = new WorkCompletion();
            assertTrue(cq0.poll(wc));
            assertEquals(WorkCompletionStatus.SUCCESS, wc.status());
            assertEquals(-1L, src.segment().mismatch(dst.segment()));
            return new Written(c0, e0, fabric.now());
        }
    }

    @Test
    void shouldWriteOverTheEmulatedFabricInVirtualTimeS71S72()
    {
        try (Fabric fabric = Topology.backToBack(FabricConfig.DEFAULT, 2, 4))
        {
            final Written w = writeFourMebibytes(fabric, new SprayConfig(), 5);
            final SprayConnection c0 = w.sender();
            assertEquals(c0.counters().get(SprayCounters.LOST), c0.counters().get(SprayCounters.RETRANSMITTED));
            assertTrue(w.nanos() > 0, "virtual time advanced: " + w.nanos());
            for (int p = 0; p < 8; p++)
            {
                assertTrue(c0.pathCounters(p).get(SprayCounters.TX_PACKETS) > 0);
            }
            // 2 planes of 100 Gb/s, but the receiver's fair-share hint (S8.3) is its configured 100 Gb/s capacity
            final double gbps = SIZE * 8.0 / w.nanos();
            assertTrue(gbps > 80 && gbps < 110, "rate " + gbps + " Gb/s");
        }
    }

    @Test
    void shouldPushBackWhenTheNicQueueIsFullInsteadOfLosingS86()
    {
        // host ports with a 16 KiB transmit queue (four 4 KiB frames); the sender starts with a full 64 KiB bucket
        // and no start budget (S8.3.1), so its first burst does not fit
        final LinkConfig smallNicQueue = LinkConfig.DATA_CENTRE.withQueue(16 * 1024, 8 * 1024);
        try (Fabric fabric = Topology.backToBack(FabricConfig.DEFAULT.withHostLink(smallNicQueue), 2, 4))
        {
            final Written w = writeFourMebibytes(fabric, new SprayConfig().burstNanos(1_000_000).startBudgetBytes(-1), 6);
            final SprayConnection c0 = w.sender();
            assertEquals(0, c0.counters().get(SprayCounters.LOST), "a full NIC queue loses nothing");
            assertEquals(0, c0.counters().get(SprayCounters.TIMEOUTS), "nothing to time out");
            assertEquals(0, c0.counters().get(SprayCounters.RETRANSMITTED));
            assertTrue(w.senderEndpoint().claimsRefused() > 0, "the full NIC queue refused claims: " + w.senderEndpoint().claimsRefused());
            assertTrue(c0.counters().get(SprayCounters.OUTPUT_FULL) > 0, "the engine kept the refused packets");
            assertEquals(0, w.senderEndpoint().framesRefused(), "nothing committed was refused");
        }
    }
}
