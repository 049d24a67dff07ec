package io.spraynic.libc;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A non-blocking IPv4 or IPv6 UDP socket of the kernel, driven through libc with FFM downcalls (hand-written, as
 * {@code CpuAffinity}: libc's few calls need no jextract run and no DPDK). Batched I/O goes through
 * {@code recvmmsg}/{@code sendmmsg} over a {@link MessageVector}; every datagram's IP TOS byte travels with it
 * ({@code IP_RECVTOS} on receive, an {@code IP_TOS} control message on send; on IPv6 the traffic class,
 * {@code IPV6_RECVTCLASS} and {@code IPV6_TCLASS}), so ECN marks survive the kernel. An IPv6 socket is
 * {@code IPV6_V6ONLY}: IPv4 peers never reach it as IPv4-mapped addresses.
 * <p>
 * {@link #receive} and {@link #send} are the fast path: raw addresses, no allocation, errors returned as
 * {@code -errno} rather than thrown. Opening, options and closing are control path and throw
 * {@link IllegalStateException} naming the call and the errno's text. Linux only (the constants are Linux's).
 */
public final class UdpSocket implements AutoCloseable
{
    /** {@code AF_INET}. */
    public static final int AF_INET = 2;
    /** {@code AF_INET6}. */
    public static final int AF_INET6 = 10;
    /** {@code EAGAIN}: nothing to receive, or no room in the send buffer. */
    public static final int EAGAIN = 11;
    /** {@code EINTR}. */
    public static final int EINTR = 4;

    private static final int SOCK_DGRAM = 2;
    private static final int SOCK_NONBLOCK = 0x800;
    private static final int SOCK_CLOEXEC = 0x80000;
    private static final int IPPROTO_IP = 0;
    private static final int SOL_SOCKET = 1;
    private static final int SO_SNDBUF = 7;
    private static final int SO_RCVBUF = 8;
    private static final int SO_REUSEPORT = 15;
    private static final int SO_SNDBUFFORCE = 32;
    private static final int SO_RCVBUFFORCE = 33;
    private static final int SO_RXQ_OVFL = 40;

    private static final int IP_RECVTOS = 13;
    private static final int IP_MTU_DISCOVER = 10;
    private static final int IP_PMTUDISC_DO = 2;
    private static final int MSG_DONTWAIT = 0x40;
    private static final int IPPROTO_IPV6 = 41;
    private static final int IPV6_V6ONLY = 26;
    private static final int IPV6_MTU_DISCOVER = 23;
    private static final int IPV6_RECVTCLASS = 66;
    private static final int IPV6_PMTUDISC_DO = 2;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle SOCKET;
    private static final MethodHandle BIND;
    private static final MethodHandle SETSOCKOPT;
    private static final MethodHandle GETSOCKOPT;
    private static final MethodHandle GETSOCKNAME;
    private static final MethodHandle RECVMMSG;
    private static final MethodHandle SENDMMSG;
    private static final MethodHandle CLOSE;
    private static final MethodHandle STRERROR;
    private static final MemoryLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));

    static
    {
        MessageVector.checkPlatform();
        final SymbolLookup libc = LINKER.defaultLookup();
        final Linker.Option errno = Linker.Option.captureCallState("errno");
        SOCKET = handle(libc, "socket", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), errno);
        BIND = handle(libc, "bind", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_INT), errno);
        SETSOCKOPT = handle(libc, "setsockopt",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_INT), errno);
        GETSOCKOPT = handle(libc, "getsockopt",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG), errno);
        GETSOCKNAME = handle(libc, "getsockname", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG), errno);
        // the fast path: pointers as raw longs, so nothing is acquired per call; a non-blocking call never parks
        RECVMMSG = handle(libc, "recvmmsg",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_LONG), errno);
        SENDMMSG = handle(libc, "sendmmsg", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_INT), errno);
        CLOSE = handle(libc, "close", FunctionDescriptor.of(JAVA_INT, JAVA_INT), errno);
        STRERROR = LINKER.downcallHandle(libc.findOrThrow("strerror"), FunctionDescriptor.of(ADDRESS, JAVA_INT));
    }

    // errno of the last fast-path call, written by the downcall and read by the same thread right after; an
    // automatic arena's segment costs nothing to acquire per call, unlike a shared arena's
    private final MemorySegment callState = Arena.ofAuto().allocate(CALL_STATE);
    private final int family;
    private final int address;
    private final long addressHigh;
    private final long addressLow;
    private final int port;
    private int fd;

    private UdpSocket(final int fd, final int family, final int address, final long addressHigh, final long addressLow,
        final int port)
    {
        this.fd = fd;
        this.family = family;
        this.address = address;
        this.addressHigh = addressHigh;
        this.addressLow = addressLow;
        this.port = port;
    }

    /**
     * Opens a non-blocking UDP socket bound to {@code address:port}, receiving each datagram's TOS byte, with
     * don't-fragment set on what it sends (RoCEv2 is never fragmented).
     *
     * @param address     IPv4 address to bind to, as an int in network order's numeric value (127.0.0.1 is
     *                    0x7F000001); 0 is refused: a port's frames need one definite address.
     * @param port        UDP port, or 0 for one the kernel picks (see {@link #localPort()}).
     * @param reusePort   set {@code SO_REUSEPORT}, so several sockets (one per worker) share one port, the
     *                    kernel spreading datagrams between them by flow; without it a port already bound is
     *                    refused ({@code EADDRINUSE}).
     * @param bufferBytes asked-for {@code SO_RCVBUF} and {@code SO_SNDBUF}; the kernel caps it at
     *                    {@code net.core.rmem_max}/{@code wmem_max} (see {@link #receiveBufferBytes()}).
     * @throws IllegalStateException naming the failed call and its errno text (address not local, port in use...).
     */
    public static UdpSocket openIpv4(final int address, final int port, final boolean reusePort, final int bufferBytes)
    {
        if (0 == address)
        {
            throw new IllegalArgumentException("a UDP port binds to one definite address, not 0.0.0.0");
        }
        return open(AF_INET, address, 0, 0, port, reusePort, bufferBytes);
    }

    /**
     * {@link #openIpv4} for IPv6: an {@code AF_INET6} socket, {@code IPV6_V6ONLY}, bound to {@code [high:low]:port},
     * receiving each datagram's traffic class.
     *
     * @param high the address's first 8 bytes, big-endian.
     * @param low  its last 8 bytes; {@code ::}, link-local ({@code fe80::/10}: it would need a zone) and
     *             IPv4-mapped addresses are refused.
     * @throws IllegalStateException naming the failed call and its errno text (address not local, port in use...).
     */
    public static UdpSocket openIpv6(final long high, final long low, final int port, final boolean reusePort,
        final int bufferBytes)
    {
        if (high == 0 && low == 0)
        {
            throw new IllegalArgumentException("a UDP port binds to one definite address, not ::");
        }
        if ((high >>> 54) == (0xFE80L >>> 6))
        {
            throw new IllegalArgumentException("a UDP port cannot bind link-local " + ipv6ToString(high, low) +
                ": it would need a zone; give a global or unique-local address (fd00::/8)");
        }
        if (high == 0 && (low >>> 32) == 0xFFFFL)
        {
            throw new IllegalArgumentException("a UDP port cannot bind IPv4-mapped " + ipv6ToString(high, low) +
                ": give the IPv4 address itself");
        }
        return open(AF_INET6, 0, high, low, port, reusePort, bufferBytes);
    }

    private static UdpSocket open(final int family, final int address, final long high, final long low, final int port,
        final boolean reusePort, final int bufferBytes)
    {
        if (port < 0 || port > 0xFFFF)
        {
            throw new IllegalArgumentException("UDP port " + port + " is out of range 0..65535");
        }
        final boolean ipv6 = family == AF_INET6;
        try (Arena temp = Arena.ofConfined())
        {
            final MemorySegment state = temp.allocate(CALL_STATE);
            final int fd = (int)SOCKET.invokeExact(state, family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
            if (fd < 0)
            {
                throw failure("socket(" + (ipv6 ? "AF_INET6" : "AF_INET") + ", SOCK_DGRAM)", errno(state));
            }
            final UdpSocket socket = new UdpSocket(fd, family, address, high, low, port);
            try
            {
                // no SO_REUSEADDR: on UDP it lets a second socket share the port silently
                if (reusePort)
                {
                    socket.setOption(SOL_SOCKET, SO_REUSEPORT, 1);
                }
                if (bufferBytes > 0)
                {
                    // with CAP_NET_ADMIN past net.core.[rw]mem_max (a burst of a fast sender fits); else up to it
                    if (!socket.trySetOption(SOL_SOCKET, SO_RCVBUFFORCE, bufferBytes))
                    {
                        socket.setOption(SOL_SOCKET, SO_RCVBUF, bufferBytes);
                    }
                    if (!socket.trySetOption(SOL_SOCKET, SO_SNDBUFFORCE, bufferBytes))
                    {
                        socket.setOption(SOL_SOCKET, SO_SNDBUF, bufferBytes);
                    }
                }
                socket.setOption(SOL_SOCKET, SO_RXQ_OVFL, 1); // each datagram tells how many the kernel dropped
                final int nameLength = ipv6 ? MessageVector.SOCKADDR_IN6_LENGTH : MessageVector.SOCKADDR_IN_LENGTH;
                final MemorySegment name = temp.allocate(nameLength, 8);
                if (ipv6)
                {
                    socket.setOption(IPPROTO_IPV6, IPV6_V6ONLY, 1); // no IPv4-mapped peers
                    socket.setOption(IPPROTO_IPV6, IPV6_RECVTCLASS, 1);
                    socket.setOption(IPPROTO_IPV6, IPV6_MTU_DISCOVER, IPV6_PMTUDISC_DO);
                    MessageVector.sockaddrIn6(name, 0, high, low, port);
                }
                else
                {
                    socket.setOption(IPPROTO_IP, IP_RECVTOS, 1);
                    socket.setOption(IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO);
                    MessageVector.sockaddrIn(name, 0, address, port);
                }
                if ((int)BIND.invokeExact(state, fd, name.address(), nameLength) != 0)
                {
                    throw failure("bind(" + socket.addressText() + ":" + port + ")", errno(state));
                }
                return socket;
            }
            catch (final RuntimeException ex)
            {
                socket.close();
                throw ex;
            }
        }
        catch (final RuntimeException | Error ex)
        {
            throw ex;
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("UDP socket downcall failed", ex);
        }
    }

    /** @return {@link #AF_INET} or {@link #AF_INET6}. */
    public int family()
    {
        return family;
    }

    /** @return the bound IPv4 address (0 for an IPv6 socket). */
    public int localAddress()
    {
        return address;
    }

    /** @return the bound IPv6 address's first 8 bytes (0 for an IPv4 socket). */
    public long localAddressHigh()
    {
        return addressHigh;
    }

    /** @return the bound IPv6 address's last 8 bytes (0 for an IPv4 socket). */
    public long localAddressLow()
    {
        return addressLow;
    }

    /** @return the bound port: the one asked for, or the kernel's pick when 0 was asked for. */
    public int localPort()
    {
        if (port != 0)
        {
            return port;
        }
        try (Arena temp = Arena.ofConfined())
        {
            final MemorySegment state = temp.allocate(CALL_STATE);
            final MemorySegment name = temp.allocate(MessageVector.SOCKADDR_IN6_LENGTH, 8);
            final MemorySegment length = temp.allocate(JAVA_INT);
            length.set(JAVA_INT, 0, MessageVector.SOCKADDR_IN6_LENGTH);
            if ((int)GETSOCKNAME.invokeExact(state, fd, name.address(), length.address()) != 0)
            {
                throw failure("getsockname", errno(state));
            }
            return MessageVector.sockaddrInPort(name, 0);
        }
        catch (final RuntimeException | Error ex)
        {
            throw ex;
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("getsockname downcall failed", ex);
        }
    }

    /** @return the send buffer the kernel granted. */
    public int sendBufferBytes()
    {
        return option(SOL_SOCKET, SO_SNDBUF);
    }

    /** @return the receive buffer the kernel granted (Linux reports twice what it accounts payload against). */
    public int receiveBufferBytes()
    {
        return option(SOL_SOCKET, SO_RCVBUF);
    }

    /**
     * {@code recvmmsg(MSG_DONTWAIT)} into the first {@code count} entries of {@code messages}, each prepared with
     * {@link MessageVector#prepareReceive}.
     *
     * @return datagrams received (0 when none wait), or {@code -errno}.
     */
    public int receive(final MessageVector messages, final int count)
    {
        try
        {
            final int n = (int)RECVMMSG.invokeExact(callState, fd, messages.address(), count, MSG_DONTWAIT, 0L);
            return n >= 0 ? n : -lastErrno();
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    /**
     * {@code sendmmsg(MSG_DONTWAIT)} of {@code count} entries of {@code messages} from {@code first}, each prepared
     * with {@link MessageVector#prepareSend}.
     *
     * @return datagrams the kernel took (a prefix), or {@code -errno} when it took none.
     */
    public int send(final MessageVector messages, final int first, final int count)
    {
        try
        {
            final int n = (int)SENDMMSG.invokeExact(callState, fd, messages.entryAddress(first), count, MSG_DONTWAIT);
            return n >= 0 ? n : -lastErrno();
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    private int lastErrno()
    {
        return (int)ERRNO.get(callState, 0L);
    }

    /**
     * @return libc's text for an errno, e.g. "Resource temporarily unavailable".
     */
    public static String describe(final int errno)
    {
        try
        {
            final MemorySegment text = (MemorySegment)STRERROR.invokeExact(errno);
            return text.reinterpret(256).getString(0);
        }
        catch (final Throwable ex)
        {
            return "errno " + errno;
        }
    }

    /** Closes the socket; a second close does nothing. */
    public void close()
    {
        if (fd < 0)
        {
            return;
        }
        final int closing = fd;
        fd = -1;
        try
        {
            final int ignored = (int)CLOSE.invokeExact(callState, closing);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    public String toString()
    {
        return "UdpSocket{fd=" + fd + ", " + addressText() + ":" + port + '}';
    }

    private String addressText()
    {
        return family == AF_INET6 ? "[" + ipv6ToString(addressHigh, addressLow) + "]" : MessageVector.ipv4ToString(address);
    }

    /** @return RFC 5952 text of an IPv6 address (control path: errors and logs). */
    static String ipv6ToString(final long high, final long low)
    {
        final byte[] bytes = new byte[16];
        for (int i = 0; i < 8; i++)
        {
            bytes[i] = (byte)(high >>> (56 - 8 * i));
            bytes[i + 8] = (byte)(low >>> (56 - 8 * i));
        }
        try
        {
            final String text = java.net.InetAddress.getByAddress(bytes).getHostAddress();
            return compress(text);
        }
        catch (final java.net.UnknownHostException ex)
        {
            throw new IllegalStateException(ex); // never: 16 bytes are an IPv6 address
        }
    }

    // Java writes every group (0:0:0:0:0:0:0:1); RFC 5952 folds the longest run of zero groups into ::
    private static String compress(final String full)
    {
        final String[] groups = full.split(":");
        int bestStart = -1;
        int bestLength = 1;
        for (int i = 0; i < groups.length; )
        {
            int j = i;
            while (j < groups.length && groups[j].equals("0"))
            {
                j++;
            }
            if (j - i > bestLength)
            {
                bestStart = i;
                bestLength = j - i;
            }
            i = j == i ? i + 1 : j;
        }
        if (bestStart < 0)
        {
            return full;
        }
        return String.join(":", java.util.Arrays.copyOfRange(groups, 0, bestStart)) + "::" +
            String.join(":", java.util.Arrays.copyOfRange(groups, bestStart + bestLength, groups.length));
    }

    private boolean trySetOption(final int level, final int name, final int value)
    {
        try
        {
            setOption(level, name, value);
            return true;
        }
        catch (final IllegalStateException ex)
        {
            return false; // EPERM without the capability: the caller falls back
        }
    }

    private void setOption(final int level, final int name, final int value)
    {
        try (Arena temp = Arena.ofConfined())
        {
            final MemorySegment state = temp.allocate(CALL_STATE);
            final MemorySegment v = temp.allocate(JAVA_INT);
            v.set(JAVA_INT, 0, value);
            if ((int)SETSOCKOPT.invokeExact(state, fd, level, name, v.address(), 4) != 0)
            {
                throw failure("setsockopt(" + level + ", " + name + ", " + value + ")", errno(state));
            }
        }
        catch (final RuntimeException | Error ex)
        {
            throw ex;
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("setsockopt downcall failed", ex);
        }
    }

    private int option(final int level, final int name)
    {
        try (Arena temp = Arena.ofConfined())
        {
            final MemorySegment state = temp.allocate(CALL_STATE);
            final MemorySegment v = temp.allocate(JAVA_INT);
            final MemorySegment length = temp.allocate(JAVA_INT);
            length.set(JAVA_INT, 0, 4);
            if ((int)GETSOCKOPT.invokeExact(state, fd, level, name, v.address(), length.address()) != 0)
            {
                throw failure("getsockopt(" + level + ", " + name + ")", errno(state));
            }
            return v.get(JAVA_INT, 0);
        }
        catch (final RuntimeException | Error ex)
        {
            throw ex;
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("getsockopt downcall failed", ex);
        }
    }

    private static int errno(final MemorySegment state)
    {
        return (int)ERRNO.get(state, 0L);
    }

    private static IllegalStateException failure(final String call, final int errno)
    {
        return new IllegalStateException(call + " failed: " + describe(errno) + " (errno " + errno + ")");
    }

    private static MethodHandle handle(
        final SymbolLookup libc, final String name, final FunctionDescriptor descriptor, final Linker.Option option)
    {
        return LINKER.downcallHandle(libc.findOrThrow(name), descriptor, option);
    }

    private static RuntimeException rethrow(final Throwable ex)
    {
        if (ex instanceof RuntimeException r)
        {
            return r;
        }
        if (ex instanceof Error e)
        {
            throw e;
        }
        return new IllegalStateException(ex);
    }
}
