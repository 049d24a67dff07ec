package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.nic.NicConnection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static io.spraynic.datapath.nic.ipc.IpcAttackerProcessTest.CLOSED_UNCOLLECTED;
import static io.spraynic.datapath.nic.ipc.IpcAttackerProcessTest.REFUSED_UNCOLLECTED;
import static io.spraynic.datapath.nic.ipc.IpcTestBed.WAIT;
import static io.spraynic.datapath.nic.ipc.IpcTestBed.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link ClientSessions}' contract for the rings a client has not collected (docs/IPC.md I10.11), seen from a client:
 * queue pairs asked for on the command ring as a raw client would, and collected, late or in time, with OPEN_MEMORY.
 * A fresh NIC's first object id is 1, the next 2, and so on.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ClientSessionsTest
{
    @TempDir
    Path base;

    @Test
    void shouldCloseAConnectionWhoseRingsAreNotCollectedInTimeAndRefuseTheLateCollection() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.ROCEV2, Duration.ofSeconds(1));
            NicClient client = NicClient.connect(bed.dir, WAIT);
            RawControlFile raw = new RawControlFile(bed.dir))
        {
            assertTrue(raw.command(IpcMessages.CREATE_QUEUE_PAIR, client.clientId(), client.token(),
                IpcMessages.Connect.LENGTH));
            await(() -> bed.counter("ipc: connections") == 1, WAIT, "the queue pair made");
            await(() -> bed.counter(CLOSED_UNCOLLECTED) == 1 && bed.counter("ipc: connections") == 0, WAIT,
                "the queue pair closed once its rings were not collected within the client timeout");
            final NicRefusedException late = assertThrows(NicRefusedException.class, () -> client.openMemory(1));
            assertEquals(IpcMessages.ERR_UNKNOWN_OBJECT, late.code(), late.getMessage());

            // the client itself stays, and a queue pair whose rings it collected at once outlives the deadline
            final ClientConnection collected = client.createQueuePair(0);
            Thread.sleep(3 * client.clientTimeoutMs());
            assertEquals(1L, bed.counter("ipc: connections"));
            assertEquals(1L, bed.counter(CLOSED_UNCOLLECTED));
            assertEquals(0L, bed.counter("ipc: clients timed out"));
            collected.close(Duration.ZERO);
            assertEquals(0L, bed.counter("ipc: connections"));
        }
    }

    @Test
    void shouldRefuseAConnectionBeyondTheUncollectedBoundUntilOneIsCollected() throws Exception
    {
        final int bound = IpcConductor.MAX_UNCOLLECTED_CONNECTIONS;
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.ROCEV2, Duration.ofSeconds(30));
            NicClient client = NicClient.connect(bed.dir, WAIT);
            RawControlFile raw = new RawControlFile(bed.dir))
        {
            for (int i = 0; i <= bound; i++)
            {
                assertTrue(raw.command(IpcMessages.CREATE_QUEUE_PAIR, client.clientId(), client.token(),
                    IpcMessages.Connect.LENGTH));
            }
            await(() -> bed.counter("ipc: connections") == bound && bed.counter(REFUSED_UNCOLLECTED) == 1, WAIT,
                bound + " queue pairs made, one more refused");

            final SocketReply rings = client.openMemory(1); // collected: room for one more
            UnixSockets.close(rings.fd);
            assertTrue(raw.command(IpcMessages.CREATE_QUEUE_PAIR, client.clientId(), client.token(),
                IpcMessages.Connect.LENGTH));
            await(() -> bed.counter("ipc: connections") == bound + 1, WAIT, "one more made once one was collected");
            assertTrue(raw.command(IpcMessages.CREATE_QUEUE_PAIR, client.clientId(), client.token(),
                IpcMessages.Connect.LENGTH));
            await(() -> bed.counter(REFUSED_UNCOLLECTED) == 2, WAIT, "the next refused again");
            assertEquals(bound + 1L, bed.counter("ipc: connections"));
            assertEquals(0L, bed.counter(CLOSED_UNCOLLECTED), "none closed before its deadline");
            assertEquals(0L, bed.unexpectedErrors());
        }
    }
}
