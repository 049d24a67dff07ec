package io.spraynic.libc;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * An array of {@code struct mmsghdr} for {@code recvmmsg}/{@code sendmmsg}, off-heap, each entry wired once to
 * its own socket address (room for a {@code sockaddr_in6}, so one vector serves either family), one
 * {@code iovec} and a control buffer for one {@code IP_TOS} or {@code IPV6_TCLASS} message; per datagram only
 * the values change ({@link #prepareReceive}, {@link #prepareSend}, {@link #prepareSendIpv6}), nothing is
 * allocated.
 * <p>
 * The layouts are glibc's on 64-bit Linux (x86_64 and aarch64 alike), written out below; {@link #checkPlatform}
 * refuses anything else rather than pass the kernel a layout it does not expect.
 * <pre>
 * struct msghdr  { void *name; socklen_t namelen; struct iovec *iov; size_t iovlen;
 *                  void *control; size_t controllen; int flags; };             // 56 bytes
 * struct mmsghdr { struct msghdr hdr; unsigned int len; };                     // 64 bytes
 * struct cmsghdr { size_t len; int level; int type; unsigned char data[]; };   // data at 16
 * struct sockaddr_in  { sa_family_t family; in_port_t port; struct in_addr addr; char zero[8]; };   // 16 bytes
 * struct sockaddr_in6 { sa_family_t family; in_port_t port; uint32_t flowinfo; struct in6_addr addr;
 *                       uint32_t scope_id; };                                                       // 28 bytes
 * </pre>
 */
public final class MessageVector implements AutoCloseable
{
    /** Bytes of a {@code sockaddr_in}. */
    public static final int SOCKADDR_IN_LENGTH = 16;
    /** Bytes of a {@code sockaddr_in6}. */
    public static final int SOCKADDR_IN6_LENGTH = 28;
    /** Bytes between two entries' socket addresses: a {@code sockaddr_in6}, 8-aligned. */
    private static final int NAME_ROOM = 32;
    private static final int SIN6_FLOWINFO = 4;
    private static final int SIN6_ADDR = 8;
    private static final int SIN6_SCOPE_ID = 24;

    static final StructLayout IOVEC = MemoryLayout.structLayout(ADDRESS.withName("base"), JAVA_LONG.withName("len"));
    static final StructLayout MSGHDR = MemoryLayout.structLayout(
        ADDRESS.withName("name"), JAVA_INT.withName("namelen"), MemoryLayout.paddingLayout(4),
        ADDRESS.withName("iov"), JAVA_LONG.withName("iovlen"),
        ADDRESS.withName("control"), JAVA_LONG.withName("controllen"),
        JAVA_INT.withName("flags"), MemoryLayout.paddingLayout(4));
    static final StructLayout MMSGHDR = MemoryLayout.structLayout(
        MSGHDR.withName("hdr"), JAVA_INT.withName("len"), MemoryLayout.paddingLayout(4));

    private static final long NAME = MMSGHDR.byteOffset(groupElement("hdr"), groupElement("name"));
    private static final long NAMELEN = MMSGHDR.byteOffset(groupElement("hdr"), groupElement("namelen"));
    private static final long IOV = MMSGHDR.byteOffset(groupElement("hdr"), groupElement("iov"));
    private static final long IOVLEN = MMSGHDR.byteOffset(groupElement("hdr"), groupElement("iovlen"));
    private static final long CONTROL = MMSGHDR.byteOffset(groupElement("hdr"), groupElement("control"));
    private static final long CONTROLLEN = MMSGHDR.byteOffset(groupElement("hdr"), groupElement("controllen"));
    private static final long FLAGS = MMSGHDR.byteOffset(groupElement("hdr"), groupElement("flags"));
    private static final long LEN = MMSGHDR.byteOffset(groupElement("len"));
    private static final long ENTRY = MMSGHDR.byteSize();
    private static final long IOV_BASE = IOVEC.byteOffset(groupElement("base"));
    private static final long IOV_LEN = IOVEC.byteOffset(groupElement("len"));

    /** {@code CMSG_LEN(sizeof(int))}: what the send side's {@code IP_TOS} message declares. */
    private static final int CMSG_DATA = 16;
    private static final int CMSG_LEN_INT = CMSG_DATA + 4;
    /**
     * Per-entry control room: {@code CMSG_SPACE(sizeof(int))} is 24; a receive gets one {@code IP_TOS} byte and
     * one {@code SO_RXQ_OVFL} count, 24 bytes each.
     */
    private static final int CONTROL_ROOM = 48;
    private static final int IPPROTO_IP = 0;
    private static final int IP_TOS = 1;
    private static final int IPPROTO_IPV6 = 41;
    private static final int IPV6_TCLASS = 67;
    private static final int SOL_SOCKET = 1;
    private static final int SO_RXQ_OVFL = 40;
    /** {@code MSG_TRUNC} in a received message's flags: the datagram was longer than its buffer. */
    public static final int MSG_TRUNC = 0x20;

    private static final ValueLayout.OfShort U16_BE = JAVA_SHORT.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt U32_BE = JAVA_INT.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfLong U64_BE = JAVA_LONG.withOrder(ByteOrder.BIG_ENDIAN);

    private final Arena arena = Arena.ofShared();
    private final int capacity;
    private final MemorySegment entries;
    private final MemorySegment names;
    private final MemorySegment iovecs;
    private final MemorySegment controls;

    /**
     * @param capacity entries: the most datagrams one call moves.
     */
    public MessageVector(final int capacity)
    {
        checkPlatform();
        if (capacity < 1 || capacity > 1024)
        {
            throw new IllegalArgumentException("a message vector holds 1 to 1024 entries (UIO_MAXIOV), not " + capacity);
        }
        this.capacity = capacity;
        entries = arena.allocate(ENTRY * capacity, 64);
        names = arena.allocate((long)NAME_ROOM * capacity, 8);
        iovecs = arena.allocate(IOVEC.byteSize() * capacity, 8);
        controls = arena.allocate((long)CONTROL_ROOM * capacity, 8);
        for (int i = 0; i < capacity; i++)
        {
            final long e = ENTRY * i;
            entries.set(JAVA_LONG, e + NAME, names.address() + (long)NAME_ROOM * i);
            entries.set(JAVA_LONG, e + IOV, iovecs.address() + IOVEC.byteSize() * i);
            entries.set(JAVA_LONG, e + IOVLEN, 1L);
            entries.set(JAVA_LONG, e + CONTROL, controls.address() + (long)CONTROL_ROOM * i);
        }
    }

    /**
     * Refuses a platform whose C layouts differ from those written here.
     */
    static void checkPlatform()
    {
        final String os = System.getProperty("os.name", "");
        if (!os.startsWith("Linux") || ADDRESS.byteSize() != 8 || ENTRY != 64 || MSGHDR.byteSize() != 56 ||
            ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN)
        {
            throw new UnsupportedOperationException("UDP socket ports need 64-bit little-endian Linux (glibc's msghdr " +
                "layout); this is " + os + " " + System.getProperty("os.arch"));
        }
    }

    /** @return entries. */
    public int capacity()
    {
        return capacity;
    }

    long address()
    {
        return entries.address();
    }

    long entryAddress(final int index)
    {
        return entries.address() + ENTRY * index;
    }

    /**
     * Readies entry {@code index} to receive one datagram into {@code room} bytes at {@code bufferAddress}.
     */
    public void prepareReceive(final int index, final long bufferAddress, final int room)
    {
        final long e = ENTRY * index;
        entries.set(JAVA_INT, e + NAMELEN, SOCKADDR_IN6_LENGTH); // either family's fits; the kernel says which
        entries.set(JAVA_LONG, e + CONTROLLEN, CONTROL_ROOM);
        entries.set(JAVA_INT, e + FLAGS, 0);
        entries.set(JAVA_INT, e + LEN, 0);
        final long v = IOVEC.byteSize() * index;
        iovecs.set(JAVA_LONG, v + IOV_BASE, bufferAddress);
        iovecs.set(JAVA_LONG, v + IOV_LEN, room);
    }

    /**
     * Readies entry {@code index} to send {@code length} bytes at {@code bufferAddress} to
     * {@code address:port} with IP TOS byte {@code tos} (DSCP and ECN).
     */
    public void prepareSend(final int index, final long bufferAddress, final int length, final int address, final int port,
        final int tos)
    {
        final long e = ENTRY * index;
        entries.set(JAVA_INT, e + NAMELEN, SOCKADDR_IN_LENGTH);
        entries.set(JAVA_LONG, e + CONTROLLEN, CMSG_DATA + 8); // CMSG_SPACE(sizeof(int))
        entries.set(JAVA_INT, e + FLAGS, 0);
        sockaddrIn(names, (long)NAME_ROOM * index, address, port);
        prepareBufferAndClass(index, bufferAddress, length, IPPROTO_IP, IP_TOS, tos);
    }

    /**
     * Readies entry {@code index} to send {@code length} bytes at {@code bufferAddress} to IPv6
     * {@code [high:low]:port} with traffic class {@code trafficClass} (DSCP and ECN).
     */
    public void prepareSendIpv6(final int index, final long bufferAddress, final int length, final long high,
        final long low, final int port, final int trafficClass)
    {
        final long e = ENTRY * index;
        entries.set(JAVA_INT, e + NAMELEN, SOCKADDR_IN6_LENGTH);
        entries.set(JAVA_LONG, e + CONTROLLEN, CMSG_DATA + 8); // CMSG_SPACE(sizeof(int))
        entries.set(JAVA_INT, e + FLAGS, 0);
        sockaddrIn6(names, (long)NAME_ROOM * index, high, low, port);
        prepareBufferAndClass(index, bufferAddress, length, IPPROTO_IPV6, IPV6_TCLASS, trafficClass);
    }

    private void prepareBufferAndClass(final int index, final long bufferAddress, final int length, final int level,
        final int type, final int trafficClass)
    {
        final long v = IOVEC.byteSize() * index;
        iovecs.set(JAVA_LONG, v + IOV_BASE, bufferAddress);
        iovecs.set(JAVA_LONG, v + IOV_LEN, length);
        final long c = (long)CONTROL_ROOM * index;
        controls.set(JAVA_LONG, c, CMSG_LEN_INT);
        controls.set(JAVA_INT, c + 8, level);
        controls.set(JAVA_INT, c + 12, type);
        controls.set(JAVA_INT, c + CMSG_DATA, trafficClass & 0xFF);
    }

    /** @return bytes the kernel put in entry {@code index}'s buffer. */
    public int receivedLength(final int index)
    {
        return entries.get(JAVA_INT, ENTRY * index + LEN);
    }

    /** @return the received message's flags ({@link #MSG_TRUNC}...). */
    public int flags(final int index)
    {
        return entries.get(JAVA_INT, ENTRY * index + FLAGS);
    }

    /**
     * @return the family of the sender's address, {@link UdpSocket#AF_INET} or {@link UdpSocket#AF_INET6}, or 0
     * when the kernel gave no address of a length that family needs.
     */
    public int sourceFamily(final int index)
    {
        final int length = entries.get(JAVA_INT, ENTRY * index + NAMELEN);
        final int family = names.get(JAVA_SHORT, (long)NAME_ROOM * index);
        if (family == UdpSocket.AF_INET && length >= SOCKADDR_IN_LENGTH)
        {
            return UdpSocket.AF_INET;
        }
        return family == UdpSocket.AF_INET6 && length >= SOCKADDR_IN6_LENGTH ? UdpSocket.AF_INET6 : 0;
    }

    /** @return the sender's IPv4 address, or 0 when the kernel gave no IPv4 address. */
    public int sourceAddress(final int index)
    {
        return sourceFamily(index) == UdpSocket.AF_INET ? names.get(U32_BE, (long)NAME_ROOM * index + 4) : 0;
    }

    /** @return the first 8 bytes of the sender's IPv6 address (big-endian), 0 when it gave no IPv6 address. */
    public long sourceAddressHigh(final int index)
    {
        return sourceFamily(index) == UdpSocket.AF_INET6 ? names.get(U64_BE, (long)NAME_ROOM * index + SIN6_ADDR) : 0;
    }

    /** @return the last 8 bytes of the sender's IPv6 address (big-endian), 0 when it gave no IPv6 address. */
    public long sourceAddressLow(final int index)
    {
        return sourceFamily(index) == UdpSocket.AF_INET6 ? names.get(U64_BE, (long)NAME_ROOM * index + SIN6_ADDR + 8) : 0;
    }

    /** @return the sender's UDP port (at the same place in either family's address). */
    public int sourcePort(final int index)
    {
        return sockaddrInPort(names, (long)NAME_ROOM * index);
    }

    /**
     * @return the IP TOS byte the datagram arrived with ({@code IP_RECVTOS}), or its IPv6 traffic class
     * ({@code IPV6_RECVTCLASS}, an int), or -1 when the kernel gave neither.
     */
    public int receivedTos(final int index)
    {
        final long at = findControl(index, IPPROTO_IP, IP_TOS, 1);
        if (at >= 0)
        {
            return controls.get(JAVA_BYTE, at) & 0xFF;
        }
        final long at6 = findControl(index, IPPROTO_IPV6, IPV6_TCLASS, 4);
        return at6 < 0 ? -1 : controls.get(JAVA_INT, at6) & 0xFF;
    }

    /**
     * @return the socket's count of datagrams the kernel dropped for want of receive buffer so far
     * ({@code SO_RXQ_OVFL}, unsigned 32 bits), or -1 when the kernel gave none (it does once there was a drop).
     */
    public long receivedDropCount(final int index)
    {
        final long at = findControl(index, SOL_SOCKET, SO_RXQ_OVFL, 4);
        return at < 0 ? -1 : Integer.toUnsignedLong(controls.get(JAVA_INT, at));
    }

    /** @return the offset in {@code controls} of the data of entry {@code index}'s message of that level and type. */
    private long findControl(final int index, final int level, final int type, final int dataLength)
    {
        final long controlLength = Math.min(entries.get(JAVA_LONG, ENTRY * index + CONTROLLEN), CONTROL_ROOM);
        final long base = (long)CONTROL_ROOM * index;
        long at = 0;
        while (at + CMSG_DATA + dataLength <= controlLength)
        {
            final long length = controls.get(JAVA_LONG, base + at);
            if (length < CMSG_DATA || at + length > controlLength)
            {
                return -1;
            }
            if (controls.get(JAVA_INT, base + at + 8) == level && controls.get(JAVA_INT, base + at + 12) == type &&
                length >= CMSG_DATA + dataLength)
            {
                return base + at + CMSG_DATA;
            }
            at += (length + 7) & ~7L;
        }
        return -1;
    }

    static void sockaddrIn(final MemorySegment s, final long offset, final int address, final int port)
    {
        s.set(JAVA_SHORT, offset, (short)UdpSocket.AF_INET);
        s.set(U16_BE, offset + 2, (short)port);
        s.set(U32_BE, offset + 4, address);
        s.set(JAVA_LONG, offset + 8, 0L);
    }

    static void sockaddrIn6(final MemorySegment s, final long offset, final long high, final long low, final int port)
    {
        s.set(JAVA_SHORT, offset, (short)UdpSocket.AF_INET6);
        s.set(U16_BE, offset + 2, (short)port);
        s.set(JAVA_INT, offset + SIN6_FLOWINFO, 0);
        s.set(U64_BE, offset + SIN6_ADDR, high);
        s.set(U64_BE, offset + SIN6_ADDR + 8, low);
        s.set(JAVA_INT, offset + SIN6_SCOPE_ID, 0); // no link-local addresses: the port refuses them
    }

    static int sockaddrInPort(final MemorySegment s, final long offset)
    {
        return Short.toUnsignedInt(s.get(U16_BE, offset + 2));
    }

    static String ipv4ToString(final int address)
    {
        return (address >>> 24) + "." + ((address >>> 16) & 0xFF) + "." + ((address >>> 8) & 0xFF) + "." + (address & 0xFF);
    }

    public void close()
    {
        arena.close();
    }
}
