package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionOpcode;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ConnectionRingsTest
{
    @TempDir
    Path dir;

    @Test
    void shouldCarryCompletionsFromTheNicsMappingToTheClientsInOrderUntilFull()
    {
        try (ConnectionRings nic = ConnectionRings.create(2);
            ConnectionRings client = ConnectionRings.map(nic.sealedMemory().fd(), 2))
        {
            final WorkCompletion out = new WorkCompletion();
            int offered = 0;
            while (ConnectionRings.offerCompletion(nic.sendCompletions(),
                out.set(offered, WorkCompletionStatus.SUCCESS, WorkCompletionOpcode.RDMA_WRITE, offered, offered % 2 == 0,
                    ~offered, 0x101)))
            {
                offered++;
            }
            // 32 B a record (header, fields, alignment); the ring takes one fewer than its bytes would hold
            assertEquals(ConnectionRings.COMPLETION_RING_CAPACITY / 32 - 1, offered);
            final ClientCompletionQueue queue = new ClientCompletionQueue(client.sendCompletions());
            final WorkCompletion[] batch = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion()};
            assertEquals(3, queue.poll(batch));
            final WorkCompletion in = new WorkCompletion();
            for (int i = 3; i < offered; i++)
            {
                assertTrue(queue.poll(in));
                assertEquals(i, in.wrId());
                assertEquals(i, in.byteLength());
                assertEquals(i % 2 == 0, in.hasImmediate());
                assertEquals(~i, in.immediateData());
                assertEquals(0x101, in.qpNumber());
                assertEquals(WorkCompletionOpcode.RDMA_WRITE, in.opcode());
            }
            assertEquals(2, batch[2].wrId());
            assertFalse(queue.poll(in));
            assertTrue(queue.isEmpty());
            assertTrue(client.receiveCompletions().size() == 0 && client.requests().size() == 0, "rings do not overlap");
        }
    }

    @Test
    void shouldRefuseMemoryOfAnotherConnectionOrThatIsNotSealedOrShort() throws Throwable
    {
        try (ConnectionRings nic = ConnectionRings.create(3))
        {
            assertTrue(assertThrows(IllegalStateException.class, () -> ConnectionRings.map(nic.sealedMemory().fd(), 4))
                .getMessage().contains("is not connection 4"));
            assertEquals(-UnixSockets.EPERM, UnixSockets.truncate(nic.sealedMemory().fd(), 16), "sealed: no shrinking");
        }
        try (SealedMemory tooShort = SealedMemory.create("short", 4096))
        {
            assertTrue(assertThrows(IllegalStateException.class, () -> ConnectionRings.map(tooShort.fd(), 1))
                .getMessage().contains("less than"));
        }
        final int plain = RawDescriptors.plainFile(dir.resolve("plain"), ConnectionRings.fileLength());
        try
        {
            assertTrue(assertThrows(IllegalStateException.class, () -> ConnectionRings.map(plain, 1))
                .getMessage().contains("not a memfd"));
        }
        finally
        {
            UnixSockets.close(plain);
        }
    }
}
