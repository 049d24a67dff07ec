package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.NegativeAckHeader;
import io.spraynic.datapath.wire.SprayOpcodes;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Resource exhaustion signalled to the sender and limits advertised at set-up (docs/PROTOCOL.md S10.2): a message
 * beyond the receiver's inbound window is refused with an RNR NACK of reason {@code NO_RESOURCES} and retried, not
 * lost; a sender that learned the window and the READ limit from CONH keeps to them (the rest waits, queued); absurd
 * advertised limits are clamped; a data packet for a connection whose engine cannot lend it tables is counted and
 * dropped, and nothing throws.
 */
class SprayResourceLimitsTest
{
    private static final int PACKET = 4096;

    /** Counts the RNR NACKs of reason NO_RESOURCES a side transmits (they still go through). */
    private static final class NackWatch
    {
        long noResources;
        /** Of those, the ones of refusal 0: a packet dropped unseen, no record to number a refusal in. */
        long unnumbered;

        SprayTestBed.Options watch(final SprayTestBed.Options options)
        {
            return options.wrapB((plane, port) ->
            {
                final SprayTestBed.SwitchablePort watched = new SprayTestBed.SwitchablePort(port);
                watched.corrupt = (memory, offset, length) ->
                {
                    final long bth = offset + SprayTestBed.DATA_OFFSET_BTH;
                    if (length > SprayTestBed.DATA_OFFSET_BTH + BaseTransportHeader.LENGTH &&
                        BaseTransportHeader.opcode(memory, bth) == SprayOpcodes.NACK)
                    {
                        final long nakh = bth + BaseTransportHeader.LENGTH;
                        if (NegativeAckHeader.syndrome(memory, nakh) == NegativeAckHeader.SYNDROME_RNR &&
                            NegativeAckHeader.reason(memory, nakh) == NegativeAckHeader.RNR_REASON_NO_RESOURCES)
                        {
                            noResources++;
                            if (NegativeAckHeader.refusal(memory, nakh) == 0)
                            {
                                unnumbered++;
                            }
                        }
                    }
                    return false;
                };
                return watched;
            });
        }
    }

