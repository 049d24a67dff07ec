package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.nic.NicConnection;
import io.spraynic.datapath.api.RocevEndpoint;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.spraynic.datapath.nic.ipc.IpcTestBed.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The client is a separate JVM ({@link IpcClientMain}) that knows only the IPC directory: it registers memory,
 * connects through this JVM's NIC to a peer NIC and moves bytes both ways, verified here and there; and a client
 * killed mid-way is released by the NIC.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class NicClientProcessTest
{
    private static final int ALL = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;

    @TempDir
    Path base;

    private static List<String> args(final IpcTestBed bed, final String mode, final MemoryRegion peerRegion,
        final boolean hold)
    {
        final List<String> args = new ArrayList<>(List.of(bed.dir.toString(), mode, Integer.toString(IpcTestBed.ip(1)),
            Long.toString(peerRegion.address()), Integer.toString(peerRegion.rkey())));
        if (hold)
        {
            args.add("hold");
        }
        return args;
    }

    @Test
    void shouldWriteSendAndReceiveFromAnotherProcessOverSpray() throws Exception
    {
        exchange(NicConnection.Kind.SPRAY);
    }

    @Test
    void shouldWriteSendAndReceiveFromAnotherProcessOverRocev2() throws Exception
    {
        exchange(NicConnection.Kind.ROCEV2);
    }

    private void exchange(final NicConnection.Kind mode) throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, mode, Duration.ofSeconds(5));
            Arena arena = Arena.ofShared())
        {
            final MemoryRegion peerRegion = bed.peer.register(arena.allocate(IpcClientMain.REGION_BYTES, 4096), ALL);
            try (ChildJvm child = new ChildJvm(IpcClientMain.class, args(bed, mode == NicConnection.Kind.SPRAY ? "spray" : "rocev2", peerRegion, false)))
            {
                final NicConnection p;
                if (mode == NicConnection.Kind.SPRAY)
                {
                    child.expect("CONNECTED");
                    p = bed.peer.accept(WAIT);
                    assertNotNull(p, "the peer accepted the client's connection");
                }
                else
                {
                    final RocevEndpoint theirs = RocevEndpoint.parse(child.expect("ENDPOINT"));
                    p = bed.peer.createQueuePair(0);
                    p.connect(theirs, WAIT);
                    child.say("PEER " + p.rocevEndpoint().format());
                    child.expect("CONNECTED");
                }
                final long receiveAt = IpcClientMain.SEND_OFFSET;
                assertEquals(PostResult.OK, p.postReceive(0, new ReceiveWorkRequest().wrId(9)
                    .buffer(peerRegion, peerRegion.address() + receiveAt, 8192)));
                child.say("GO");

                final WorkCompletion received = IpcTestBed.poll(p.receiveCompletionQueue(), "the client's SEND");
                assertEquals(WorkCompletionStatus.SUCCESS, received.status(), received.toString());
                assertEquals(IpcClientMain.SEND_BYTES, received.byteLength());
                assertEquals(-1, IpcTestBed.mismatch(peerRegion.segment(), receiveAt, IpcClientMain.SEND_BYTES, 32));
                assertEquals(-1, IpcTestBed.mismatch(peerRegion.segment(), 0, IpcClientMain.WRITE_BYTES, 31),
                    "the client's RDMA WRITEs placed every byte");

                child.expect("RECEIVE-POSTED");
                // 16 writes, 1 send and the receive reached the worker before the peer sends
                IpcTestBed.await(() -> bed.counter("ipc: work requests taken") >= 18, WAIT, "the receive reached the NIC");
                IpcTestBed.fill(peerRegion.segment(), IpcClientMain.RECEIVE_OFFSET, 6000, 33);
                assertEquals(PostResult.OK, p.postSend(0, new SendWorkRequest().wrId(10).opcode(WorkRequestOpcode.SEND)
                    .local(peerRegion, peerRegion.address() + IpcClientMain.RECEIVE_OFFSET, 6000)));
                assertEquals(WorkCompletionStatus.SUCCESS, IpcTestBed.poll(p.sendCompletionQueue(), "peer's send").status());
                assertEquals("200 6000 -1", child.expect("RECEIVED"), "the client saw every byte the peer sent");
                assertEquals("idle=true sends=17 receives=1", child.expect("CLOSED"));
                child.expect("DONE");
                assertTrue(child.process.waitFor(30, TimeUnit.SECONDS));
                assertEquals(0, child.process.exitValue());
            }
            IpcTestBed.await(() -> bed.counter("ipc: clients") == 0 && bed.objectFiles().isEmpty(), WAIT,
                "the client's objects released: " + bed.objectFiles());
            assertEquals(1L, bed.counter("ipc: clients closed"));
            assertEquals(0L, bed.counter("ipc: clients timed out"));
        }
    }

    @Test
    void shouldReleaseWhatAKilledClientHeld() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.SPRAY, Duration.ofSeconds(3));
            Arena arena = Arena.ofShared())
        {
            final MemoryRegion peerRegion = bed.peer.register(arena.allocate(IpcClientMain.REGION_BYTES, 4096), ALL);
            try (ChildJvm child = new ChildJvm(IpcClientMain.class, args(bed, "spray", peerRegion, true)))
            {
                child.expect("CONNECTED");
                assertNotNull(bed.peer.accept(WAIT));
                child.expect("READY");
                assertEquals(1L, bed.counter("ipc: clients"));
                assertEquals(1L, bed.counter("ipc: regions"));
                assertEquals(1L, bed.counter("ipc: connections"));
                assertEquals(List.of(), bed.objectFiles(), "no file: its region and connection rings are memfds");
                child.process.destroyForcibly();
                assertTrue(child.process.waitFor(30, TimeUnit.SECONDS));
            }
            IpcTestBed.await(() -> bed.counter("ipc: clients timed out") == 1 && bed.counter("ipc: regions") == 0 &&
                bed.counter("ipc: connections") == 0 && bed.objectFiles().isEmpty(), WAIT,
                "the killed client's region and connection released: " + bed.objectFiles());
            assertEquals(0L, bed.counter("ipc: clients"));
            assertEquals(0L, bed.counter("ipc: clients closed"));
            assertTrue(bed.served.connections().isEmpty(), "the NIC closed the killed client's connection");
        }
    }
}
