package io.spraynic.datapath.nic.ipc;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;

/**
 * The few libc calls that pass file descriptors between processes ({@code SCM_RIGHTS} over an {@code AF_UNIX}
 * {@code SOCK_SEQPACKET} socket), which Java has no API for, and the {@code fcntl}/{@code lseek} checks of a received
 * memfd. Linux on LP64 (x86-64, aarch64): the {@code msghdr}, {@code iovec} and {@code cmsghdr} layouts below are
 * those of glibc and musl there. Every call returns the libc result; a negative value is {@code -errno}. Control path
 * only: each call allocates its structures in a confined arena.
 */
final class UnixSockets
{
    static final int EAGAIN = 11;
    static final int EPERM = 1;
    static final int EINTR = 4;
    /** {@code recvmsg} flags in {@link Received#flags}. */
    static final int MSG_CTRUNC = 0x8;
    static final int MSG_TRUNC = 0x20;
    static final int F_SEAL_SEAL = 1;
    static final int F_SEAL_SHRINK = 2;
    static final int F_SEAL_GROW = 4;
    static final int F_SEAL_WRITE = 8;
    static final int F_SEAL_FUTURE_WRITE = 16;

    private static final int AF_UNIX = 1;
    private static final int SOCK_SEQPACKET = 5;
    private static final int SOCK_NONBLOCK = 0x800;
    private static final int SOCK_CLOEXEC = 0x80000;
    private static final int SOL_SOCKET = 1;
    private static final int SCM_RIGHTS = 1;
    private static final int MSG_DONTWAIT = 0x40;
    private static final int MSG_NOSIGNAL = 0x4000;
    private static final int MSG_CMSG_CLOEXEC = 0x40000000;
    private static final int F_GET_SEALS = 1034;
    private static final int SO_PEERCRED = 17;
    private static final int SO_SNDTIMEO = 21;
    /**
     * How long a connect (and a send) on a socket this process connected may wait: a listener whose backlog is full (a
     * stalled NIC, or any process bound at the path that never accepts) held a blocking connect for good.
     */
    static final int CONNECT_WAIT_MS = 5_000;
    private static final int SO_PEERGROUPS = 59;
    /** {@code struct ucred}: pid, uid, gid, each 4 bytes. */
    private static final int UCRED_BYTES = 12;
    /** The supplementary groups of a peer looked at: one with more is judged by its uid and primary gid only. */
    static final int MAX_PEER_GROUPS = 256;
    private static final int SEEK_END = 2;
    private static final int SUN_PATH_BYTES = 108;
    private static final int SOCKADDR_UN_BYTES = 2 + SUN_PATH_BYTES;
    private static final int MSGHDR_BYTES = 56;
    private static final int MSG_IOV_OFFSET = 16;
    private static final int MSG_IOVLEN_OFFSET = 24;
    private static final int MSG_CONTROL_OFFSET = 32;
    private static final int MSG_CONTROLLEN_OFFSET = 40;
    private static final int MSG_FLAGS_OFFSET = 48;
    private static final int CMSG_HEADER_BYTES = 16;
    /** Room for 64 descriptors: a sender of more gets {@link #MSG_CTRUNC} and the kernel closes the rest. */
    static final int MAX_RECEIVED_FDS = 64;
    private static final int CONTROL_BYTES = CMSG_HEADER_BYTES + 4 * MAX_RECEIVED_FDS;

    private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final MethodHandle SOCKET;
    private static final MethodHandle BIND;
    private static final MethodHandle LISTEN;
    private static final MethodHandle ACCEPT4;
    private static final MethodHandle CONNECT;
    private static final MethodHandle SENDMSG;
    private static final MethodHandle RECVMSG;
    private static final MethodHandle FCNTL;
    private static final MethodHandle LSEEK;
    private static final MethodHandle CLOSE;
    private static final MethodHandle FTRUNCATE;
    private static final MethodHandle GETSOCKOPT;
    private static final MethodHandle SETSOCKOPT;

