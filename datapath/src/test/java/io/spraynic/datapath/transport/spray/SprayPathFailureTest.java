package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A plane fails in the middle of a transfer: its paths time out, their packets go again on the live paths
 * (S7.4.1) and the paths fail (S7.4); the transfer completes byte for byte with no application action. When the plane comes back
 * the failed paths are probed back (S7.5) and carry data again. And S10.1: a connection's state does not
 * grow with the number of messages it carries.
 */
class SprayPathFailureTest
{
    @Test
    void shouldMoveAFailedPlanesPacketsToLivePathsThenProbeThemBackS74S75()
    {
        final SprayTestBed.SwitchablePort[] switchesA = new SprayTestBed.SwitchablePort[2];
        final SprayTestBed.SwitchablePort[] switchesB = new SprayTestBed.SwitchablePort[2];
        final SprayTestBed.Options options = new SprayTestBed.Options().planes(2)
            .wrapA((plane, port) -> switchesA[plane] = new SprayTestBed.SwitchablePort(port))
            .wrapB((plane, port) -> switchesB[plane] = new SprayTestBed.SwitchablePort(port));
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final int size = 8 << 20;
            final MemoryRegion src = bed.region(bed.pdA, size, AccessFlags.NONE, 42);
            final MemoryRegion dst = bed.region(bed.pdB, size, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
            final SendWorkRequest wr = new SendWorkRequest();
            final int messages = 8;
            final int each = size / messages;
            for (int i = 0; i < messages; i++)
            {
                assertEquals(PostResult.OK, bed.a.postSend(i % 4, wr.reset().wrId(i).opcode(WorkRequestOpcode.RDMA_WRITE)
                    .local(src, src.address() + (long)i * each, each).remote(dst.address() + (long)i * each, dst.rkey())));
            }
            bed.runUntil(() -> bed.a.counters().get(SprayCounters.TX_PACKETS) > 400, 10_000);
            switchesA[1].down = true;
            switchesB[1].down = true;

            final List<WorkCompletion> done = new ArrayList<>();
            bed.runUntil(() ->
            {
                done.addAll(SprayTestBed.drain(bed.sendCqA));
                return done.size() == messages;
            }, 100_000);
            for (final WorkCompletion wc : done)
            {
                assertEquals(WorkCompletionStatus.SUCCESS, wc.status(), wc::toString);
            }
            assertEquals(-1L, src.segment().mismatch(dst.segment()));
            // S7.4.1: the dead plane's packets went again on the live paths at their paths' first timeouts,
            // counted as lost and retransmitted against the paths that lost them, so the transfer may well
            // complete before those paths fail; they keep probing and fail all the same (S7.4)
            for (int p = 1; p < 8; p += 2)
            {
                assertTrue(bed.a.pathCounters(p).get(SprayCounters.LOST) > 0, "path " + p);
                assertEquals(bed.a.pathCounters(p).get(SprayCounters.LOST),
                    bed.a.pathCounters(p).get(SprayCounters.RETRANSMITTED), "path " + p);
            }
            // the copies carried RETRANSMIT, and B counted each as it took it: every one of them arrived (the live
            // plane loses nothing), and nothing else B took was flagged (the dead plane's own resends never arrived)
            final long resent = bed.a.counters().get(SprayCounters.RETRANSMITTED);
            assertTrue(resent > 0);
            assertEquals(resent, bed.b.counters().get(SprayCounters.RX_RETRANSMITTED), "copies B took");
            assertEquals(0, bed.a.counters().get(SprayCounters.RX_RETRANSMITTED), "A received no data");
            bed.runUntil(() -> bed.a.counters().get(SprayCounters.PATH_FAILURES) == 4, 100_000);
            for (int p = 0; p < 8; p++)
            {
                assertEquals(p % 2 == 1 ? SprayConnection.FAILED : SprayConnection.ACTIVE, bed.a.pathState(p), "path " + p);
            }
            assertEquals(4, bed.a.counters().get(SprayCounters.PATH_FAILURES));
            assertTrue(switchesA[1].dropped > 0);

            // the plane comes back: within a probe interval (1 ms) every path is ACTIVE again, on a new port
            final int oldPort = bed.a.sourcePort(1);
            switchesA[1].down = false;
            switchesB[1].down = false;
            bed.runUntil(() -> bed.a.counters().get(SprayCounters.PATH_RESTORES) == 4, 5_000);
            for (int p = 0; p < 8; p++)
            {
                assertEquals(SprayConnection.ACTIVE, bed.a.pathState(p), "path " + p);
            }
            assertTrue(bed.a.sourcePort(1) != oldPort || bed.a.sourcePort(3) != oldPort + 2, "S7.5: a new source port");

            final long before = bed.a.pathCounters(1).get(SprayCounters.TX_PACKETS);
            dst.segment().fill((byte)0);
            bed.a.postSend(0, wr.reset().wrId(100).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), size).remote(dst.address(), dst.rkey()));
            done.clear();
            bed.runUntil(() ->
            {
                done.addAll(SprayTestBed.drain(bed.sendCqA));
                return done.size() == 1;
            }, 100_000);
            assertEquals(WorkCompletionStatus.SUCCESS, done.get(0).status());
            assertEquals(-1L, src.segment().mismatch(dst.segment()));
            assertTrue(bed.a.pathCounters(1).get(SprayCounters.TX_PACKETS) > before, "restored path 1 carries data");
        }
    }

    @Test
    void shouldCompleteWithRetryExceededAndCloseWhenEveryPathStaysFailedS76()
    {
        final SprayTestBed.SwitchablePort[] switchesA = new SprayTestBed.SwitchablePort[2];
        final SprayTestBed.Options options = new SprayTestBed.Options().planes(2)
            .wrapA((plane, port) -> switchesA[plane] = new SprayTestBed.SwitchablePort(port));
        options.connectionTimeoutNanos = 2_000_000;
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final MemoryRegion src = bed.region(bed.pdA, 1 << 20, AccessFlags.NONE, 42);
            final MemoryRegion dst = bed.region(bed.pdB, 1 << 20, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
            final SendWorkRequest wr = new SendWorkRequest();
            switchesA[0].down = true;
            switchesA[1].down = true;
            for (int i = 0; i < 3; i++)
            {
                bed.a.postSend(i, wr.reset().wrId(i).opcode(WorkRequestOpcode.RDMA_WRITE)
                    .local(src, src.address(), 1 << 20).remote(dst.address(), dst.rkey()));
            }
            final List<WorkCompletion> done = new ArrayList<>();
            bed.runUntil(() ->
            {
                done.addAll(SprayTestBed.drain(bed.sendCqA));
                return done.size() == 3;
            }, 20_000);
            for (final WorkCompletion wc : done)
            {
                assertEquals(WorkCompletionStatus.RETRY_EXC_ERR, wc.status(), wc::toString);
            }
            assertTrue(bed.a.isClosed());
            assertEquals(8, bed.a.counters().get(SprayCounters.PATH_FAILURES));
            assertEquals(0, bed.a.sendSlotsInUse());
            assertTrue(bed.engineA.isIdle());
            // and released as any closed connection is: its CID, its slot and its borrowed tables (a peer that went
            // silent once leaked them all, and its source's connection limit with them)
            assertNull(bed.engineA.connection(bed.a.localCid()), "forgotten by its engine");
            assertEquals(0, bed.engineA.storagePool().lent(), "its tables given back");
            // B's ACKs and probes now reach a closed connection: counted as unknown (S9.5)
            final long unknown = bed.engineA.counters().get(SprayCounters.UNKNOWN_CONNECTION);
            switchesA[0].down = false;
            switchesA[1].down = false;
            bed.runToQuiet(50);
            assertEquals(unknown, bed.engineA.counters().get(SprayCounters.UNKNOWN_CONNECTION));
        }
    }

    @Test
    void shouldMoveALossyPathToANewSourcePortS73()
    {
        // the route of path 3's initial source port loses 30 % of data packets; the other routes lose nothing
        final int badPort = 0xC200 + 3;
        final io.spraynic.datapath.port.FaultInjectingPacketPort[] faults = new io.spraynic.datapath.port.FaultInjectingPacketPort[2];
        final SprayTestBed.Options options = new SprayTestBed.Options().planes(2)
            .wrapA((plane, port) -> faults[plane] = new io.spraynic.datapath.port.FaultInjectingPacketPort(port, 3 + plane,
                0.3, 0, 0, (memory, offset, length) -> SprayTestBed.isData(memory, offset, length) &&
                io.spraynic.datapath.wire.UdpHeader.sourcePort(memory, offset + io.spraynic.datapath.wire.EthernetHeader.LENGTH +
                io.spraynic.datapath.wire.Ipv4Header.LENGTH) == badPort));
        options.configure = (host, config) -> config.portRotation(0, 0); // S7.7 would move path 3 off the port anyway
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            assertEquals(badPort, bed.a.sourcePort(3));
            final SprayLossRecoveryTest.Workload w = new SprayLossRecoveryTest.Workload(bed, 4 << 20);
            w.post();
            w.runAndVerify(200_000);
            assertEquals(1, bed.a.pathCounters(3).get(SprayCounters.REPATHS));
            assertEquals(1, bed.a.counters().get(SprayCounters.REPATHS), "only the lossy path moved");
            assertTrue(bed.a.sourcePort(3) != badPort && bed.a.sourcePort(3) >= 49152);
            final long dropped = faults[0].dropped() + faults[1].dropped();
            assertTrue(dropped > 5, "dropped " + dropped);
            assertEquals(dropped, bed.a.counters().get(SprayCounters.RETRANSMITTED));
            assertEquals(SprayConnection.ACTIVE, bed.a.pathState(3));
        }
    }

    @Test
    void shouldKeepConnectionStateConstantInTheNumberOfMessagesS101()
    {
        try (SprayTestBed bed = new SprayTestBed(new SprayTestBed.Options()))
        {
            final long a0 = bed.a.stateBytes();
            final long b0 = bed.b.stateBytes();
            assertEquals(bed.a.fixedStateBytes() + 8L * ConnectionFootprint.pathStateBytes() +
                4L * ConnectionFootprint.streamStateBytes(), a0);
            assertTrue(ConnectionFootprint.pathStateBytes() >= 256 * 21, "256 outstanding packet records per path");
            assertEquals(38, ConnectionFootprint.streamStateBytes(), "S9.3: error syndrome and refusal number; S4.5: next RSN");

            for (int round = 1; round <= 3; round++)
            {
                final SprayLossRecoveryTest.Workload w = new SprayLossRecoveryTest.Workload(bed, round << 20);
                w.post();
                w.runAndVerify(200_000);
                assertEquals(a0, bed.a.stateBytes(), "after round " + round);
                assertEquals(b0, bed.b.stateBytes(), "after round " + round);
            }
            assertTrue(bed.a.counters().get(SprayCounters.MESSAGES_SENT) > 60);
        }
    }
}
