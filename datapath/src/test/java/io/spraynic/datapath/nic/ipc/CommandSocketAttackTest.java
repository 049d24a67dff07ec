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
            // the test closed its own copies: any left open are the NIC's (the process's total is no measure here, as
            // the client's socket and lazily opened files come and go)
            await(() -> RawDescriptors.openTo("/memfd:attacker") == 0, WAIT, "the NIC closed every memfd it was sent");
            assertEquals(0L, RawDescriptors.openTo(base.resolve("plain").toString()), "and the plain file");

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
    void shouldRefuseTruncatingEveryMemoryTheNicHandsOverAndKeepServing() throws Throwable
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.ROCEV2, Duration.ofSeconds(5));
            Arena arena = Arena.ofShared();
            NicClient client = NicClient.connect(bed.dir, WAIT))
        {
            final MemoryRegion peerRegion = bed.peer.register(arena.allocate(1 << 16, 4096), ALL);
            final long before = RawDescriptors.openDescriptors();
            final int socket = UnixSockets.connect(bed.dir.resolve(CommandSocket.SOCKET_FILE).toString());
            assertTrue(socket >= 0);
            final List<Integer> received = new ArrayList<>();
            final long qpId;
            try
            {
                // what a client receives: the control memory (HELLO), its answer ring (ADD_CLIENT) ...
                final SocketReply hello = SocketReply.exchange(socket, IpcMessages.HELLO,
                    new UnsafeBuffer(new byte[IpcMessages.Header.LENGTH]), IpcMessages.Header.LENGTH,
                    System.nanoTime() + WAIT.toNanos(), bed.dir);
                received.add(hello.fd);
                final UnsafeBuffer add = new UnsafeBuffer(new byte[IpcMessages.AddClient.LENGTH]);
                new IpcMessages.AddClient().wrap(add, 0).pid(ProcessHandle.current().pid());
                final SocketReply added = SocketReply.exchange(socket, IpcMessages.ADD_CLIENT, add,
                    IpcMessages.AddClient.LENGTH, System.nanoTime() + WAIT.toNanos(), bed.dir);
                received.add(added.fd);
                assertEquals(IpcFileDescriptor.fileLength(), UnixSockets.size(hello.fd));
                assertEquals(IpcFileDescriptor.answerFileLength(), UnixSockets.size(added.fd));
                // ... and a connection's rings (OPEN_MEMORY), asked for by the client's id and token
                final ClientConnection qp = client.createQueuePair(0);
                qpId = qp.id();
                final NicRefusedException twice = assertThrows(NicRefusedException.class, () -> client.openMemory(qp.id()));
                assertTrue(twice.getMessage().contains("handed over already"), twice.getMessage());
                final NicRefusedException foreign = assertThrows(NicRefusedException.class,
                    () -> client.openMemory(424242));
                assertEquals(IpcMessages.ERR_UNKNOWN_OBJECT, foreign.code());
                for (final int fd : received)
                {
                    assertEquals(SEALED, UnixSockets.seals(fd) & SEALED, "sealed against shrinking, growing, new seals");
                    final long size = UnixSockets.size(fd);
                    assertEquals(-UnixSockets.EPERM, UnixSockets.truncate(fd, 0), "no shrinking");
                    assertEquals(-UnixSockets.EPERM, UnixSockets.truncate(fd, size - 8), "not even a little");
                    assertEquals(-UnixSockets.EPERM, UnixSockets.truncate(fd, size * 2), "no growing");
                    assertEquals(size, UnixSockets.size(fd));
                }
            }
            finally
            {
                received.forEach(UnixSockets::close);
                UnixSockets.close(socket);
            }
            // the connection's rings as this process maps them (the client closed its descriptor): the same seals
            final List<String> rings = java.nio.file.Files.readAllLines(Path.of("/proc/self/maps")).stream()
                .filter(line -> line.contains("memfd:spraynic-conn-" + qpId + " ")).toList();
            // the NIC's mapping and the client's (tests before this one in the JVM may have left others of that name)
            assertTrue(rings.size() >= 2, "the NIC's mapping and the client's: " + rings);
            for (final String line : rings)
            {
                final Path file = Path.of("/proc/self/map_files/" + line.substring(0, line.indexOf(' ')));
                try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE))
                {
                    assertThrows(IOException.class, () -> channel.truncate(0), "the rings refuse to shrink");
                    assertEquals(ConnectionRings.fileLength(), channel.size());
                }
            }
            IpcConductorAttackTest.transfer(bed, client, peerRegion, 47);
            assertEquals(0L, unexpected(bed));
            assertEquals(2L, bed.counter("ipc: clients"), "the raw client is a client until it times out");
            assertTrue(RawDescriptors.openDescriptors() <= before + 1, "only the connection's descriptor is new");
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
            await(() -> dropped(bed) == GARBAGE_MESSAGES, WAIT, "the first round dropped");
            final long before = RawDescriptors.openDescriptors();
            sendGarbage(bed.dir, client);
            await(() -> dropped(bed) == 2 * GARBAGE_MESSAGES, WAIT, "the second round dropped");
            assertEquals(10L, bed.counter(WRONG_DESCRIPTORS));
            assertEquals(2L, bed.counter("ipc: socket messages dropped: too long"));
            assertEquals(8L, bed.counter(NOT_A_SOCKET_COMMAND));
            assertEquals(0L, bed.counter("ipc: clients") - 1, "no garbage ADD_CLIENT made a client");
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

    static final String WRONG_DESCRIPTORS = "ipc: socket messages dropped: not the descriptors its type carries";
    static final String NOT_A_SOCKET_COMMAND = "ipc: socket messages dropped: not a socket command of this version";
    /** Messages {@link #sendGarbage} sends: 5 with the wrong descriptors, 1 too long, 4 of no socket command. */
    static final int GARBAGE_MESSAGES = 10;

    /** Ten messages no client sends: each with the descriptors it names closed on this side once sent. */
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
            // version 5's socket commands carry no descriptor: one offered is refused, and never taken for memory
            send(dir, socketCommand(IpcMessages.HELLO, IpcFileDescriptor.VERSION, client), memory);
            send(dir, socketCommand(IpcMessages.ADD_CLIENT, IpcFileDescriptor.VERSION, client), memory, memory);
            send(dir, socketCommand(IpcMessages.OPEN_MEMORY, IpcFileDescriptor.VERSION, client), memory);
            // another version's messages: a version-4 REGISTER (its word 4 was reserved, 0) and a HELLO of the next version
            final byte[] v4 = register.clone();
            new UnsafeBuffer(v4).putInt(CommandSocket.VERSION_OFFSET, 0, IpcMessages.ORDER);
            send(dir, v4, memory);
            send(dir, socketCommand(IpcMessages.HELLO, IpcFileDescriptor.VERSION + 1, client));
        }
        finally
        {
            UnixSockets.close(memory);
        }
    }

    /** A socket message of {@code type} and {@code version} whose command is an object command of the client's. */
    static byte[] socketCommand(final int type, final int version, final NicClient client)
    {
        final UnsafeBuffer message = new UnsafeBuffer(new byte[CommandSocket.MESSAGE_HEADER_LENGTH +
            IpcMessages.ObjectCommand.LENGTH]);
        message.putInt(0, type, IpcMessages.ORDER);
        message.putInt(CommandSocket.VERSION_OFFSET, version, IpcMessages.ORDER);
        final IpcMessages.ObjectCommand command = new IpcMessages.ObjectCommand();
        command.wrap(new UnsafeBuffer(message.byteArray(), CommandSocket.MESSAGE_HEADER_LENGTH,
            IpcMessages.ObjectCommand.LENGTH), 0);
        command.ids(client.clientId(), 1, client.token());
        command.object(1, 0);
        return message.byteArray();
    }

    static byte[] registerMessage(final NicClient client, final long bytes)
    {
        final UnsafeBuffer message = new UnsafeBuffer(new byte[CommandSocket.MESSAGE_HEADER_LENGTH +
            IpcMessages.Register.LENGTH]);
        message.putInt(0, IpcMessages.REGISTER, IpcMessages.ORDER);
        message.putInt(CommandSocket.VERSION_OFFSET, IpcFileDescriptor.VERSION, IpcMessages.ORDER);
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
        return bed.counter(WRONG_DESCRIPTORS) + bed.counter("ipc: socket messages dropped: too long") +
            bed.counter(NOT_A_SOCKET_COMMAND);
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
