package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.api.SeededPattern;
import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.fabric.Fabric;
import io.spraynic.datapath.fabric.FabricConfig;
import io.spraynic.datapath.fabric.FabricEndpointPairs;
import io.spraynic.datapath.fabric.Link;
import io.spraynic.datapath.fabric.RcFabricEndpoint;
import io.spraynic.datapath.fabric.Topology;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The RoCEv2 baseline on the emulated fabric, in virtual time: two hosts back to back, one plane
 * with parallel links between the switches, an RDMA WRITE verified byte for byte, with and without
 * random loss on the fabric links (go-back-N recovers it).
 */
class RcFabricTransferTest
{
    record Outcome(long bytes, long nanos, long drops, long retransmitted, TransportCounters senderCounters)
    {
    }

    @Test
    void shouldWriteOneMebibyteLosslessAtNearLineRate()
    {
        final Outcome outcome = writeOverFabric(1 << 20, 0.0, 11);
        assertEquals(0, outcome.drops());
        assertEquals(0, outcome.retransmitted());
        final double gbps = outcome.bytes() * 8.0 / outcome.nanos();
        assertTrue(gbps > 50 && gbps < 100, "1 MiB over a 100 Gb/s fabric: " + gbps + " Gb/s");
    }

    @Test
    void shouldPaceALosslessQpAtLineRateWithoutMarkingItsOwnQueue()
    {
        // before pacing at line rate, 32-packet bursts per tick crossed the NIC queue's ECN threshold: this
        // transfer saw 198 CE marks, 2 CNPs and 33.7 Gb/s
        final Outcome outcome = writeOverFabric(16 << 20, 0.0, 13);
        final double gbps = outcome.bytes() * 8.0 / outcome.nanos();
        assertEquals(0, outcome.senderCounters().get(RcCounters.RX_CNP), "no CNP: " + outcome.senderCounters());
        assertTrue(gbps > 90 && gbps < 100, "16 MiB over one 100 Gb/s plane: " + gbps + " Gb/s");
    }

    @ParameterizedTest
    @ValueSource(doubles = {0.01, 0.05})
    void shouldRecoverRandomFabricLossWithGoBackN(final double loss)
    {
        final Outcome outcome = writeOverFabric(4 << 20, loss, 12);
        assertTrue(outcome.drops() > 0, "the fabric dropped packets");
        assertTrue(outcome.retransmitted() >= outcome.drops(), "go-back-N resends at least what was lost: " + outcome);
    }

    private static Outcome writeOverFabric(final int size, final double loss, final long seed)
    {
        final FabricConfig config = FabricConfig.DEFAULT.withSeed(seed);
        try (Fabric fabric = Topology.backToBack(config, 1, 4); Arena arena = Arena.ofShared())
        {
            fabric.fabricLinkLoss(loss);
            final FabricEndpointPairs.Rc pair = FabricEndpointPairs.rc(fabric, arena);
            final RcFabricEndpoint a = pair.a();
            final RcFabricEndpoint b = pair.b();
            final CompletionQueue cqA = pair.cqA();
            final RcQueuePair qpA = pair.qpA();

            final MemorySegment source = SeededPattern.allocate(arena, size, seed);
            final MemorySegment target = arena.allocate(size, 64);
            final MemoryRegion local = pair.pdA().register(source, AccessFlags.LOCAL_WRITE);
            final MemoryRegion remote = pair.pdB().register(target, AccessFlags.REMOTE_WRITE | AccessFlags.LOCAL_WRITE);

            a.start();
            b.start();
            final long start = fabric.now();
            assertEquals(PostResult.OK, qpA.postSend(new SendWorkRequest().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(local, local.address(), size).remote(remote.address(), remote.rkey()).signaled(true)));
            final WorkCompletion completion = new WorkCompletion();
            long deadline = start + 1_000_000_000L;
            while (!cqA.poll(completion) && fabric.now() < deadline)
            {
                fabric.runUntil(fabric.now() + 10_000);
            }
            final long elapsed = fabric.now() - start;
            a.stop();
            b.stop();
            assertEquals(WorkCompletionStatus.SUCCESS, completion.status(), "write completed: " + a.engine().counters());
            assertEquals(-1, source.mismatch(target), "every byte placed");

            long drops = 0;
            for (final Link link : fabric.fabricLinks())
            {
                drops += link.randomLossDrops();
            }
            return new Outcome(size, elapsed, drops, a.engine().counters().get(RcCounters.RETRANSMITTED),
                a.engine().counters());
        }
    }
}
