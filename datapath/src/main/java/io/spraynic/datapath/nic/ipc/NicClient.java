package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.api.Nic;
import io.spraynic.datapath.api.Region;
import io.spraynic.datapath.capture.CaptureFilter;
import io.spraynic.datapath.capture.CaptureRingLayout;
import io.spraynic.datapath.api.DrainReport;
import io.spraynic.datapath.nic.NicConnection;
import io.spraynic.datapath.api.RocevEndpoint;
import org.agrona.concurrent.UnsafeBuffer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * An application's handle on a NIC running in another process ({@code spraynic nic --ipc-dir DIR}, or any
 * process that started an {@link IpcConductor}): the application {@link Nic} API, as {@code EmbeddedNic} serves it in
 * process, over shared memory.
 * <pre>
 *   try (NicClient nic = NicClient.connect(dir, Duration.ofSeconds(5)))
 *   {
 *       ClientRegion mr = nic.register(1 &lt;&lt; 20, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
 *       ClientConnection c = nic.connect(peerIps, Duration.ofSeconds(10));
 *       c.postSend(0, new SendRequest().opcode(RDMA_WRITE).local(mr, mr.address(), 4096).remote(addr, rkey));
 *       ... c.sendCompletionQueue().poll(completion) ...
 *   }
 * </pre>
 * It reaches the NIC through {@code DIR/nic.sock} (docs/IPC.md I11): HELLO gives it the NIC's control memory,
 * ADD_CLIENT its own answer ring, id and token, OPEN_MEMORY each connection's rings; every piece is a memfd the NIC
 * sealed, so nobody can truncate it under the NIC. Control calls (register, connect, accept, create a queue pair,
 * close) are commands to the NIC, each carrying the token the NIC gave this client, answered in this client's answer
 * ring; they wait for the answer and throw {@link NicRefusedException} with the NIC's reason and
 * code when it refuses, or {@link IllegalStateException} when it stops answering or lost the command (it reset
 * its command ring after some process corrupted it). Posting and polling on a {@link ClientConnection} go through shared rings
 * and never wait. A daemon thread sends keepalives; a client that stops (its process died) is released by the NIC
 * after the NIC's client timeout. Control calls may come from any thread (they are serialized).
 */
public final class NicClient implements Nic
{
    /** How long a control call waits for the NIC beyond the time the call itself gives the NIC. */
    public static final Duration CONTROL_TIMEOUT = Duration.ofSeconds(10);

    private final Path directory;
    private final MemorySegment controlMemory; // kept reachable: connections read the heartbeat until collected
    private final UnsafeBuffer header;
    private final Arena answerArena;
    private final ClientCommandChannel channel;
    private final long nicPid;
    private final NicConnection.Kind mode;
    private final int planes;
    private final UnsafeBuffer command;
    private final UnsafeBuffer reply;
    private final IpcMessages.Register register = new IpcMessages.Register();
    private final IpcMessages.ObjectCommand objectCommand = new IpcMessages.ObjectCommand();
    private final IpcMessages.Connect connect = new IpcMessages.Connect();
    private final IpcMessages.ConnectQueuePair connectQueuePair = new IpcMessages.ConnectQueuePair();
    private final IpcMessages.StartCapture startCapture = new IpcMessages.StartCapture();
    private final IpcAnswers.CaptureReady captureReady = new IpcAnswers.CaptureReady();
    private final IpcAnswers.Ok ok = new IpcAnswers.Ok();
    private final IpcAnswers.RegionReady regionReady = new IpcAnswers.RegionReady();
    private final IpcAnswers.ConnectionReady connectionReady = new IpcAnswers.ConnectionReady();
    private final IpcAnswers.ConnectionClosed connectionClosed = new IpcAnswers.ConnectionClosed();
    private final List<ClientRegion> regions = new ArrayList<>();
    private final List<ClientConnection> connections = new ArrayList<>();
    private volatile boolean closed;

    NicClient(final Path directory, final MemorySegment controlMemory, final Arena answerArena,
        final MemorySegment answerMemory, final IpcAnswers.Ok added)
    {
        this.directory = directory;
        this.controlMemory = controlMemory;
        this.answerArena = answerArena;
        this.header = new UnsafeBuffer(controlMemory.address(), (int)controlMemory.byteSize());
        this.nicPid = header.getLong(IpcFileDescriptor.PID_OFFSET, IpcMessages.ORDER);
        this.mode = kind(header.getInt(IpcFileDescriptor.MODE_OFFSET, IpcMessages.ORDER));
        this.planes = header.getInt(IpcFileDescriptor.PLANES_OFFSET, IpcMessages.ORDER);
        this.channel = new ClientCommandChannel(directory, controlMemory, answerMemory, added); // keepalives start
        this.command = channel.command;
        this.reply = channel.reply;
    }

    /**
     * Connects to the NIC serving {@code directory}, waiting up to {@code timeout} for one to start.
     *
     * @throws IllegalStateException when no NIC serves it, the NIC stopped, or it speaks another IPC version.
     */
    public static NicClient connect(final Path directory, final Duration timeout)
    {
        return NicDiscovery.connect(directory, timeout);
    }

    /**
     * What a liveness probe asks ({@code spraynic health}): is a NIC of this build serving the directory, its
     * heartbeat at most {@code maxHeartbeatAgeMillis} old?
     *
     * @param ipcDir                a NIC's IPC directory.
     * @param maxHeartbeatAgeMillis the oldest heartbeat taken for a live NIC.
     * @return null when one is, else one sentence saying why not.
     */
    public static String checkServed(final Path ipcDir, final long maxHeartbeatAgeMillis)
    {
        return NicDiscovery.checkServed(ipcDir, maxHeartbeatAgeMillis);
    }

    /** @return the transport of an ordinal read from shared memory, checked; null for a NIC that serves capture only. */
    private static NicConnection.Kind kind(final int ordinal)
    {
        if (ordinal == IpcFileDescriptor.MODE_CAPTURE_ONLY)
        {
            return null;
        }
        final NicConnection.Kind[] kinds = NicConnection.Kind.values();
        if (ordinal < 0 || ordinal >= kinds.length)
        {
            throw new IllegalStateException("the NIC's files name transport " + ordinal + ", which this client does not " +
                "know: is the control file corrupt, or of another SprayNIC build?");
        }
        return kinds[ordinal];
    }

    /** @return this client's id at the NIC. */
    public long clientId()
    {
        return channel.clientId();
    }

    /** @return the token the NIC gave this client, which every command carries (tests play a forger). */
    long token()
    {
        return channel.token();
    }


    /** @return the NIC process's id. */
    public long nicPid()
    {
        return nicPid;
    }

    /** @return the NIC's transport; null for a NIC in classify mode, which serves live capture only. */
    public NicConnection.Kind mode()
    {
        return mode;
    }

    /** @return the NIC's planes. */
    public int planes()
    {
        return planes;
    }

    /** @return the NIC's IPv4 address on {@code plane}: what a peer connects to. */
    public int localIpv4(final int plane)
    {
        return header.getInt(IpcFileDescriptor.LOCAL_IPV4_OFFSET + 4 * checkPlane(plane), IpcMessages.ORDER);
    }

    /**
     * @return the NIC's address on {@code plane}, of the family peers name it by there (since version 6: IPv6 on a
     * plane with an IPv6 address), or null when the plane has none.
     */
    public InetAddress localAddress(final int plane)
    {
        final byte[] ipv6 = new byte[16];
        header.getBytes(IpcFileDescriptor.LOCAL_IPV6_OFFSET + 16 * checkPlane(plane), ipv6);
        final int ipv4 = localIpv4(plane);
        final byte[] address = !Arrays.equals(ipv6, new byte[16]) ? ipv6 : 0 == ipv4 ? null :
            new byte[]{(byte)(ipv4 >>> 24), (byte)(ipv4 >>> 16), (byte)(ipv4 >>> 8), (byte)ipv4};
        try
        {
            return null == address ? null : InetAddress.getByAddress(address);
        }
        catch (final UnknownHostException ex)
        {
            throw new IllegalStateException(ex); // 4 or 16 bytes: never
        }
    }

    private int checkPlane(final int plane)
    {
        if (plane < 0 || plane >= Math.min(planes, IpcMessages.MAX_PLANES))
        {
            throw new IllegalArgumentException("plane " + plane + " is not one of the NIC's 0.." + (planes - 1));
        }
        return plane;
    }

    /** @return how long the NIC waits without a keepalive before it releases a client. */
    public long clientTimeoutMs()
    {
        return channel.clientTimeoutMs();
    }

    /** @return the IPC directory. */
    public Path directory()
    {
        return directory;
    }

    /** @return true once the NIC closed (one volatile read: the posting path checks it). */
    boolean isNicClosed()
    {
        return channel.isNicClosed();
    }

    /** @return true once the NIC closed or its heartbeat is older than {@link IpcFileDescriptor#NIC_LIVENESS_TIMEOUT_MS}. */
    public boolean isNicStopped()
    {
        return channel.isNicStopped();
    }

    /**
     * Registers a new region of shared memory: this client makes a memfd of {@code bytes}, seals it against resizing,
     * and sends it with REGISTER on the NIC's socket; the NIC checks the seals, maps it and registers it.
     *
     * @param bytes  size.
     * @param access {@code AccessFlags}.
     * @return the region, zeroed.
     */
    public synchronized ClientRegion register(final long bytes, final int access)
    {
        if (bytes <= 0)
        {
            register.wrap(command, 0);
            register.region(bytes, access);
            request(IpcMessages.REGISTER, IpcMessages.Register.LENGTH, CONTROL_TIMEOUT); // no memory to make: the NIC says why
            throw new IllegalStateException("the NIC accepted a region of " + bytes + " B");
        }
        final SealedMemory memory = SealedMemory.create("spraynic-mr", bytes);
        try
        {
            final IpcAnswers.RegionReady ready = registerMemory(memory.fd(), bytes, access);
            final ClientRegion region = new ClientRegion(ready.regionId(), ready.address(), bytes, ready.lkey(),
                ready.rkey(), ready.access(), memory);
            regions.add(region);
            return region;
        }
        catch (final RuntimeException ex)
        {
            memory.close();
            throw ex;
        }
    }

    /**
     * Sends REGISTER with {@code memoryFd} as the region's memory and waits for REGION_READY (in {@link #reply}); the
     * descriptor stays this caller's. Package-private so that tests can offer the NIC memory no honest client offers.
     */
    synchronized IpcAnswers.RegionReady registerMemory(final int memoryFd, final long bytes, final int access)
    {
        register.wrap(command, 0);
        register.region(bytes, access);
        request(IpcMessages.REGISTER, IpcMessages.Register.LENGTH, CONTROL_TIMEOUT, memoryFd);
        final IpcAnswers.RegionReady ready = regionReady.wrap(reply, 0);
        if (ready.regionLength() != bytes)
        {
            throw new IllegalStateException("the NIC answered REGISTER of " + bytes + " B with a region of " +
                ready.regionLength() + " B");
        }
        return ready;
    }

    /** Deregisters a region: its keys name nothing from now on, the NIC removes its file, and this view is closed. */
    public synchronized void deregister(final Region registered)
    {
        if (!(registered instanceof ClientRegion region))
        {
            throw new IllegalArgumentException("not a region of a NIC client: " + registered);
        }
        objectCommand.wrap(command, 0);
        objectCommand.object(region.id(), 0);
        try
        {
            request(IpcMessages.DEREGISTER, IpcMessages.ObjectCommand.LENGTH, CONTROL_TIMEOUT);
        }
        finally
        {
            regions.remove(region);
            region.unmap();
        }
    }

    /**
     * Opens a spray connection to a peer NIC through this client's NIC.
     *
     * @param peerIpv4 the peer's address on each plane.
     * @param timeout  how long ARP and the handshake may take.
     */
    public synchronized ClientConnection connect(final int[] peerIpv4, final Duration timeout)
    {
        if (peerIpv4.length > IpcMessages.MAX_PLANES)
        {
            throw new IllegalArgumentException("give one address per plane (at most " + IpcMessages.MAX_PLANES + ")");
        }
        final IpcMessages.Connect c = connectCommand();
        c.timeoutMs(millis(timeout)).planes(peerIpv4.length);
        for (int p = 0; p < peerIpv4.length; p++)
        {
            c.peer(p, peerIpv4[p]);
        }
        request(IpcMessages.CONNECT, IpcMessages.Connect.LENGTH, timeout.plus(CONTROL_TIMEOUT));
        return newConnection();
    }

    /**
     * {@link #connect(int[], Duration)} with the peer's addresses of either family (since version 6), as
     * {@code EmbeddedNic.connect(InetAddress[], Duration)} takes them: IPv6 on a plane where the NIC has an IPv6
     * address, IPv4 on the others (the NIC refuses another mix, BAD_VALUE).
     *
     * @param peers   the peer's address on each plane.
     * @param timeout how long neighbour resolution and the handshake may take.
     */
    public synchronized ClientConnection connect(final InetAddress[] peers, final Duration timeout)
    {
        if (peers.length > IpcMessages.MAX_PLANES)
        {
            throw new IllegalArgumentException("give one address per plane (at most " + IpcMessages.MAX_PLANES + ")");
        }
        final IpcMessages.Connect c = connectCommand();
        c.timeoutMs(millis(timeout)).planes(peers.length);
        for (int p = 0; p < peers.length; p++)
        {
            final byte[] bytes = peers[p].getAddress();
            if (bytes.length == 4)
            {
                c.peer(p, (bytes[0] & 0xFF) << 24 | (bytes[1] & 0xFF) << 16 | (bytes[2] & 0xFF) << 8 | (bytes[3] & 0xFF));
            }
            else
            {
                long high = 0;
                long low = 0;
                for (int i = 0; i < 8; i++)
                {
                    high = high << 8 | (bytes[i] & 0xFF);
                    low = low << 8 | (bytes[8 + i] & 0xFF);
                }
                c.peer(p, 0, high, low);
            }
        }
        request(IpcMessages.CONNECT, IpcMessages.Connect.LENGTH, timeout.plus(CONTROL_TIMEOUT));
        return newConnection();
    }

    /** @return CONNECT, ACCEPT or CREATE_QUEUE_PAIR over a zeroed command: no address of an earlier command stays. */
    private IpcMessages.Connect connectCommand()
    {
        command.setMemory(0, IpcMessages.Connect.LENGTH, (byte)0);
        return connect.wrap(command, 0);
    }

    /**
     * Takes the next spray connection a peer opened to the NIC (shared by every client of the NIC that accepts).
     *
     * @return the connection, or null when none came within {@code timeout}.
     */
    public synchronized ClientConnection accept(final Duration timeout)
    {
        connectCommand().timeoutMs(millis(timeout)).planes(0);
        try
        {
            request(IpcMessages.ACCEPT, IpcMessages.Connect.LENGTH, timeout.plus(CONTROL_TIMEOUT));
        }
        catch (final IllegalStateException ex)
        {
            if (ex.getMessage().contains("no peer connected within"))
            {
                return null;
            }
            throw ex;
        }
        return newConnection();
    }

    /**
     * Creates a RoCEv2 RC queue pair on a plane of the NIC; connect it with {@link ClientConnection#connect}.
     */
    public synchronized ClientConnection createQueuePair(final int plane)
    {
        connectCommand().timeoutMs(0).planes(plane);
        request(IpcMessages.CREATE_QUEUE_PAIR, IpcMessages.Connect.LENGTH, CONTROL_TIMEOUT);
        return newConnection();
    }

    private ClientConnection newConnection()
    {
        final IpcAnswers.ConnectionReady ready = connectionReady.wrap(reply, 0);
        final NicConnection.Kind kind = kind(ready.kind());
        final RocevEndpoint endpoint = kind == NicConnection.Kind.ROCEV2 ?
            new RocevEndpoint(ready.localId(), ready.psn(), ready.ipv4(), ready.mtu(), ready.ipv6High(), ready.ipv6Low()) : null;
        final long connectionId = ready.connectionId();
        final ConnectionRings rings;
        final SocketReply opened = openMemory(connectionId);
        try
        {
            rings = ConnectionRings.map(opened.fd, connectionId);
        }
        finally
        {
            UnixSockets.close(opened.fd);
        }
        final ClientConnection c = new ClientConnection(this, connectionId, kind, ready.localId(), ready.streams(),
            ready.plane(), endpoint, rings);
        connections.add(c);
        return c;
    }

    synchronized void connectQueuePair(final ClientConnection c, final RocevEndpoint remote, final Duration timeout)
    {
        connectQueuePair.wrap(command, 0);
        connectQueuePair.set(c.id(), remote.qpNumber(), remote.psn(), remote.ipv4(), remote.mtu(), millis(timeout),
            remote.ipv6High(), remote.ipv6Low());
        request(IpcMessages.CONNECT_QUEUE_PAIR, IpcMessages.ConnectQueuePair.LENGTH, timeout.plus(CONTROL_TIMEOUT));
    }

    synchronized DrainReport.ConnectionDrain closeConnection(final ClientConnection c, final Duration timeout)
    {
        connections.remove(c);
        objectCommand.wrap(command, 0);
        objectCommand.object(c.id(), millis(timeout));
        request(IpcMessages.CLOSE_CONNECTION, IpcMessages.ObjectCommand.LENGTH, timeout.plus(CONTROL_TIMEOUT));
        final IpcAnswers.ConnectionClosed closed = connectionClosed.wrap(reply, 0);
        return new DrainReport.ConnectionDrain(c.kind().name().toLowerCase() + " 0x" + Integer.toHexString(c.localId()) +
            " via NIC pid " + nicPid, closed.postedSends(), closed.postedReceives(), closed.waiting(), closed.idle());
    }

    /**
     * Starts a live capture of the NIC's frames (one NIC serves one at a time): each worker copies the frames
     * {@code filter} takes into a ring of {@code slots} records of up to {@code snapLength} bytes (more of shorter
     * frames), dropping (and counting) those that find its ring full, until {@link ClientCapture#stop},
     * {@code duration}, or this client goes.
     *
     * @throws NicRefusedException when the NIC refuses (a value out of range, capture not allowed, one running).
     * @throws IllegalArgumentException when {@code slots} is not a power of two in its range.
     */
    public ClientCapture startCapture(final CaptureFilter filter, final Duration duration, final int snapLength,
        final int slots)
    {
        return startCapture(filter, duration, snapLength, slots, 1);
    }

    /**
     * As {@link #startCapture(CaptureFilter, Duration, int, int)}, each worker writing one frame in {@code sample} of
     * those {@code filter} takes (the 1st, the (N+1)th, ...; 1: every frame).
     */
    public ClientCapture startCapture(final CaptureFilter filter, final Duration duration, final int snapLength,
        final int slots, final int sample)
    {
        if (slots < CaptureRingLayout.MIN_SLOTS || slots > CaptureRingLayout.MAX_SLOTS || Integer.bitCount(slots) != 1)
        {
            throw new IllegalArgumentException("ring slots must be a power of two in " + CaptureRingLayout.MIN_SLOTS + ".." +
                CaptureRingLayout.MAX_SLOTS + ", not " + slots);
        }
        return startCaptureRing(filter, duration, snapLength, CaptureRingLayout.ringBytes(slots, snapLength), sample);
    }

    /**
     * As {@link #startCapture(CaptureFilter, Duration, int, int, int)}, each worker's ring {@code ringBytes} bytes of
     * records however long its frames ({@link CaptureRingLayout#defaultRingBytes} unless told otherwise), which the
     * NIC checks ({@link CaptureRingLayout#ringBytesProblem}).
     */
    public synchronized ClientCapture startCaptureRing(final CaptureFilter filter, final Duration duration,
        final int snapLength, final long ringBytes, final int sample)
    {
        startCapture.wrap(command, 0);
        startCapture.set((int)Math.min(Integer.MAX_VALUE, Math.max(0, duration.toMillis())), snapLength,
            filter.directions(), filter.ports(), filter.queues(), filter.kind().ordinal(), filter.udpDstPort(), filter.host(),
            filter.hasHost(), sample, ringBytes);
        request(IpcMessages.START_CAPTURE, IpcMessages.StartCapture.LENGTH, CONTROL_TIMEOUT);
        final long captureId = captureReady.wrap(reply, 0).captureId();
        final SocketReply opened = openMemory(captureId);
        try
        {
            return ClientCapture.map(this, captureId, filter, opened.fd, ok.wrap(opened.answer, 0).value());
        }
        finally
        {
            UnixSockets.close(opened.fd);
        }
    }

    /** Sends the START_CAPTURE in {@code fields} as it is, whatever it holds (tests play a malformed client). */
    synchronized void startCaptureRaw(final java.util.function.Consumer<IpcMessages.StartCapture> fields)
    {
        startCaptureRaw(fields, IpcMessages.StartCapture.LENGTH);
    }

    /** As {@link #startCaptureRaw(java.util.function.Consumer)}, the command {@code length} bytes long (an older client's). */
    synchronized void startCaptureRaw(final java.util.function.Consumer<IpcMessages.StartCapture> fields, final int length)
    {
        fields.accept(startCapture.wrap(command, 0));
        request(IpcMessages.START_CAPTURE, length, CONTROL_TIMEOUT);
    }

    synchronized void stopCapture(final long captureId)
    {
        objectCommand.wrap(command, 0);
        objectCommand.object(captureId, 0);
        request(IpcMessages.STOP_CAPTURE, IpcMessages.ObjectCommand.LENGTH, CONTROL_TIMEOUT);
    }

    private static int millis(final Duration timeout)
    {
        return (int)Math.min(IpcConductor.MAX_TIMEOUT_MS, Math.max(0, timeout.toMillis()));
    }

    /**
     * Sends the command in {@link #command} and waits for its answer, left in {@link #reply}.
     *
     * @return the OK's value, or 0 for other answers.
     */
    private synchronized long request(final int type, final int length, final Duration timeout)
    {
        return request(type, length, timeout, -1);
    }

    private synchronized long request(final int type, final int length, final Duration timeout, final int memoryFd)
    {
        if (closed)
        {
            throw new IllegalStateException("this NIC client is closed");
        }
        return channel.send(type, length, timeout, memoryFd);
    }

    /**
     * OPEN_MEMORY on the NIC's socket: the memory of connection or capture {@code objectId}, whose descriptor the
     * caller maps and closes.
     *
     * @throws NicRefusedException when the NIC refuses.
     */
    synchronized SocketReply openMemory(final long objectId)
    {
        if (closed)
        {
            throw new IllegalStateException("this NIC client is closed");
        }
        return channel.openMemory(objectId);
    }

    /** Stops the keepalives, as a process that hangs would (tests). */
    void stopKeepalives()
    {
        channel.stopKeepalives();
    }

    /**
     * Leaves the NIC: it closes this client's connections and frees its regions (also when the NIC already
     * stopped, this process's views are released).
     */
    public void close()
    {
        synchronized (this)
        {
            if (closed)
            {
                return;
            }
            try
            {
                if (!isNicStopped())
                {
                    request(IpcMessages.CLOSE_CLIENT, IpcMessages.Header.LENGTH, CONTROL_TIMEOUT);
                }
            }
            catch (final IllegalStateException ex)
            {
                System.err.println("spraynic client: " + ex.getMessage());
            }
            finally
            {
                closed = true;
            }
        }
        channel.close();
        for (final ClientConnection c : connections)
        {
            c.unmap();
        }
        for (final ClientRegion r : regions)
        {
            r.unmap();
        }
        connections.clear();
        regions.clear();
        synchronized (this)
        {
            answerArena.close();
        }
        // the control memory stays mapped until collected: a connection still posting reads its heartbeat
    }
}
