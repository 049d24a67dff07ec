package io.spraynic.conformance;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.net.BindException;
import java.net.Inet6Address;
import java.net.InetSocketAddress;

/**
 * A UDP socket, IPv4 or IPv6 (the family of the address it binds), that shows the suite the IP ECN field of what it
 * receives and lets it choose the field of what it sends (S2.3, S8.1): the JDK's {@code DatagramChannel} hides the
 * received TOS byte, so this one calls the C library through the JDK's own foreign-function API (socket, bind,
 * {@code IP_RECVTOS} or {@code IPV6_RECVTCLASS}, recvmsg, {@code IP_TOS} or {@code IPV6_TCLASS}, sendto, poll; Linux
 * x86-64 and aarch64 struct layouts). It also tells when the kernel received each datagram ({@code SO_TIMESTAMPNS}):
 * the suite's timer checks measure the target's timeouts to a millisecond on a host where the suite's own thread may
 * run milliseconds after a datagram came. Still JDK only: no code of the implementation under test. Control path,
 * single-threaded: allocates.
 */
final class EcnSocket implements AutoCloseable
{
    private static final int AF_INET = 2;
    private static final int AF_INET6 = 10;
    private static final int SOCKADDR_IN_LENGTH = 16;
    private static final int SOCKADDR_IN6_LENGTH = 28;
    private static final int IPPROTO_IPV6 = 41;
    private static final int IPV6_V6ONLY = 26;
    private static final int IPV6_RECVTCLASS = 66;
    private static final int IPV6_TCLASS = 67;
    private static final int SOCK_DGRAM = 2;
    private static final int SOL_SOCKET = 1;
    private static final int SO_RCVBUF = 8;
    /** Also the control message's type ({@code SCM_TIMESTAMPNS}), a {@code struct timespec} of CLOCK_REALTIME. */
    private static final int SO_TIMESTAMPNS = 35;
    private static final int CLOCK_REALTIME = 0;
    private static final int IPPROTO_IP = 0;
    private static final int IP_TOS = 1;
    private static final int IP_RECVTOS = 13;
    private static final int IP_MTU_DISCOVER = 10;
    private static final int IP_PMTUDISC_DO = 2;
    private static final int MSG_DONTWAIT = 0x40;
    private static final short POLLIN = 1;
    private static final int MAX_DATAGRAM = 65_535;

    private static final MethodHandle SOCKET;
    private static final MethodHandle BIND;
    private static final MethodHandle SETSOCKOPT;
    private static final MethodHandle SENDTO;
    private static final MethodHandle RECVMSG;
    private static final MethodHandle POLL;
    private static final MethodHandle CLOSE;
    private static final MethodHandle CLOCK_GETTIME;

    static
    {
        final Linker linker = Linker.nativeLinker();
        final SymbolLookup libc = linker.defaultLookup();
        final ValueLayout.OfInt i = ValueLayout.JAVA_INT;
        final ValueLayout.OfLong l = ValueLayout.JAVA_LONG;
        final var p = ValueLayout.ADDRESS;
        SOCKET = linker.downcallHandle(libc.find("socket").orElseThrow(), FunctionDescriptor.of(i, i, i, i));
        BIND = linker.downcallHandle(libc.find("bind").orElseThrow(), FunctionDescriptor.of(i, i, p, i));
        SETSOCKOPT = linker.downcallHandle(libc.find("setsockopt").orElseThrow(), FunctionDescriptor.of(i, i, i, i, p, i));
        SENDTO = linker.downcallHandle(libc.find("sendto").orElseThrow(), FunctionDescriptor.of(l, i, p, l, i, p, i));
        RECVMSG = linker.downcallHandle(libc.find("recvmsg").orElseThrow(), FunctionDescriptor.of(l, i, p, i));
        POLL = linker.downcallHandle(libc.find("poll").orElseThrow(), FunctionDescriptor.of(i, p, l, i));
        CLOSE = linker.downcallHandle(libc.find("close").orElseThrow(), FunctionDescriptor.of(i, i));
        CLOCK_GETTIME = linker.downcallHandle(libc.find("clock_gettime").orElseThrow(), FunctionDescriptor.of(i, i, p));
    }

    /**
     * A datagram received: its bytes, where from, the TOS byte of its IP header (-1 when not reported), and when the
     * kernel received it, on {@link System#nanoTime()}'s clock (when it was read, if the kernel did not say).
     */
    record Datagram(byte[] bytes, InetSocketAddress from, int tos, long arrivalNanos)
    {
    }

