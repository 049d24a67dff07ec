package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.api.SendRequest;
import io.spraynic.datapath.nic.NicConnection;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static io.spraynic.datapath.nic.ipc.IpcTestBed.WAIT;
import static io.spraynic.datapath.nic.ipc.IpcTestBed.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An attacker in a separate process ({@link IpcAttackerMain}) forges commands in another client's name, sends garbage
 * and unsealed memory on the NIC's socket and tries to truncate its sealed region, corrupts its
 * own request ring and the NIC's command ring, and is killed (SIGKILL) between claim and commit on the command ring,
 * while a legitimate client in this process keeps writing into a peer's memory through its queue pair, every byte
 * verified. The attack fails, the counters account for every hostile input, the conductor keeps beating and serving.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class IpcAttackerProcessTest
{
    private static final int ALL = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;
    private static final int CHUNK = 16 * 1024;

    @TempDir
    Path base;

    @Test
    void shouldServeALegitimateClientWhileAnotherProcessAttacksTheNicAndDies() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.ROCEV2, Duration.ofSeconds(3));
            Arena arena = Arena.ofShared();
            NicClient good = NicClient.connect(bed.dir, WAIT);
            RawControlFile raw = new RawControlFile(bed.dir))
        {
            final MemoryRegion peerRegion = bed.peer.register(arena.allocate(1 << 20, 4096), ALL);
            final ClientRegion region = good.register(1 << 20, ALL);
            final ClientConnection qp = good.createQueuePair(0);
            final NicConnection peerQp = bed.peer.createQueuePair(0);
            qp.connect(peerQp.rocevEndpoint(), WAIT);
            peerQp.connect(qp.rocevEndpoint(), WAIT);

            // the legitimate transfer runs through the whole attack
            final AtomicBoolean stop = new AtomicBoolean();
            final AtomicLong verified = new AtomicLong();
            final CompletableFuture<Void> writer = CompletableFuture.runAsync(() ->
                writeAndVerify(qp, region, peerRegion, stop, verified));

            try (ChildJvm attacker = new ChildJvm(IpcAttackerMain.class, List.of(bed.dir.toString())))
            {
                final long attackerId = Long.parseLong(attacker.expect("CLIENT"));
                assertTrue(attackerId != good.clientId());
                attacker.say("FORGE " + good.clientId() + " " + qp.id());
                attacker.expect("FORGED");
                await(() -> bed.counter("ipc: commands dropped: wrong token") == 1 &&
                    bed.counter("ipc: commands refused: object not the client's") == 1, WAIT, "forgeries refused");

                final long beforeGarbage = verified.get();
                attacker.say("SOCKET-GARBAGE 20");
                assertEquals("20 " + -UnixSockets.EPERM, attacker.expect("SOCKET-GARBAGED"),
                    "every unsealed memfd refused, the sealed region's truncation refused with EPERM");
                await(() -> bed.counter(CommandSocketAttackTest.WRONG_DESCRIPTORS) == 100 &&
                    bed.counter("ipc: socket messages dropped: too long") == 20 &&
                    bed.counter(CommandSocketAttackTest.NOT_A_SOCKET_COMMAND) == 80, WAIT,
                    "every garbage message dropped");
                assertEquals(20L, bed.counter("ipc: refused: memory not a sealed memfd of the size"));
                await(() -> verified.get() > beforeGarbage + 4 || writer.isDone(), WAIT, "writes verified meanwhile");

                attacker.say("CORRUPT-OWN");
                attacker.expect("CORRUPTED-OWN");
                await(() -> bed.counter("ipc: clients dropped: corrupt request ring") == 1, WAIT, "the attacker dropped");

                attacker.say("CORRUPT-CTL");
                attacker.expect("CORRUPTED-CTL");
                await(() -> bed.counter("ipc: command ring resets: corrupt records") == 1, WAIT, "the command ring reset");

                attacker.say("CLAIM");
                attacker.expect("CLAIMED");
                attacker.process.destroyForcibly(); // SIGKILL between claim and commit
                assertTrue(attacker.process.waitFor(30, TimeUnit.SECONDS));
                await(() -> bed.counter("ipc: command ring claims unblocked") == 1, WAIT, "the dead claim unblocked");
            }
            final long during = verified.get();
            await(() -> verified.get() > during + 8 || writer.isDone(), WAIT, "writes go on after the attack");
            if (writer.isCompletedExceptionally())
            {
                writer.join(); // throws the writer's failure
            }
            stop.set(true);
            writer.get(60, TimeUnit.SECONDS);

            // commands work again: a second region and queue pair, written and verified
            IpcConductorAttackTest.transfer(bed, good, peerRegion, 77);
            assertEquals(1L, bed.counter("ipc: commands dropped: wrong token"));
            assertEquals(1L, bed.counter("ipc: commands refused: object not the client's"));
            assertEquals(1L, bed.counter("ipc: clients dropped: corrupt request ring"));
            assertEquals(1L, bed.counter("ipc: command ring resets: corrupt records"));
            assertEquals(1L, bed.counter("ipc: command ring claims unblocked"));
            assertEquals(0L, bed.counter("ipc: clients timed out"), "the legitimate client was never timed out");
            assertEquals(0L, bed.unexpectedErrors());
            assertEquals(1L, bed.counter("ipc: clients"));
            assertEquals(1L, bed.counter("ipc: connections"), "the attacker's queue pair closed, the victim's kept");
            assertTrue(region.isRegistered());
            final long beat = raw.heartbeat();
            await(() -> raw.heartbeat() > beat, WAIT, "the heartbeat goes on");
            assertTrue(verified.get() > 16, "writes verified: " + verified.get());
        }
    }

    /**
     * A client process that asks for queue pairs and never collects their rings (OPEN_MEMORY) would keep one
     * descriptor open in the NIC for each until it closed them: the NIC holds at most
     * {@link IpcConductor#MAX_UNCOLLECTED_CONNECTIONS} of them, refuses the rest (counted), and closes each one not
     * collected within the client timeout (counted), round after round, while an honest client's queue pair stays.
     */
    @Test
    void shouldBoundTheDescriptorsOfAClientProcessThatNeverCollectsItsRings() throws Exception
    {
        final int hoard = 100;
        final int bound = IpcConductor.MAX_UNCOLLECTED_CONNECTIONS;
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.ROCEV2, Duration.ofSeconds(2));
            NicClient good = NicClient.connect(bed.dir, WAIT);
            ChildJvm attacker = new ChildJvm(IpcAttackerMain.class, List.of(bed.dir.toString())))
        {
            final ClientConnection kept = good.createQueuePair(0); // collected at once, as an honest client does
            attacker.expect("CLIENT");
            final long baseline = openDescriptors();
            for (int round = 1; round <= 3; round++)
            {
                final int r = round;
                attacker.say("HOARD " + hoard);
                attacker.expect("HOARDED");
                await(() -> bed.counter(REFUSED_UNCOLLECTED) == (long)r * (hoard - bound) &&
                    bed.counter("ipc: connections") == 1 + bound, WAIT, "round " + r + ": " + bound + " made, the rest refused");
                final long held = openDescriptors() - baseline;
                assertTrue(held >= bound / 2 && held <= bound + SLACK, "round " + r + ": the NIC holds " + held +
                    " descriptors more than before, not about " + bound);
                await(() -> bed.counter(CLOSED_UNCOLLECTED) == (long)r * bound && bed.counter("ipc: connections") == 1,
                    WAIT, "round " + r + ": the uncollected connections closed at their deadline");
                await(() -> openDescriptors() - baseline <= SLACK, WAIT, "round " + r + ": their descriptors closed");
            }
            assertEquals(2L, bed.counter("ipc: clients"), "the hoarding client is refused, not dropped");
            assertEquals(0L, bed.counter("ipc: clients timed out"));
            assertEquals(0L, bed.unexpectedErrors());
            final ClientConnection another = good.createQueuePair(0);
            assertEquals(2L, bed.counter("ipc: connections"));
            another.close(Duration.ZERO);
            kept.close(Duration.ZERO); // still the client's: an UNKNOWN_OBJECT refusal would throw
            assertEquals(0L, bed.counter("ipc: connections"));
        }
    }

    static final String REFUSED_UNCOLLECTED = "ipc: refused: connections with rings not collected limit";
    static final String CLOSED_UNCOLLECTED = "ipc: connections closed: rings not collected";
    /** Descriptors this JVM may open meanwhile for other reasons (a jar, a class file). */
    private static final int SLACK = 6;

    /** @return descriptors open in this process, the NIC's. */
    static long openDescriptors()
    {
        try (java.util.stream.Stream<Path> fds = java.nio.file.Files.list(Path.of("/proc/self/fd")))
        {
            return fds.count();
        }
        catch (final java.io.IOException ex)
        {
            throw new java.io.UncheckedIOException(ex);
        }
    }

    /** Writes a fresh pattern into the peer's memory, chunk by chunk, and checks every byte of each before the next. */
    static void writeAndVerify(final ClientConnection qp, final ClientRegion region, final MemoryRegion peerRegion,
        final AtomicBoolean stop, final AtomicLong verified)
    {
        final SendRequest send = new SendRequest();
        final WorkCompletion done = new WorkCompletion();
        for (long seed = 1000; !stop.get(); seed++)
        {
            final long offset = (seed % 32) * CHUNK;
            IpcTestBed.fill(region.segment(), offset, CHUNK, seed);
            send.reset().wrId(seed).opcode(WorkRequestOpcode.RDMA_WRITE).local(region, region.address() + offset, CHUNK)
                .remote(peerRegion.address() + offset, peerRegion.rkey());
            assertEquals(PostResult.OK, qp.postSend(0, send));
            await(() -> qp.sendCompletionQueue().poll(done), WAIT, "write " + seed);
            assertEquals(WorkCompletionStatus.SUCCESS, done.status(), done.toString());
            assertEquals(seed, done.wrId());
            assertEquals(-1, IpcTestBed.mismatch(peerRegion.segment(), offset, CHUNK, seed), "write " + seed);
            verified.incrementAndGet();
        }
    }
}