    @Test
    void shouldRefuseAMessageBeyondTheInboundWindowWithAnRnrNackAndRetryItWithoutPathLossS102()
    {
        // B tracks 16 inbound messages: a window of 14 and 2 in reserve. A was not told the window (opened
        // directly: the default 1024), so it sends all 16 SENDs; none has a receive yet, so the first 14 hold
        // their records (RNR, no receive) and the last 2 find no room in the window
        final int messages = 16;
        final int packets = 3;
        final NackWatch nacks = new NackWatch();
        final SprayTestBed.Options options = nacks.watch(new SprayTestBed.Options());
        options.streams = messages;
        options.rnrRetries = 1000;
        options.configureConnection = (host, c) ->
        {
            if (host == 2)
            {
                c.depths(1024, 1024, messages);
            }
        };
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final MemoryRegion src = bed.region(bed.pdA, (long)messages * packets * PACKET, AccessFlags.NONE, 5);
            final MemoryRegion dst = bed.region(bed.pdB, (long)messages * packets * PACKET, AccessFlags.LOCAL_WRITE, 0);
            final SendWorkRequest wr = new SendWorkRequest();
            for (int i = 0; i < messages; i++)
            {
                assertEquals(PostResult.OK, bed.a.postSend(i, wr.reset().wrId(i).opcode(WorkRequestOpcode.SEND)
                    .local(src, src.address() + (long)i * packets * PACKET, packets * PACKET)));
            }
            bed.runUntil(() -> nacks.noResources >= 2 * packets, 20_000);
            assertTrue(bed.sendCqA.isEmpty());
            final ReceiveWorkRequest rr = new ReceiveWorkRequest();
            for (int i = 0; i < messages; i++)
            {
                bed.b.postReceive(i, rr.wrId(100 + i).buffer(dst, dst.address() + (long)i * packets * PACKET,
                    packets * PACKET));
            }
            final List<WorkCompletion> done = bed.sendCompletionsA(messages);
            assertEquals(messages, done.size());
            for (final WorkCompletion wc : done)
            {
                assertEquals(WorkCompletionStatus.SUCCESS, wc.status(), wc::toString);
            }
            assertEquals(messages, SprayTestBed.drain(bed.receiveCqB).size());
            assertEquals(-1L, src.segment().mismatch(dst.segment()));

            // refused, not lost: the path layer saw every packet arrive, nothing was retransmitted or failed
            final long refusedForResources = bed.b.counters().get(SprayCounters.NO_RESOURCES);
            assertTrue(refusedForResources >= 2 * packets, "refused packets " + refusedForResources);
            assertTrue(nacks.noResources >= 2 * packets);
            assertEquals(0, bed.a.counters().get(SprayCounters.LOST));
            assertEquals(0, bed.a.counters().get(SprayCounters.RETRANSMITTED));
            assertEquals(0, bed.a.counters().get(SprayCounters.TIMEOUTS));
            assertEquals(0, bed.a.counters().get(SprayCounters.PATH_FAILURES));
            // every packet sent again belongs to a refused attempt: one refused packet, one packet again
            final long resent = bed.a.counters().get(SprayCounters.TX_PACKETS) - (long)messages * packets;
            assertEquals(bed.b.counters().get(SprayCounters.NACKS_SENT), resent);
            assertTrue(resent >= refusedForResources);
            assertEquals(0, bed.a.counters().get(SprayCounters.QUERIES_SENT));
        }
    }

    @Test
    void shouldKeepMessagesBeyondTheAdvertisedWindowQueuedNotFailedS102()
    {
        // B tracks 4 inbound messages and advertises a window of 3 in its CONNECT_ACK: of 8 SENDs without a
        // receive, A starts 3 and keeps 5 queued; nothing reaches B's reserve, nothing is refused for resources
        final int messages = 8;
        final SprayTestBed.Options options = new SprayTestBed.Options();
        options.handshake = true;
        options.streams = messages;
        options.rnrRetries = 1000;
        options.configureConnection = (host, c) ->
        {
            if (host == 2)
            {
                c.depths(1024, 1024, 4);
            }
        };
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            assertEquals(3, bed.a.handshakeConfig.peerWindow);
            assertEquals(InboundWindow.windowFor(1024), bed.b.handshakeConfig.peerWindow); // A's 1024 records
            final MemoryRegion src = bed.region(bed.pdA, (long)messages * PACKET, AccessFlags.NONE, 6);
            final MemoryRegion dst = bed.region(bed.pdB, (long)messages * PACKET, AccessFlags.LOCAL_WRITE, 0);
            final SendWorkRequest wr = new SendWorkRequest();
            for (int i = 0; i < messages; i++)
            {
                assertEquals(PostResult.OK, bed.a.postSend(i, wr.reset().wrId(i).opcode(WorkRequestOpcode.SEND)
                    .local(src, src.address() + (long)i * PACKET, PACKET)));
            }
            int mostStarted = 0;
            for (int step = 0; step < 3000; step++)
            {
                bed.step();
                mostStarted = Math.max(mostStarted, bed.a.messagesStarted());
            }
            assertEquals(3, mostStarted);
            assertTrue(bed.sendCqA.isEmpty(), "queued, not failed");
            final ReceiveWorkRequest rr = new ReceiveWorkRequest();
            for (int i = 0; i < messages; i++)
            {
                bed.b.postReceive(i, rr.wrId(100 + i).buffer(dst, dst.address() + (long)i * PACKET, PACKET));
            }
            final List<WorkCompletion> done = bed.sendCompletionsA(messages);
            assertEquals(messages, done.size());
            for (final WorkCompletion wc : done)
            {
                assertEquals(WorkCompletionStatus.SUCCESS, wc.status(), wc::toString);
            }
            assertEquals(-1L, src.segment().mismatch(dst.segment()));
            assertEquals(0, bed.b.counters().get(SprayCounters.NO_RESOURCES));
            assertEquals(0, bed.a.messagesStarted());
        }
    }

    @Test
    void shouldNeverHaveMoreReadsOutstandingThanTheResponderAdvertisesS102()
    {
        final int reads = 8;
        final SprayTestBed.Options options = new SprayTestBed.Options();
        options.handshake = true;
        options.configureConnection = (host, c) ->
        {
            if (host == 2)
            {
                c.responderReads(2);
            }
        };
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            assertEquals(2, bed.a.handshakeConfig.peerReads);
            final MemoryRegion remote = bed.region(bed.pdB, (long)reads * 2 * PACKET, AccessFlags.REMOTE_READ, 7);
            final MemoryRegion local = bed.region(bed.pdA, (long)reads * 2 * PACKET, AccessFlags.LOCAL_WRITE, 0);
            final SendWorkRequest wr = new SendWorkRequest();
            for (int i = 0; i < reads; i++)
            {
                assertEquals(PostResult.OK, bed.a.postSend(i % 4, wr.reset().wrId(i).opcode(WorkRequestOpcode.RDMA_READ)
                    .local(local, local.address() + (long)i * 2 * PACKET, 2 * PACKET)
                    .remote(remote.address() + (long)i * 2 * PACKET, remote.rkey())));
            }
            int mostStarted = 0;
            int completed = 0;
            for (int step = 0; step < 50_000 && completed < reads; step++)
            {
                bed.step();
                mostStarted = Math.max(mostStarted, bed.a.readsStarted());
                for (final WorkCompletion wc : SprayTestBed.drain(bed.sendCqA))
                {
                    assertEquals(WorkCompletionStatus.SUCCESS, wc.status(), wc::toString);
                    completed++;
                }
            }
            assertEquals(reads, completed, () -> "A " + bed.a + " started " + bed.a.readsStarted() + " slots " +
                bed.a.sendSlotsInUse() + "; B " + bed.b);
            assertEquals(2, mostStarted);
            assertEquals(-1L, remote.segment().mismatch(local.segment()));
            assertEquals(0, bed.b.counters().get(SprayCounters.NO_RESOURCES), "a compliant requester is never refused");
        }
    }

    @Test
    void shouldRefuseAReadBeyondTheResponderLimitWithAnRnrNackWhenTheRequesterWasNotToldS102()
    {
        // opened directly: A assumes the default READ limit, B serves 1 READ at once and refuses the others
        final int reads = 6;
        final NackWatch nacks = new NackWatch();
        final SprayTestBed.Options options = nacks.watch(new SprayTestBed.Options());
        options.rnrRetries = 1000;
        options.configureConnection = (host, c) ->
        {
            if (host == 2)
            {
                c.responderReads(1);
            }
        };
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final int size = 8 * PACKET;
            final MemoryRegion remote = bed.region(bed.pdB, (long)reads * size, AccessFlags.REMOTE_READ, 8);
            final MemoryRegion local = bed.region(bed.pdA, (long)reads * size, AccessFlags.LOCAL_WRITE, 0);
            final SendWorkRequest wr = new SendWorkRequest();
            for (int i = 0; i < reads; i++)
            {
                assertEquals(PostResult.OK, bed.a.postSend(i % 4, wr.reset().wrId(i).opcode(WorkRequestOpcode.RDMA_READ)
                    .local(local, local.address() + (long)i * size, size)
                    .remote(remote.address() + (long)i * size, remote.rkey())));
            }
            final List<WorkCompletion> done = bed.sendCompletionsA(reads);
            assertEquals(reads, done.size());
            for (final WorkCompletion wc : done)
            {
                assertEquals(WorkCompletionStatus.SUCCESS, wc.status(), wc::toString);
            }
            assertEquals(-1L, remote.segment().mismatch(local.segment()));
            assertTrue(bed.b.counters().get(SprayCounters.NO_RESOURCES) > 0);
            assertTrue(nacks.noResources > 0);
            assertTrue(bed.a.counters().get(SprayCounters.RNR_RETRIES) > 0);
            assertEquals(0, bed.a.counters().get(SprayCounters.LOST));
            assertEquals(0, bed.a.counters().get(SprayCounters.PATH_FAILURES));
        }
    }

    @Test
    void shouldClampAbsurdAdvertisedLimitsS102()
    {
        final SprayConnectionConfig c = new SprayConnectionConfig();
        c.peerLimits(0, 0); // not advertised: the defaults
        assertEquals(SprayConnectionConfig.DEFAULT_WINDOW, c.peerWindow);
        assertEquals(SprayConnectionConfig.DEFAULT_READS, c.peerReads);
        c.peerLimits(-5, -1); // no wire value is negative, but nothing else is trusted either
        assertEquals(SprayConnectionConfig.DEFAULT_WINDOW, c.peerWindow);
        assertEquals(SprayConnectionConfig.DEFAULT_READS, c.peerReads);
        c.peerLimits(Integer.MAX_VALUE, Integer.MAX_VALUE);
        assertEquals(SprayConnectionConfig.MAX_WINDOW, c.peerWindow);
        assertEquals(SprayConnectionConfig.MAX_READS, c.peerReads);
        c.peerLimits(1, 1);
        assertEquals(1, c.peerWindow);
        assertEquals(1, c.peerReads);
        assertThrows(IllegalArgumentException.class, () -> c.responderReads(0));
        assertThrows(IllegalArgumentException.class, () -> c.responderReads(256));
        // what a table advertises: its records less the reserve, never 0
        assertEquals(1, InboundWindow.windowFor(1));
        assertEquals(1, InboundWindow.windowFor(2));
        assertEquals(3, InboundWindow.windowFor(4));
        assertEquals(896, InboundWindow.windowFor(1024));
        assertEquals(896, new SprayConnectionConfig().advertisedWindow());
    }

    @Test
    void shouldTakeAHugeAdvertisedWindowAsNoMoreThanTheSendSlotsS102()
    {
        // B's huge window (65535) and READ limit (255) cannot make A start more than its own 4 send slots
        final SprayTestBed.Options options = new SprayTestBed.Options();
        options.handshake = true;
        options.depth = 4;
        options.configureConnection = (host, c) ->
        {
            if (host == 2)
            {
                c.depths(4, 4, 80_000).responderReads(255);
            }
        };
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            assertEquals(SprayConnectionConfig.MAX_WINDOW, bed.a.handshakeConfig.peerWindow);
            assertEquals(SprayConnectionConfig.MAX_READS, bed.a.handshakeConfig.peerReads);
            final MemoryRegion src = bed.region(bed.pdA, 8 * 64, AccessFlags.NONE, 9);
            final MemoryRegion dst = bed.region(bed.pdB, 8 * 64, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
            final SendWorkRequest wr = new SendWorkRequest();
            int posted = 0;
            for (int i = 0; i < 8; i++)
            {
                if (bed.a.postSend(0, wr.reset().wrId(i).opcode(WorkRequestOpcode.RDMA_WRITE)
                    .local(src, src.address() + i * 64L, 64).remote(dst.address() + i * 64L, dst.rkey())) == PostResult.OK)
                {
                    posted++;
                }
            }
            assertEquals(4, posted, "the send queue is the bound");
            final List<WorkCompletion> done = bed.sendCompletionsA(posted);
            assertEquals(posted, done.size());
            done.forEach(wc -> assertEquals(WorkCompletionStatus.SUCCESS, wc.status(), wc::toString));
        }
    }

    @Test
    void shouldCountAndDropADataPacketForAConnectionThatCannotBorrowTablesAndRecoverS102()
    {
        // B's engine lends one set of tables: the bed's connection holds it (a SEND waiting for a receive), so the
        // WRITE of a second connection finds the pool at its limit; its packets are dropped and counted, nothing
        // throws, and once the first connection is idle and gives the set back the WRITE is placed
        final SprayTestBed.Options options = new SprayTestBed.Options();
        options.rnrRetries = 1000;
        options.configure = (host, config) ->
        {
            if (host == 2)
            {
                config.connectionStorage(0, 1).storageLingerNanos(0);
            }
        };
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final SprayConnection a2 = bed.engineA.open(bed.initiatorConfig().cids(0x000A03, 0x000B04)
                .initialPsns(0x3000, 0x4000).keysFromCids());
            final SprayConnection b2 = bed.engineB.open(bed.responderConfig().cids(0x000B04, 0x000A03)
                .initialPsns(0x4000, 0x3000).keysFromCids());
            final MemoryRegion src = bed.region(bed.pdA, 2 * PACKET, AccessFlags.NONE, 10);
            final MemoryRegion dst = bed.region(bed.pdB, 2 * PACKET, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
            final SendWorkRequest wr = new SendWorkRequest();
            assertEquals(PostResult.OK, bed.a.postSend(0, wr.reset().wrId(1).opcode(WorkRequestOpcode.SEND)
                .local(src, src.address(), 64)));
            bed.runUntil(() -> bed.a.counters().get(SprayCounters.RNR_RETRIES) > 0, 10_000); // B's tables held
            assertEquals(PostResult.OK, a2.postSend(0, wr.reset().wrId(2).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address() + PACKET, PACKET).remote(dst.address() + PACKET, dst.rkey())));
            bed.runUntil(() -> b2.counters().get(SprayCounters.NO_RESOURCES) > 0, 10_000);
            assertTrue(bed.engineB.storagePool().exhausted() > 0);
            assertEquals(0, b2.counters().get(SprayCounters.RX_PACKETS), "dropped before the path layer");
            assertEquals(PostResult.QUEUE_FULL, b2.postReceive(0, new ReceiveWorkRequest().wrId(9)
                .buffer(dst, dst.address(), 64)));
            assertEquals(-1L, dst.segment().asSlice(PACKET, PACKET).mismatch(MemorySegment.ofArray(new byte[PACKET])));

            bed.b.postReceive(0, new ReceiveWorkRequest().wrId(10).buffer(dst, dst.address(), 64));
            final List<WorkCompletion> done = bed.sendCompletionsA(2);
            assertEquals(2, done.size());
            done.forEach(wc -> assertEquals(WorkCompletionStatus.SUCCESS, wc.status(), wc::toString));
            assertEquals(-1L, dst.segment().asSlice(PACKET, PACKET).mismatch(src.segment().asSlice(PACKET, PACKET)));
            assertEquals(0, bed.workerA.faults() + bed.workerB.faults(), "nothing threw");
        }
    }
    /**
     * S10.2-1, S10.2-2: a data packet dropped unseen because the engine's storage pool is at its limit is told to
     * its sender with an RNR NACK of reason NO_RESOURCES (refusal 0: no record holds a refusal), within the engine's
     * response rate, at most one NACK per dropped packet; the sender takes it as an RNR (waits, retries) and the
     * WRITE is placed once the pool lends a set again.
     */
    @Test
    void shouldNackADataPacketDroppedAtTheStoragePoolLimitWithinTheResponseRateS102()
    {
        for (final int burst : new int[] {256, 1})
        {
            final NackWatch nacks = new NackWatch();
            final SprayTestBed.Options options = nacks.watch(new SprayTestBed.Options());
            options.rnrRetries = 1000;
            options.configure = (host, config) ->
            {
                if (host == 2)
                {
                    config.connectionStorage(0, 1).storageLingerNanos(0).connectResponseRate(1, burst);
                }
            };
            try (SprayTestBed bed = new SprayTestBed(options))
            {
                final SprayConnection a2 = bed.engineA.open(bed.initiatorConfig().cids(0x000A03, 0x000B04)
                    .initialPsns(0x3000, 0x4000).keysFromCids());
                final SprayConnection b2 = bed.engineB.open(bed.responderConfig().cids(0x000B04, 0x000A03)
                    .initialPsns(0x4000, 0x3000).keysFromCids());
                final MemoryRegion src = bed.region(bed.pdA, 4 * PACKET, AccessFlags.NONE, 11);
                final MemoryRegion dst =
                    bed.region(bed.pdB, 4 * PACKET, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
                final SendWorkRequest wr = new SendWorkRequest();
                assertEquals(PostResult.OK, bed.a.postSend(0, wr.reset().wrId(1).opcode(WorkRequestOpcode.SEND)
                    .local(src, src.address(), 64)));
                bed.runUntil(() -> bed.a.counters().get(SprayCounters.RNR_RETRIES) > 0, 10_000); // B's set held
                final long nacksBefore = nacks.noResources;
                assertEquals(PostResult.OK, a2.postSend(0, wr.reset().wrId(2).opcode(WorkRequestOpcode.RDMA_WRITE)
                    .local(src, src.address() + PACKET, 3 * PACKET).remote(dst.address() + PACKET, dst.rkey())));
                bed.runUntil(() -> b2.counters().get(SprayCounters.NO_RESOURCES) >= 6, 20_000);
                final long dropped = b2.counters().get(SprayCounters.NO_RESOURCES);
                final long told = nacks.noResources - nacksBefore;
                assertTrue(bed.engineB.storagePool().exhausted() > 0);
                assertEquals(0, b2.counters().get(SprayCounters.RX_PACKETS), "dropped before the path layer");
                assertTrue(told > 0, "the sender is told (burst " + burst + ")");
                assertEquals(told, b2.counters().get(SprayCounters.NACKS_SENT), "every NACK B's b2 sent is one");
                assertTrue(told <= dropped, "at most one NACK per dropped packet: " + told + " of " + dropped);
                if (burst == 1)
                {
                    // the response rate (1 a second, burst 1) holds: the run lasts far less than a second of the
                    // bed's clock, so one NACK, and the sender learns of the rest from the losses it recovers
                    assertTrue(bed.now < 1_000_000_000L, "virtual time " + bed.now);
                    assertEquals(1, told, "NACKs at a rate of one a second, burst one");
                }
                assertTrue(a2.counters().get(SprayCounters.RNR_RETRIES) > 0, "the sender waits as for an RNR");

                bed.b.postReceive(0, new ReceiveWorkRequest().wrId(10).buffer(dst, dst.address(), 64));
                final List<WorkCompletion> done = bed.sendCompletionsA(2);
                assertEquals(2, done.size());
                done.forEach(wc -> assertEquals(WorkCompletionStatus.SUCCESS, wc.status(), wc::toString));
                assertEquals(-1L, dst.segment().asSlice(PACKET, 3 * PACKET)
                    .mismatch(src.segment().asSlice(PACKET, 3 * PACKET)));
                assertEquals(0, bed.workerA.faults() + bed.workerB.faults(), "nothing threw");
            }
        }
    }

    /**
     * S10.2-1: with the window and the reserve record both used up, the first packet of a further message is dropped
     * unseen; its sender is told with an RNR NACK of reason NO_RESOURCES and refusal 0, and every message still
     * completes once receives are posted.
     */
    @Test
    void shouldNackAPacketDroppedUnseenWhenNoRecordIsLeftS102()
    {
        final int messages = 16;
        final NackWatch nacks = new NackWatch();
        final SprayTestBed.Options options = nacks.watch(new SprayTestBed.Options());
        options.streams = messages;
        options.rnrRetries = 1000;
        options.configureConnection = (host, c) ->
        {
            if (host == 2)
            {
                c.depths(1024, 1024, 8); // a window of 7 records and 1 in reserve
            }
        };
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final MemoryRegion src = bed.region(bed.pdA, (long)messages * PACKET, AccessFlags.NONE, 9);
            final MemoryRegion dst = bed.region(bed.pdB, (long)messages * PACKET, AccessFlags.LOCAL_WRITE, 0);
            final SendWorkRequest wr = new SendWorkRequest();
            for (int i = 0; i < messages; i++)
            {
                assertEquals(PostResult.OK, bed.a.postSend(i, wr.reset().wrId(i).opcode(WorkRequestOpcode.SEND)
                    .local(src, src.address() + (long)i * PACKET, PACKET)));
            }
            bed.runUntil(() -> nacks.unnumbered > 0, 20_000);
            assertTrue(bed.b.counters().get(SprayCounters.NO_RESOURCES) >= nacks.unnumbered,
                "no packet draws more than one NACK");
            assertTrue(bed.a.counters().get(SprayCounters.RNR_RETRIES) > 0);

            final ReceiveWorkRequest rr = new ReceiveWorkRequest();
            for (int i = 0; i < messages; i++)
            {
                bed.b.postReceive(i, rr.wrId(100 + i).buffer(dst, dst.address() + (long)i * PACKET, PACKET));
            }
            final List<WorkCompletion> done = bed.sendCompletionsA(messages);
            assertEquals(messages, done.size());
            done.forEach(wc -> assertEquals(WorkCompletionStatus.SUCCESS, wc.status(), wc::toString));
            assertEquals(messages, SprayTestBed.drain(bed.receiveCqB).size());
            assertEquals(-1L, src.segment().mismatch(dst.segment()));
            assertEquals(0, bed.workerA.faults() + bed.workerB.faults(), "nothing threw");
        }
    }
}