    static
    {
        final Linker linker = Linker.nativeLinker();
        final ValueLayout.OfInt i = ValueLayout.JAVA_INT;
        final ValueLayout.OfLong l = ValueLayout.JAVA_LONG;
        final ValueLayout a = ValueLayout.ADDRESS;
        SOCKET = find(linker, "socket", FunctionDescriptor.of(i, i, i, i));
        BIND = find(linker, "bind", FunctionDescriptor.of(i, i, a, i));
        LISTEN = find(linker, "listen", FunctionDescriptor.of(i, i, i));
        ACCEPT4 = find(linker, "accept4", FunctionDescriptor.of(i, i, a, a, i));
        CONNECT = find(linker, "connect", FunctionDescriptor.of(i, i, a, i));
        SENDMSG = find(linker, "sendmsg", FunctionDescriptor.of(l, i, a, i));
        RECVMSG = find(linker, "recvmsg", FunctionDescriptor.of(l, i, a, i));
        FCNTL = linker.defaultLookup().find("fcntl").map(address -> linker.downcallHandle(address,
            FunctionDescriptor.of(i, i, i), Linker.Option.captureCallState("errno"))).orElse(null);
        LSEEK = find(linker, "lseek", FunctionDescriptor.of(l, i, l, i));
        CLOSE = find(linker, "close", FunctionDescriptor.of(i, i));
        FTRUNCATE = find(linker, "ftruncate", FunctionDescriptor.of(i, i, l));
        GETSOCKOPT = find(linker, "getsockopt", FunctionDescriptor.of(i, i, i, i, a, a));
        SETSOCKOPT = find(linker, "setsockopt", FunctionDescriptor.of(i, i, i, i, a, i));
    }

    private UnixSockets()
    {
    }

    private static MethodHandle find(final Linker linker, final String name, final FunctionDescriptor descriptor)
    {
        return linker.defaultLookup().find(name).map(address -> linker.downcallHandle(address, descriptor,
            Linker.Option.captureCallState("errno"))).orElse(null);
    }

    /** @return true where descriptors can be passed (Linux libc with every call above). */
    static boolean isSupported()
    {
        return null != SOCKET && null != BIND && null != LISTEN && null != ACCEPT4 && null != CONNECT &&
            null != SENDMSG && null != RECVMSG && null != FCNTL && null != LSEEK && null != CLOSE && null != GETSOCKOPT &&
            null != SETSOCKOPT;
    }

    /**
     * What one {@link #receive} got, and the native memory it receives into, made once: a receiver that polls every
     * duty cycle allocates nothing. One thread at a time.
     */
    static final class Received implements AutoCloseable
    {
        private final Arena arena = Arena.ofShared();
        private final MemorySegment state = arena.allocate(CALL_STATE);
        private final MemorySegment data;
        private final MemorySegment control = arena.allocate(CONTROL_BYTES, 8);
        private final MemorySegment header = arena.allocate(MSGHDR_BYTES, 8);
        private final MemorySegment credentials = arena.allocate(UCRED_BYTES, 8);
        private final MemorySegment groups = arena.allocate(4L * MAX_PEER_GROUPS, 8);
        private final MemorySegment optionLength = arena.allocate(4, 8);
        private final int capacity;

        /** Bytes of the message, 0 at end of stream, or {@code -errno}. */
        long length;
        /** {@code msg_flags}: {@link #MSG_TRUNC} (the message was longer than the buffer), {@link #MSG_CTRUNC}. */
        int flags;
        /** The descriptors that came with it (every {@code SCM_RIGHTS} of it), now this process's to close. */
        final int[] fds = new int[MAX_RECEIVED_FDS];
        int fdCount;
        /** Ancillary messages of another kind (they carry no descriptor here). */
        int otherControlMessages;
        /** What {@link #peerCredentials} found: the peer's process, user and group ids as the kernel saw them at connect. */
        int peerPid;
        int peerUid;
        int peerGid;

        /** @param capacity the longest message taken whole; a longer one is cut and flagged {@link #MSG_TRUNC}. */
        Received(final int capacity)
        {
            this.capacity = capacity;
            data = arena.allocate(capacity, 8);
            final MemorySegment iov = arena.allocate(16, 8);
            iov.set(ValueLayout.ADDRESS, 0, data);
            iov.set(ValueLayout.JAVA_LONG, 8, capacity);
            header.set(ValueLayout.ADDRESS, MSG_IOV_OFFSET, iov);
            header.set(ValueLayout.JAVA_LONG, MSG_IOVLEN_OFFSET, 1);
            header.set(ValueLayout.ADDRESS, MSG_CONTROL_OFFSET, control);
        }

