package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.transport.Psn;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.QueuePairState;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.RoceFrameWriter;

import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Hostile scenarios run the same way over an in-JVM link and over a DPDK {@code net_ring} pair: each asserts that
 * the attack failed, that the counters account for it, and that a legitimate transfer's every byte arrived.
 */
final class RcScenarios
{
    private RcScenarios()
    {
    }

    /** Frames that {@code port} (A's side: any host on the same L2) puts on the wire towards B. */
    static void inject(final PacketPort port, final RoceFrameWriter writer, final int count)
    {
        final PacketBurst burst = port.newBurst(count);
        assertTrue(port.allocate(burst, count));
        for (int i = 0; i < count; i++)
        {
            burst.length(i, writer.writeFrame(burst.memory(), burst.offset(i), 0));
        }
        assertEquals(count, port.transmit(burst));
        burst.close();
    }

    static RoceFrameWriter forgedRead(final int destQp, final int psn, final long address, final int rkey, final int length)
    {
        return new RoceFrameWriter().ethernet(RcTestbed.MAC_A, RcTestbed.MAC_B).ipv4(RcTestbed.IP_A, RcTestbed.IP_B)
            .udpSourcePort(0xC001).opcode(Opcode.RC_RDMA_READ_REQUEST).destQp(destQp).psn(psn)
            .reth(address, rkey, length);
    }

