package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.api.BulkTransfer;
import io.spraynic.datapath.api.CompletionQueue;
import io.spraynic.datapath.api.Connection;
import io.spraynic.datapath.api.Nic;
import io.spraynic.datapath.api.ReceiveRequest;
import io.spraynic.datapath.api.Region;
import io.spraynic.datapath.api.SendRequest;
import io.spraynic.datapath.api.DrainReport;
import io.spraynic.datapath.nic.NicConnection;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionOpcode;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static io.spraynic.datapath.nic.ipc.IpcTestBed.WAIT;
import static io.spraynic.datapath.nic.ipc.IpcTestBed.fill;
import static io.spraynic.datapath.nic.ipc.IpcTestBed.mismatch;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One test body, written against the application API ({@link Nic}, {@link Connection}), run with the application
 * in the NIC's process ({@code EmbeddedNic}) and in front of it through shared memory ({@link NicClient} to an
 * {@link IpcConductor}), on spray connections and RoCEv2 queue pairs: every byte of WRITE, WRITE with immediate,
 * READ and SEND/RECV lands, and an application that names memory it does not hold, or posts on a closed connection,
 * gets a refusal (a post result or an error completion), never an exception, while the NIC keeps serving it.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NicApiPlacementTest
{
    private static final int ALL = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;
    private static final int REGION = 1 << 20;
    /** What a local buffer the NIC refuses completes with, in either placement. */
    private static final Set<WorkCompletionStatus> LOCAL_ERRORS = EnumSet.of(WorkCompletionStatus.LOC_PROT_ERR,
        WorkCompletionStatus.LOC_QP_OP_ERR, WorkCompletionStatus.LOC_LEN_ERR);

    /** Where the application runs. */
    enum Placement
    {
        IN_PROCESS, ACROSS_PROCESSES;

        Nic open(final IpcTestBed bed)
        {
            return this == IN_PROCESS ? bed.served : NicClient.connect(bed.dir, WAIT);
        }
    }

    @TempDir
    Path base;

    static Stream<Arguments> placements()
    {
        return Stream.of(Placement.values()).flatMap(placement -> Stream.of(NicConnection.Kind.values())
            .map(kind -> Arguments.of(placement, kind)));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("placements")
    void shouldDeliverEveryByteOfWriteWriteWithImmediateReadAndSend(final Placement placement, final NicConnection.Kind kind)
        throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, kind, Duration.ofSeconds(5)))
        {
            final Nic nic = placement.open(bed);
            assertEquals(kind, nic.mode());
            assertEquals(IpcTestBed.ip(0), nic.localIpv4(0));
            final Region mine = nic.register(REGION, ALL);
            final Region theirs = bed.peer.register(REGION, ALL);
            final Connection[] pair = connect(nic, bed, kind);
            final Connection c = pair[0];
            final Connection p = pair[1];
            assertEquals(kind, c.kind());
            assertEquals(p.streams(), c.streams());

            // RDMA WRITE through the one post/poll loop, over every stream the connection has
            fill(mine.segment(), 0, 256 * 1024, 1);
            BulkTransfer.write(c, mine, 0, 256 * 1024, theirs.address(), theirs.rkey(), 16 * 1024, false, WAIT);
            assertEquals(-1, mismatch(theirs.segment(), 0, 256 * 1024, 1), "WRITE");

            // RDMA WRITE with immediate: the data lands and the peer's receive completes with the immediate
            final ReceiveRequest receive = new ReceiveRequest();
            assertEquals(PostResult.OK, p.postReceive(0, receive.reset().wrId(5).buffer(null, 0, 0)));
            fill(mine.segment(), 256 * 1024, 8192, 2);
            final SendRequest send = new SendRequest();
            assertEquals(PostResult.OK, c.postSend(0, send.reset().wrId(10).opcode(WorkRequestOpcode.RDMA_WRITE_WITH_IMM)
                .local(mine, mine.address() + 256 * 1024, 8192).remote(theirs.address() + 256 * 1024, theirs.rkey())
                .immediate(0xCAFE_F00D)));
            final WorkCompletion written = poll(c.sendCompletionQueue(), "WRITE with immediate");
            assertEquals(10, written.wrId());
            assertEquals(WorkCompletionStatus.SUCCESS, written.status(), written.toString());
            assertEquals(WorkCompletionOpcode.RDMA_WRITE, written.opcode());
            final WorkCompletion immediate = BulkTransfer.awaitImmediate(p, WAIT);
            assertEquals(5, immediate.wrId());
            assertEquals(0xCAFE_F00D, immediate.immediateData());
            assertEquals(-1, mismatch(theirs.segment(), 256 * 1024, 8192, 2), "WRITE with immediate");

            // RDMA READ: the peer's bytes land in this application's memory
            fill(theirs.segment(), 512 * 1024, 64 * 1024, 3);
            assertEquals(PostResult.OK, c.postSend(0, send.reset().wrId(11).opcode(WorkRequestOpcode.RDMA_READ)
                .local(mine, mine.address() + 512 * 1024, 64 * 1024).remote(theirs.address() + 512 * 1024, theirs.rkey())));
            final WorkCompletion read = poll(c.sendCompletionQueue(), "READ");
            assertEquals(WorkCompletionStatus.SUCCESS, read.status(), read.toString());
            assertEquals(WorkCompletionOpcode.RDMA_READ, read.opcode());
            assertEquals(-1, mismatch(mine.segment(), 512 * 1024, 64 * 1024, 3), "READ");
            BulkTransfer.read(c, mine, 768 * 1024, 128 * 1024, theirs.address(), theirs.rkey(), 32 * 1024, WAIT);
            assertEquals(-1, mismatch(mine.segment(), 768 * 1024, 128 * 1024, 1), "READ back the first WRITE");

            // SEND from this application into a receive the peer posted
            assertEquals(PostResult.OK, p.postReceive(0, receive.reset().wrId(6)
                .buffer(theirs, theirs.address() + 600 * 1024, 8192)));
            fill(mine.segment(), 600 * 1024, 4000, 4);
            assertEquals(PostResult.OK, c.postSend(0, send.reset().wrId(12).opcode(WorkRequestOpcode.SEND)
                .local(mine, mine.address() + 600 * 1024, 4000)));
            assertEquals(WorkCompletionStatus.SUCCESS, poll(c.sendCompletionQueue(), "SEND").status());
            final WorkCompletion sent = poll(p.receiveCompletionQueue(), "the peer's receive");
            assertEquals(WorkCompletionStatus.SUCCESS, sent.status(), sent.toString());
            assertEquals(6, sent.wrId());
            assertEquals(4000, sent.byteLength());
            assertEquals(-1, mismatch(theirs.segment(), 600 * 1024, 4000, 4), "SEND");

            // SEND with immediate from the peer into a receive this application posted
            assertEquals(PostResult.OK, c.postReceive(0, receive.reset().wrId(7)
                .buffer(mine, mine.address() + 700 * 1024, 8192)));
            awaitTaken(c, send, theirs);
            fill(theirs.segment(), 900 * 1024, 6000, 5);
            assertEquals(PostResult.OK, p.postSend(0, send.reset().wrId(1).opcode(WorkRequestOpcode.SEND_WITH_IMM)
                .local(theirs, theirs.address() + 900 * 1024, 6000).immediate(0x1234)));
            final WorkCompletion got = poll(c.receiveCompletionQueue(), "this application's receive");
            assertEquals(WorkCompletionStatus.SUCCESS, got.status(), got.toString());
            assertEquals(7, got.wrId());
            assertEquals(6000, got.byteLength());
            assertTrue(got.hasImmediate());
            assertEquals(0x1234, got.immediateData());
            assertEquals(-1, mismatch(mine.segment(), 700 * 1024, 6000, 5), "SEND from the peer");
            assertEquals(WorkCompletionStatus.SUCCESS, poll(p.sendCompletionQueue(), "the peer's SEND").status());

            final DrainReport.ConnectionDrain drain = c.close(WAIT);
            assertTrue(drain.idle(), drain.toString());
            nic.deregister(mine);
            if (nic != bed.served)
            {
                nic.close();
            }
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("placements")
    void shouldRefuseMemoryTheApplicationDoesNotHoldAndPostsOnAClosedConnection(final Placement placement,
        final NicConnection.Kind kind) throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, kind, Duration.ofSeconds(5)))
        {
            final Nic nic = placement.open(bed);
            final Region mine = nic.register(REGION, ALL);
            final Region gone = nic.register(4096, ALL);
            final int goneLkey = gone.lkey();
            final long goneAddress = gone.address();
            nic.deregister(gone);
            assertThrows(IllegalStateException.class, () -> nic.deregister(gone), "deregistered twice");
            final Region theirs = bed.peer.register(REGION, ALL);
            assertThrows(IllegalArgumentException.class, () -> nic.deregister(theirs), "another NIC's region");
            final Connection[] pair = connect(nic, bed, kind);
            final Connection c = pair[0];
            final SendRequest send = new SendRequest();
            fill(theirs.segment(), 0, 4096, 9);

            // the peer's lkey, a made-up one, a deregistered one: none names this application's memory
            refused(c, send.reset().wrId(100).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(theirs.lkey(), theirs.address(), 64).remote(theirs.address(), theirs.rkey()), "the peer's lkey");
            refused(c, send.reset().wrId(101).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(mine.lkey() ^ 0x5A5A_5A5A, mine.address(), 64).remote(theirs.address(), theirs.rkey()), "a made-up lkey");
            refused(c, send.reset().wrId(102).opcode(WorkRequestOpcode.RDMA_READ)
                .local(goneLkey, goneAddress, 64).remote(theirs.address(), theirs.rkey()), "a deregistered lkey");
            assertEquals(-1, mismatch(theirs.segment(), 0, 4096, 9), "no refused WRITE touched the peer's memory");
            assertEquals(PostResult.INVALID_ARGUMENT, c.postSend(c.streams(), send), "a stream it does not have");
            assertEquals(PostResult.INVALID_ARGUMENT, c.postSend(-1, send));
            assertEquals(PostResult.INVALID_ARGUMENT, c.postReceive(c.streams(), new ReceiveRequest()));

            // and the connection still carries a good request, every byte of it
            fill(mine.segment(), 0, 64 * 1024, 10);
            BulkTransfer.write(c, mine, 0, 64 * 1024, theirs.address() + 4096, theirs.rkey(), 8192, false, WAIT);
            assertEquals(-1, mismatch(theirs.segment(), 4096, 64 * 1024, 10));

            // this application's lkey, but outside its region: past the end, before the start, a negative length. In
            // process the queue pair meets it and, as in ibverbs, goes to the error state (later requests flush); across
            // processes the conductor refuses it first
            final boolean flushes = placement == Placement.IN_PROCESS && kind == NicConnection.Kind.ROCEV2;
            refused(c, send.reset().wrId(103).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(mine, mine.address() + REGION - 8, 64).remote(theirs.address(), theirs.rkey()), "past the end");
            refused(c, send.reset().wrId(104).opcode(WorkRequestOpcode.RDMA_READ)
                .local(mine, mine.address() - 64, 64).remote(theirs.address(), theirs.rkey()), "before the start", flushes);
            refused(c, send.reset().wrId(105).opcode(WorkRequestOpcode.SEND)
                .local(mine, mine.address(), -64), "a negative length", flushes);
            refused(c, send.reset().wrId(106).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(mine, Long.MAX_VALUE, 64).remote(theirs.address(), theirs.rkey()), "an address that wraps", flushes);
            assertEquals(-1, mismatch(theirs.segment(), 0, 4096, 9), "no refused WRITE touched the peer's memory");

            c.close(WAIT);
            assertEquals(PostResult.INVALID_STATE, c.postSend(0, send.reset().wrId(107).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(mine, mine.address(), 64).remote(theirs.address(), theirs.rkey())));
            assertEquals(PostResult.INVALID_STATE, c.postReceive(0, new ReceiveRequest().buffer(mine, mine.address(), 64)));
            final WorkCompletion none = new WorkCompletion();
            assertTrue(!c.sendCompletionQueue().poll(none) || none.wrId() != 107, "nothing posted after the close");
            if (nic != bed.served)
            {
                nic.close();
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Placement.class)
    void shouldRefusePostsOnceTheApplicationClosedItsNic(final Placement placement) throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.SPRAY, Duration.ofSeconds(5)))
        {
            final Nic nic = placement.open(bed);
            final Region mine = nic.register(64 * 1024, ALL);
            final Connection c = connect(nic, bed, NicConnection.Kind.SPRAY)[0];
            final SendRequest send = new SendRequest().wrId(1).opcode(WorkRequestOpcode.SEND).local(mine, mine.address(), 64);
            if (placement == Placement.IN_PROCESS)
            {
                bed.conductor.close(); // its clients first, then the NIC they used
            }
            nic.close();
            assertEquals(PostResult.INVALID_STATE, c.postSend(0, send));
            assertEquals(PostResult.INVALID_STATE, c.postReceive(0, new ReceiveRequest().buffer(mine, mine.address(), 64)));
            final WorkCompletion completion = new WorkCompletion();
            assertEquals(0, c.sendCompletionQueue().poll(new WorkCompletion[]{completion, completion}),
                "polling a closed NIC's queue finds nothing, and does not throw");
        }
    }

    /** @return this application's connection and the peer's, connected on the wire (spray) or out of band (RoCEv2). */
    private static Connection[] connect(final Nic nic, final IpcTestBed bed, final NicConnection.Kind kind) throws Exception
    {
        if (kind == NicConnection.Kind.SPRAY)
        {
            final CompletableFuture<NicConnection> accepted = CompletableFuture.supplyAsync(() -> bed.peer.accept(WAIT));
            final Connection c = nic.connect(new int[]{IpcTestBed.ip(1)}, WAIT);
            final Connection p = accepted.get(30, TimeUnit.SECONDS);
            assertNotNull(p, "the peer accepted");
            return new Connection[]{c, p};
        }
        final Connection c = nic.createQueuePair(0);
        final Connection p = bed.peer.createQueuePair(0);
        c.connect(p.rocevEndpoint(), WAIT);
        p.connect(c.rocevEndpoint(), WAIT);
        return new Connection[]{c, p};
    }

    /** A request the NIC must refuse: accepted by the post, then completed with a local error, nothing else. */
    private static void refused(final Connection c, final SendRequest request, final String what)
    {
        refused(c, request, what, false);
    }

    /** @param mayFlush the connection may be in the error state already: a flush is a refusal too. */
    private static void refused(final Connection c, final SendRequest request, final String what, final boolean mayFlush)
    {
        assertEquals(PostResult.OK, c.postSend(0, request), what);
        final WorkCompletion completion = poll(c.sendCompletionQueue(), what);
        assertEquals(request.wrId(), completion.wrId(), what);
        assertTrue(LOCAL_ERRORS.contains(completion.status()) ||
            (mayFlush && completion.status() == WorkCompletionStatus.WR_FLUSH_ERR), what + ": " + completion);
        assertTrue(c.sendCompletionQueue().isEmpty(), what + ": one completion");
    }

    /**
     * Work requests reach the NIC in order: once a WRITE posted after a receive completed, the receive is the
     * transport's too, so the peer's SEND finds it (whichever placement carried it).
     */
    private static void awaitTaken(final Connection c, final SendRequest send, final Region theirs)
    {
        assertEquals(PostResult.OK, c.postSend(0, send.reset().wrId(99).opcode(WorkRequestOpcode.RDMA_WRITE)
            .local(null, 0, 0).remote(theirs.address(), theirs.rkey())));
        assertEquals(WorkCompletionStatus.SUCCESS, poll(c.sendCompletionQueue(), "a WRITE behind the receive").status());
    }

    private static WorkCompletion poll(final CompletionQueue cq, final String what)
    {
        final WorkCompletion completion = new WorkCompletion();
        IpcTestBed.await(() -> cq.poll(completion), WAIT, what);
        return completion;
    }
}
