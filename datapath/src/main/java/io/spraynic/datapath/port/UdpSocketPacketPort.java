package io.spraynic.datapath.port;

import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.Icrc;
import io.spraynic.libc.MessageVector;
import io.spraynic.libc.UdpSocket;

import io.spraynic.pmd.UdpPortArgs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * A {@link PacketPort} over kernel UDP sockets: the engine's frames leave as the UDP payloads (BTH onwards) of
 * datagrams to their IP destination, and datagrams arriving on the bound address and port come back as
 * frames with synthesized Ethernet, IP and UDP headers ({@link UdpFrames}), so the same engines run with no
 * DPDK, no root and no hugepages: on any Linux host or container.
 * <p>
 * <b>Families.</b> A port is IPv4 or IPv6, as its bind address: an IPv6 port's sockets are {@code AF_INET6}
 * ({@code IPV6_V6ONLY}), its frames have 62 bytes of Ethernet, IPv6 and UDP headers, as on a DPDK port. A
 * frame of the other family is dropped and counted on either side ({@link UdpPortCounters.Reason#TX_NOT_IP_UDP},
 * {@link UdpPortCounters.Reason#RX_WRONG_FAMILY}).
 * <p>
 * <b>Batching.</b> {@code recvmmsg} and {@code sendmmsg} move a whole burst per call; sockets are non-blocking
 * and polled by the worker like a DPDK queue. Buffers are slots of one off-heap segment; nothing is allocated
 * per packet.
 * <p>
 * <b>ECN.</b> Each datagram's TOS byte is sent as an {@code IP_TOS} control message and read back with
 * {@code IP_RECVTOS}, so ECT and CE marks (a router's, or a test peer's) reach the receiving engine.
 * <p>
 * <b>Source ports (path entropy).</b> Unprivileged sockets cannot choose a source port per datagram, and spray
 * needs one per path. The port therefore holds {@code sourcePorts} sockets on its address: the first bound to
 * the listening port (4791 by default) and the others to ports the kernel picks; a frame leaves on socket
 * {@code engineSourcePort % sourcePorts}. A spray connection's paths use consecutive source ports, so up to
 * {@code sourcePorts} paths keep distinct 5-tuples for ECMP to hash apart; the price is that entropy is capped
 * at that many flows per peer and plane, and the receiver sees the socket's port rather than the engine's
 * (nothing in either engine reads a received source port). Raw sockets or {@code IP_PKTINFO} would not help:
 * the one needs root, the other sets no port. Only the first socket receives: peers always send to the
 * listening port, and with several workers each worker's listening socket shares the port through
 * {@code SO_REUSEPORT}, the kernel spreading flows between them (workers steer by DestQP as on DPDK).
 * <p>
 * <b>ICRC.</b> The ICRC covers the IP and UDP headers except their variant fields, and a socket can carry
 * neither the engine's incrementing IPv4 identification nor its source port: the port rewrites each outgoing
 * frame to the canonical headers a receiving port synthesizes and recomputes its ICRC
 * ({@link UdpFrames#canonicalizeForSend}), so the receiving engine checks the ICRC as usual; in flight the
 * payload is covered by the kernels' UDP checksum. A received IPv6 frame's UDP checksum, which the kernel verified
 * and nothing downstream reads, is written only for a capture ({@link #completeReceived}): not a pass over every
 * payload.
 * <p>
 * Hostile datagrams (too short for a BTH and ICRC, longer than a buffer, not a BTH) are dropped here and
 * counted by reason ({@link UdpPortCounters}); the rest is the engine's parser's to judge.
 */
public final class UdpSocketPacketPort implements PacketPort
{
    /** The RoCEv2 port: where peers listen unless configured otherwise. */
    public static final int DEFAULT_PORT = 4791;
    /** Most packets one burst may hold (one {@code recvmmsg}/{@code sendmmsg}). */
    public static final int MAX_BURST = 512;
    /** Most sockets per port: the source ports a plane can spread flows over. */
    public static final int MAX_SOURCE_PORTS = UdpPortArgs.MAX_SOURCE_PORTS;
    /**
     * Socket buffers asked for: with CAP_NET_ADMIN granted; unprivileged, the kernel grants up to
     * {@code net.core.[rw]mem_max} (often 208 KiB, about 90 full-size datagrams: a sender's burst can overflow
     * it while the receiving worker is descheduled; raise the sysctls where that matters). The kernel's drops
     * are counted ({@code SO_RXQ_OVFL}).
     */
    private static final int SOCKET_BUFFER_BYTES = 8 << 20;
    private static final int NO_SOCKET = -1;

    private final String name;
    private final boolean ipv6;
    private final int address;
    private final long addressHigh;
    private final long addressLow;
    private final int headersLength;
    private final int peerPort;
    private final long localMac;
    private final UdpSocket[] sockets;
    private final int[] socketPorts;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment buffers;
    private final long buffersAddress;
    private final int slotSize;
    private final int[] lengths;
    // the socket a queued frame was canonicalized for, so a frame retried after EAGAIN keeps its source port
    private final int[] slotSockets;
    private final int[] freeSlots;
    private int freeCount;
    private final MessageVector rx;
    private final MessageVector tx;
    private final int[] rxSlots;
    private final int[] txOrder;
    private final boolean[] txTaken;
    private final int[] groupStart;
    private final int[] groupFill;
    // the sockets a burst uses, in the order of their first frame: a burst touches at most MAX_BURST of them
    private final int[] burstSockets;
    private final Icrc icrc = new Icrc();
    private final UdpPortCounters counters;
    private int lastSendErrno;

    /**
     * Opens an IPv4 port's sockets (control path).
     *
     * @param name        for logs and counters, e.g. {@code udp0/q0}.
     * @param address     IPv4 address to bind (the plane's address), not 0.
     * @param port        UDP port to listen on, usually {@link #DEFAULT_PORT}.
     * @param peerPort    UDP port peers listen on, usually {@link #DEFAULT_PORT}.
     * @param sourcePorts sockets, 1 to {@link #MAX_SOURCE_PORTS}: the source ports frames are spread over.
     * @param reusePort   share {@code port} with other ports' listening sockets (one port per worker).
     * @param frameRoom   bytes of a buffer: the longest frame, headers included.
     * @param buffers     buffers in the port's pool.
     * @param localMac    the plane's MAC, written as received frames' destination.
     * @param counters    where it counts.
     * @throws IllegalStateException when a socket cannot be opened or bound (the errno's text named).
     */
    public UdpSocketPacketPort(final String name, final int address, final int port, final int peerPort,
        final int sourcePorts, final boolean reusePort, final int frameRoom, final int buffers, final long localMac,
        final UdpPortCounters counters)
    {
        this(name, false, address, 0, 0, port, peerPort, sourcePorts, reusePort, frameRoom, buffers, localMac, counters);
    }

    /**
     * Opens an IPv6 port's sockets (control path): as the IPv4 constructor, bound to {@code [addressHigh:addressLow]}
     * (not {@code ::}, link-local or IPv4-mapped).
     */
    public UdpSocketPacketPort(final String name, final long addressHigh, final long addressLow, final int port,
        final int peerPort, final int sourcePorts, final boolean reusePort, final int frameRoom, final int buffers,
        final long localMac, final UdpPortCounters counters)
    {
        this(name, true, 0, addressHigh, addressLow, port, peerPort, sourcePorts, reusePort, frameRoom, buffers, localMac,
            counters);
    }

    private UdpSocketPacketPort(final String name, final boolean ipv6, final int address, final long addressHigh,
        final long addressLow, final int port, final int peerPort, final int sourcePorts, final boolean reusePort,
        final int frameRoom, final int buffers, final long localMac, final UdpPortCounters counters)
    {
        final int headers = ipv6 ? UdpFrames.IPV6_HEADERS_LENGTH : UdpFrames.HEADERS_LENGTH;
        if (sourcePorts < 1 || sourcePorts > MAX_SOURCE_PORTS)
        {
            throw new IllegalArgumentException("source ports " + sourcePorts + " must be 1 to " + MAX_SOURCE_PORTS);
        }
        if (peerPort < 1 || peerPort > 0xFFFF || port < 1 || port > 0xFFFF)
        {
            throw new IllegalArgumentException("UDP ports must be 1 to 65535, not " + port + " and " + peerPort);
        }
        if (frameRoom < headers + UdpFrames.MIN_PAYLOAD_LENGTH || frameRoom > 65535)
        {
            throw new IllegalArgumentException("frame room " + frameRoom + " must be " +
                (headers + UdpFrames.MIN_PAYLOAD_LENGTH) + " to 65535 bytes");
        }
        if (buffers < 2 * MAX_BURST || buffers > 1 << 20)
        {
            throw new IllegalArgumentException("buffers " + buffers + " must be " + 2 * MAX_BURST + " to " + (1 << 20));
        }
        this.name = name;
        this.ipv6 = ipv6;
        this.address = address;
        this.addressHigh = addressHigh;
        this.addressLow = addressLow;
        this.headersLength = headers;
        this.peerPort = peerPort;
        this.localMac = localMac;
        this.counters = counters;
        this.slotSize = frameRoom;
        this.sockets = new UdpSocket[sourcePorts];
        this.socketPorts = new int[sourcePorts];
        try
        {
            for (int i = 0; i < sourcePorts; i++)
            {
                final int bindPort = i == 0 ? port : 0;
                final boolean share = i == 0 && reusePort;
                sockets[i] = ipv6 ? UdpSocket.openIpv6(addressHigh, addressLow, bindPort, share, SOCKET_BUFFER_BYTES) :
                    UdpSocket.openIpv4(address, bindPort, share, SOCKET_BUFFER_BYTES);
                socketPorts[i] = sockets[i].localPort();
            }
        }
        catch (final RuntimeException ex)
        {
            closeSockets();
            arena.close();
            throw ex;
        }
        this.buffers = arena.allocate((long)slotSize * buffers, 64);
        this.buffersAddress = this.buffers.address();
        this.lengths = new int[buffers];
        this.slotSockets = new int[buffers];
        this.freeSlots = new int[buffers];
        for (int i = 0; i < buffers; i++)
        {
            freeSlots[i] = buffers - 1 - i;
        }
        this.freeCount = buffers;
        this.rx = new MessageVector(MAX_BURST);
        this.tx = new MessageVector(MAX_BURST);
        this.rxSlots = new int[MAX_BURST];
        this.txOrder = new int[MAX_BURST];
        this.txTaken = new boolean[MAX_BURST];
        this.groupStart = new int[sourcePorts];
        this.groupFill = new int[sourcePorts];
        this.burstSockets = new int[MAX_BURST];
    }

    public String name()
    {
        return name;
    }

    /** @return true for an IPv6 port. */
    public boolean isIpv6()
    {
        return ipv6;
    }

    /** @return bytes of headers in front of a datagram's payload in a frame: 42 (IPv4) or 62 (IPv6). */
    public int headersLength()
    {
        return headersLength;
    }

    /** @return the ports the sockets are bound to, the listening port first: the source ports frames leave with. */
    public int[] sourcePorts()
    {
        return socketPorts.clone();
    }

    /** @return the port's counters. */
    public UdpPortCounters counters()
    {
        return counters;
    }

    /** @return the errno of the last datagram {@code sendmmsg} refused (not {@code EAGAIN}), 0 if none. */
    public int lastSendErrno()
    {
        return lastSendErrno;
    }

    public UdpPacketBurst newBurst(final int capacity)
    {
        if (capacity > MAX_BURST)
        {
            throw new IllegalArgumentException("a UDP port's bursts hold at most " + MAX_BURST + " packets, not " + capacity);
        }
        return new UdpPacketBurst(this, capacity);
    }

    public int receive(final PacketBurst burst)
    {
        final UdpPacketBurst b = (UdpPacketBurst)burst;
        final int want = Math.min(b.capacity() - b.size(), freeCount);
        if (want <= 0)
        {
            return 0;
        }
        final int payloadRoom = slotSize - headersLength;
        for (int i = 0; i < want; i++)
        {
            final int slot = freeSlots[--freeCount];
            rxSlots[i] = slot;
            rx.prepareReceive(i, buffersAddress + slotOffset(slot) + headersLength, payloadRoom);
        }
        int n = sockets[0].receive(rx, want);
        if (n < 0)
        {
            if (n != -UdpSocket.EAGAIN && n != -UdpSocket.EINTR)
            {
                counters.drop(UdpPortCounters.Reason.RX_ERROR);
            }
            n = 0;
        }
        int accepted = 0;
        if (n > 0)
        {
            final long kernelDrops = rx.receivedDropCount(n - 1);
            if (kernelDrops > 0)
            {
                counters.kernelDrops(kernelDrops);
            }
        }
        for (int i = 0; i < n; i++)
        {
            final int slot = rxSlots[i];
            final UdpPortCounters.Reason refused = accept(i, slot);
            if (null == refused)
            {
                b.add(slot);
                accepted++;
            }
            else
            {
                counters.drop(refused);
                freeSlots[freeCount++] = slot;
            }
        }
        for (int i = n; i < want; i++)
        {
            freeSlots[freeCount++] = rxSlots[i];
        }
        if (accepted > 0)
        {
            counters.received(accepted);
        }
        return accepted;
    }

    private UdpPortCounters.Reason accept(final int message, final int slot)
    {
        final int length = rx.receivedLength(message);
        if ((rx.flags(message) & MessageVector.MSG_TRUNC) != 0)
        {
            return UdpPortCounters.Reason.RX_TOO_LONG;
        }
        if (length < UdpFrames.MIN_PAYLOAD_LENGTH)
        {
            return UdpPortCounters.Reason.RX_SHORT;
        }
        final long frame = slotOffset(slot);
        if (ipv6)
        {
            final long sourceHigh = rx.sourceAddressHigh(message);
            final long sourceLow = rx.sourceAddressLow(message);
            // V6ONLY keeps IPv4 away; an IPv4-mapped sender is refused all the same, as a plane of one family
            if (rx.sourceFamily(message) != UdpSocket.AF_INET6 || isIpv4Mapped(sourceHigh, sourceLow))
            {
                return UdpPortCounters.Reason.RX_WRONG_FAMILY;
            }
            if (BaseTransportHeader.tver(buffers, frame + headersLength) != 0)
            {
                return UdpPortCounters.Reason.RX_NOT_BTH;
            }
            final int trafficClass = rx.receivedTos(message);
            lengths[slot] = UdpFrames.synthesizeIpv6(buffers, frame, length, localMac, sourceHigh, sourceLow,
                rx.sourcePort(message), addressHigh, addressLow, trafficClass < 0 ? 0 : trafficClass);
        }
        else
        {
            final int source = rx.sourceAddress(message);
            if (0 == source)
            {
                return UdpPortCounters.Reason.RX_WRONG_FAMILY;
            }
            if (BaseTransportHeader.tver(buffers, frame + headersLength) != 0)
            {
                return UdpPortCounters.Reason.RX_NOT_BTH;
            }
            final int tos = rx.receivedTos(message);
            lengths[slot] = UdpFrames.synthesize(buffers, frame, length, localMac, source, rx.sourcePort(message), address,
                tos < 0 ? 0 : tos);
        }
        slotSockets[slot] = NO_SOCKET;
        return null;
    }

    /**
     * Writes the UDP checksums of received IPv6 frames, which {@link UdpFrames#synthesizeIpv6} leaves out (the kernel
     * verified the datagrams), for a capture; an IPv4 frame's 0 means "no checksum" there, which is legal.
     */
    public void completeReceived(final PacketBurst burst, final int from, final int to)
    {
        if (ipv6)
        {
            final UdpPacketBurst b = (UdpPacketBurst)burst;
            for (int i = from; i < to; i++)
            {
                final int slot = b.slotUnchecked(i);
                UdpFrames.completeIpv6Checksum(buffers, slotOffset(slot), lengths[slot]);
            }
        }
    }

    private static boolean isIpv4Mapped(final long high, final long low)
    {
        return high == 0 && (low >>> 32) == 0xFFFFL;
    }

    public boolean allocate(final PacketBurst burst, final int count)
    {
        final UdpPacketBurst b = (UdpPacketBurst)burst;
        if (count > b.capacity() - b.size())
        {
            throw new IllegalArgumentException(
                "cannot add " + count + " packets to a burst holding " + b.size() + " of " + b.capacity());
        }
        if (freeCount < count)
        {
            return false;
        }
        for (int i = 0; i < count; i++)
        {
            final int slot = freeSlots[--freeCount];
            lengths[slot] = 0;
            slotSockets[slot] = NO_SOCKET;
            b.add(slot);
        }
        return true;
    }

    /**
     * Sends the burst's frames, grouped by socket into one {@code sendmmsg} each. Frames the port refuses
     * (not UDP over the port's IP family, wrong source, refused by the kernel) count as taken: dropped and counted, like a NIC's
     * TX errors. Frames a full send buffer could not take stay at the burst's front.
     *
     * @return frames taken: sent or dropped.
     */
    public boolean writesUdpChecksum()
    {
        return true; // the kernel computes the checksum of the datagram it sends; the frame's headers are not sent
    }

    /** {@inheritDoc} */
    public int transmit(final PacketBurst burst)
    {
        final UdpPacketBurst b = (UdpPacketBurst)burst;
        final int n = b.size();
        if (n == 0)
        {
            return 0;
        }
        int socketCount = 0;
        for (int i = 0; i < n; i++)
        {
            txTaken[i] = false;
            final int slot = b.slotUnchecked(i);
            final int socket = socketFor(slot);
            if (NO_SOCKET == socket)
            {
                txTaken[i] = true;
                txOrder[i] = NO_SOCKET;
            }
            else
            {
                txOrder[i] = socket;
                if (groupFill[socket]++ == 0)
                {
                    burstSockets[socketCount++] = socket;
                }
            }
        }
        int start = 0;
        for (int used = 0; used < socketCount; used++)
        {
            final int socket = burstSockets[used];
            groupStart[socket] = start;
            start += groupFill[socket];
            groupFill[socket] = 0;
        }
        final int queued = start;
        // txOrder[i] held packet i's socket; lay the messages out socket by socket, remembering each one's packet
        final int[] packetOf = rxSlots; // free while transmitting: receive runs on the same thread, not during this
        for (int i = 0; i < n; i++)
        {
            final int socket = txOrder[i];
            if (NO_SOCKET != socket)
            {
                final int message = groupStart[socket] + groupFill[socket]++;
                packetOf[message] = i;
                final long frame = slotOffset(b.slotUnchecked(i));
                final int payload = lengths[b.slotUnchecked(i)] - headersLength;
                final long payloadAddress = buffersAddress + frame + headersLength;
                if (ipv6)
                {
                    tx.prepareSendIpv6(message, payloadAddress, payload, UdpFrames.destinationHighIpv6(buffers, frame),
                        UdpFrames.destinationLowIpv6(buffers, frame), peerPort, UdpFrames.trafficClassIpv6(buffers, frame));
                }
                else
                {
                    tx.prepareSend(message, payloadAddress, payload, UdpFrames.destinationAddress(buffers, frame), peerPort,
                        UdpFrames.tos(buffers, frame));
                }
            }
        }
        int sent = 0;
        for (int used = 0; used < socketCount; used++)
        {
            final int socket = burstSockets[used];
            sent += sendGroup(socket, packetOf);
            groupFill[socket] = 0; // every count is 0 between bursts
        }
        if (sent > 0)
        {
            counters.sent(sent);
        }
        int kept = 0;
        for (int i = 0; i < n; i++)
        {
            final int slot = b.slotUnchecked(i);
            if (txTaken[i])
            {
                freeSlots[freeCount++] = slot;
            }
            else
            {
                b.set(kept++, slot);
            }
        }
        b.size(kept);
        return n - kept;
    }

    /**
     * Canonicalizes a queued frame for the socket its engine source port maps to, once (a frame left queued
     * keeps its socket), and sets its length to the canonical frame's.
     *
     * @return the socket, or {@link #NO_SOCKET} when the frame was dropped (counted).
     */
    private int socketFor(final int slot)
    {
        final int assigned = slotSockets[slot];
        if (NO_SOCKET != assigned)
        {
            return assigned;
        }
        final long frame = slotOffset(slot);
        final int length = lengths[slot];
        final int socket;
        final int payload;
        if (ipv6)
        {
            socket = length >= headersLength ? UdpFrames.sourcePortIpv6(buffers, frame) % sockets.length : 0;
            payload = UdpFrames.canonicalizeIpv6ForSend(buffers, frame, length, addressHigh, addressLow,
                socketPorts[socket], icrc);
        }
        else
        {
            socket = length >= headersLength ? UdpFrames.sourcePort(buffers, frame) % sockets.length : 0;
            payload = UdpFrames.canonicalizeForSend(buffers, frame, length, address, socketPorts[socket], icrc);
        }
        if (payload < 0)
        {
            counters.drop(payload == UdpFrames.WRONG_SOURCE ?
                UdpPortCounters.Reason.TX_WRONG_SOURCE : UdpPortCounters.Reason.TX_NOT_IP_UDP);
            return NO_SOCKET;
        }
        lengths[slot] = headersLength + payload;
        slotSockets[slot] = socket;
        return socket;
    }

    private int sendGroup(final int socket, final int[] packetOf)
    {
        final int first = groupStart[socket];
        final int count = groupFill[socket];
        int done = 0;
        int sent = 0;
        while (done < count)
        {
            final int r = sockets[socket].send(tx, first + done, count - done);
            if (r > 0)
            {
                for (int m = first + done; m < first + done + r; m++)
                {
                    txTaken[packetOf[m]] = true;
                }
                done += r;
                sent += r;
            }
            else if (r == -UdpSocket.EAGAIN)
            {
                counters.wouldBlock();
                break; // the rest stay queued, in order
            }
            else if (r != -UdpSocket.EINTR)
            {
                // the kernel refused the first datagram (no route, message too long...): drop it, go on
                lastSendErrno = -r;
                counters.drop(UdpPortCounters.Reason.TX_ERROR);
                txTaken[packetOf[first + done]] = true;
                done++;
            }
        }
        return sent;
    }

    public void release(final PacketBurst burst)
    {
        final UdpPacketBurst b = (UdpPacketBurst)burst;
        for (int i = 0, size = b.size(); i < size; i++)
        {
            freeSlots[freeCount++] = b.slotUnchecked(i);
        }
        b.size(0);
    }

    public void releaseLast(final PacketBurst burst)
    {
        final UdpPacketBurst b = (UdpPacketBurst)burst;
        if (b.size() > 0)
        {
            freeSlots[freeCount++] = b.slotUnchecked(b.size() - 1);
            b.size(b.size() - 1);
        }
    }

    /** @return buffers of the pool not in a burst. */
    public int freeBuffers()
    {
        return freeCount;
    }

    MemorySegment buffers()
    {
        return buffers;
    }

    long slotOffset(final int slot)
    {
        return (long)slot * slotSize;
    }

    int slotSize()
    {
        return slotSize;
    }

    int length(final int slot)
    {
        return lengths[slot];
    }

    void length(final int slot, final int length)
    {
        lengths[slot] = length;
        slotSockets[slot] = NO_SOCKET; // rewritten: canonicalize again before sending
    }

    /**
     * Closes the sockets and frees the buffers: call it after the poll thread stopped.
     */
    public void close()
    {
        closeSockets();
        if (arena.scope().isAlive())
        {
            rx.close();
            tx.close();
            arena.close();
        }
    }

    private void closeSockets()
    {
        for (final UdpSocket socket : sockets)
        {
            if (null != socket)
            {
                socket.close();
            }
        }
    }

    public String toString()
    {
        return "UdpSocketPacketPort{" + name + ", " + sockets[0] + ", " + sockets.length + " source port(s)}";
    }
}
