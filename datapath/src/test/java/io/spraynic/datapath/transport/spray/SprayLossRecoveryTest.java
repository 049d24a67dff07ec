package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.port.FaultInjectingPacketPort;
import io.spraynic.datapath.transport.Psn;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Loss recovery on a lossy fabric (S6.5, S6.6, S6.7, S6.9): data packets are dropped at random (seeded) or
 * by exact (path, PSN); every byte still arrives, every lost packet is retransmitted exactly once per loss
 * on its own path with its own PSN, and nothing else is retransmitted: {@code retransmitted / lost == 1.0}
 * and both equal the drops injected.
 */
class SprayLossRecoveryTest
{
    private static final int MIB = 1 << 20;

    @ParameterizedTest(name = "S6.5/S6.9: {0} loss of data packets, seed {1}: exact data, retransmitted == lost == dropped")
    @CsvSource({"0.01, 1", "0.01, 2", "0.10, 3", "0.10, 4"})
    void shouldRecoverEveryLossWithExactlyOneRetransmission(final double dropRate, final long seed)
    {
        final SprayTestBed.Options options = new SprayTestBed.Options().planes(2)
            .wrapA((plane, port) -> new FaultInjectingPacketPort(port, seed * 31 + plane, dropRate, 0, 0, SprayTestBed::isData))
            .wrapB((plane, port) -> new FaultInjectingPacketPort(port, seed * 37 + plane, dropRate, 0, 0, SprayTestBed::isData));
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final Workload w = new Workload(bed, 2 * MIB);
            w.post();
            w.runAndVerify(400_000);

            final long dropped = bed.totalDropped(bed.portsA) + bed.totalDropped(bed.portsB);
            final long retransmitted = bed.a.counters().get(SprayCounters.RETRANSMITTED) +
                bed.b.counters().get(SprayCounters.RETRANSMITTED);
            final long lost = bed.a.counters().get(SprayCounters.LOST) + bed.b.counters().get(SprayCounters.LOST);
            assertTrue(dropped > (dropRate > 0.05 ? 100 : 5), "drops injected: " + dropped);
            assertEquals(dropped, lost, "every drop detected once");
            assertEquals(dropped, retransmitted, "every loss retransmitted once");
            assertEquals(0, bed.a.counters().get(SprayCounters.MOVED) + bed.b.counters().get(SprayCounters.MOVED));
            assertEquals(0, bed.a.counters().get(SprayCounters.DUPLICATES) + bed.b.counters().get(SprayCounters.DUPLICATES),
                "no packet arrived twice: no retransmission was needless");
            for (int p = 0; p < 8; p++)
            {
                assertEquals(bed.a.pathCounters(p).get(SprayCounters.LOST), bed.a.pathCounters(p).get(SprayCounters.RETRANSMITTED),
                    "path " + p + " retransmitted what it lost");
            }
        }
    }

    @Test
    void shouldRunIdenticallyTwiceWithTheSameSeeds()
    {
        final String[] runs = new String[2];
        for (int run = 0; run < 2; run++)
        {
            final SprayTestBed.Options options = new SprayTestBed.Options().planes(2)
                .wrapA((plane, port) -> new FaultInjectingPacketPort(port, 17 + plane, 0.05, 0.01, 0.1, SprayTestBed::isData))
                .wrapB((plane, port) -> new FaultInjectingPacketPort(port, 19 + plane, 0.05, 0.01, 0.1, SprayTestBed::isData));
            try (SprayTestBed bed = new SprayTestBed(options))
            {
                final Workload w = new Workload(bed, 2 * MIB);
                w.post();
                w.runAndVerify(400_000);
                final StringBuilder sb = new StringBuilder().append(bed.steps).append(bed.a.counters()).append(bed.b.counters());
                for (int p = 0; p < 8; p++)
                {
                    sb.append(bed.a.pathCounters(p)).append(bed.a.congestionControl().toString(p));
                }
                runs[run] = sb.toString();
            }
        }
        assertEquals(runs[0], runs[1]);
    }

    @Test
    void shouldRetransmitAGivenLostPsnOnItsOwnPathOnlyS65()
    {
        final int path = 3;
        final int firstPsn = Psn.add(0x1000, path << 18);
        final int lostPsn = Psn.add(firstPsn, 5);
        // path 3 is on plane 1 of 2
        final SprayTestBed.Options options = new SprayTestBed.Options().planes(2)
            .wrapA((plane, port) -> plane == 1 ? FaultInjectingPacketPort.exact(port, SprayTestBed.dataOn(path, lostPsn)).dropAt(0) : port);
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final Workload w = new Workload(bed, MIB);
            w.post();
            w.runAndVerify(100_000);
            assertEquals(1, bed.totalDropped(bed.portsA));
            for (int p = 0; p < 8; p++)
            {
                assertEquals(p == path ? 1 : 0, bed.a.pathCounters(p).get(SprayCounters.RETRANSMITTED), "path " + p);
                assertEquals(p == path ? 1 : 0, bed.a.pathCounters(p).get(SprayCounters.LOST), "path " + p);
            }
            assertEquals(1, bed.b.pathCounters(path).get(SprayCounters.SACK_GAPS));
        }
    }

    @Test
    void shouldRecoverTheLastPacketOfAPathThroughAProbeS67()
    {
        // drop the very last data packet A sends on path 0: nothing follows it, only a probe can expose it
        final SprayTestBed.Options options = new SprayTestBed.Options().planes(1).paths(1);
        final int[] lastPsn = {-1};
        options.wrapA((plane, port) -> FaultInjectingPacketPort.exact(port,
            (memory, offset, length) -> SprayTestBed.isData(memory, offset, length) &&
                io.spraynic.datapath.wire.BaseTransportHeader.psn(memory, offset + SprayTestBed.DATA_OFFSET_BTH) == lastPsn[0])
            .dropAt(0));
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final MemoryRegion src = bed.region(bed.pdA, 3 * 4096, AccessFlags.NONE, 5);
            final MemoryRegion dst = bed.region(bed.pdB, 3 * 4096, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
            lastPsn[0] = Psn.add(0x1000, 2); // third and last packet
            assertEquals(PostResult.OK, bed.a.postSend(0, new SendWorkRequest().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), 3 * 4096).remote(dst.address(), dst.rkey())));
            final List<WorkCompletion> done = new ArrayList<>();
            bed.runUntil(() ->
            {
                done.addAll(SprayTestBed.drain(bed.sendCqA));
                return !done.isEmpty();
            }, 10_000);
            assertEquals(WorkCompletionStatus.SUCCESS, done.get(0).status());
            assertEquals(-1L, src.segment().mismatch(dst.segment()));
            assertEquals(1, bed.a.counters().get(SprayCounters.LOST));
            assertEquals(1, bed.a.counters().get(SprayCounters.RETRANSMITTED));
            assertEquals(1, bed.a.counters().get(SprayCounters.PROBES_SENT));
            assertEquals(0, bed.a.counters().get(SprayCounters.TIMEOUTS));
        }
    }

    @Test
    void shouldEchoEveryCeMarkAndShrinkTheMarkedWindowsS81S82S83()
    {
        final FaultInjectingPacketPort[] marking = new FaultInjectingPacketPort[2];
        final SprayTestBed.Options options = new SprayTestBed.Options().planes(2)
            .wrapA((plane, port) -> marking[plane] = new FaultInjectingPacketPort(port, 7 + plane, 0, 0, 0.3, SprayTestBed::isData));
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final Workload w = new Workload(bed, 4 * MIB);
            w.post();
            w.runAndVerify(200_000);
            final long marked = marking[0].ceMarked() + marking[1].ceMarked();
            assertTrue(marked > 100, "marked " + marked);
            assertEquals(marked, bed.b.counters().get(SprayCounters.ECN_MARKS_RECEIVED), "S8.1: every CE mark counted");
            assertEquals(marked, bed.a.counters().get(SprayCounters.ECN_MARKS_ECHOED), "S8.1: every CE mark echoed");
            for (int p = 0; p < 8; p++)
            {
                assertTrue(bed.a.congestionControl().alpha(p) > 0, "S8.2: alpha grew on path " + p);
            }
            // one active sender: the receiver's fair share is its whole capacity (S8.3)
            assertEquals(400_000, bed.a.peerRateHintMbps());
            assertEquals(0, bed.a.counters().get(SprayCounters.RETRANSMITTED));
        }
    }

    @Test
    void shouldCarryOnAcrossThe24BitPsnWrapS16()
    {
        final int nearWrap = 0xFFFF00;
        final SprayTestBed.Options options = new SprayTestBed.Options().planes(2).initialPsns(nearWrap, nearWrap + 0xC0)
            .wrapA((plane, port) -> new FaultInjectingPacketPort(port, 99 + plane, 0.02, 0, 0, SprayTestBed::isData))
            .wrapB((plane, port) -> new FaultInjectingPacketPort(port, 98 + plane, 0.02, 0, 0, SprayTestBed::isData));
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final Workload w = new Workload(bed, 4 * MIB);
            w.post();
            w.runAndVerify(400_000);
            assertTrue(bed.a.nextPsn(0) < nearWrap, "path 0 of A wrapped: " + bed.a.nextPsn(0));
            assertTrue(bed.b.nextPsn(0) < nearWrap, "path 0 of B wrapped: " + bed.b.nextPsn(0));
            final long dropped = bed.totalDropped(bed.portsA) + bed.totalDropped(bed.portsB);
            assertEquals(dropped, bed.a.counters().get(SprayCounters.RETRANSMITTED) + bed.b.counters().get(SprayCounters.RETRANSMITTED));
        }
    }

    /**
     * A mixed workload on four streams: WRITEs (stream 0), SENDs (stream 1), READs (stream 2), WRITEs with
     * immediate (stream 3); {@code bytes} of data per stream, in messages of 1 B to 1 MiB.
     */
    static final class Workload
    {
        final SprayTestBed bed;
        final int bytes;
        final MemoryRegion srcA;
        final MemoryRegion dstB;
        final MemoryRegion srcB;
        final MemoryRegion dstA;
        final List<int[]> messages = new ArrayList<>(); // {stream, offset, length}
        int receivesPosted;

        Workload(final SprayTestBed bed, final int bytes)
        {
            this.bed = bed;
            this.bytes = bytes;
            final long size = 4L * bytes;
            srcA = bed.region(bed.pdA, size, AccessFlags.NONE, 1234);
            dstB = bed.region(bed.pdB, size, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
            srcB = bed.region(bed.pdB, size, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_READ, 4321);
            dstA = bed.region(bed.pdA, size, AccessFlags.LOCAL_WRITE, 0);
        }

        void post()
        {
            final SendWorkRequest wr = new SendWorkRequest();
            final ReceiveWorkRequest rr = new ReceiveWorkRequest();
            final int[] sizes = {1, 4095, 4096, 4097, 65536, 1 << 20, 12345, 77777};
            for (int s = 0; s < 4; s++)
            {
                final long base = (long)s * bytes;
                long offset = 0;
                int i = 0;
                while (true)
                {
                    final int len = sizes[(i + s) % sizes.length];
                    if (offset + len > bytes)
                    {
                        break;
                    }
                    final long id = ((long)s << 32) | messages.size();
                    wr.reset().wrId(id).immediate(messages.size());
                    switch (s)
                    {
                        case 0 -> wr.opcode(WorkRequestOpcode.RDMA_WRITE).local(srcA, srcA.address() + base + offset, len)
                            .remote(dstB.address() + base + offset, dstB.rkey());
                        case 1 ->
                        {
                            wr.opcode(WorkRequestOpcode.SEND).local(srcA, srcA.address() + base + offset, len);
                            rr.reset().wrId(id).buffer(dstB, dstB.address() + base + offset, len);
                            assertEquals(PostResult.OK, bed.b.postReceive(s, rr));
                            receivesPosted++;
                        }
                        case 2 -> wr.opcode(WorkRequestOpcode.RDMA_READ).local(dstA, dstA.address() + base + offset, len)
                            .remote(srcB.address() + base + offset, srcB.rkey());
                        default ->
                        {
                            wr.opcode(WorkRequestOpcode.RDMA_WRITE_WITH_IMM)
                                .local(srcA, srcA.address() + base + offset, len)
                                .remote(dstB.address() + base + offset, dstB.rkey());
                            rr.reset().wrId(id);
                            assertEquals(PostResult.OK, bed.b.postReceive(s, rr));
                            receivesPosted++;
                        }
                    }
                    assertEquals(PostResult.OK, bed.a.postSend(s, wr));
                    messages.add(new int[] {s, (int)offset, len});
                    offset += len;
                    i++;
                }
            }
        }

        void runAndVerify(final int maxSteps)
        {
            final List<WorkCompletion> sent = new ArrayList<>();
            bed.runUntil(() ->
            {
                sent.addAll(SprayTestBed.drain(bed.sendCqA));
                return sent.size() == messages.size();
            }, maxSteps);
            bed.runToQuiet(300);
            final long[] last = {-1, -1, -1, -1};
            for (final WorkCompletion wc : sent)
            {
                assertEquals(WorkCompletionStatus.SUCCESS, wc.status(), wc::toString);
                final int s = (int)(wc.wrId() >>> 32);
                final long n = wc.wrId() & 0xFFFF_FFFFL;
                assertTrue(n > last[s], "S4.8 order on stream " + s);
                last[s] = n;
            }
            final List<WorkCompletion> received = SprayTestBed.drain(bed.receiveCqB);
            assertEquals(receivesPosted, received.size());
            for (final WorkCompletion wc : received)
            {
                assertEquals(WorkCompletionStatus.SUCCESS, wc.status(), wc::toString);
            }
            for (int s = 0; s < 4; s++)
            {
                final long base = (long)s * bytes;
                final MemorySegment from = s == 2 ? srcB.segment() : srcA.segment();
                final MemorySegment to = s == 2 ? dstA.segment() : dstB.segment();
                final long used = usedBytes(s);
                assertEquals(-1L, from.asSlice(base, used).mismatch(to.asSlice(base, used)), "stream " + s);
            }
            assertEquals(0, bed.a.sendSlotsInUse());
            assertEquals(0, bed.b.sendSlotsInUse());
            assertEquals(0, bed.a.inboundMessagesInUse());
            assertEquals(0, bed.b.inboundMessagesInUse());
        }

        long usedBytes(final int s)
        {
            long used = 0;
            for (final int[] m : messages)
            {
                if (m[0] == s)
                {
                    used = Math.max(used, (long)m[1] + m[2]);
                }
            }
            return used;
        }
    }
}
