package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.api.ReceiveRequest;
import io.spraynic.datapath.api.RocevEndpoint;
import io.spraynic.datapath.api.SendRequest;
import io.spraynic.datapath.api.DrainReport;
import io.spraynic.datapath.nic.NicConnection;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionOpcode;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.spraynic.datapath.nic.ipc.IpcTestBed.WAIT;
import static io.spraynic.datapath.nic.ipc.IpcTestBed.fill;
import static io.spraynic.datapath.nic.ipc.IpcTestBed.mismatch;
import static io.spraynic.datapath.nic.ipc.IpcTestBed.poll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client in this JVM uses a NIC through its IPC directory exactly as one in another process would (files mapped
 * twice, commands through the control file); the peer is a second NIC used in-process.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class IpcConductorTest
{
    private static final int ALL = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;

    @TempDir
    Path base;

    @Test
    void shouldWriteSendAndReceiveThroughASprayConnectionAndReleaseEverythingOnClose() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.SPRAY, Duration.ofSeconds(5));
            Arena arena = Arena.ofShared())
        {
            final MemoryRegion peerRegion = bed.peer.register(arena.allocate(1 << 20, 4096), ALL);
            final NicClient client = NicClient.connect(bed.dir, WAIT);
            assertEquals(NicConnection.Kind.SPRAY, client.mode());
            assertEquals(ProcessHandle.current().pid(), client.nicPid());
            assertEquals(IpcTestBed.ip(0), client.localIpv4(0));
            assertEquals(InetAddress.getByAddress(new byte[]{10, 0, 0, 1}), client.localAddress(0));
            final ClientRegion region = client.register(1 << 20, ALL);
            assertEquals(1L, bed.counter("ipc: regions"));

            final CompletableFuture<NicConnection> accepted = CompletableFuture.supplyAsync(() -> bed.peer.accept(WAIT));
            final ClientConnection c = client.connect(new int[]{IpcTestBed.ip(1)}, WAIT);
            final NicConnection p = accepted.get(30, TimeUnit.SECONDS);
            assertNotNull(p, "the peer accepted");
            assertEquals(p.streams(), c.streams());

            // RDMA WRITE: the client's bytes land in the peer's memory
            fill(region.segment(), 0, 256 * 1024, 11);
            final SendRequest send = new SendRequest();
            for (int i = 0; i < 4; i++)
            {
                send.reset().wrId(i).opcode(WorkRequestOpcode.RDMA_WRITE)
                    .local(region, region.address() + i * 65536L, 65536).remote(peerRegion.address() + i * 65536L, peerRegion.rkey());
                assertEquals(PostResult.OK, c.postSend(i % c.streams(), send));
            }
            for (int i = 0; i < 4; i++)
            {
                final WorkCompletion done = poll(c.sendCompletionQueue(), "write " + i);
                assertEquals(WorkCompletionStatus.SUCCESS, done.status(), done.toString());
                assertEquals(WorkCompletionOpcode.RDMA_WRITE, done.opcode());
            }
            assertEquals(-1, mismatch(peerRegion.segment(), 0, 256 * 1024, 11));

            // SEND from the client into a receive the peer posted
            assertEquals(PostResult.OK, p.postReceive(0, new ReceiveWorkRequest().wrId(500)
                .buffer(peerRegion, peerRegion.address() + 512 * 1024, 8192)));
            fill(region.segment(), 300 * 1024, 4096, 12);
            send.reset().wrId(9).opcode(WorkRequestOpcode.SEND).local(region, region.address() + 300 * 1024, 4096);
            assertEquals(PostResult.OK, c.postSend(0, send));
            assertEquals(WorkCompletionStatus.SUCCESS, poll(c.sendCompletionQueue(), "send").status());
            final WorkCompletion received = poll(p.receiveCompletionQueue(), "peer's receive");
            assertEquals(WorkCompletionStatus.SUCCESS, received.status(), received.toString());
            assertEquals(4096, received.byteLength());
            assertEquals(-1, mismatch(peerRegion.segment(), 512 * 1024, 4096, 12));

            // SEND from the peer into a receive the client posted: the NIC places it where the client sees it
            assertEquals(PostResult.OK, c.postReceive(0, new ReceiveRequest().wrId(77)
                .buffer(region, region.address() + 700 * 1024, 8192)));
            fill(peerRegion.segment(), 900 * 1024, 6000, 13);
            awaitPosted(bed, 6); // the receive reached the NIC before the peer sends
            assertEquals(PostResult.OK, p.postSend(0, new SendWorkRequest().wrId(1).opcode(WorkRequestOpcode.SEND_WITH_IMM)
                .local(peerRegion, peerRegion.address() + 900 * 1024, 6000).immediate(0x1234)));
            final WorkCompletion got = poll(c.receiveCompletionQueue(), "client's receive");
            assertEquals(WorkCompletionStatus.SUCCESS, got.status(), got.toString());
            assertEquals(77, got.wrId());
            assertEquals(6000, got.byteLength());
            assertTrue(got.hasImmediate());
            assertEquals(0x1234, got.immediateData());
            assertEquals(-1, mismatch(region.segment(), 700 * 1024, 6000, 13));

            // a request naming memory the client does not hold completes with an error; nothing else happens
            send.reset().wrId(66).opcode(WorkRequestOpcode.RDMA_WRITE).local(peerRegion.lkey() ^ 0x5A5A, 0, 64)
                .remote(peerRegion.address(), 1);
            assertEquals(PostResult.OK, c.postSend(0, send));
            final WorkCompletion refused = poll(c.sendCompletionQueue(), "refused write");
            assertEquals(66, refused.wrId());
            assertEquals(WorkCompletionStatus.LOC_PROT_ERR, refused.status());
            assertEquals(1L, bed.counter("ipc: work requests refused"));
            send.reset().wrId(67).opcode(WorkRequestOpcode.SEND).local(region, region.address() + (1 << 20) - 8, 64);
            assertEquals(PostResult.OK, c.postSend(0, send));
            final WorkCompletion outside = poll(c.sendCompletionQueue(), "send past the region's end");
            assertEquals(67, outside.wrId());
            assertEquals(WorkCompletionStatus.LOC_PROT_ERR, outside.status());
            assertEquals(2L, bed.counter("ipc: work requests refused"));
            assertEquals(PostResult.INVALID_ARGUMENT, c.postSend(c.streams(), send));

            final DrainReport.ConnectionDrain drain = c.close(Duration.ofSeconds(5));
            assertTrue(drain.idle(), drain.toString());
            assertEquals(5, drain.postedSends()); // the refused request never reached the connection
            assertEquals(1, drain.postedReceives());
            assertEquals(PostResult.INVALID_STATE, c.postSend(0, send));
            assertEquals(0L, bed.counter("ipc: connections"));

            client.close();
            IpcTestBed.await(() -> bed.counter("ipc: regions") == 0 && bed.objectFiles().isEmpty(), WAIT,
                "region released: " + bed.objectFiles());
            assertEquals(0L, bed.counter("ipc: clients"));
            assertEquals(1L, bed.counter("ipc: clients closed"));
            assertEquals(0L, bed.counter("ipc: clients timed out"));
        }
    }

    @Test
    void shouldNotAllocateWhenPostingPollingOrTakingRequestsOnceWarm() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.SPRAY, Duration.ofSeconds(5));
            Arena arena = Arena.ofShared();
            NicClient client = NicClient.connect(bed.dir, WAIT))
        {
            final MemoryRegion peerRegion = bed.peer.register(arena.allocate(1 << 20, 4096), ALL);
            final ClientRegion region = client.register(1 << 20, ALL);
            final CompletableFuture<NicConnection> accepted = CompletableFuture.supplyAsync(() -> bed.peer.accept(WAIT));
            final ClientConnection c = client.connect(new int[]{IpcTestBed.ip(1)}, WAIT);
            assertNotNull(accepted.get(30, TimeUnit.SECONDS));
            final com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean)java.lang.management.ManagementFactory.getThreadMXBean();
            final long conductorId = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("spraynic-ipc")).mapToLong(Thread::threadId).findFirst().orElseThrow();
            // the workers of both NICs (each a spraynic-worker-0): the served one reads the client's rings in place
            final long[] workerIds = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("spraynic-worker-")).mapToLong(Thread::threadId).toArray();
            assertEquals(2, workerIds.length);
            final long clientId = Thread.currentThread().threadId();
            final SendRequest send = new SendRequest();
            final WorkCompletion completion = new WorkCompletion();
            long bestClient = Long.MAX_VALUE;
            long bestConductor = Long.MAX_VALUE;
            long bestWorkers = Long.MAX_VALUE;
            for (int round = 0; round < 8; round++)
            {
                final long clientBefore = threads.getThreadAllocatedBytes(clientId);
                final long conductorBefore = threads.getThreadAllocatedBytes(conductorId);
                final long workersBefore = sum(threads.getThreadAllocatedBytes(workerIds));
                int posted = 0;
                int completed = 0;
                final long deadline = System.nanoTime() + WAIT.toNanos();
                while (completed < 64 && System.nanoTime() < deadline)
                {
                    if (posted < 64)
                    {
                        send.reset().wrId(posted).opcode(WorkRequestOpcode.RDMA_WRITE)
                            .local(region, region.address() + posted * 16384L, 16384)
                            .remote(peerRegion.address() + posted * 16384L, peerRegion.rkey());
                        if (c.postSend(posted % c.streams(), send) == PostResult.OK)
                        {
                            posted++;
                        }
                    }
                    while (c.sendCompletionQueue().poll(completion))
                    {
                        if (completion.status() != WorkCompletionStatus.SUCCESS)
                        {
                            throw new AssertionError("write failed: " + completion);
                        }
                        completed++;
                    }
                }
                assertEquals(64, completed, "writes completed in round " + round);
                bestClient = Math.min(bestClient, threads.getThreadAllocatedBytes(clientId) - clientBefore);
                bestConductor = Math.min(bestConductor, threads.getThreadAllocatedBytes(conductorId) - conductorBefore);
                bestWorkers = Math.min(bestWorkers, sum(threads.getThreadAllocatedBytes(workerIds)) - workersBefore);
            }
            // 64 posts, 64 requests read and checked by the worker, 64 completions a round (and the packets of 1 MiB):
            // any per-request or per-packet allocation would cost far more
            assertTrue(bestClient < 256, "bytes the posting and polling thread allocated in a warm round: " + bestClient);
            assertTrue(bestConductor < 1024, "bytes the conductor allocated in a warm round: " + bestConductor);
            assertTrue(bestWorkers < 1024, "bytes the two NICs' workers allocated in a warm round: " + bestWorkers);
        }
    }

    private static long sum(final long[] values)
    {
        long sum = 0;
        for (final long v : values)
        {
            sum += v;
        }
        return sum;
    }

    /** Waits until the worker took {@code count} requests in all. */
    private static void awaitPosted(final IpcTestBed bed, final long count)
    {
        IpcTestBed.await(() -> bed.counter("ipc: work requests taken") >= count, WAIT, "requests taken");
    }

    @Test
    void shouldConnectARocev2QueuePairThroughTheNicAndWrite() throws Exception
    {
        try (Served nic = new Served(base, NicConnection.Kind.ROCEV2, false))
        {
            final ClientConnection qp = nic.client.createQueuePair(0);
            final NicConnection peerQp = nic.bed.peer.createQueuePair(0);
            assertEquals(NicConnection.Kind.ROCEV2, qp.kind());
            assertEquals(nic.bed.served.localIpv4(0), qp.rocevEndpoint().ipv4());
            qp.connect(peerQp.rocevEndpoint(), WAIT);
            peerQp.connect(qp.rocevEndpoint(), WAIT);

            final SendRequest send = nic.writeAndVerify(qp, 128 * 1024, 21);
            final ClientRegion region = nic.region;
            final MemoryRegion peerRegion = nic.peerRegion;
            assertEquals(PostResult.OK, peerQp.postReceive(0, new ReceiveWorkRequest().wrId(3)
                .buffer(peerRegion, peerRegion.address() + 512 * 1024, 4096)));
            fill(region.segment(), 200 * 1024, 2048, 22);
            assertEquals(PostResult.OK, qp.postSend(0, send.reset().wrId(2).opcode(WorkRequestOpcode.SEND)
                .local(region, region.address() + 200 * 1024, 2048)));
            assertEquals(WorkCompletionStatus.SUCCESS, poll(qp.sendCompletionQueue(), "send").status());
            assertEquals(2048, poll(peerQp.receiveCompletionQueue(), "peer's receive").byteLength());
            assertEquals(-1, mismatch(peerRegion.segment(), 512 * 1024, 2048, 22));
            assertTrue(qp.close(Duration.ofSeconds(5)).idle());
        }
    }

    @Test
    void shouldConnectARocev2QueuePairOverIpv6ThroughTheNicAndWrite() throws Exception
    {
        // NICs with IPv6 addresses only: the endpoints cross the IPC with their IPv6 address (version 6), and the
        // NICs find each other's MAC by neighbour discovery
        try (Served nic = new Served(base, NicConnection.Kind.ROCEV2, true))
        {
            final ClientConnection qp = nic.client.createQueuePair(0);
            final NicConnection peerQp = nic.bed.peer.createQueuePair(0);
            final RocevEndpoint mine = qp.rocevEndpoint();
            assertTrue(mine.isIpv6(), mine.format());
            assertEquals("ip=" + IpcTestBed.IPV6[0], mine.format().split(" ")[2]);
            // handed over as text, as an application would send it to its peer
            qp.connect(RocevEndpoint.parse(peerQp.rocevEndpoint().format()), WAIT);
            peerQp.connect(RocevEndpoint.parse(mine.format()), WAIT);

            nic.writeAndVerify(qp, 256 * 1024, 31);
            assertTrue(qp.close(Duration.ofSeconds(5)).idle());
        }
    }

    @Test
    void shouldConnectASprayConnectionOverIpv6ThroughTheNicAndWrite() throws Exception
    {
        // NICs with IPv6 addresses only: CONNECT carries the peer's IPv6 address (version 6), the NIC finds its MAC by
        // neighbour discovery; addresses the plane cannot speak are refused where they enter, with the plane and why
        try (Served nic = new Served(base, NicConnection.Kind.SPRAY, true))
        {
            final NicClient client = nic.client;
            final IpcTestBed bed = nic.bed;
            // what a peer connects to: the control memory names the NIC's IPv6 address (version 6), no IPv4 one
            assertEquals(InetAddress.getByName(IpcTestBed.IPV6[0]), client.localAddress(0));
            assertEquals(0, client.localIpv4(0));
            assertRefused("CONNECT plane 0: 10.0.0.2 is not of the family of this NIC's address fd00:1::10",
                () -> client.connect(new InetAddress[]{InetAddress.getByName("10.0.0.2")}, WAIT));
            assertRefused("CONNECT plane 0: IPv6 address ff02::1 is multicast",
                () -> client.connect(new InetAddress[]{InetAddress.getByName("ff02::1")}, WAIT));
            assertRefused("give the peer's IPv6 address on that plane", () -> client.connect(new int[]{IpcTestBed.ip(1)}, WAIT));
            assertEquals(3L, bed.counter("ipc: refused: peer address not unicast or not of the plane's family"));
            assertEquals(0L, bed.counter("ipc: connections"));

            final CompletableFuture<NicConnection> accepted = CompletableFuture.supplyAsync(() -> bed.peer.accept(WAIT));
            final ClientConnection c = client.connect(new InetAddress[]{InetAddress.getByName(IpcTestBed.IPV6[1])}, WAIT);
            final NicConnection p = accepted.get(30, TimeUnit.SECONDS);
            assertNotNull(p, "the peer accepted");
            assertEquals(1L, bed.counter("ipc: connections"));

            nic.writeAndVerify(c, 256 * 1024, 41);
            assertTrue(c.close(Duration.ofSeconds(5)).idle());
            assertEquals(3L, bed.counter("ipc: refused: peer address not unicast or not of the plane's family"));
        }
    }

    /**
     * The set-up the connection tests share: a served NIC and its in-process peer of one transport and address
     * family, a client of the served NIC, and a region of 1 MiB on each side.
     */
    private static final class Served implements AutoCloseable
    {
        final IpcTestBed bed;
        final Arena arena = Arena.ofShared();
        final NicClient client;
        final MemoryRegion peerRegion;
        final ClientRegion region;

        Served(final Path base, final NicConnection.Kind mode, final boolean ipv6) throws Exception
        {
            bed = new IpcTestBed(base, mode, Duration.ofSeconds(5), IpcConductor.Limits.DEFAULT, ipv6);
            NicClient connected = null;
            try
            {
                connected = NicClient.connect(bed.dir, WAIT);
                client = connected;
                peerRegion = bed.peer.register(arena.allocate(1 << 20, 4096), ALL);
                region = client.register(1 << 20, ALL);
            }
            catch (final RuntimeException | Error ex)
            {
                if (null != connected)
                {
                    connected.close();
                }
                arena.close();
                bed.close();
                throw ex;
            }
        }

        /**
         * RDMA WRITEs {@code bytes} of the pattern of {@code seed} from the client's region into the peer's, both at
         * offset 0, and checks its completion and every byte at the peer.
         *
         * @return the request, for more posts.
         */
        SendRequest writeAndVerify(final ClientConnection connection, final int bytes, final long seed)
        {
            fill(region.segment(), 0, bytes, seed);
            final SendRequest send = new SendRequest().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(region, region.address(), bytes).remote(peerRegion.address(), peerRegion.rkey());
            assertEquals(PostResult.OK, connection.postSend(0, send));
            assertEquals(WorkCompletionStatus.SUCCESS, poll(connection.sendCompletionQueue(), "write").status());
            assertEquals(-1, mismatch(peerRegion.segment(), 0, bytes, seed));
            return send;
        }

        public void close() throws Exception
        {
            // as try-with-resources closed them: the client, the peer's memory, then the NICs
            client.close();
            arena.close();
            bed.close();
        }
    }

    private static void assertRefused(final String reason, final org.junit.jupiter.api.function.Executable call)
    {
        final String message = assertThrows(IllegalStateException.class, call).getMessage();
        assertTrue(message.contains(reason) && message.contains("BAD_VALUE"), message);
    }

    @Test
    void shouldAnswerBadCommandsWithTheirReasonAndKeepServing() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.SPRAY, Duration.ofSeconds(5));
            NicClient client = NicClient.connect(bed.dir, WAIT))
        {
            assertTrue(assertThrows(IllegalStateException.class, () -> client.register(0, ALL)).getMessage()
                .contains("a region of 0 B is not in 1.."));
            assertTrue(assertThrows(IllegalStateException.class, () -> client.register(4096, AccessFlags.REMOTE_WRITE))
                .getMessage().contains("needs LOCAL_WRITE"));
            assertTrue(assertThrows(IllegalStateException.class, () -> client.createQueuePair(0)).getMessage()
                .contains("needs a ROCEV2 NIC"));
            assertTrue(assertThrows(IllegalStateException.class,
                () -> client.connect(new int[]{1, 2}, WAIT)).getMessage().contains("1 plane(s)"));
            final ClientRegion region = client.register(4096, ALL);
            client.deregister(region);
            assertFalse(region.isRegistered());
            assertTrue(assertThrows(IllegalStateException.class, () -> client.deregister(region)).getMessage()
                .contains("has no region " + region.id()));
            assertNull(client.accept(Duration.ofMillis(50)), "nobody connected");
            assertEquals(6L, bed.counter("ipc: commands refused"));

            // another client cannot use the first one's region: its lkey is unknown to it
            final ClientRegion kept = client.register(8192, ALL);
            try (NicClient other = NicClient.connect(bed.dir, WAIT))
            {
                assertTrue(other.clientId() != client.clientId());
                assertEquals(2L, bed.counter("ipc: clients"));
            }
            assertTrue(kept.isRegistered());
            assertEquals(List.of(), bed.objectFiles(), "a region is the client's memfd, no file");
        }
    }

    @Test
    void shouldTimeOutAClientThatStopsSendingKeepalives() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.SPRAY, Duration.ofMillis(300)))
        {
            final NicClient client = NicClient.connect(bed.dir, WAIT);
            client.register(4096, ALL);
            assertEquals(1L, bed.counter("ipc: regions"));
            // a client whose keepalives stop, as a process that hangs: the NIC releases what it held
            client.stopKeepalives();
            IpcTestBed.await(() -> bed.counter("ipc: clients timed out") == 1 && bed.counter("ipc: regions") == 0 &&
                bed.objectFiles().isEmpty(), WAIT, "client timed out");
            assertTrue(assertThrows(IllegalStateException.class, () -> client.register(4096, ALL)).getMessage()
                .contains("is not connected to this NIC"));
        }
    }

    @Test
    void shouldTellAConnectedClientThatTheNicStopped() throws Exception
    {
        final NicClient client;
        final ClientConnection c;
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.SPRAY, Duration.ofSeconds(5)))
        {
            assertEquals("rwx------", java.nio.file.attribute.PosixFilePermissions.toString(
                Files.getPosixFilePermissions(bed.dir)), "only this user reaches the NIC");
            client = NicClient.connect(bed.dir, WAIT);
            client.register(4096, ALL);
            final CompletableFuture<NicConnection> accepted = CompletableFuture.supplyAsync(() -> bed.peer.accept(WAIT));
            c = client.connect(new int[]{IpcTestBed.ip(1)}, WAIT);
            assertNotNull(accepted.get(30, TimeUnit.SECONDS));
            assertFalse(client.isNicStopped());
        }
        assertTrue(client.isNicStopped());
        assertEquals(PostResult.INVALID_STATE, c.postSend(0, new SendRequest()));
        assertTrue(assertThrows(IllegalStateException.class, () -> client.register(4096, ALL)).getMessage()
            .contains("has stopped"));
        client.close(); // releases this process's views; nothing to tell a stopped NIC
    }

    @Test
    void shouldAnnounceItsVersionWhereAVersionFourClientLooksAndMapNoFileOfTheDirectory() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.SPRAY, Duration.ofSeconds(5)))
        {
            // a version-4 client (NicClient and libspraynic of version 4) checks that nic.ctl holds at least the
            // 256-byte header, then reads magic and version at 0 and 4 and refuses any version but its own at once
            final byte[] announcement = Files.readAllBytes(bed.dir.resolve(IpcFileDescriptor.CONTROL_FILE));
            assertEquals(IpcFileDescriptor.HEADER_LENGTH, announcement.length);
            final org.agrona.concurrent.UnsafeBuffer h = new org.agrona.concurrent.UnsafeBuffer(announcement);
            assertEquals(IpcFileDescriptor.MAGIC, h.getInt(IpcFileDescriptor.MAGIC_OFFSET, IpcMessages.ORDER));
            assertEquals(7, h.getInt(IpcFileDescriptor.VERSION_OFFSET, IpcMessages.ORDER)); // I9.1: 7 in docs/IPC.md
            assertEquals(ProcessHandle.current().pid(), h.getLong(IpcFileDescriptor.PID_OFFSET, IpcMessages.ORDER));
            // the NIC maps none of its directory's files: /proc/self/maps names no file under DIR
            try (NicClient client = NicClient.connect(bed.dir, Duration.ofSeconds(5)))
            {
                client.register(4096, 0);
                final String maps = Files.readString(Path.of("/proc/self/maps"));
                assertFalse(maps.contains(bed.dir.toString()), "a mapping of a file of " + bed.dir);
                assertTrue(maps.contains("memfd:spraynic-ctl"), "the control memory is a memfd");
                assertTrue(maps.contains("memfd:spraynic-answers"), "so is the answer ring");
            }
            // truncating the announcement costs the NIC nothing: it never maps it
            try (java.nio.channels.FileChannel ctl = java.nio.channels.FileChannel.open(
                bed.dir.resolve(IpcFileDescriptor.CONTROL_FILE), java.nio.file.StandardOpenOption.WRITE))
            {
                ctl.truncate(0);
            }
            Thread.sleep(50);
            assertEquals(0L, bed.unexpectedErrors());
        }
    }

    @Test
    void shouldSayClearlyWhenNoNicServesTheDirectoryOrItStopped() throws Exception
    {
        final IllegalStateException none = assertThrows(IllegalStateException.class,
            () -> NicClient.connect(base.resolve("nowhere"), Duration.ofMillis(50)));
        assertTrue(none.getMessage().startsWith("no NIC serves " + base.resolve("nowhere")), none.getMessage());
        assertTrue(none.getMessage().contains("--ipc-dir"), none.getMessage());

        final Path dir;
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.SPRAY, Duration.ofSeconds(5)))
        {
            dir = bed.dir;
            final IllegalStateException second = assertThrows(IllegalStateException.class,
                () -> IpcConductor.start(bed.peer, dir, bed.servedCounters));
            assertTrue(second.getMessage().startsWith("another NIC serves " + dir), second.getMessage());
        }
        assertFalse(Files.exists(dir.resolve(IpcFileDescriptor.CONTROL_FILE)), "the NIC removed its files");
        assertFalse(Files.exists(dir.resolve(CommandSocket.SOCKET_FILE)), "and its socket");

        final org.agrona.concurrent.UnsafeBuffer future = new org.agrona.concurrent.UnsafeBuffer(
            new byte[IpcFileDescriptor.fileLength()]);
        future.putInt(IpcFileDescriptor.MAGIC_OFFSET, IpcFileDescriptor.MAGIC, IpcMessages.ORDER);
        future.putInt(IpcFileDescriptor.VERSION_OFFSET, IpcFileDescriptor.VERSION + 1, IpcMessages.ORDER);
        Files.write(dir.resolve(IpcFileDescriptor.CONTROL_FILE), future.byteArray());
        final IllegalStateException version = assertThrows(IllegalStateException.class,
            () -> NicClient.connect(dir, Duration.ofSeconds(5)));
        assertTrue(version.getMessage().contains("speaks IPC version " + (IpcFileDescriptor.VERSION + 1)), version.getMessage());

        // this client meets a version-4 NIC (whose nic.ctl is its mapped control file): refused at once
        future.putInt(IpcFileDescriptor.VERSION_OFFSET, 4, IpcMessages.ORDER);
        future.putLong(IpcFileDescriptor.HEARTBEAT_OFFSET, System.currentTimeMillis() + 60_000, IpcMessages.ORDER);
        Files.write(dir.resolve(IpcFileDescriptor.CONTROL_FILE), future.byteArray());
        final long start = System.nanoTime();
        final IllegalStateException older = assertThrows(IllegalStateException.class,
            () -> NicClient.connect(dir, Duration.ofSeconds(5)));
        assertTrue(older.getMessage().contains("speaks IPC version 4, this client " + IpcFileDescriptor.VERSION), older.getMessage());
        // and a version-5 NIC (I9.9: a NIC without the IPv6 fields of CONNECT_QUEUE_PAIR and CONNECTION_READY)
        future.putInt(IpcFileDescriptor.VERSION_OFFSET, 5, IpcMessages.ORDER);
        Files.write(dir.resolve(IpcFileDescriptor.CONTROL_FILE), future.byteArray());
        final IllegalStateException previous = assertThrows(IllegalStateException.class,
            () -> NicClient.connect(dir, Duration.ofSeconds(5)));
        assertTrue(previous.getMessage().contains("speaks IPC version 5, this client " + IpcFileDescriptor.VERSION),
            previous.getMessage());
        // and a version-6 NIC (I9.10: its START_CAPTURE is shorter and its capture memory another layout)
        future.putInt(IpcFileDescriptor.VERSION_OFFSET, 6, IpcMessages.ORDER);
        Files.write(dir.resolve(IpcFileDescriptor.CONTROL_FILE), future.byteArray());
        final IllegalStateException six = assertThrows(IllegalStateException.class,
            () -> NicClient.connect(dir, Duration.ofSeconds(5)));
        assertTrue(six.getMessage().contains("speaks IPC version 6, this client " + IpcFileDescriptor.VERSION),
            six.getMessage());
        assertTrue(System.nanoTime() - start < Duration.ofSeconds(4).toNanos(), "refused at once, not after waiting");
    }
}
