package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.nic.NicConnection;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
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
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static io.spraynic.datapath.nic.ipc.IpcTestBed.WAIT;
import static io.spraynic.datapath.nic.ipc.IpcTestBed.await;
import static io.spraynic.datapath.nic.ipc.IpcTestBed.fill;
import static io.spraynic.datapath.nic.ipc.IpcTestBed.mismatch;
import static io.spraynic.datapath.nic.ipc.IpcTestBed.poll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client that writes its connection's rings by hand, as a hostile process would, against the worker that reads them
 * in place ({@link ClientRequestRing}): every bad field of a request is refused with an error completion carrying its
 * wrId and counted by reason, and the connection goes on; garbage over the ring or its positions costs the writer its
 * client, never the NIC; a flood from another process is taken at the worker's pace. Through each attack a legitimate
 * client on the same worker moves bytes, verified, and the worker meets no fault.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class ClientRequestRingAttackTest
{
    private static final int ALL = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;

    @TempDir
    Path base;

    /** A request record as a client writes it, every field chosen by the attacker. */
    static UnsafeBuffer record(final long wrId, final int opcode, final int flags, final int lkey, final long address,
        final int length, final int stream, final long remoteAddress, final int rkey)
    {
        final UnsafeBuffer r = new UnsafeBuffer(new byte[ConnectionRings.WR_LENGTH]);
        r.putLong(ConnectionRings.WR_ID_OFFSET, wrId, IpcMessages.ORDER);
        r.putLong(ConnectionRings.WR_LOCAL_ADDRESS_OFFSET, address, IpcMessages.ORDER);
        r.putLong(ConnectionRings.WR_REMOTE_ADDRESS_OFFSET, remoteAddress, IpcMessages.ORDER);
        r.putInt(ConnectionRings.WR_LKEY_OFFSET, lkey, IpcMessages.ORDER);
        r.putInt(ConnectionRings.WR_LENGTH_OFFSET, length, IpcMessages.ORDER);
        r.putInt(ConnectionRings.WR_RKEY_OFFSET, rkey, IpcMessages.ORDER);
        r.putInt(ConnectionRings.WR_STREAM_OFFSET, stream, IpcMessages.ORDER);
        r.putByte(ConnectionRings.WR_OPCODE_OFFSET, (byte)opcode);
        r.putByte(ConnectionRings.WR_FLAGS_OFFSET, (byte)flags);
        return r;
    }

    private static ClientConnection connectedQueuePair(final IpcTestBed bed, final NicClient client)
    {
        final ClientConnection qp = client.createQueuePair(0);
        final NicConnection peerQp = bed.peer.createQueuePair(0);
        qp.connect(peerQp.rocevEndpoint(), WAIT);
        peerQp.connect(qp.rocevEndpoint(), WAIT);
        return qp;
    }

    private static long workerFaults(final IpcTestBed bed)
    {
        return bed.counter("worker 0: loop faults (exception in a command, poller, post or tick)") +
            bed.counter("worker 0: frame faults (exception handling a frame, dropped)");
    }

    @Test
    void shouldRefuseEveryBadFieldWithItsReasonAndKeepTheConnectionServing() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.ROCEV2, Duration.ofSeconds(5));
            Arena arena = Arena.ofShared();
            NicClient victim = NicClient.connect(bed.dir, WAIT);
            NicClient attacker = NicClient.connect(bed.dir, WAIT))
        {
            final MemoryRegion peerRegion = bed.peer.register(arena.allocate(1 << 16, 4096), ALL);
            fill(peerRegion.segment(), 0, 1 << 16, 50);
            final ClientRegion victims = victim.register(1 << 16, ALL);
            fill(victims.segment(), 0, 1 << 16, 51);
            final ClientRegion own = attacker.register(1 << 16, ALL);
            final ClientConnection qp = connectedQueuePair(bed, attacker);
            final OneToOneRingBuffer requests = qp.rings().requests();
            final int read = WorkRequestOpcode.RDMA_READ.code();
            final int write = WorkRequestOpcode.RDMA_WRITE.code();
            final int signaled = ConnectionRings.FLAG_SIGNALED;
            final long peer = peerRegion.address();
            final int rkey = peerRegion.rkey();
            // a READ into the victim's memory by its lkey, which the attacker read off nothing but could guess
            send(requests, record(1, read, signaled, victims.lkey(), victims.address(), 4096, 0, peer, rkey));
            // memory past the region's end, before its start, and a length no region has
            send(requests, record(2, read, signaled, own.lkey(), own.address() + own.length() - 32, 64, 0, peer, rkey));
            send(requests, record(3, read, signaled, own.lkey(), own.address() - 8, 64, 0, peer, rkey));
            send(requests, record(4, write, signaled, own.lkey(), own.address(), Integer.MAX_VALUE, 0, peer, rkey));
            send(requests, record(5, write, signaled, own.lkey(), own.address(), -1, 0, peer, rkey));
            send(requests, record(6, write, signaled, 0, 0, 64, 0, peer, rkey)); // no memory, a length
            // a stream the queue pair does not have, flags and opcodes no request has
            send(requests, record(7, write, signaled, own.lkey(), own.address(), 64, 7, peer, rkey));
            send(requests, record(8, write, 0x80, own.lkey(), own.address(), 64, 0, peer, rkey));
            send(requests, record(9, 0xFF, signaled, own.lkey(), own.address(), 64, 0, peer, rkey));
            send(requests, record(10, WorkRequestOpcode.values().length, signaled, own.lkey(), own.address(), 64, 0, peer,
                rkey));
            // a receive into the victim's memory
            assertTrue(requests.write(ConnectionRings.RECEIVE_REQUEST,
                record(11, 0, 0, victims.lkey(), victims.address(), 4096, 0, 0, 0), 0, ConnectionRings.WR_LENGTH));
            // records that are no request: an unknown type, a send record too short to hold one
            assertTrue(requests.write(77, record(12, write, signaled, own.lkey(), own.address(), 64, 0, peer, rkey), 0,
                ConnectionRings.WR_LENGTH));
            assertTrue(requests.write(ConnectionRings.SEND_REQUEST, new UnsafeBuffer(new byte[16]), 0, 16));

            final WorkCompletionStatus[] expected = {WorkCompletionStatus.LOC_PROT_ERR, WorkCompletionStatus.LOC_PROT_ERR,
                WorkCompletionStatus.LOC_PROT_ERR, WorkCompletionStatus.LOC_PROT_ERR, WorkCompletionStatus.LOC_LEN_ERR,
                WorkCompletionStatus.LOC_PROT_ERR, WorkCompletionStatus.LOC_QP_OP_ERR, WorkCompletionStatus.LOC_QP_OP_ERR,
                WorkCompletionStatus.LOC_QP_OP_ERR, WorkCompletionStatus.LOC_QP_OP_ERR};
            for (int i = 0; i < expected.length; i++)
            {
                final WorkCompletion refused = poll(qp.sendCompletionQueue(), "refusal of request " + (i + 1));
                assertEquals(i + 1, refused.wrId(), refused.toString());
                assertEquals(expected[i], refused.status(), refused.toString());
            }
            final WorkCompletion receive = poll(qp.receiveCompletionQueue(), "refusal of the receive");
            assertEquals(11, receive.wrId());
            assertEquals(WorkCompletionStatus.LOC_PROT_ERR, receive.status());
            await(() -> bed.counter("ipc: work requests refused") == 13, WAIT, "thirteen records refused");
            assertEquals(2L, bed.counter("ipc: work requests refused: unknown lkey"));
            assertEquals(4L, bed.counter("ipc: work requests refused: memory outside the region"));
            assertEquals(1L, bed.counter("ipc: work requests refused: negative length"));
            assertEquals(1L, bed.counter("ipc: work requests refused: unknown stream"));
            assertEquals(3L, bed.counter("ipc: work requests refused: bad opcode or flags"));
            assertEquals(2L, bed.counter("ipc: request records skipped: not a work request"));
            assertEquals(-1, mismatch(victims.segment(), 0, 1 << 16, 51), "the victim's memory untouched");

            // the same queue pair still serves its owner: a READ of the peer's memory into its own, every byte checked
            send(requests, record(20, read, signaled, own.lkey(), own.address(), 1 << 16, 0, peer, rkey));
            final WorkCompletion done = poll(qp.sendCompletionQueue(), "a good READ after the refusals");
            assertEquals(20, done.wrId());
            assertEquals(WorkCompletionStatus.SUCCESS, done.status(), done.toString());
            assertEquals(-1, mismatch(own.segment(), 0, 1 << 16, 50), "every byte of the READ");
            IpcConductorAttackTest.transfer(bed, victim, peerRegion, 52);
            assertEquals(2L, bed.counter("ipc: clients"), "a refused request costs no client");
            assertEquals(0L, bed.unexpectedErrors());
            assertEquals(0L, workerFaults(bed), "the worker met nothing it did not expect");
        }
    }

    @Test
    void shouldDropAClientThatWritesGarbageOverItsRingOrItsPositionsAndServeTheOthers() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.ROCEV2, Duration.ofSeconds(5));
            Arena arena = Arena.ofShared();
            NicClient victim = NicClient.connect(bed.dir, WAIT))
        {
            final MemoryRegion peerRegion = bed.peer.register(arena.allocate(1 << 16, 4096), ALL);
            // positions: a tail far ahead of the head and heads in the future on every ring; the reader keeps its own
            final NicClient tamperer = NicClient.connect(bed.dir, WAIT);
            final ClientRegion tampererRegion = tamperer.register(1 << 16, ALL);
            final ClientConnection tampered = connectedQueuePair(bed, tamperer);
            for (final OneToOneRingBuffer ring : List.of(tampered.rings().requests(), tampered.rings().sendCompletions(),
                tampered.rings().receiveCompletions()))
            {
                final AtomicBuffer b = ring.buffer();
                final int capacity = ring.capacity();
                b.putLongRelease(capacity + RingBufferDescriptor.TAIL_POSITION_OFFSET, Long.MAX_VALUE);
                b.putLongRelease(capacity + RingBufferDescriptor.HEAD_POSITION_OFFSET, Long.MIN_VALUE + 8);
                b.putLongRelease(capacity + RingBufferDescriptor.HEAD_CACHE_POSITION_OFFSET, -1L);
            }
            // ... and a request the worker finds where its own head says, whose completion cannot be written
            final AtomicBuffer requests = tampered.rings().requests().buffer();
            final UnsafeBuffer good = record(1, WorkRequestOpcode.RDMA_WRITE.code(), ConnectionRings.FLAG_SIGNALED,
                tampererRegion.lkey(), tampererRegion.address(), 64, 0, peerRegion.address(), peerRegion.rkey());
            requests.putInt(4, ConnectionRings.SEND_REQUEST);
            requests.putBytes(8, good, 0, ConnectionRings.WR_LENGTH);
            requests.putIntRelease(0, 8 + ConnectionRings.WR_LENGTH);
            IpcConductorAttackTest.transfer(bed, victim, peerRegion, 53);

            // garbage over a whole request ring: the writer is dropped, with what it held
            final NicClient scribbler = NicClient.connect(bed.dir, WAIT);
            scribbler.register(4096, ALL);
            final ClientConnection scribbled = scribbler.createQueuePair(0);
            final AtomicBuffer ring = scribbled.rings().requests().buffer();
            final SplittableRandom random = new SplittableRandom(54);
            for (int i = 8; i < scribbled.rings().requests().capacity(); i += 8)
            {
                ring.putLong(i, random.nextLong());
            }
            ring.putIntRelease(0, -7); // a claim of 7 B: no honest producer claims less than a header
            await(() -> bed.counter("ipc: clients dropped: corrupt request ring") == 1, WAIT, "the scribbler dropped");
            IpcConductorAttackTest.transfer(bed, victim, peerRegion, 55);
            assertEquals(0L, bed.unexpectedErrors());
            assertEquals(0L, workerFaults(bed), "the worker met nothing it did not expect");
            assertTrue(bed.counter("ipc: clients") >= 1);
            tamperer.close();
            scribbler.close();
        }
    }

    @Test
    void shouldTakeAFloodFromAnotherProcessAtTheWorkersPaceWhileAnotherClientsWritesArriveIntact() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.ROCEV2, Duration.ofSeconds(5));
            Arena arena = Arena.ofShared();
            NicClient good = NicClient.connect(bed.dir, WAIT))
        {
            final MemoryRegion peerRegion = bed.peer.register(arena.allocate(1 << 20, 4096), ALL);
            final ClientRegion region = good.register(1 << 20, ALL);
            final ClientConnection qp = connectedQueuePair(bed, good);
            final AtomicBoolean stop = new AtomicBoolean();
            final AtomicLong verified = new AtomicLong();
            final CompletableFuture<Void> writer = CompletableFuture.runAsync(() ->
                IpcAttackerProcessTest.writeAndVerify(qp, region, peerRegion, stop, verified));
            try (ChildJvm attacker = new ChildJvm(IpcAttackerMain.class, List.of(bed.dir.toString())))
            {
                attacker.expect("CLIENT");
                attacker.say("FLOOD " + region.lkey() + " 3");
                attacker.expect("FLOODING");
                final long before = verified.get();
                final String flooded = attacker.expect("FLOODED");
                assertTrue(Long.parseLong(flooded) > 1000, "records written by the flood: " + flooded);
                await(() -> verified.get() > before + 4 || writer.isDone(), WAIT, "the good client's writes during the flood");
                attacker.process.destroyForcibly();
                assertTrue(attacker.process.waitFor(30, TimeUnit.SECONDS));
            }
            final long after = verified.get();
            await(() -> verified.get() > after + 4 || writer.isDone(), WAIT, "the good client's writes after the flood");
            stop.set(true);
            writer.get(60, TimeUnit.SECONDS);
            assertTrue(bed.counter("ipc: work requests refused") > 1000, "the flood refused and counted: " +
                bed.counter("ipc: work requests refused"));
            assertEquals(0L, bed.unexpectedErrors());
            assertEquals(0L, workerFaults(bed), "the worker met nothing it did not expect");
            assertEquals(0L, bed.counter("ipc: clients timed out"), "the good client was never timed out");
        }
    }

    private static void send(final OneToOneRingBuffer requests, final UnsafeBuffer record)
    {
        assertTrue(requests.write(ConnectionRings.SEND_REQUEST, record, 0, ConnectionRings.WR_LENGTH));
    }
}