    private final Arena arena = Arena.ofShared();
    private final int fd;
    private final MemorySegment buffer = arena.allocate(MAX_DATAGRAM);
    private final boolean ipv6;
    private final int sockaddrLength;
    private final MemorySegment from = arena.allocate(SOCKADDR_IN6_LENGTH);
    private final MemorySegment to = arena.allocate(SOCKADDR_IN6_LENGTH);
    private final MemorySegment iov = arena.allocate(16, 8);
    private final MemorySegment control = arena.allocate(128, 8);
    private final MemorySegment timespec = arena.allocate(16, 8);
    private final MemorySegment msghdr = arena.allocate(56, 8);
    private final MemorySegment pollfd = arena.allocate(8, 4);
    private final MemorySegment intValue = arena.allocate(4, 4);
    private int sendTos = -1;

    EcnSocket(final InetSocketAddress local, final int receiveBuffer) throws IOException
    {
        ipv6 = local.getAddress() instanceof Inet6Address;
        sockaddrLength = ipv6 ? SOCKADDR_IN6_LENGTH : SOCKADDR_IN_LENGTH;
        try
        {
            fd = (int)SOCKET.invokeExact(ipv6 ? AF_INET6 : AF_INET, SOCK_DGRAM, 0);
            if (fd < 0)
            {
                throw new IOException("socket(" + (ipv6 ? "AF_INET6" : "AF_INET") + ", SOCK_DGRAM) failed");
            }
            setInt(SOL_SOCKET, SO_RCVBUF, receiveBuffer);
            setInt(SOL_SOCKET, SO_TIMESTAMPNS, 1);
            if (ipv6)
            {
                setInt(IPPROTO_IPV6, IPV6_V6ONLY, 1);
                setInt(IPPROTO_IPV6, IPV6_RECVTCLASS, 1);
            }
            else
            {
                setInt(IPPROTO_IP, IP_RECVTOS, 1);
                // DF, and not merely wanted: Linux then gives an unconnected socket's datagrams identification 0 (with
                // IP_PMTUDISC_WANT it draws a random one), the IPv4 header S2.4 prescribes and the ICRC covers (S2.6)
                setInt(IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO);
            }
            sockaddr(to, local);
            final int toLength = sockaddrLength;
            if ((int)BIND.invokeExact(fd, to, toLength) != 0)
            {
                final int closed = (int)CLOSE.invokeExact(fd);
                arena.close();
                throw new BindException("cannot bind " + local + (closed == 0 ? "" : " (close failed)"));
            }
        }
        catch (final IOException e)
        {
            throw e;
        }
        catch (final Throwable t)
        {
            throw new IOException("the C library's socket calls failed", t);
        }
    }

    /** Sends {@code datagram} to {@code remote} with IP TOS byte {@code tos} (its low two bits are the ECN field). */
    void send(final byte[] datagram, final InetSocketAddress remote, final int tos) throws IOException
    {
        try
        {
            if (tos != sendTos)
            {
                if (ipv6)
                {
                    setInt(IPPROTO_IPV6, IPV6_TCLASS, tos);
                }
                else
                {
                    setInt(IPPROTO_IP, IP_TOS, tos);
                }
                sendTos = tos;
            }
            MemorySegment.copy(datagram, 0, buffer, ValueLayout.JAVA_BYTE, 0, datagram.length);
            sockaddr(to, remote);
            final int toLength = sockaddrLength;
            final long sent = (long)SENDTO.invokeExact(fd, buffer, (long)datagram.length, 0, to, toLength);
            if (sent != datagram.length)
            {
                throw new IOException("sendto " + remote + " sent " + sent + " of " + datagram.length + " B");
            }
        }
        catch (final IOException e)
        {
            throw e;
        }
        catch (final Throwable t)
        {
            throw new IOException(t);
        }
    }

