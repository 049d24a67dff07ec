package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.nic.NicConnection;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.spraynic.datapath.nic.ipc.IpcTestBed.WAIT;
import static io.spraynic.datapath.nic.ipc.IpcTestBed.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Clients that offer the NIC memory it must not map (docs/IPC.md I7.1, I12): an unsealed memfd, one sealed only in
 * part, one too small, a plain file; a client that tries to truncate its registered region under the NIC; and garbage
 * on the NIC's socket (no descriptor, several, an oversized message, a command that carries no memory, too many
 * connections). Each is refused and counted, every descriptor the NIC was sent is closed, and the NIC keeps serving a
 * verified transfer.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CommandSocketAttackTest
{
    private static final int ALL = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;
    private static final int SEALED = UnixSockets.F_SEAL_SHRINK | UnixSockets.F_SEAL_GROW | UnixSockets.F_SEAL_SEAL;

    @TempDir
    Path base;

    @Test
    void shouldRefuseMemoryThatIsNotASealedMemfdOfTheLengthAndKeepServing() throws Throwable
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.ROCEV2, Duration.ofSeconds(5));
            Arena arena = Arena.ofShared();
            NicClient client = NicClient.connect(bed.dir, WAIT))
        {
            final MemoryRegion peerRegion = bed.peer.register(arena.allocate(1 << 16, 4096), ALL);
            final long before = RawDescriptors.openDescriptors();
            assertRefused(client, RawDescriptors.memfd(4096, 0), 4096, "not F_SEAL_SHRINK and F_SEAL_SEAL");
            assertRefused(client, RawDescriptors.memfd(4096, UnixSockets.F_SEAL_GROW | UnixSockets.F_SEAL_SEAL), 4096,
                "not F_SEAL_SHRINK and F_SEAL_SEAL");
            assertRefused(client, RawDescriptors.memfd(4096, UnixSockets.F_SEAL_SHRINK), 4096,
                "not F_SEAL_SHRINK and F_SEAL_SEAL");
            assertRefused(client, RawDescriptors.memfd(4096, SEALED), 8192, "less than the 8192 B");
            assertRefused(client, RawDescriptors.memfd(4096, SEALED | UnixSockets.F_SEAL_WRITE), 4096,
                "sealed against writes");
            assertRefused(client, RawDescriptors.plainFile(base.resolve("plain"), 4096), 4096, "not a memfd");
            assertEquals(6L, bed.counter("ipc: refused: memory not a sealed memfd of the size"));
            assertEquals(0L, bed.counter("ipc: regions"));
            assertEquals(before, RawDescriptors.openDescriptors(), "the NIC closed every descriptor it was sent");

            // a REGISTER on the command ring has no memory: refused, and the answer names the socket
            final NicRefusedException ring = assertThrows(NicRefusedException.class,
                () -> client.registerMemory(-1, 4096, ALL));
            assertEquals(IpcMessages.ERR_MALFORMED, ring.code());
            assertTrue(ring.getMessage().contains(CommandSocket.SOCKET_FILE), ring.getMessage());
            IpcConductorAttackTest.transfer(bed, client, peerRegion, 41);
            assertEquals(0L, unexpected(bed));
        }
    }

    @Test
    void shouldRefuseTruncatingARegisteredRegionAndKeepWritingIt() throws Throwable
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.ROCEV2, Duration.ofSeconds(5));
            Arena arena = Arena.ofShared();
            NicClient client = NicClient.connect(bed.dir, WAIT))
        {
            final MemoryRegion peerRegion = bed.peer.register(arena.allocate(1 << 16, 4096), ALL);
            final ClientRegion region = client.register(1 << 16, ALL);
            assertEquals(-UnixSockets.EPERM, UnixSockets.truncate(region.fd(), 0), "the seal refuses to shrink it");
            assertEquals(-UnixSockets.EPERM, UnixSockets.truncate(region.fd(), 4096), "or to shrink it a little");
            assertEquals(-UnixSockets.EPERM, UnixSockets.truncate(region.fd(), 1 << 20), "or to grow it");
            try (FileChannel channel = FileChannel.open(Path.of("/proc/self/fd/" + region.fd()), StandardOpenOption.WRITE))
            {
                assertThrows(IOException.class, () -> channel.truncate(0), "nor through a new open of it");
            }
            assertEquals(1L << 16, UnixSockets.size(region.fd()));

            // the NIC reads every byte of it still: an RDMA WRITE of all of it, verified at the peer
            IpcConductorAttackTest.writeThrough(bed, client, region, peerRegion, 17);
            assertEquals(0L, unexpected(bed));
        }
    }

    @Test
    void shouldDropGarbageOnTheSocketCloseEveryDescriptorAndKeepServing() throws Throwable
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.ROCEV2, Duration.ofSeconds(5));
            Arena arena = Arena.ofShared();
            NicClient client = NicClient.connect(bed.dir, WAIT))
        {
            final MemoryRegion peerRegion = bed.peer.register(arena.allocate(1 << 16, 4096), ALL);
            sendGarbage(bed.dir, client); // once to load what the first round loads
            await(() -> dropped(bed) == 5, WAIT, "the first round dropped");
            final long before = RawDescriptors.openDescriptors();
            sendGarbage(bed.dir, client);
            await(() -> dropped(bed) == 10, WAIT, "the second round dropped");
            assertEquals(4L, bed.counter("ipc: socket messages dropped: not exactly one descriptor"));
            assertEquals(2L, bed.counter("ipc: socket messages dropped: too long"));
            assertEquals(4L, bed.counter("ipc: socket messages dropped: not a command that carries memory"));
            await(() -> bed.conductor.socketConnections() == 0, WAIT, "every garbage connection closed");
            assertEquals(before, RawDescriptors.openDescriptors(), "the NIC closed every descriptor it was sent");

            // more connections than the NIC serves: the rest are closed at once, the idle ones after a while
            final List<Integer> idle = new ArrayList<>();
            for (int i = 0; i < CommandSocket.MAX_CONNECTIONS + 6; i++)
            {
                idle.add(UnixSockets.connect(bed.dir.resolve(CommandSocket.SOCKET_FILE).toString()));
            }
            assertTrue(idle.stream().allMatch(fd -> fd >= 0));
            await(() -> bed.counter("ipc: socket connections refused: limit") == 6, WAIT, "connections over the limit");
            await(() -> bed.counter("ipc: socket connections closed: idle") == CommandSocket.MAX_CONNECTIONS, WAIT,
                "idle connections closed");
            idle.forEach(UnixSockets::close);

            IpcConductorAttackTest.transfer(bed, client, peerRegion, 43);
            assertEquals(0L, unexpected(bed));
        }
    }

    /** Five messages no client sends: each with the descriptors it names closed on this side once sent. */
    static void sendGarbage(final Path dir, final NicClient client) throws Throwable
    {
        final byte[] register = registerMessage(client, 4096);
        final int memory = RawDescriptors.memfd(4096, SEALED);
        try
        {
            send(dir, register); // no descriptor
            send(dir, register, memory, memory, memory); // three
            send(dir, new byte[4096], memory); // longer than any command
            final byte[] keepalive = register.clone();
            new UnsafeBuffer(keepalive).putInt(0, IpcMessages.KEEPALIVE, IpcMessages.ORDER);
            send(dir, keepalive, memory); // a command that carries no memory
            send(dir, new byte[4], memory); // shorter than a header
        }
        finally
        {
            UnixSockets.close(memory);
        }
    }

    static byte[] registerMessage(final NicClient client, final long bytes)
    {
        final UnsafeBuffer message = new UnsafeBuffer(new byte[CommandSocket.MESSAGE_HEADER_LENGTH +
            IpcMessages.Register.LENGTH]);
        message.putInt(0, IpcMessages.REGISTER, IpcMessages.ORDER);
        final IpcMessages.Register register = new IpcMessages.Register();
        register.wrap(new UnsafeBuffer(message.byteArray(), CommandSocket.MESSAGE_HEADER_LENGTH,
            IpcMessages.Register.LENGTH), 0);
        register.ids(client.clientId(), 1, client.token());
        register.region(bytes, ALL);
        return message.byteArray();
    }

    static void send(final Path dir, final byte[] message, final int... fds)
    {
        final int socket = UnixSockets.connect(dir.resolve(CommandSocket.SOCKET_FILE).toString());
        assertTrue(socket >= 0, "connected: " + socket);
        try
        {
            assertEquals(message.length, UnixSockets.send(socket, message, fds));
        }
        finally
        {
            UnixSockets.close(socket);
        }
    }

    private static long dropped(final IpcTestBed bed)
    {
        return bed.counter("ipc: socket messages dropped: not exactly one descriptor") +
            bed.counter("ipc: socket messages dropped: too long") +
            bed.counter("ipc: socket messages dropped: not a command that carries memory");
    }

    private static long unexpected(final IpcTestBed bed)
    {
        return bed.unexpectedErrors() + bed.counter("ipc: unexpected errors: socket");
    }

    private static void assertRefused(final NicClient client, final int fd, final long bytes, final String reason)
    {
        try
        {
            final NicRefusedException refused = assertThrows(NicRefusedException.class,
                () -> client.registerMemory(fd, bytes, ALL));
            assertEquals(IpcMessages.ERR_BAD_VALUE, refused.code());
            assertTrue(refused.getMessage().contains(reason), refused.getMessage());
        }
        finally
        {
            UnixSockets.close(fd);
        }
    }
}
