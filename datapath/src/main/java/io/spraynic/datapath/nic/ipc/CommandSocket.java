package io.spraynic.datapath.nic.ipc;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * The NIC's socket {@code DIR/nic.sock} (docs/IPC.md I12): an {@code AF_UNIX SOCK_SEQPACKET} socket through which
 * every piece of shared memory passes between a client and the NIC, as a sealed memfd in an {@code SCM_RIGHTS}
 * message: a client sends REGISTER with its region's memory; it asks with HELLO for the NIC's control memory, with
 * ADD_CLIENT for its answer ring and with OPEN_MEMORY for a connection's rings or a capture's memory, and the NIC
 * answers those three on the same connection ({@link #reply}). A memfd, unlike a file of the directory, can be sealed
 * against shrinking, so no process can truncate memory under the NIC's mapping (whose next access would kill the NIC
 * with SIGBUS); and a descriptor passed over a socket reaches the other side across users of a group and across pid
 * namespaces, where {@code /proc/<pid>/fd} does not.
 * <p>
 * Everything is non-blocking and polled by the conductor; nothing here throws out of {@link #poll}. A message that is
 * not one command of this version with the descriptors its type carries (too long, too short, another version, a type
 * the socket does not take, descriptors where none belong or not exactly one with REGISTER, other ancillary data) is
 * counted by reason, every descriptor it brought is closed, and its connection is closed: the sender learns of the
 * refusal as the end of its connection. A connection idle for {@link #IDLE_TIMEOUT_MS} is closed. Conductor thread
 * only.
 */
final class CommandSocket implements AutoCloseable
{
    /** Name of the socket in the IPC directory. */
    static final String SOCKET_FILE = "nic.sock";
    /** Bytes before the command (or answer) body: {@code type} (i32) and {@code version} (i32). */
    static final int MESSAGE_HEADER_LENGTH = IpcMessages.SOCKET_HEADER_LENGTH;
    /** Offset of the version word in a message: {@link IpcFileDescriptor#VERSION}, else the message is dropped. */
    static final int VERSION_OFFSET = IpcMessages.SOCKET_VERSION_OFFSET;
    /** Connections served at once; more are accepted and closed at once, counted. */
    static final int MAX_CONNECTIONS = 64;
    /** A connection that sends nothing for this long is closed. */
    static final long IDLE_TIMEOUT_MS = 2_000;
    private static final int ACCEPTS_PER_POLL = 8;
    private static final int NO_UID = -1;
    private static final int NO_GROUP = -1;
    /**
     * Idle accepts made when the socket opens, so that the JIT compiles the downcall before the conductor polls: an
     * interpreted downcall allocates (~60 B), a compiled one nothing, and an idle conductor runs too few duty cycles
     * for the JIT to get there on its own (about 15 ms at start).
     */
    private static final int WARM_UP_ACCEPTS = 40_000;

    /**
     * Takes a command of the socket; {@code fd} is the memory that came with it (REGISTER), else -1, and is closed by
     * the socket once it returns. A HELLO, ADD_CLIENT or OPEN_MEMORY is answered with {@link #reply} from within.
     */
    interface Handler
    {
        void onCommand(int type, MutableDirectBuffer body, int length, int fd);
    }

    private final Path path;
    private final int listenFd;
    private final IpcCounters counters;
    private final int[] connections = new int[MAX_CONNECTIONS];
    private final long[] lastActiveMs = new long[MAX_CONNECTIONS];
    // per connection: whether its peer is this NIC's user or root (not only a member of the group), as the kernel saw
    // it connect: only such a peer's client may start a live capture, which sees every tenant's frames
    private final boolean[] ownersPeer = new boolean[MAX_CONNECTIONS];
    private boolean peerIsOwner;
    private boolean replyToOwner;
    private final byte[] message = new byte[MESSAGE_HEADER_LENGTH + IpcMessages.MAX_COMMAND_LENGTH];
    private final UnsafeBuffer body = new UnsafeBuffer(message, MESSAGE_HEADER_LENGTH, IpcMessages.MAX_COMMAND_LENGTH);
    private final UnsafeBuffer header = new UnsafeBuffer(message, 0, MESSAGE_HEADER_LENGTH);
    private final UnixSockets.Received received = new UnixSockets.Received(message.length);
    private final int ownerUid;
    private final int groupGid;
    private int count;
    private int replyTo = -1;

    private CommandSocket(final Path path, final int listenFd, final IpcCounters counters, final int ownerUid,
        final int groupGid)
    {
        this.path = path;
        this.listenFd = listenFd;
        this.counters = counters;
        this.ownerUid = ownerUid;
        this.groupGid = groupGid;
    }

    /** Binds {@code DIR/nic.sock} (mode 0600; any old socket of that name is removed first) and listens. */
    static CommandSocket open(final Path directory, final IpcCounters counters)
    {
        return open(directory, counters, IpcAccess.OWNER_ONLY);
    }

    /**
     * Binds {@code DIR/nic.sock} (any old socket of that name is removed first), gives it the mode and group of
     * {@code access} (0600, or 0660 of its group) and listens; each connection's peer must then be this user, root, or
     * (with a group) of that group (I10.10).
     */
    static CommandSocket open(final Path directory, final IpcCounters counters, final IpcAccess access)
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
            access.apply(path, access.socketMode());
        }
        catch (final IOException | RuntimeException ex)
        {
            UnixSockets.close(fd);
            IpcFiles.delete(path);
            throw new IllegalStateException("cannot set the mode of " + path + ": " + ex.getMessage(), ex);
        }
        final Object uid = IpcFiles.currentUid();
        final int groupGid;
        try
        {
            groupGid = null == access.group() ? NO_GROUP : (Integer)Files.getAttribute(path, "unix:gid", LinkOption.NOFOLLOW_LINKS);
        }
        catch (final IOException | UnsupportedOperationException ex)
        {
            UnixSockets.close(fd);
            IpcFiles.delete(path);
            throw new IllegalStateException("cannot read the group of " + path + ": " + ex.getMessage(), ex);
        }
        final CommandSocket socket = new CommandSocket(path, fd, counters, uid instanceof Integer u ? u : NO_UID, groupGid);
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
                admit(fd, System.currentTimeMillis()); // a client that came early is served as usual
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
            admit(fd, nowMs);
        }
        return accepted;
    }

    /**
     * @return whether the command being handled came from a peer of this NIC's user or root (false outside
     * {@link Handler#onCommand}, and for a member of the group that is neither).
     */
    boolean fromOwner()
    {
        return replyTo >= 0 && replyToOwner;
    }

    /**
     * I10.10: the peer's credentials, as the kernel recorded them when it connected, are this NIC's user, root, or
     * (with a group) of the group, as its primary or a supplementary group. File modes already keep others from
     * connecting; this keeps out a peer that got hold of a connection some other way (a descriptor passed on, a
     * socket reached through a mount that maps ownership). A peer the kernel cannot describe is refused.
     */
    private boolean permitted(final int fd)
    {
        peerIsOwner = false;
        if (NO_UID == ownerUid)
        {
            peerIsOwner = true;
            return true; // no uid to compare with (not Linux): file modes alone
        }
        if (UnixSockets.peerCredentials(fd, received) != 0)
        {
            return false;
        }
        final int uid = received.peerUid;
        peerIsOwner = uid == ownerUid || uid == 0;
        if (peerIsOwner)
        {
            return true;
        }
        return NO_GROUP != groupGid && (received.peerGid == groupGid || UnixSockets.peerHasGroup(fd, groupGid, received));
    }

    private void admit(final int fd, final long nowMs)
    {
        if (!permitted(fd))
        {
            counters.socketRefusedCredentials.incrementRelease();
            UnixSockets.close(fd);
            return;
        }
        addConnection(fd, nowMs);
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
        ownersPeer[count] = peerIsOwner;
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
        final int fd = 1 == received.fdCount ? received.fds[0] : -1;
        received.fdCount = 0;
        replyTo = connections[i];
        replyToOwner = ownersPeer[i];
        try
        {
            handler.onCommand(type, body, (int)length - MESSAGE_HEADER_LENGTH, fd);
        }
        finally
        {
            replyTo = -1;
            replyToOwner = false;
            UnixSockets.close(fd); // what the NIC keeps it mapped; the descriptor itself goes
        }
        return 1;
    }

    /**
     * Answers the command being handled on its own connection: one message of {@code type} and this version, then the
     * {@code length} bytes of {@code answer}, with {@code fd} (when >= 0) as its one descriptor, which stays the
     * caller's. Only from within {@link Handler#onCommand}.
     *
     * @return true when the whole message went; false when the client's end is gone or full (it waits no more).
     */
    boolean reply(final int type, final DirectBuffer answer, final int length, final int fd)
    {
        if (replyTo < 0)
        {
            return false;
        }
        final byte[] bytes = new byte[MESSAGE_HEADER_LENGTH + length]; // control path: a few per client's life
        final UnsafeBuffer out = new UnsafeBuffer(bytes);
        out.putInt(0, type, IpcMessages.ORDER);
        out.putInt(VERSION_OFFSET, IpcFileDescriptor.VERSION, IpcMessages.ORDER);
        out.putBytes(MESSAGE_HEADER_LENGTH, answer, 0, length);
        final long sent = fd >= 0 ? UnixSockets.send(replyTo, bytes, fd) : UnixSockets.send(replyTo, bytes);
        if (sent != bytes.length)
        {
            counters.socketRepliesLost.incrementRelease();
            return false;
        }
        return true;
    }

    /**
     * @return null when the message is one command of this version that the socket takes, with the descriptors its
     * type carries; else the reason (counted).
     */
    private String problem(final UnixSockets.Received received, final int type)
    {
        if (0 != (received.flags & UnixSockets.MSG_TRUNC))
        {
            counters.socketDroppedTooLong.incrementRelease();
            return "longer than " + message.length + " B";
        }
        if (received.length < MESSAGE_HEADER_LENGTH + IpcMessages.Header.LENGTH || !isSocketCommand(type) ||
            header.getInt(VERSION_OFFSET, IpcMessages.ORDER) != IpcFileDescriptor.VERSION)
        {
            counters.socketDroppedMalformed.incrementRelease();
            return "not a socket command of version " + IpcFileDescriptor.VERSION;
        }
        if (0 != (received.flags & UnixSockets.MSG_CTRUNC) || 0 != received.otherControlMessages ||
            descriptorsOf(type) != received.fdCount)
        {
            counters.socketDroppedDescriptors.incrementRelease();
            return "not the descriptors " + IpcMessages.name(type) + " carries";
        }
        return null;
    }

    /** @return true for the commands the socket takes (docs/IPC.md I12). */
    static boolean isSocketCommand(final int type)
    {
        return type == IpcMessages.REGISTER || type == IpcMessages.ADD_CLIENT || type == IpcMessages.HELLO ||
            type == IpcMessages.OPEN_MEMORY;
    }

    /** @return the descriptors a socket command carries: REGISTER its region's memory, the others none. */
    static int descriptorsOf(final int type)
    {
        return type == IpcMessages.REGISTER ? 1 : 0;
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
        ownersPeer[i] = ownersPeer[count];
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