    /** @return the next datagram within {@code timeoutNanos}, or null. */
    Datagram receive(final long timeoutNanos) throws IOException
    {
        final long deadline = System.nanoTime() + timeoutNanos;
        try
        {
            while (true)
            {
                iov.set(ValueLayout.ADDRESS, 0, buffer);
                iov.set(ValueLayout.JAVA_LONG, 8, MAX_DATAGRAM);
                msghdr.fill((byte)0);
                msghdr.set(ValueLayout.ADDRESS, 0, from);
                msghdr.set(ValueLayout.JAVA_INT, 8, sockaddrLength);
                msghdr.set(ValueLayout.ADDRESS, 16, iov);
                msghdr.set(ValueLayout.JAVA_LONG, 24, 1);
                msghdr.set(ValueLayout.ADDRESS, 32, control);
                msghdr.set(ValueLayout.JAVA_LONG, 40, control.byteSize());
                final long n = (long)RECVMSG.invokeExact(fd, msghdr, MSG_DONTWAIT);
                if (n >= 0)
                {
                    final long readNanos = System.nanoTime();
                    final long stamp = controlMessage(SOL_SOCKET, SO_TIMESTAMPNS);
                    long arrivalNanos = readNanos;
                    if (stamp >= 0 && (int)CLOCK_GETTIME.invokeExact(CLOCK_REALTIME, timespec) == 0)
                    {
                        // the kernel's stamp is on the wall clock: its age then, taken off the monotonic reading
                        final long age = timespecNanos(timespec, 0) - timespecNanos(control, stamp);
                        arrivalNanos = readNanos - Math.max(0, age);
                    }
                    final byte[] bytes = buffer.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE);
                    return new Datagram(bytes, address(from), receivedTos(), arrivalNanos);
                }
                final long left = deadline - System.nanoTime();
                if (left <= 0)
                {
                    return null;
                }
                pollfd.set(ValueLayout.JAVA_INT, 0, fd);
                pollfd.set(ValueLayout.JAVA_SHORT, 4, POLLIN);
                pollfd.set(ValueLayout.JAVA_SHORT, 6, (short)0);
                final int ready = (int)POLL.invokeExact(pollfd, 1L, (int)Math.max(1, Math.min(left / 1_000_000, 1_000)));
                if (ready < 0)
                {
                    Thread.onSpinWait(); // EINTR: try again
                }
            }
        }
        catch (final Throwable t)
        {
            throw new IOException(t);
        }
    }

    private int receivedTos()
    {
        final long tos = controlMessage(IPPROTO_IP, IP_TOS);
        if (tos >= 0)
        {
            return control.get(ValueLayout.JAVA_BYTE, tos) & 0xFF;
        }
        final long trafficClass = controlMessage(IPPROTO_IPV6, IPV6_TCLASS);
        return trafficClass < 0 ? -1 : control.get(ValueLayout.JAVA_INT, trafficClass) & 0xFF; // an int, unlike IP_TOS
    }

    /** @return the offset in {@code control} of the data of the last recvmsg's control message, -1 if none came. */
    private long controlMessage(final int level, final int type)
    {
        final long length = Math.min(msghdr.get(ValueLayout.JAVA_LONG, 40), control.byteSize());
        long at = 0;
        while (at + 16 <= length)
        {
            final long cmsgLength = control.get(ValueLayout.JAVA_LONG, at);
            if (cmsgLength < 16 || at + cmsgLength > length)
            {
                return -1;
            }
            final int cmsgLevel = control.get(ValueLayout.JAVA_INT, at + 8);
            if (cmsgLevel == level && control.get(ValueLayout.JAVA_INT, at + 12) == type)
            {
                return at + 16;
            }
            at += (cmsgLength + 7) & ~7L;
        }
        return -1;
    }

    private static long timespecNanos(final MemorySegment s, final long at)
    {
        return s.get(ValueLayout.JAVA_LONG, at) * 1_000_000_000L + s.get(ValueLayout.JAVA_LONG, at + 8);
    }

    private void setInt(final int level, final int option, final int value) throws Throwable
    {
        intValue.set(ValueLayout.JAVA_INT, 0, value);
        if ((int)SETSOCKOPT.invokeExact(fd, level, option, intValue, 4) != 0)
        {
            throw new IOException("setsockopt(" + level + ", " + option + ", " + value + ") failed");
        }
    }

    /** Writes {@code address} as a {@code sockaddr_in} or {@code sockaddr_in6} of this socket's family. */
    private void sockaddr(final MemorySegment s, final InetSocketAddress address)
    {
        if (ipv6 != address.getAddress() instanceof Inet6Address)
        {
            throw new IllegalArgumentException("an " + (ipv6 ? "IPv6" : "IPv4") + " socket cannot reach " + address);
        }
        s.fill((byte)0);
        s.set(ValueLayout.JAVA_SHORT, 0, (short)(ipv6 ? AF_INET6 : AF_INET));
        s.set(ValueLayout.JAVA_BYTE, 2, (byte)(address.getPort() >>> 8));
        s.set(ValueLayout.JAVA_BYTE, 3, (byte)address.getPort());
        final byte[] ip = address.getAddress().getAddress();
        MemorySegment.copy(ip, 0, s, ValueLayout.JAVA_BYTE, ipv6 ? 8 : 4, ip.length); // sin6_flowinfo before it
        if (ipv6)
        {
            s.set(ValueLayout.JAVA_INT, 24, ((Inet6Address)address.getAddress()).getScopeId());
        }
    }

    private InetSocketAddress address(final MemorySegment s) throws IOException
    {
        final int port = (s.get(ValueLayout.JAVA_BYTE, 2) & 0xFF) << 8 | s.get(ValueLayout.JAVA_BYTE, 3) & 0xFF;
        final MemorySegment ip = ipv6 ? s.asSlice(8, 16) : s.asSlice(4, 4);
        return new InetSocketAddress(java.net.InetAddress.getByAddress(ip.toArray(ValueLayout.JAVA_BYTE)), port);
    }

    @Override
    public void close()
    {
        try
        {
            final int closed = (int)CLOSE.invokeExact(fd);
            if (closed != 0)
            {
                return;
            }
        }
        catch (final Throwable ignored)
        {
            // nothing more to release
        }
        finally
        {
            arena.close();
        }
    }
}