    /**
     * While A WRITEs and READs {@code length} bytes on the bed's connected QPs, an attacker sends B READ requests
     * behind its expected PSN: made-up rkeys and addresses, and a real rkey with a range never served. None may
     * draw a NAK or fail the QP; every one is counted as a dropped duplicate.
     */
    static void forgedDuplicateReadsDuringTransfer(final RcTestbed bed, final PacketPort attacker, final int length)
    {
        final SendWorkRequest send = new SendWorkRequest();
        final MemoryRegion source = bed.register(bed.pdA, length, AccessFlags.NONE);
        final MemoryRegion target = bed.register(bed.pdB, length, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        final MemoryRegion readable = bed.register(bed.pdB, length, AccessFlags.REMOTE_READ);
        final MemoryRegion readBack = bed.register(bed.pdA, length, AccessFlags.LOCAL_WRITE);
        RcTestbed.fill(source.segment(), 1);
        RcTestbed.fill(readable.segment(), 2);
        bed.qpA.postSend(send.reset().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
            .local(source, source.address(), length).remote(target.address(), target.rkey()));
        bed.qpA.postSend(send.reset().wrId(2).opcode(WorkRequestOpcode.RDMA_READ)
            .local(readBack, readBack.address(), length).remote(readable.address(), readable.rkey()));

        final SplittableRandom random = new SplittableRandom(3);
        int forged = 0;
        int completed = 0;
        final WorkCompletion wc = new WorkCompletion();
        for (int step = 0; step < 200_000 && completed < 2; step++)
        {
            if (step % 5 == 1)
            {
                // behind the expected PSN (up to a window back), a made-up rkey and address: a blind attacker's READ
                final int behind = 1 + random.nextInt(512);
                final int psn = Psn.add(bed.qpB.expectedPsn(), -behind);
                inject(attacker, forgedRead(bed.qpB.qpNumber(), psn, random.nextLong(), random.nextInt(),
                    1 + random.nextInt(1 << 20)), 1);
                forged++;
                if (step % 10 == 1)
                {
                    // and one that names a real region but a range never served
                    inject(attacker, forgedRead(bed.qpB.qpNumber(), psn, readable.address(), readable.rkey(), 64), 1);
                    forged++;
                }
            }
            bed.step();
            while (bed.cqA.poll(wc))
            {
                assertEquals(WorkCompletionStatus.SUCCESS, wc.status(), wc::toString);
                completed++;
            }
        }
        assertEquals(2, completed, () -> "transfers done; A " + bed.engineA.counters() + " B " + bed.engineB.counters());
        assertTrue(forged > 20, "attack ran during the transfer: " + forged);
        assertEquals(-1, source.segment().mismatch(target.segment()), "WRITE data differs");
        assertEquals(-1, readable.segment().mismatch(readBack.segment()), "READ data differs");
        assertEquals(QueuePairState.RTS, bed.qpB.state());
        assertEquals(QueuePairState.RTS, bed.qpA.state());
        assertEquals(forged, bed.engineB.counters().get(RcCounters.RX_DUPLICATES_DROPPED));
        assertEquals(0, bed.engineB.counters().get(RcCounters.TX_NAK_ACCESS));
        assertEquals(0, bed.engineB.counters().get(RcCounters.TX_NAK_INVALID));
        assertEquals(0, bed.engineB.counters().get(RcCounters.QP_ERRORS));
    }

    /**
     * A's WRITE of {@code length} bytes is under way into B's region when B deregisters it ({@code revokeHook}:
     * and revokes it in the engine, as a NIC worker does; false: only the domain knows, and the responder's check
     * at the next packet must catch it alone). The rest is refused with one NAK, nothing more is placed, and
     * another QP pair of the same engines goes on.
     */
    static void deregisterMidWrite(final RcTestbed bed, final int length, final int mtu, final boolean revokeHook)
    {
        final SendWorkRequest send = new SendWorkRequest();
        final MemoryRegion source = bed.register(bed.pdA, length, AccessFlags.NONE);
        final MemoryRegion target = bed.register(bed.pdB, length, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        RcTestbed.fill(source.segment(), 7);
        assertEquals(PostResult.OK, bed.qpA.postSend(send.reset().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
            .local(source, source.address(), length).remote(target.address(), target.rkey())));
        stepUntilPlaced(bed, 256 * 1024);
        final long placedBefore = bed.engineB.counters().get(RcCounters.BYTES_PLACED);
        assertTrue(placedBefore > 0 && placedBefore < length, "the WRITE is under way: " + placedBefore);

        bed.pdB.deregister(target);
        if (revokeHook)
        {
            assertEquals(1, bed.engineB.revoke(target), "the responder's WRITE used the region");
        }
        final MemorySegment atDeregistration = bed.arena.allocate(length).copyFrom(target.segment());
        final long receivedBefore = bed.engineB.counters().get(RcCounters.RX_PACKETS);

        final WorkCompletion wc = bed.await(bed.cqA, 100_000);
        assertEquals(1, wc.wrId());
        assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, wc.status(), wc::toString);
        bed.steps(1000);
        assertEquals(-1, atDeregistration.mismatch(target.segment()), "bytes placed after deregistration");
        assertEquals(placedBefore, bed.engineB.counters().get(RcCounters.BYTES_PLACED));
        assertEquals(1, bed.engineB.counters().get(RcCounters.REVOKED));
        assertEquals(1, bed.engineB.counters().get(RcCounters.TX_NAK_ACCESS));
        // every packet after the refused one was dropped and counted, none placed
        final long later = bed.engineB.counters().get(RcCounters.RX_PACKETS) - receivedBefore;
        assertTrue(later >= 1, "packets arrived after the deregistration");
        assertEquals(later - 1, bed.engineB.counters().get(RcCounters.RX_INVALID_STATE),
            () -> bed.engineB.counters().toString());
        assertEquals(QueuePairState.ERROR, bed.qpB.state());
        assertEquals(QueuePairState.ERROR, bed.qpA.state());
        assertAnotherQueuePairStillWorks(bed, mtu);
    }

    /** Steps until B has placed at least {@code bytes} payload bytes (the operation is under way). */
    static void stepUntilPlaced(final RcTestbed bed, final long bytes)
    {
        for (int i = 0; i < 1_000_000 && bed.engineB.counters().get(RcCounters.BYTES_PLACED) < bytes; i++)
        {
            bed.step();
        }
    }

    private static RcQueuePair[] secondPair(final RcTestbed bed, final CompletionQueue cqA, final CompletionQueue cqB,
        final int mtu)
    {
        final RcQueuePair a = bed.engineA.createQueuePair(cqA, cqA, 64, 64);
        final RcQueuePair b = bed.engineB.createQueuePair(cqB, cqB, 64, 64);
        a.toInit(AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
        b.toInit(AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
        a.toRtr(RcConnectionAttributes.of(b.qpNumber(), RcTestbed.MAC_B, RcTestbed.IP_B, 0xC003, mtu, 7000, 9000));
        b.toRtr(RcConnectionAttributes.of(a.qpNumber(), RcTestbed.MAC_A, RcTestbed.IP_A, 0xC004, mtu, 9000, 7000));
        a.toRts();
        b.toRts();
        return new RcQueuePair[] {a, b};
    }

    /** A WRITE of 256 KiB on another QP pair of the same engines, every byte checked. */
    static void assertAnotherQueuePairStillWorks(final RcTestbed bed, final int mtu)
    {
        final CompletionQueue cqA = new CompletionQueue(64);
        final CompletionQueue cqB = new CompletionQueue(64);
        final RcQueuePair[] pair = secondPair(bed, cqA, cqB, mtu);
        final SendWorkRequest send = new SendWorkRequest();
        final int length = 256 * 1024;
        final MemoryRegion source = bed.register(bed.pdA, length, AccessFlags.NONE);
        final MemoryRegion target = bed.register(bed.pdB, length, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        RcTestbed.fill(source.segment(), 4242);
        assertEquals(PostResult.OK, pair[0].postSend(send.reset().wrId(500).opcode(WorkRequestOpcode.RDMA_WRITE)
            .local(source, source.address(), length).remote(target.address(), target.rkey())));
        final WorkCompletion wc = bed.await(cqA, 200_000);
        assertEquals(500, wc.wrId());
        assertEquals(WorkCompletionStatus.SUCCESS, wc.status(), wc::toString);
        assertEquals(-1, source.segment().mismatch(target.segment()), "the second QP's data differs");
        assertEquals(QueuePairState.RTS, pair[1].state());
    }
}
