package io.spraynic.datapath.nic.ipc;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The NIC's socket {@code DIR/nic.sock} (docs/IPC.md I12): an {@code AF_UNIX SOCK_SEQPACKET} socket on which a
 * client sends each command that carries memory, with that memory's sealed memfd as the one descriptor of an
 * {@code SCM_RIGHTS} message. A memfd, unlike a file of the directory, can be sealed against shrinking, so no client can
 * truncate memory under the NIC's mapping (whose next access would kill the NIC with SIGBUS); and a descriptor passed
 * over a socket reaches the NIC across users of a group and across pid namespaces, where {@code /proc/<pid>/fd} does not.
 * <p>
 * Everything is non-blocking and polled by the conductor; nothing here throws out of {@link #poll}. A message that is
 * not one command with exactly one descriptor (too long, too short, no descriptor or several, other ancillary data, a
 * type that carries no memory) is counted by reason, every descriptor it brought is closed, and its connection is
 * closed: the sender learns of the refusal as the end of its connection. A connection idle for
 * {@link #IDLE_TIMEOUT_MS} is closed (a client connects, sends and closes). Conductor thread only.
 */
final class CommandSocket implements AutoCloseable
{
    /** Name of the socket in the IPC directory. */
    static final String SOCKET_FILE = "nic.sock";
    /** Bytes before the command body: {@code type} (i32) and a reserved i32. */
    static final int MESSAGE_HEADER_LENGTH = 8;
    /** Connections served at once; more are accepted and closed at once, counted. */
    static final int MAX_CONNECTIONS = 64;
    /** A connection that sends nothing for this long is closed. */
    static final long IDLE_TIMEOUT_MS = 2_000;
    private static final int ACCEPTS_PER_POLL = 8;
    /**
     * Idle accepts made when the socket opens, so that the JIT compiles the downcall before the conductor polls: an
     * interpreted downcall allocates (~60 B), a compiled one nothing, and an idle conductor runs too few duty cycles
     * for the JIT to get there on its own (about 15 ms at start).
     */
    private static final int WARM_UP_ACCEPTS = 40_000;

    /** Takes a command that came with its memory; {@code fd} is closed by the socket once it returns. */
    interface Handler
    {
        void onCommand(int type, MutableDirectBuffer body, int length, int fd);
    }

    private final Path path;
    private final int listenFd;
    private final IpcCounters counters;
    private final int[] connections = new int[MAX_CONNECTIONS];
    private final long[] lastActiveMs = new long[MAX_CONNECTIONS];
    private final byte[] message = new byte[MESSAGE_HEADER_LENGTH + IpcMessages.MAX_COMMAND_LENGTH];
    private final UnsafeBuffer body = new UnsafeBuffer(message, MESSAGE_HEADER_LENGTH, IpcMessages.MAX_COMMAND_LENGTH);
    private final UnsafeBuffer header = new UnsafeBuffer(message, 0, MESSAGE_HEADER_LENGTH);
    private final UnixSockets.Received received = new UnixSockets.Received(message.length);
    private int count;

    private CommandSocket(final Path path, final int listenFd, final IpcCounters counters)
    {
        this.path = path;
        this.listenFd = listenFd;
        this.counters = counters;
    }

    /** Binds {@code DIR/nic.sock} (mode 0600; any old socket of that name is removed first) and listens. */
    static CommandSocket open(final Path directory, final IpcCounters counters)
    {
        if (!UnixSockets.isSupported())
        {
            throw new IllegalStateException("the IPC socket needs Linux (socket, sendmsg, recvmsg, fcntl in libc)");
        }
        final Path path = directory.resolve(SOCKET_FILE);
        IpcFiles.delete(path);
        final int fd = UnixSockets.listen(path.toString(), MAX_CONNECTIONS);
        try
        {
            if (path.getFileSystem().supportedFileAttributeViews().contains("posix"))
            {
                Files.setPosixFilePermissions(path, IpcFiles.OWNER_ONLY_FILE);
            }
        }
        catch (final IOException ex)
        {
            UnixSockets.close(fd);
            IpcFiles.delete(path);
            throw new IllegalStateException("cannot set the mode of " + path + ": " + ex.getMessage(), ex);
        }
        final CommandSocket socket = new CommandSocket(path, fd, counters);
        socket.warmUp();
        return socket;
    }

    private void warmUp()
    {
        for (int k = 0; k < WARM_UP_ACCEPTS; k++)
        {
            final int fd = UnixSockets.accept(listenFd, received);
            if (fd >= 0)
            {
                addConnection(fd, System.currentTimeMillis()); // a client that came early is served as usual
            }
        }
    }

    /** @return the socket's path. */
    Path path()
    {
        return path;
    }

    /** @return connections open now. */
    int connections()
    {
        return count;
    }

    /**
     * Accepts waiting connections and takes at most one message from each.
     *
     * @return work done.
     */
    int poll(final long nowMs, final Handler handler)
    {
        int work = 0;
        try
        {
            work += accept(nowMs);
        }
        catch (final RuntimeException ex)
        {
            counters.unexpected(counters.unexpectedSocket, "socket accept", ex, nowMs, 10_000);
        }
        for (int i = count - 1; i >= 0; i--)
        {
            try
            {
                work += receive(i, nowMs, handler);
            }
            catch (final RuntimeException ex)
            {
                counters.unexpected(counters.unexpectedSocket, "socket message", ex, nowMs, 10_000);
                closeConnection(i);
            }
        }
        return work;
    }

    private int accept(final long nowMs)
    {
        int accepted = 0;
        for (int k = 0; k < ACCEPTS_PER_POLL; k++)
        {
            final int fd = UnixSockets.accept(listenFd, received);
            if (fd < 0)
            {
                break; // EAGAIN: nobody waits (or the connection went before it was accepted)
            }
            accepted++;
            addConnection(fd, nowMs);
        }
        return accepted;
    }

    private void addConnection(final int fd, final long nowMs)
    {
        if (count == MAX_CONNECTIONS)
        {
            counters.socketRefusedConnections.incrementRelease();
            UnixSockets.close(fd);
            return;
        }
        counters.socketConnections.incrementRelease();
        connections[count] = fd;
        lastActiveMs[count] = nowMs;
        count++;
    }

    private int receive(final int i, final long nowMs, final Handler handler)
    {
        final UnixSockets.Received received = this.received;
        UnixSockets.receive(connections[i], message, received);
        final long length = received.length;
        if (length == -UnixSockets.EAGAIN || length == -UnixSockets.EINTR)
        {
            closeAll(received);
            if (nowMs - lastActiveMs[i] > IDLE_TIMEOUT_MS)
            {
                counters.socketIdleClosed.incrementRelease();
                closeConnection(i);
                return 1;
            }
            return 0;
        }
        if (length <= 0 && 0 == received.fdCount)
        {
            closeConnection(i); // the client closed it (0) or it broke (-errno)
            return 1;
        }
        lastActiveMs[i] = nowMs;
        final int type = length >= MESSAGE_HEADER_LENGTH ? header.getInt(0, IpcMessages.ORDER) : 0;
        final String problem = problem(received, type);
        if (null != problem)
        {
            closeAll(received);
            closeConnection(i);
            return 1;
        }
        final int fd = received.fds[0];
        try
        {
            handler.onCommand(type, body, (int)length - MESSAGE_HEADER_LENGTH, fd);
        }
        finally
        {
            UnixSockets.close(fd); // what the NIC keeps it mapped; the descriptor itself goes
        }
        return 1;
    }

    /** @return null when the message is one command that carries memory with its one descriptor, else the reason (counted). */
    private String problem(final UnixSockets.Received received, final int type)
    {
        if (0 != (received.flags & UnixSockets.MSG_TRUNC))
        {
            counters.socketDroppedTooLong.incrementRelease();
            return "longer than " + message.length + " B";
        }
        if (0 != (received.flags & UnixSockets.MSG_CTRUNC) || 0 != received.otherControlMessages ||
            1 != received.fdCount)
        {
            counters.socketDroppedDescriptors.incrementRelease();
            return "not exactly one descriptor";
        }
        if (received.length < MESSAGE_HEADER_LENGTH + IpcMessages.Header.LENGTH || !carriesMemory(type))
        {
            counters.socketDroppedMalformed.incrementRelease();
            return "not a command that carries memory";
        }
        return null;
    }

    /** @return true for the commands sent on the socket, with their memory. */
    static boolean carriesMemory(final int type)
    {
        return type == IpcMessages.REGISTER;
    }

    private void closeAll(final UnixSockets.Received received)
    {
        UnixSockets.closeAll(received.fds, received.fdCount);
        received.fdCount = 0;
    }

    private void closeConnection(final int i)
    {
        UnixSockets.close(connections[i]);
        count--;
        connections[i] = connections[count];
        lastActiveMs[i] = lastActiveMs[count];
    }

    /** Closes every connection and the socket, and removes its name. */
    public void close()
    {
        while (count > 0)
        {
            closeConnection(count - 1);
        }
        UnixSockets.close(listenFd);
        IpcFiles.delete(path);
        received.close();
    }
}