        public void close()
        {
            arena.close();
        }
    }

    /**
     * A listening non-blocking {@code SOCK_SEQPACKET} socket bound to {@code path}, which must not exist.
     *
     * @return the descriptor.
     * @throws IllegalStateException with the failing call and errno.
     */
    static int listen(final String path, final int backlog)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = arena.allocate(CALL_STATE);
            final int fd = (int)SOCKET.invokeExact(state, AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
            if (fd < 0)
            {
                throw new IllegalStateException("socket(AF_UNIX, SOCK_SEQPACKET) failed: errno " + errno(state));
            }
            final MemorySegment address = socketAddress(arena, path);
            if ((int)BIND.invokeExact(state, fd, address, SOCKADDR_UN_BYTES) != 0 ||
                (int)LISTEN.invokeExact(state, fd, backlog) != 0)
            {
                final int errno = errno(state);
                close(fd);
                throw new IllegalStateException("cannot listen on " + path + ": errno " + errno);
            }
            return fd;
        }
        catch (final IllegalStateException ex)
        {
            throw ex;
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("cannot listen on " + path + ": " + ex, ex);
        }
    }

    /**
     * @param scratch whose call state it uses (no allocation).
     * @return a connection's non-blocking descriptor, {@code -EAGAIN} when none waits, or another {@code -errno}.
     */
    static int accept(final int listenFd, final Received scratch)
    {
        try
        {
            final int fd = (int)ACCEPT4.invokeExact(scratch.state, listenFd, MemorySegment.NULL, MemorySegment.NULL,
                SOCK_NONBLOCK | SOCK_CLOEXEC);
            return fd >= 0 ? fd : -errno(scratch.state);
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("accept4 failed: " + ex, ex);
        }
    }

    /**
     * Reads the credentials the kernel recorded for the peer of a connected socket when it connected
     * ({@code SO_PEERCRED}) into {@code scratch}'s {@code peerPid}, {@code peerUid} and {@code peerGid}.
     *
     * @return 0, or {@code -errno}.
     */
    static int peerCredentials(final int fd, final Received scratch)
    {
        try
        {
            scratch.optionLength.set(ValueLayout.JAVA_INT, 0, UCRED_BYTES);
            final int result = (int)GETSOCKOPT.invokeExact(scratch.state, fd, SOL_SOCKET, SO_PEERCRED, scratch.credentials,
                scratch.optionLength);
            if (result != 0)
            {
                return -errno(scratch.state);
            }
            scratch.peerPid = scratch.credentials.get(ValueLayout.JAVA_INT, 0);
            scratch.peerUid = scratch.credentials.get(ValueLayout.JAVA_INT, 4);
            scratch.peerGid = scratch.credentials.get(ValueLayout.JAVA_INT, 8);
            return 0;
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("getsockopt(SO_PEERCRED) failed: " + ex, ex);
        }
    }

    /**
     * @return whether {@code gid} is one of the supplementary groups the peer of a connected socket had when it
     * connected ({@code SO_PEERGROUPS}, Linux 4.13); false when the kernel cannot say or the peer has more than
     * {@link #MAX_PEER_GROUPS}.
     */
    static boolean peerHasGroup(final int fd, final int gid, final Received scratch)
    {
        try
        {
            scratch.optionLength.set(ValueLayout.JAVA_INT, 0, (int)scratch.groups.byteSize());
            final int result = (int)GETSOCKOPT.invokeExact(scratch.state, fd, SOL_SOCKET, SO_PEERGROUPS, scratch.groups,
                scratch.optionLength);
            if (result != 0)
            {
                return false;
            }
            final int count = Math.min(MAX_PEER_GROUPS, scratch.optionLength.get(ValueLayout.JAVA_INT, 0) / 4);
            for (int k = 0; k < count; k++)
            {
                if (scratch.groups.getAtIndex(ValueLayout.JAVA_INT, k) == gid)
                {
                    return true;
                }
            }
            return false;
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("getsockopt(SO_PEERGROUPS) failed: " + ex, ex);
        }
    }

    /**
     * @return a blocking descriptor connected to the socket at {@code path}, its connect and sends bounded by
     * {@link #CONNECT_WAIT_MS} ({@code -EAGAIN} past it), or {@code -errno}.
     */
    static int connect(final String path)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = arena.allocate(CALL_STATE);
            final int fd = (int)SOCKET.invokeExact(state, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
            if (fd < 0)
            {
                return -errno(state);
            }
            final MemorySegment bound = arena.allocate(16, 8); // struct timeval
            bound.set(ValueLayout.JAVA_LONG, 0, CONNECT_WAIT_MS / 1000);
            bound.set(ValueLayout.JAVA_LONG, 8, (CONNECT_WAIT_MS % 1000) * 1000L);
            if ((int)SETSOCKOPT.invokeExact(state, fd, SOL_SOCKET, SO_SNDTIMEO, bound, 16) != 0 ||
                (int)CONNECT.invokeExact(state, fd, socketAddress(arena, path), SOCKADDR_UN_BYTES) != 0)
            {
                final int errno = errno(state);
                close(fd);
                return -errno;
            }
            return fd;
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("cannot connect to " + path + ": " + ex, ex);
        }
    }

    /**
     * Sends one message of {@code bytes} with the descriptors {@code fds} (none when empty) as one {@code SCM_RIGHTS}.
     *
     * @return bytes sent, or {@code -errno}.
     */
    static long send(final int socketFd, final byte[] bytes, final int... fds)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = arena.allocate(CALL_STATE);
            final MemorySegment data = arena.allocate(Math.max(1, bytes.length));
            MemorySegment.copy(bytes, 0, data, ValueLayout.JAVA_BYTE, 0, bytes.length);
            final MemorySegment iov = arena.allocate(16, 8);
            iov.set(ValueLayout.ADDRESS, 0, data);
            iov.set(ValueLayout.JAVA_LONG, 8, bytes.length);
            final MemorySegment header = arena.allocate(MSGHDR_BYTES, 8);
            header.set(ValueLayout.ADDRESS, MSG_IOV_OFFSET, iov);
            header.set(ValueLayout.JAVA_LONG, MSG_IOVLEN_OFFSET, 1);
            if (fds.length > 0)
            {
                final long space = CMSG_HEADER_BYTES + align8(4L * fds.length);
                final MemorySegment control = arena.allocate(space, 8);
                control.set(ValueLayout.JAVA_LONG, 0, CMSG_HEADER_BYTES + 4L * fds.length);
                control.set(ValueLayout.JAVA_INT, 8, SOL_SOCKET);
                control.set(ValueLayout.JAVA_INT, 12, SCM_RIGHTS);
                for (int k = 0; k < fds.length; k++)
                {
                    control.set(ValueLayout.JAVA_INT, CMSG_HEADER_BYTES + 4L * k, fds[k]);
                }
                header.set(ValueLayout.ADDRESS, MSG_CONTROL_OFFSET, control);
                header.set(ValueLayout.JAVA_LONG, MSG_CONTROLLEN_OFFSET, space);
            }
            final long sent = (long)SENDMSG.invokeExact(state, socketFd, header, MSG_NOSIGNAL);
            return sent >= 0 ? sent : -errno(state);
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("sendmsg failed: " + ex, ex);
        }
    }

    /**
     * Receives one message without blocking into {@code buffer} (at most its length; a longer message sets
     * {@link #MSG_TRUNC}); every descriptor that came with it lands in {@code into.fds}, for the caller to keep or close.
     */
    static void receive(final int socketFd, final byte[] buffer, final Received into)
    {
        into.fdCount = 0;
        into.flags = 0;
        into.otherControlMessages = 0;
        final MemorySegment control = into.control;
        final MemorySegment header = into.header;
        try
        {
            header.set(ValueLayout.JAVA_LONG, MSG_CONTROLLEN_OFFSET, CONTROL_BYTES);
            header.set(ValueLayout.JAVA_INT, MSG_FLAGS_OFFSET, 0);
            final long got = (long)RECVMSG.invokeExact(into.state, socketFd, header, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
            if (got < 0)
            {
                into.length = -errno(into.state);
                return;
            }
            into.length = got;
            into.flags = header.get(ValueLayout.JAVA_INT, MSG_FLAGS_OFFSET);
            MemorySegment.copy(into.data, ValueLayout.JAVA_BYTE, 0, buffer, 0,
                (int)Math.min(got, Math.min(buffer.length, into.capacity)));
            // walk the ancillary messages as CMSG_FIRSTHDR/CMSG_NXTHDR do, within what the kernel says it wrote
            final long controlLength = Math.min(CONTROL_BYTES, header.get(ValueLayout.JAVA_LONG, MSG_CONTROLLEN_OFFSET));
            long at = 0;
            while (at + CMSG_HEADER_BYTES <= controlLength)
            {
                final long length = control.get(ValueLayout.JAVA_LONG, at);
                if (length < CMSG_HEADER_BYTES || at + length > controlLength)
                {
                    break;
                }
                if (control.get(ValueLayout.JAVA_INT, at + 8) == SOL_SOCKET &&
                    control.get(ValueLayout.JAVA_INT, at + 12) == SCM_RIGHTS)
                {
                    for (long k = at + CMSG_HEADER_BYTES; k + 4 <= at + length && into.fdCount < MAX_RECEIVED_FDS; k += 4)
                    {
                        into.fds[into.fdCount++] = control.get(ValueLayout.JAVA_INT, k);
                    }
                }
                else
                {
                    into.otherControlMessages++;
                }
                at += align8(length);
            }
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("recvmsg failed: " + ex, ex);
        }
    }

    /** @return the seals of {@code fd} ({@code F_SEAL_*} bits), or {@code -errno} ({@code -EINVAL}: not a memfd). */
    static int seals(final int fd)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = arena.allocate(CALL_STATE);
            final int seals = (int)FCNTL.invokeExact(state, fd, F_GET_SEALS);
            return seals >= 0 ? seals : -errno(state);
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("fcntl(F_GET_SEALS) failed: " + ex, ex);
        }
    }

    /** @return the size of the file behind {@code fd}, or {@code -errno}. */
    static long size(final int fd)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = arena.allocate(CALL_STATE);
            final long size = (long)LSEEK.invokeExact(state, fd, 0L, SEEK_END);
            return size >= 0 ? size : -errno(state);
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("lseek failed: " + ex, ex);
        }
    }

    /** @return 0, or {@code -errno} (a sealed memfd refuses to shrink or grow with {@code -EPERM}). */
    static int truncate(final int fd, final long length)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = arena.allocate(CALL_STATE);
            return (int)FTRUNCATE.invokeExact(state, fd, length) == 0 ? 0 : -errno(state);
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("ftruncate failed: " + ex, ex);
        }
    }

    /** Closes {@code fd}; a failure is only told (there is nothing else to do with it). */
    static void close(final int fd)
    {
        if (fd < 0)
        {
            return;
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = arena.allocate(CALL_STATE);
            final int ignored = (int)CLOSE.invokeExact(state, fd);
        }
        catch (final Throwable ex)
        {
            System.err.println("spraynic ipc: closing descriptor " + fd + " failed: " + ex);
        }
    }

    /** Closes the first {@code count} descriptors of {@code fds}. */
    static void closeAll(final int[] fds, final int count)
    {
        for (int k = 0; k < count; k++)
        {
            close(fds[k]);
        }
    }

    private static MemorySegment socketAddress(final Arena arena, final String path)
    {
        final byte[] name = path.getBytes(StandardCharsets.UTF_8);
        if (name.length >= SUN_PATH_BYTES)
        {
            throw new IllegalArgumentException("the socket path " + path + " is " + name.length + " B, longer than " +
                (SUN_PATH_BYTES - 1) + ": give a shorter --ipc-dir");
        }
        final MemorySegment address = arena.allocate(SOCKADDR_UN_BYTES, 2);
        address.set(ValueLayout.JAVA_SHORT, 0, (short)AF_UNIX);
        MemorySegment.copy(name, 0, address, ValueLayout.JAVA_BYTE, 2, name.length);
        return address;
    }

    private static int errno(final MemorySegment state)
    {
        return (int)ERRNO.get(state, 0L);
    }

    private static long align8(final long n)
    {
        return (n + 7) & ~7L;
    }
}
