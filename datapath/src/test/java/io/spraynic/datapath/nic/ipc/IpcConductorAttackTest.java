package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.api.SendRequest;
import io.spraynic.datapath.nic.NicConnection;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static io.spraynic.datapath.nic.ipc.IpcTestBed.WAIT;
import static io.spraynic.datapath.nic.ipc.IpcTestBed.await;
import static io.spraynic.datapath.nic.ipc.IpcTestBed.fill;
import static io.spraynic.datapath.nic.ipc.IpcTestBed.mismatch;
import static io.spraynic.datapath.nic.ipc.IpcTestBed.poll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Clients that play the attacker against a real {@link IpcConductor} serving a real embedded NIC, each through the
 * shared memory alone: corrupt request rings and command rings, claims never committed, commands in another client's
 * name, objects of another client, more than the limits allow, files and directories others could reach. Each test
 * checks that the attack failed, that the counters account for it, that the conductor met nothing unexpected, and
 * that a legitimate client still moves bytes, verified.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class IpcConductorAttackTest
{
    private static final int ALL = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;

    @TempDir
    Path base;

    /** A legitimate client writes 64 KiB through a queue pair of its own into the peer's memory, every byte checked. */
    static void transfer(final IpcTestBed bed, final NicClient client, final MemoryRegion peerRegion, final long seed)
    {
        final ClientRegion region = client.register(1 << 16, ALL);
        writeThrough(bed, client, region, peerRegion, seed);
        client.deregister(region);
    }

    /** Writes a pattern of {@code seed} from all 64 KiB of {@code region} through a new queue pair, verified at the peer. */
    static void writeThrough(final IpcTestBed bed, final NicClient client, final ClientRegion region,
        final MemoryRegion peerRegion, final long seed)
    {
        final ClientConnection qp = client.createQueuePair(0);
        final NicConnection peerQp = bed.peer.createQueuePair(0);
        qp.connect(peerQp.rocevEndpoint(), WAIT);
        peerQp.connect(qp.rocevEndpoint(), WAIT);
        fill(region.segment(), 0, 1 << 16, seed);
        assertEquals(PostResult.OK, qp.postSend(0, new SendRequest().wrId(seed).opcode(WorkRequestOpcode.RDMA_WRITE)
            .local(region, region.address(), 1 << 16).remote(peerRegion.address(), peerRegion.rkey())));
        final WorkCompletion done = poll(qp.sendCompletionQueue(), "the legitimate write");
        assertEquals(WorkCompletionStatus.SUCCESS, done.status(), done.toString());
        assertEquals(-1, mismatch(peerRegion.segment(), 0, 1 << 16, seed), "every byte of the legitimate write");
        assertTrue(qp.close(Duration.ofSeconds(5)).idle());
        peerQp.close(Duration.ZERO);
    }

    private static void assertServing(final IpcTestBed bed, final RawControlFile raw)
    {
        assertEquals(0L, bed.unexpectedErrors(), "the conductor met nothing it did not expect");
        final long beat = raw.heartbeat();
        await(() -> raw.heartbeat() > beat, WAIT, "the heartbeat goes on");
    }

    @Test
    void shouldDropAClientThatCorruptsItsRequestRingAndServeTheOthers() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.ROCEV2, Duration.ofSeconds(5));
            Arena arena = Arena.ofShared();
            NicClient good = NicClient.connect(bed.dir, WAIT);
            RawControlFile raw = new RawControlFile(bed.dir))
        {
            final MemoryRegion peerRegion = bed.peer.register(arena.allocate(1 << 16, 4096), ALL);
            final NicClient bad = NicClient.connect(bed.dir, WAIT);
            bad.register(4096, ALL);
            final ClientConnection badQp = bad.createQueuePair(0);
            assertEquals(2L, bed.counter("ipc: clients"));
            // a record length of 0x7FFFFFFF where the next request goes
            final AtomicBuffer ring = badQp.rings().requests().buffer();
            ring.putInt(4, ConnectionRings.SEND_REQUEST);
            ring.putIntRelease(0, 0x7FFF_FFFF);
            await(() -> bed.counter("ipc: clients dropped: corrupt request ring") == 1, WAIT, "the corrupting client dropped");
            await(() -> bed.counter("ipc: regions") == 0 && bed.counter("ipc: connections") == 0 &&
                bed.objectFiles().isEmpty(), WAIT, "what it held released: " + bed.objectFiles());
            assertEquals(1L, bed.counter("ipc: clients"));
            final NicRefusedException gone = assertThrows(NicRefusedException.class, () -> bad.register(4096, ALL));
            assertEquals(IpcMessages.ERR_NOT_CONNECTED, gone.code(), gone.getMessage());

            transfer(bed, good, peerRegion, 41);
            assertServing(bed, raw);
            bad.close();
        }
    }

    @Test
    void shouldResetACorruptCommandRingAndFailTheCallsThatWereWaiting() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.ROCEV2, Duration.ofSeconds(5));
            Arena arena = Arena.ofShared();
            NicClient good = NicClient.connect(bed.dir, WAIT);
            RawControlFile raw = new RawControlFile(bed.dir))
        {
            final MemoryRegion peerRegion = bed.peer.register(arena.allocate(1 << 16, 4096), ALL);
            // hold the conductor behind a claim, queue a legitimate command behind it, then corrupt the claim
            final int claimed = raw.claimAndAbandon();
            assertTrue(claimed > 0);
            final long tail = raw.tail();
            final CompletableFuture<ClientConnection> waiting = CompletableFuture.supplyAsync(() -> good.createQueuePair(0));
            await(() -> raw.tail() > tail, WAIT, "the legitimate command is in the ring");
            raw.ring.putIntRelease(claimed - 8, -0x7FFF_FFF0); // its header
            await(() -> bed.counter("ipc: command ring resets: corrupt records") == 1, WAIT, "the ring reset");
            assertEquals(1, raw.epoch());
            final ExecutionException failed = assertThrows(ExecutionException.class, () -> waiting.get(30, TimeUnit.SECONDS));
            assertTrue(failed.getCause().getMessage().contains("reset its command ring"), failed.getCause().getMessage());

            // a record length of 0x7FFFFFFF where the next command goes: reset again, and the ring works after
            raw.corruptNextRecord(0x7FFF_FFFF);
            await(() -> bed.counter("ipc: command ring resets: corrupt records") == 2, WAIT, "the ring reset again");
            // a tail position that no producer could have written
            raw.ring.putLongRelease(raw.capacity + RingBufferDescriptor.TAIL_POSITION_OFFSET,
                raw.tail() - 4096);
            await(() -> bed.counter("ipc: command ring resets: corrupt records") == 3, WAIT, "the ring reset for its tail");
            assertEquals(3, raw.epoch());
            transfer(bed, good, peerRegion, 42);
            assertEquals(1L, bed.counter("ipc: clients"), "the client stayed connected through the resets");
            assertServing(bed, raw);
        }
    }

    @Test
    void shouldUnblockAClaimNeverCommittedSoCommandsAndKeepalivesFlowAgain() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.ROCEV2, Duration.ofSeconds(2));
            Arena arena = Arena.ofShared();
            NicClient good = NicClient.connect(bed.dir, WAIT);
            RawControlFile raw = new RawControlFile(bed.dir))
        {
            final MemoryRegion peerRegion = bed.peer.register(arena.allocate(1 << 16, 4096), ALL);
            assertTrue(raw.claimAndAbandon() > 0); // a producer killed between claim and commit
            final long start = System.nanoTime();
            // behind the claim until the conductor unblocks it (a REGISTER would pass: it goes on the socket)
            final ClientConnection qp = good.createQueuePair(0);
            final long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(qp.id() > 0);
            assertEquals(1L, bed.counter("ipc: command ring claims unblocked"));
            assertTrue(tookMs >= 500 && tookMs < 5_000, "unblocked after the conductor's timeout: " + tookMs + " ms");
            Thread.sleep(2_500); // longer than the client timeout: keepalives flow again
            assertEquals(0L, bed.counter("ipc: clients timed out"));
            transfer(bed, good, peerRegion, 43);
            assertServing(bed, raw);
        }
    }

    @Test
    void shouldDropCommandsInAnotherClientsNameAndRefuseAnotherClientsObjects() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.ROCEV2, Duration.ofSeconds(5));
            Arena arena = Arena.ofShared();
            NicClient victim = NicClient.connect(bed.dir, WAIT);
            NicClient attacker = NicClient.connect(bed.dir, WAIT);
            RawControlFile raw = new RawControlFile(bed.dir))
        {
            final MemoryRegion peerRegion = bed.peer.register(arena.allocate(1 << 16, 4096), ALL);
            final ClientRegion kept = victim.register(8192, ALL);
            final ClientConnection keptQp = victim.createQueuePair(0);
            assertTrue(victim.token() != attacker.token() && victim.token() != 0);

            // in the victim's name without its token: dropped, no answer, nothing happens
            assertTrue(raw.objectCommand(IpcMessages.DEREGISTER, victim.clientId(), attacker.token(), kept.id()));
            assertTrue(raw.objectCommand(IpcMessages.CLOSE_CONNECTION, victim.clientId(), 0, keptQp.id()));
            await(() -> bed.counter("ipc: commands dropped: wrong token") == 2, WAIT, "forged commands counted");
            // in its own name, naming the victim's objects: refused
            assertTrue(raw.objectCommand(IpcMessages.DEREGISTER, attacker.clientId(), attacker.token(), kept.id()));
            assertTrue(raw.objectCommand(IpcMessages.CLOSE_CONNECTION, attacker.clientId(), attacker.token(), keptQp.id()));
            await(() -> bed.counter("ipc: commands refused: object not the client's") == 2, WAIT, "foreign objects counted");
            // an id nobody holds
            assertTrue(raw.objectCommand(IpcMessages.DEREGISTER, 999_999, 1, 1));
            await(() -> bed.counter("ipc: commands refused: unknown client") == 1, WAIT, "unknown client counted");

            assertTrue(kept.isRegistered());
            assertEquals(1L, bed.counter("ipc: regions"));
            assertEquals(1L, bed.counter("ipc: connections"));
            // the victim still uses both
            final NicConnection peerQp = bed.peer.createQueuePair(0);
            keptQp.connect(peerQp.rocevEndpoint(), WAIT);
            peerQp.connect(keptQp.rocevEndpoint(), WAIT);
            fill(kept.segment(), 0, 8192, 44);
            assertEquals(PostResult.OK, keptQp.postSend(0, new SendRequest().wrId(1)
                .opcode(WorkRequestOpcode.RDMA_WRITE).local(kept, kept.address(), 8192)
                .remote(peerRegion.address(), peerRegion.rkey())));
            assertEquals(WorkCompletionStatus.SUCCESS, poll(keptQp.sendCompletionQueue(), "victim's write").status());
            assertEquals(-1, mismatch(peerRegion.segment(), 0, 8192, 44));

            // the attacker's queue pair cannot name the victim's lkey
            final ClientRegion own = attacker.register(8192, ALL);
            final ClientConnection attackerQp = attacker.createQueuePair(0);
            final SendRequest steal = new SendRequest().wrId(2).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(kept.lkey(), kept.address(), 64).remote(peerRegion.address(), peerRegion.rkey());
            assertEquals(PostResult.OK, attackerQp.postSend(0, steal));
            assertEquals(WorkCompletionStatus.LOC_PROT_ERR, poll(attackerQp.sendCompletionQueue(), "stolen lkey").status());
            assertServing(bed, raw);
        }
    }

    /**
     * Every control thread busy (here 32 clients each waiting in an ACCEPT no peer answers, as clients could hold them
     * on purpose): a DEREGISTER and a CLOSE_CONNECTION are refused LIMIT, and what they name must stay the client's,
     * registered or served, and counted, so that a retry or the client's end releases it. Before, the client's tables
     * lost them first: nothing ever released them (the NIC kept the region's mapping, a peer could still write into
     * it by its rkey, and the connection's worker kept reading its rings).
     */
    /**
     * Makes every control thread of {@code bed}'s conductor wait on an ACCEPT of 10 s, each of a client of its own
     * added to {@code waiting} and called on a thread of {@code callers}; returns once a REGISTER is refused LIMIT.
     */
    static void occupyEveryControlThread(final IpcTestBed bed, final List<NicClient> waiting,
        final java.util.concurrent.ExecutorService callers)
    {
        // a thread each: the common pool runs one task at a time on 2 cores, and each ACCEPT blocks its caller
        for (int i = 0; i < IpcConductor.MAX_CONTROL_ACTIONS; i++)
        {
            final NicClient client = NicClient.connect(bed.dir, WAIT);
            waiting.add(client);
            callers.submit(() -> client.accept(Duration.ofSeconds(10)));
        }
        // until every ACCEPT holds a control thread: a REGISTER of another client is refused LIMIT then (the
        // regions it made before stay registered, and go with that client)
        final NicClient prober = NicClient.connect(bed.dir, WAIT);
        waiting.add(prober);
        boolean busy = false;
        final long deadline = System.nanoTime() + WAIT.toNanos();
        for (int tries = 0; !busy && tries < 200 && System.nanoTime() < deadline; tries++)
        {
            try
            {
                prober.register(4096, ALL);
            }
            catch (final NicRefusedException ex)
            {
                assertTrue(ex.getMessage().contains("control actions in progress"), ex.getMessage());
                busy = true;
            }
        }
        assertTrue(busy, "every control thread busy within " + WAIT);
    }

    @Test
    void shouldKeepARegionAndAConnectionWhoseReleaseABusyNicRefusedAndReleaseThemWithTheirClient() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.SPRAY, Duration.ofSeconds(30)))
        {
            final NicClient owner = NicClient.connect(bed.dir, WAIT);
            final ClientRegion region = owner.register(1 << 16, ALL);
            assertEquals(1L, bed.counter("ipc: regions"));
            final CompletableFuture<NicConnection> accepted = CompletableFuture.supplyAsync(() -> bed.peer.accept(WAIT));
            final ClientConnection connection = owner.connect(new int[]{IpcTestBed.ip(1)}, WAIT);
            assertNotNull(accepted.get(30, TimeUnit.SECONDS));
            assertEquals(1L, bed.counter("ipc: connections"));
            final List<NicClient> waiting = new ArrayList<>();
            final java.util.concurrent.ExecutorService callers =
                java.util.concurrent.Executors.newFixedThreadPool(IpcConductor.MAX_CONTROL_ACTIONS);
            try
            {
                occupyEveryControlThread(bed, waiting, callers);
                final long regions = bed.counter("ipc: regions");
                final NicRefusedException refused = assertThrows(NicRefusedException.class, () -> owner.deregister(region));
                assertEquals(IpcMessages.ERR_LIMIT, refused.code(), refused.getMessage());
                assertEquals(regions, bed.counter("ipc: regions"), "still the client's and registered");
                // so with a CLOSE_CONNECTION: the connection stays the client's and served until the client goes
                final NicRefusedException notClosed = assertThrows(NicRefusedException.class,
                    () -> connection.close(Duration.ZERO));
                assertEquals(IpcMessages.ERR_LIMIT, notClosed.code(), notClosed.getMessage());
                assertEquals(1L, bed.counter("ipc: connections"), "still the client's");
            }
            finally
            {
                owner.close(); // its end releases what it holds, the refused region included
                callers.shutdown();
                assertTrue(callers.awaitTermination(30, TimeUnit.SECONDS), "the ACCEPTs ended");
                for (final NicClient client : waiting)
                {
                    client.close();
                }
            }
            final long deadline = System.nanoTime() + WAIT.toNanos();
            while (bed.counter("ipc: regions") != 0 && System.nanoTime() < deadline)
            {
                Thread.sleep(20);
            }
            assertEquals(0L, bed.counter("ipc: regions"), "released with its client");
            while (bed.counter("ipc: connections") != 0 && System.nanoTime() < deadline)
            {
                Thread.sleep(20);
            }
            assertEquals(0L, bed.counter("ipc: connections"), "closed with its client");
        }
    }

    @Test
    void shouldRunAReleaseThatFindsEveryControlThreadBusyOnTheReleaseThreadInTurnNeverOnItsCaller() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.SPRAY, Duration.ofSeconds(30)))
        {
            final List<NicClient> waiting = new ArrayList<>();
            final ExecutorService callers = Executors.newFixedThreadPool(IpcConductor.MAX_CONTROL_ACTIONS);
            final ExecutorService asker = Executors.newSingleThreadExecutor();
            final CountDownLatch hold = new CountDownLatch(1);
            try
            {
                final NicClient leaving = NicClient.connect(bed.dir, WAIT);
                leaving.register(1 << 16, ALL);
                occupyEveryControlThread(bed, waiting, callers);
                // a release that takes long (a worker slow to confirm a deregistration): before, one that found every
                // control thread busy ran on its caller, the conductor, whose heartbeat and answers stopped meanwhile
                final List<String> ran = java.util.Collections.synchronizedList(new ArrayList<>());
                final java.util.concurrent.Future<?> asked = asker.submit(() ->
                {
                    bed.conductor.releaseLater(() ->
                    {
                        ran.add("first on " + Thread.currentThread().getName());
                        try
                        {
                            hold.await(30, TimeUnit.SECONDS);
                        }
                        catch (final InterruptedException ex)
                        {
                            Thread.currentThread().interrupt();
                        }
                    });
                    bed.conductor.releaseLater(() -> ran.add("second on " + Thread.currentThread().getName()));
                });
                asked.get(5, TimeUnit.SECONDS); // returned while the first release still waits
                await(() -> !ran.isEmpty(), WAIT, "the first release started");
                assertEquals(List.of("first on " + ControlActions.RELEASE_THREAD_NAME), ran, "the second waits its turn");

                // the conductor goes on meanwhile: it admits a client, and releases one that leaves, behind the rest
                try (NicClient another = NicClient.connect(bed.dir, WAIT))
                {
                    assertTrue(another.clientId() > 0);
                }
                leaving.close();
                hold.countDown();
                await(() -> ran.size() == 2, WAIT, "the second release ran");
                assertEquals("second on " + ControlActions.RELEASE_THREAD_NAME, ran.get(1));
                await(() -> bed.counter("ipc: regions") == 0, WAIT, "the leaving client's region released");
                assertEquals(0L, bed.unexpectedErrors());
            }
            finally
            {
                hold.countDown();
                asker.shutdownNow();
                callers.shutdown();
                assertTrue(callers.awaitTermination(30, TimeUnit.SECONDS), "the ACCEPTs ended");
                for (final NicClient client : waiting)
                {
                    client.close();
                }
            }
        }
    }

    @Test
    void shouldReleaseTheDomainThatAnAcceptEndingAfterItsClientWentMadeAnew() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.SPRAY, Duration.ofSeconds(1)))
        {
            final NicClient client = NicClient.connect(bed.dir, WAIT);
            final ExecutorService caller = Executors.newSingleThreadExecutor();
            try
            {
                final java.util.concurrent.Future<?> accepting = caller.submit(() -> client.accept(Duration.ofSeconds(8)));
                client.stopKeepalives(); // as a process that hangs with an ACCEPT under way
                await(() -> bed.counter("ipc: clients timed out") == 1, WAIT, "the client released");
                assertEquals(0, bed.served.tenantDomains(), "it held no region");

                // its ACCEPT is still under way: a peer connects, the connection is bound to the gone client's domain
                // (which that makes anew on its worker), found to be of a released client, closed, and its domain
                // forgotten with it; before, the domain stayed on the worker for good, one per such client
                final NicConnection peer = bed.peer.connect(new int[]{IpcTestBed.ip(0)}, WAIT);
                assertNotNull(peer);
                await(() -> bed.counter("ipc: connections") == 0 && bed.served.tenantDomains() == 0, WAIT,
                    "the late connection closed and the domain it made forgotten");
                assertThrows(ExecutionException.class, () -> accepting.get(30, TimeUnit.SECONDS), "never answered");
                assertEquals(0L, bed.unexpectedErrors());
            }
            finally
            {
                caller.shutdownNow();
                client.close();
            }
        }
    }

    @Test
    void shouldRefuseWhatPassesALimitWithItsCodeAndCountIt() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.ROCEV2, Duration.ofSeconds(5),
            new IpcConductor.Limits(2, 2, 1));
            NicClient first = NicClient.connect(bed.dir, WAIT);
            NicClient second = NicClient.connect(bed.dir, WAIT);
            RawControlFile raw = new RawControlFile(bed.dir))
        {
            first.register(4096, ALL);
            first.register(4096, ALL);
            final NicRefusedException regions = assertThrows(NicRefusedException.class, () -> first.register(4096, ALL));
            assertEquals(IpcMessages.ERR_LIMIT, regions.code());
            assertTrue(regions.getMessage().contains("limit of 2 regions") &&
                regions.getMessage().contains("--ipc-max-regions"), regions.getMessage());
            first.createQueuePair(0);
            final NicRefusedException connections = assertThrows(NicRefusedException.class, () -> first.createQueuePair(0));
            assertEquals(IpcMessages.ERR_LIMIT, connections.code());
            assertTrue(connections.getMessage().contains("--ipc-max-connections"), connections.getMessage());
            final NicRefusedException clients = assertThrows(NicRefusedException.class, () -> NicClient.connect(bed.dir, WAIT));
            assertEquals(IpcMessages.ERR_LIMIT, clients.code());
            assertTrue(clients.getMessage().contains("--ipc-max-clients"), clients.getMessage());
            assertEquals(1L, bed.counter("ipc: refused: regions per client limit"));
            assertEquals(1L, bed.counter("ipc: refused: connections per client limit"));
            assertEquals(1L, bed.counter("ipc: refused: clients limit"));
            // the other client's own limits are its own
            second.register(4096, ALL);
            second.createQueuePair(0);
            assertServing(bed, raw);
        }
    }

    @Test
    void shouldRefuseACreatedPeerAddressThePlaneCannotSpeakAndCountIt() throws Exception
    {
        // an IPv4 NIC: each CONNECT below is refused where it enters, before any neighbour lookup or handshake
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.SPRAY, Duration.ofSeconds(5));
            NicClient client = NicClient.connect(bed.dir, WAIT);
            RawControlFile raw = new RawControlFile(bed.dir))
        {
            final long mappedLow = 0xFFFF_0000_0000L | (IpcTestBed.ip(1) & 0xFFFF_FFFFL);
            assertTrue(raw.connect(client.clientId(), client.token(), IpcTestBed.ip(1), 0xFD00_0001_0000_0000L, 0x20));
            assertTrue(raw.connect(client.clientId(), client.token(), 0, 0, mappedLow));
            assertTrue(raw.connect(client.clientId(), client.token(), 0xE000_0001, 0, 0));
            assertTrue(raw.connect(client.clientId(), client.token(), 0, 0, 0));
            assertTrue(raw.connect(client.clientId(), client.token(), 0, 0xFD00_0001_0000_0000L, 0x20));
            await(() -> bed.counter("ipc: refused: peer address not unicast or not of the plane's family") == 5, WAIT,
                "five peer addresses refused: both, IPv4-mapped, multicast, none, IPv6 on an IPv4 plane");
            assertEquals(5L, bed.counter("ipc: commands refused"));
            assertEquals(0L, bed.counter("ipc: connections"));
            client.register(4096, ALL); // the client is still served
            assertServing(bed, raw);
        }
    }

    @Test
    void shouldKeepKeysAndTokensOffTheBroadcastAndEveryFileOwnerOnly() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.ROCEV2, Duration.ofSeconds(5));
            RawControlFile raw = new RawControlFile(bed.dir);
            NicClient client = NicClient.connect(bed.dir, WAIT))
        {
            final ClientRegion region = client.register(4096, ALL);
            final ClientConnection qp = client.createQueuePair(0);
            assertThrows(NicRefusedException.class, () -> client.register(0, ALL));
            final List<Integer> types = new ArrayList<>();
            while (raw.broadcast.receiveNext())
            {
                types.add(raw.broadcast.typeId());
            }
            assertEquals(List.of(), types, "answers went to the client's own file, none to the broadcast");
            for (final Path file : new Path[]{bed.dir.resolve(IpcFileDescriptor.CONTROL_FILE),
                bed.dir.resolve(CommandSocket.SOCKET_FILE)})
            {
                assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)), file.toString());
            }
            assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(bed.dir)));
            try (java.util.stream.Stream<Path> files = Files.list(bed.dir))
            {
                // version 5: answer and connection rings are sealed memfds, no files anyone could truncate
                assertEquals(List.of(IpcFileDescriptor.CONTROL_FILE, CommandSocket.SOCKET_FILE),
                    files.map(p -> p.getFileName().toString()).sorted().toList());
            }
            assertEquals(IpcFileDescriptor.HEADER_LENGTH, Files.size(bed.dir.resolve(IpcFileDescriptor.CONTROL_FILE)),
                "nic.ctl is only the announcement; the control memory comes on HELLO");
            assertTrue(qp.rings().requests().capacity() > 0);
            assertTrue(region.length() > 0);
        }
    }

    @Test
    void shouldRefuseTheCommandsOfTheSocketOnTheCommandRing() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.ROCEV2, Duration.ofSeconds(5));
            RawControlFile raw = new RawControlFile(bed.dir);
            NicClient victim = NicClient.connect(bed.dir, WAIT))
        {
            assertTrue(raw.addClientOnRing()); // a version-4 client's ADD_CLIENT: no answer memory to hand over there
            assertTrue(raw.command(IpcMessages.HELLO, 0, 0, IpcMessages.Header.LENGTH));
            await(() -> bed.counter("ipc: commands refused: malformed") == 2, WAIT, "both refused");
            assertEquals(1L, bed.counter("ipc: clients"), "only the real client");
            final List<String> refusals = new ArrayList<>();
            final IpcAnswers.Error error = new IpcAnswers.Error();
            while (raw.broadcast.receiveNext())
            {
                refusals.add(error.wrap(raw.broadcast.buffer(), raw.broadcast.offset()).message());
            }
            assertEquals(2, refusals.size(), refusals.toString());
            assertTrue(refusals.get(0).contains("goes on nic.sock"), refusals.get(0));
            // OPEN_MEMORY with the victim's token but on the ring: refused in its answer ring, no memory anywhere
            victim.register(4096, ALL);
            assertTrue(raw.objectCommand(IpcMessages.OPEN_MEMORY, victim.clientId(), victim.token(), 1));
            await(() -> bed.counter("ipc: commands refused: malformed") == 3, WAIT, "OPEN_MEMORY on the ring refused");
            assertServing(bed, raw);
        }
    }

    @Test
    void shouldRefuseADirectoryOthersMayEnterOrALinkWithOneSentenceThatNamesTheFix() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.ROCEV2, Duration.ofSeconds(5)))
        {
            final Path open = Files.createDirectory(base.resolve("open"));
            Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxr-xr-x"));
            final IllegalStateException mode = assertThrows(IllegalStateException.class,
                () -> IpcConductor.start(bed.peer, open, bed.servedCounters));
            assertEquals("the IPC directory " + open + " has mode rwxr-xr-x, so other users may reach the NIC's memory: " +
                "run chmod 700 " + open + " or give another --ipc-dir", mode.getMessage());
            final Path link = Files.createSymbolicLink(base.resolve("link"), bed.dir);
            final IllegalStateException linked = assertThrows(IllegalStateException.class,
                () -> IpcConductor.start(bed.peer, link, bed.servedCounters));
            assertTrue(linked.getMessage().contains("is a symbolic link"), linked.getMessage());
        }
    }

    @Test
    void shouldKeepOneClientsRkeyUselessThroughAnotherClientsQueuePair() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.ROCEV2, Duration.ofSeconds(5));
            Arena arena = Arena.ofShared();
            NicClient a = NicClient.connect(bed.dir, WAIT);
            NicClient b = NicClient.connect(bed.dir, WAIT);
            RawControlFile raw = new RawControlFile(bed.dir))
        {
            final MemoryRegion peerRegion = bed.peer.register(arena.allocate(1 << 16, 4096), ALL);
            fill(peerRegion.segment(), 0, 1 << 16, 45);
            final ClientRegion regionOfA = a.register(1 << 16, ALL);
            final ClientRegion regionOfB = b.register(1 << 16, ALL);

            // the peer of B's queue pair writes with A's rkey: refused by the NIC, A's memory untouched
            final ClientConnection qpOfB = b.createQueuePair(0);
            NicConnection peerQp = bed.peer.createQueuePair(0);
            qpOfB.connect(peerQp.rocevEndpoint(), WAIT);
            peerQp.connect(qpOfB.rocevEndpoint(), WAIT);
            assertEquals(PostResult.OK, peerQp.postSend(0, new SendWorkRequest().wrId(1)
                .opcode(WorkRequestOpcode.RDMA_WRITE).local(peerRegion, peerRegion.address(), 4096)
                .remote(regionOfA.address(), regionOfA.rkey())));
            final WorkCompletion refused = poll(peerQp.sendCompletionQueue(), "a write with another tenant's rkey");
            assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, refused.status(), refused.toString());
            for (long i = 0; i < 1 << 16; i += 8)
            {
                assertEquals(0L, regionOfA.segment().get(ValueLayout.JAVA_LONG_UNALIGNED, i),
                    "A's memory untouched at " + i);
            }
            qpOfB.close(Duration.ZERO);
            peerQp.close(Duration.ZERO);

            // with B's own rkey the same path works, every byte placed
            final ClientConnection second = b.createQueuePair(0);
            peerQp = bed.peer.createQueuePair(0);
            second.connect(peerQp.rocevEndpoint(), WAIT);
            peerQp.connect(second.rocevEndpoint(), WAIT);
            assertEquals(PostResult.OK, peerQp.postSend(0, new SendWorkRequest().wrId(2)
                .opcode(WorkRequestOpcode.RDMA_WRITE).local(peerRegion, peerRegion.address(), 1 << 16)
                .remote(regionOfB.address(), regionOfB.rkey())));
            assertEquals(WorkCompletionStatus.SUCCESS, poll(peerQp.sendCompletionQueue(), "a write with B's rkey").status());
            assertEquals(-1, mismatch(regionOfB.segment(), 0, 1 << 16, 45));
            assertServing(bed, raw);
        }
    }

    @Test
    void shouldRefuseAnLkeyOfAnotherProtectionDomainInTheWorkerItself() throws Exception
    {
        // below the conductor's own check: a connection bound to one domain cannot name another domain's region
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.ROCEV2, Duration.ofSeconds(5));
            Arena arena = Arena.ofShared())
        {
            final MemoryRegion peerRegion = bed.peer.register(arena.allocate(1 << 16, 4096), ALL);
            final MemoryRegion ofFive = bed.served.register(arena.allocate(1 << 16, 4096), ALL, 5);
            final MemoryRegion ofSix = bed.served.register(arena.allocate(1 << 16, 4096), ALL, 6);
            final NicConnection qp = bed.served.createQueuePair(0);
            bed.served.bindProtectionDomain(qp, 6);
            final NicConnection peerQp = bed.peer.createQueuePair(0);
            qp.connect(peerQp.rocevEndpoint(), WAIT);
            peerQp.connect(qp.rocevEndpoint(), WAIT);
            assertEquals(PostResult.OK, qp.postSend(0, new SendWorkRequest().wrId(1)
                .opcode(WorkRequestOpcode.RDMA_WRITE).local(ofFive, ofFive.address(), 4096)
                .remote(peerRegion.address(), peerRegion.rkey())));
            assertEquals(WorkCompletionStatus.LOC_PROT_ERR, poll(qp.sendCompletionQueue(), "domain 5's lkey").status());
            final NicConnection qp2 = bed.served.createQueuePair(0);
            bed.served.bindProtectionDomain(qp2, 6);
            final NicConnection peerQp2 = bed.peer.createQueuePair(0);
            qp2.connect(peerQp2.rocevEndpoint(), WAIT);
            peerQp2.connect(qp2.rocevEndpoint(), WAIT);
            fill(ofSix.segment(), 0, 4096, 46);
            assertEquals(PostResult.OK, qp2.postSend(0, new SendWorkRequest().wrId(2)
                .opcode(WorkRequestOpcode.RDMA_WRITE).local(ofSix, ofSix.address(), 4096)
                .remote(peerRegion.address(), peerRegion.rkey())));
            assertEquals(WorkCompletionStatus.SUCCESS, poll(qp2.sendCompletionQueue(), "domain 6's lkey").status());
            assertEquals(-1, mismatch(peerRegion.segment(), 0, 4096, 46));
            bed.served.deregister(ofFive);
            bed.served.deregister(ofSix);
        }
    }

    @Test
    void shouldRefuseMalformedCommandsAndRequestsEachWithItsReason() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.ROCEV2, Duration.ofSeconds(5));
            Arena arena = Arena.ofShared();
            NicClient client = NicClient.connect(bed.dir, WAIT);
            RawControlFile raw = new RawControlFile(bed.dir))
        {
            final MemoryRegion peerRegion = bed.peer.register(arena.allocate(1 << 16, 4096), ALL);
            // commands: no room for the ids, a type nobody knows, shorter than the type's fields, any type from nobody
            assertTrue(raw.command(IpcMessages.REGISTER, 0, 0, 8));
            assertTrue(raw.command(77, client.clientId(), client.token(), IpcMessages.Header.LENGTH));
            assertTrue(raw.command(IpcMessages.REGISTER, client.clientId(), client.token(), IpcMessages.Header.LENGTH + 4));
            assertTrue(raw.command(IpcMessages.CONNECT_QUEUE_PAIR, client.clientId(), client.token(),
                IpcMessages.ConnectQueuePair.LENGTH - 1));
            // a CONNECT of version 5's 64 bytes: refused, never read as IPv4 peers with garbage where IPv6 ones go
            assertTrue(raw.command(IpcMessages.CONNECT, client.clientId(), client.token(), IpcMessages.Connect.IPV6_OFFSET));
            await(() -> bed.counter("ipc: commands refused: malformed") == 5, WAIT, "malformed commands counted");
            assertEquals(1L, bed.counter("ipc: clients"), "a malformed command costs no client");

            // requests: a negative length, an opcode nobody knows, a record type that is no request
            final ClientRegion region = client.register(1 << 16, ALL);
            final ClientConnection qp = client.createQueuePair(0);
            final NicConnection peerQp = bed.peer.createQueuePair(0);
            qp.connect(peerQp.rocevEndpoint(), WAIT);
            peerQp.connect(qp.rocevEndpoint(), WAIT);
            final SendRequest send = new SendRequest().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(region, region.address(), -64).remote(peerRegion.address(), peerRegion.rkey());
            assertEquals(PostResult.OK, qp.postSend(0, send));
            assertEquals(WorkCompletionStatus.LOC_LEN_ERR, poll(qp.sendCompletionQueue(), "negative length").status());
            final OneToOneRingBuffer requests = qp.rings().requests();
            final UnsafeBuffer record = new UnsafeBuffer(
                new byte[ConnectionRings.WR_LENGTH]);
            record.putLong(ConnectionRings.WR_ID_OFFSET, 2, IpcMessages.ORDER);
            record.putByte(ConnectionRings.WR_OPCODE_OFFSET, (byte)99);
            assertTrue(requests.write(ConnectionRings.SEND_REQUEST, record, 0, ConnectionRings.WR_LENGTH));
            final WorkCompletion badOpcode = poll(qp.sendCompletionQueue(), "unknown opcode");
            assertEquals(2, badOpcode.wrId());
            assertEquals(WorkCompletionStatus.LOC_QP_OP_ERR, badOpcode.status());
            assertTrue(requests.write(ConnectionRings.COMPLETION, record, 0, ConnectionRings.WR_LENGTH));
            await(() -> bed.counter("ipc: work requests refused") == 3, WAIT, "three requests refused");

            // a record longer than any request: the ring is corrupt, the client goes
            assertTrue(requests.write(ConnectionRings.SEND_REQUEST, new UnsafeBuffer(new byte[128]),
                0, 128));
            await(() -> bed.counter("ipc: clients dropped: corrupt request ring") == 1, WAIT, "dropped for a long record");
            assertEquals(0L, bed.counter("ipc: clients"));
            try (NicClient next = NicClient.connect(bed.dir, WAIT))
            {
                transfer(bed, next, peerRegion, 47);
            }
            assertServing(bed, raw);
        }
    }

    @Test
    void shouldKeepOneClientsRkeyUselessThroughAnotherClientsSprayConnection() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.SPRAY, Duration.ofSeconds(5));
            Arena arena = Arena.ofShared();
            NicClient a = NicClient.connect(bed.dir, WAIT);
            NicClient b = NicClient.connect(bed.dir, WAIT);
            RawControlFile raw = new RawControlFile(bed.dir))
        {
            final MemoryRegion peerRegion = bed.peer.register(arena.allocate(1 << 16, 4096), ALL);
            fill(peerRegion.segment(), 0, 1 << 16, 48);
            final ClientRegion regionOfA = a.register(1 << 16, ALL);
            final ClientRegion regionOfB = b.register(1 << 16, ALL);
            final CompletableFuture<NicConnection> accepted = CompletableFuture.supplyAsync(() -> bed.peer.accept(WAIT));
            final ClientConnection ofB = b.connect(new int[]{IpcTestBed.ip(1)}, WAIT);
            final NicConnection peer = accepted.get(30, TimeUnit.SECONDS);
            // the peer of B's connection writes with B's rkey, then with A's (an access error ends the connection)
            assertEquals(PostResult.OK, peer.postSend(0, new SendWorkRequest().wrId(2).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(peerRegion, peerRegion.address(), 1 << 16).remote(regionOfB.address(), regionOfB.rkey())));
            final WorkCompletion written = poll(peer.sendCompletionQueue(), "a write with B's own rkey");
            assertEquals(WorkCompletionStatus.SUCCESS, written.status(), written.toString());
            assertEquals(-1, mismatch(regionOfB.segment(), 0, 1 << 16, 48));
            assertEquals(PostResult.OK, peer.postSend(0, new SendWorkRequest().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(peerRegion, peerRegion.address(), 4096).remote(regionOfA.address(), regionOfA.rkey())));
            final WorkCompletion refused = poll(peer.sendCompletionQueue(), "a write with another tenant's rkey");
            assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, refused.status(), refused.toString());
            for (long i = 0; i < 1 << 16; i += 8)
            {
                assertEquals(0L, regionOfA.segment().get(ValueLayout.JAVA_LONG_UNALIGNED, i), "A's memory untouched at " + i);
            }
            ofB.close(Duration.ofSeconds(2));
            assertServing(bed, raw);
        }
    }
}
