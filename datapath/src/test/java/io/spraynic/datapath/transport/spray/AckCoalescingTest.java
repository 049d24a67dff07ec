package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/PROTOCOL.md S6.4-2 (issue 13): the packets of one receive burst that each call for an ACK (one-packet
 * messages: AckReq on every one) draw one ACK per path, sent when the worker has handled the burst, and that ACK
 * acknowledges every one of them; packets of later bursts draw ACKs of their own.
 */
@Timeout(60)
class AckCoalescingTest
{
    private static final int MESSAGE = 64;
    private static final int PATHS = 8;

    private final SprayTestBed bed = new SprayTestBed(new SprayTestBed.Options().paths(PATHS));
    private final MemoryRegion src = bed.region(bed.pdA, 64 * MESSAGE, AccessFlags.NONE, 7);
    private final MemoryRegion dst =
        bed.region(bed.pdB, 64 * MESSAGE, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);

    @AfterEach
    void close()
    {
        bed.close();
    }

    private void postWrites(final int first, final int count)
    {
        for (int i = first; i < first + count; i++)
        {
            assertEquals(PostResult.OK, bed.a.postSend(0, new SendWorkRequest().wrId(i)
                .opcode(WorkRequestOpcode.RDMA_WRITE).local(src, src.address() + (long)i * MESSAGE, MESSAGE)
                .remote(dst.address() + (long)i * MESSAGE, dst.rkey())));
        }
    }

    private long b(final int counter)
    {
        return bed.b.counters().get(counter);
    }

    private int pathsAcknowledgedByB(final long[] before)
    {
        int paths = 0;
        for (int path = 0; path < PATHS; path++)
        {
            final long sent = bed.b.pathCounters(path).get(SprayCounters.ACKS_SENT) - before[path];
            assertTrue(sent <= 1, "path " + path + " acknowledged " + sent + " times in one burst");
            paths += (int)sent;
        }
        return paths;
    }

    private long[] acksSentPerPath()
    {
        final long[] sent = new long[PATHS];
        for (int path = 0; path < PATHS; path++)
        {
            sent[path] = bed.b.pathCounters(path).get(SprayCounters.ACKS_SENT);
        }
        return sent;
    }

    private long[] rxPerPath()
    {
        final long[] rx = new long[PATHS];
        for (int path = 0; path < PATHS; path++)
        {
            rx[path] = bed.b.pathCounters(path).get(SprayCounters.RX_PACKETS);
        }
        return rx;
    }

    @Test
    void shouldAcknowledgeABurstOfOnePacketMessagesOncePerPathS643()
    {
        final int messages = 32;
        postWrites(0, messages);
        final long rxBefore = b(SprayCounters.RX_PACKETS);
        final long acksBefore = b(SprayCounters.ACKS_SENT);
        final long[] perPathBefore = acksSentPerPath();
        final long[] rxPerPathBefore = rxPerPath();
        bed.workerA.doWork(); // A sends them all in one TX burst...
        bed.workerB.doWork(); // ...and B takes them in one receive burst
        assertEquals(messages, b(SprayCounters.RX_PACKETS) - rxBefore, "premise: all in one receive burst");

        int pathsWithPackets = 0;
        final long[] rxAfter = rxPerPath();
        for (int path = 0; path < PATHS; path++)
        {
            pathsWithPackets += rxAfter[path] > rxPerPathBefore[path] ? 1 : 0;
        }
        assertTrue(pathsWithPackets > 1 && pathsWithPackets < messages, "sprayed: " + pathsWithPackets);
        // one ACK per path that had packets (or the probe announcing them, S8.3.1), and no other
        final long acks = b(SprayCounters.ACKS_SENT) - acksBefore;
        assertEquals(acks, pathsAcknowledgedByB(perPathBefore), "at most one per path");
        assertTrue(acks >= pathsWithPackets && acks <= PATHS, acks + " ACKs for " + pathsWithPackets + " paths");

        // those ACKs complete every message at A, none is sent again
        final List<WorkCompletion> done = bed.sendCompletionsA(messages);
        assertEquals(messages, done.size());
        for (final WorkCompletion wc : done)
        {
            assertEquals(WorkCompletionStatus.SUCCESS, wc.status());
        }
        assertEquals(0, bed.a.counters().get(SprayCounters.RETRANSMITTED));
        assertEquals(-1L, src.segment().asSlice(0, messages * MESSAGE)
            .mismatch(dst.segment().asSlice(0, messages * MESSAGE)));
    }

    @Test
    void shouldAcknowledgePacketsOfLaterBurstsWithAcksOfTheirOwnS643()
    {
        final long acksBefore = b(SprayCounters.ACKS_SENT);
        for (int i = 0; i < 6; i++)
        {
            final long[] perPathBefore = acksSentPerPath();
            final long rxBefore = b(SprayCounters.RX_PACKETS);
            postWrites(i, 1);
            bed.workerA.doWork();
            bed.workerB.doWork();
            assertEquals(1, b(SprayCounters.RX_PACKETS) - rxBefore);
            assertEquals(1, pathsAcknowledgedByB(perPathBefore), "its own ACK, at the end of its burst");
            assertEquals(1, bed.sendCompletionsA(1).size(), "message " + i + " completes");
        }
        assertEquals(6, b(SprayCounters.ACKS_SENT) - acksBefore);
    }
}
