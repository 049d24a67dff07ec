package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.nic.CaptureSource;
import io.spraynic.datapath.nic.EmbeddedNic;
import io.spraynic.datapath.telemetry.CountersFile;
import org.agrona.MutableDirectBuffer;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.SystemEpochClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.broadcast.BroadcastTransmitter;
import org.agrona.concurrent.status.AtomicCounter;

import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.Consumer;

/**
 * Serves an {@link EmbeddedNic} to applications in other processes through shared memory (as Aeron's driver
 * conductor serves its clients through the CnC file), every piece of it a memfd sealed against resizing and handed
 * over the NIC's socket ({@link CommandSocket}, {@link SocketCommands}; docs/IPC.md I12), so that no process can
 * truncate memory under the NIC: clients take the control memory with HELLO and write commands into its to-NIC ring
 * ({@link IpcFileDescriptor}, {@link IpcMessages}); ADD_CLIENT gives each its own answer ring; each region a client
 * registers is a sealed memfd of the client's ({@link RegionCommands}); each connection has sealed rings
 * ({@link ConnectionRings}, handed over with OPEN_MEMORY) through which the client posts work requests and takes
 * completions. The directory holds only the socket and {@code nic.ctl}, an announcement of the version that the NIC
 * writes once and never maps. The conductor is not on the request path: the worker that owns a connection reads its
 * request ring in place and writes its completion rings ({@link ClientRequestRing}).
 * <p>
 * The conductor is one Agrona {@link Agent} on its own thread, never on a worker: each duty cycle it beats the
 * heartbeat, takes commands (from the command ring and, with their memory, from the socket; regions and connections
 * are handled by {@link RegionCommands} and {@link ConnectionCommands}), drops clients whose connection rings the workers found broken, and times out clients
 * that stopped sending keepalives (a client process that died): their connections are closed, their regions deregistered and their memory unmapped. Control
 * actions that wait on the NIC (register, connect, accept, close) run on a separate control thread pool and
 * hand their result back to the conductor, so one slow handshake never stalls another client's traffic.
 * <p>
 * Every process that maps the NIC's memory is untrusted. Ring records are read by an
 * {@link UntrustedRingReader} (each header checked, each record copied before use); every command field is checked
 * before use; a command must carry the token the NIC gave its client, and may name only that client's objects; a
 * corrupt command ring is reset (its epoch tells waiting clients), a claim left uncommitted by a dead producer is
 * unblocked; a client whose own rings are corrupt is dropped (everything it held released) while the others carry
 * on; and any unexpected exception is caught per client and per record, counted by reason, logged with rate
 * limiting, and costs at most the client it came from. Nothing a client writes stops the duty cycle.
 */
public final class IpcConductor implements Agent, AutoCloseable
{
    /** Default time without a keepalive after which a client is taken for dead. */
    public static final Duration DEFAULT_CLIENT_TIMEOUT = Duration.ofSeconds(5);
    /** Largest region a client may register. */
    public static final long MAX_REGION_BYTES = 1L << 36;
    /** Longest a CONNECT, ACCEPT or close may ask the NIC to wait. */
    public static final int MAX_TIMEOUT_MS = 120_000;
    /** Control actions (register, connect, accept, close) in progress at once, over every client. */
    public static final int MAX_CONTROL_ACTIONS = 32;
    /** Longest a claim on the command ring may stay uncommitted before the conductor unblocks it (a dead producer). */
    public static final long MAX_UNBLOCK_TIMEOUT_MS = 1_000;
    private static final int CHECK_INTERVAL_MS = 50;
    private static final long LOG_INTERVAL_MS = 10_000;

    /**
     * What one NIC grants its clients; each refusal is answered with {@link IpcMessages#ERR_LIMIT} and counted.
     *
     * @param maxClients              clients connected at once.
     * @param maxRegionsPerClient     regions one client holds at once (registrations in progress included).
     * @param maxConnectionsPerClient connections and queue pairs one client holds at once (in progress included).
     * @param capture                 whether a client may start a live capture of every frame (one at a time): the
     *                                capture sees every tenant's traffic, so a NIC whose clients must not see each
     *                                other's refuses it.
     */
    public record Limits(int maxClients, int maxRegionsPerClient, int maxConnectionsPerClient, boolean capture)
    {
        /** 64 clients, 256 regions and 64 connections per client, live capture allowed. */
        public static final Limits DEFAULT = new Limits(64, 256, 64, true);

        /** Live capture allowed. */
        public Limits(final int maxClients, final int maxRegionsPerClient, final int maxConnectionsPerClient)
        {
            this(maxClients, maxRegionsPerClient, maxConnectionsPerClient, true);
        }

        public Limits
        {
            if (maxClients < 1 || maxRegionsPerClient < 1 || maxConnectionsPerClient < 1)
            {
                throw new IllegalArgumentException("IPC limits must be at least 1: clients " + maxClients +
                    ", regions per client " + maxRegionsPerClient + ", connections per client " + maxConnectionsPerClient);
            }
        }
    }

    private final EmbeddedNic nic; // null when serving live capture only (startCaptureOnly)
    private final Path directory;
    private final long clientTimeoutMs;
    private final long unblockTimeoutMs;
    private final Limits limits;
    private final EpochClock clock = SystemEpochClock.INSTANCE;
    private final SealedMemory controlMemory;
    private final UnsafeBuffer header;
    private final CommandRing commandRing;
    private final ControlActions control;
    private final BroadcastTransmitter toClients;
    final UnsafeBuffer response = new UnsafeBuffer(new byte[1024]);
    private final Long2ObjectHashMap<IpcClient> clients = new Long2ObjectHashMap<>();
    /** Connections whose rings the workers read; a client that broke one is dropped (conductor thread). */
    final ArrayList<ServedConnection> served = new ArrayList<>();
    private final ArrayList<IpcClient> drops = new ArrayList<>();
    private final IpcMessages.Header commandHeader = new IpcMessages.Header();
    private final IpcMessages.AddClient addClient = new IpcMessages.AddClient();
    private final SocketCommands socketCommands;
    private final IpcMessages.Register register = new IpcMessages.Register();
    private final IpcMessages.ObjectCommand objectCommand = new IpcMessages.ObjectCommand();
    private final IpcMessages.Connect connect = new IpcMessages.Connect();
    private final IpcMessages.ConnectQueuePair connectQueuePair = new IpcMessages.ConnectQueuePair();
    private final IpcMessages.StartCapture startCapture = new IpcMessages.StartCapture();
    private final IpcAnswers.Ok ok = new IpcAnswers.Ok();
    private final IpcAnswers.Error error = new IpcAnswers.Error();
    private final UntrustedRingReader.Handler commandHandler = this::onCommand;
    private final CommandSocket.Handler socketHandler = this::onSocketCommand;
    private final CommandSocket socket;
    private final RegionCommands regionCommands;
    private final ConnectionCommands connectionCommands;
    private final IpcCaptures captures;
    final IpcCounters counters;
    private long nextObjectId = 1;
    /** True while a HELLO, ADD_CLIENT or OPEN_MEMORY of the socket is handled: its answers go back on the socket. */
    private boolean socketExchange;
    private long nextCheckMs;
    private long nowMs;
    private AgentRunner runner;
    private volatile boolean closed;

    private IpcConductor(final EmbeddedNic nic, final CaptureSource source, final Path directory,
        final CountersFile countersFile, final Duration clientTimeout, final Limits limits, final IpcAccess access)
    {
        this.nic = nic;
        this.directory = directory;
        this.clientTimeoutMs = clientTimeout.toMillis();
        this.unblockTimeoutMs = Math.max(100, Math.min(MAX_UNBLOCK_TIMEOUT_MS, clientTimeoutMs / 2));
        this.limits = limits;
        // sealed memory, handed to each client on HELLO: no process can truncate it under the conductor
        this.controlMemory = SealedMemory.create("spraynic-ctl", IpcFileDescriptor.fileLength());
        this.header = new UnsafeBuffer(controlMemory.memory().address(), IpcFileDescriptor.fileLength());
        final long now = clock.time();
        header.putInt(IpcFileDescriptor.MAGIC_OFFSET, IpcFileDescriptor.MAGIC, IpcMessages.ORDER);
        header.putLong(IpcFileDescriptor.PID_OFFSET, ProcessHandle.current().pid(), IpcMessages.ORDER);
        header.putLong(IpcFileDescriptor.START_TIME_OFFSET, now, IpcMessages.ORDER);
        header.putLong(IpcFileDescriptor.HEARTBEAT_OFFSET, now, IpcMessages.ORDER);
        header.putLong(IpcFileDescriptor.CLIENT_TIMEOUT_OFFSET, clientTimeoutMs, IpcMessages.ORDER);
        header.putInt(IpcFileDescriptor.TO_NIC_LENGTH_OFFSET, IpcFileDescriptor.toNicLength(), IpcMessages.ORDER);
        header.putInt(IpcFileDescriptor.TO_CLIENTS_LENGTH_OFFSET, IpcFileDescriptor.toClientsLength(), IpcMessages.ORDER);
        header.putInt(IpcFileDescriptor.MODE_OFFSET, null == nic ? IpcFileDescriptor.MODE_CAPTURE_ONLY :
            nic.mode().ordinal(), IpcMessages.ORDER);
        header.putInt(IpcFileDescriptor.PLANES_OFFSET, source.planes(), IpcMessages.ORDER);
        for (int p = 0; null != nic && p < Math.min(nic.planes(), IpcMessages.MAX_PLANES); p++)
        {
            header.putInt(IpcFileDescriptor.LOCAL_IPV4_OFFSET + 4 * p, nic.localIpv4(p), IpcMessages.ORDER);
            header.putLong(IpcFileDescriptor.LOCAL_IPV6_OFFSET + 16 * p, nic.localIpv6High(p), ByteOrder.BIG_ENDIAN);
            header.putLong(IpcFileDescriptor.LOCAL_IPV6_OFFSET + 16 * p + 8, nic.localIpv6Low(p), ByteOrder.BIG_ENDIAN);
        }
        this.toClients = new BroadcastTransmitter(new UnsafeBuffer(header,
            IpcFileDescriptor.HEADER_LENGTH + IpcFileDescriptor.toNicLength(), IpcFileDescriptor.toClientsLength()));
        this.counters = new IpcCounters(countersFile);
        this.commandRing = new CommandRing(header, counters, unblockTimeoutMs, commandHandler);
        this.control = new ControlActions(this, counters);
        this.captures = new IpcCaptures(this, source, limits.capture());
        this.regionCommands = new RegionCommands(this, nic, counters, limits);
        this.connectionCommands = new ConnectionCommands(this, nic, counters, limits);
        this.socketCommands = new SocketCommands(this, counters, controlMemory, clientTimeoutMs);
        this.socket = CommandSocket.open(directory, counters, access);
        header.putIntRelease(IpcFileDescriptor.VERSION_OFFSET, IpcFileDescriptor.VERSION);
        // the announcement: this header as a plain file, written once and never mapped, so that a client of any version
        // reads this NIC's version (and refuses at once when it is not its own) before it asks for anything
        final byte[] announcement = new byte[IpcFileDescriptor.HEADER_LENGTH];
        header.getBytes(0, announcement);
        new UnsafeBuffer(announcement).putLong(IpcFileDescriptor.HEARTBEAT_OFFSET, 0, IpcMessages.ORDER);
        final Path announced = directory.resolve(IpcFileDescriptor.CONTROL_FILE);
        IpcFiles.createWritten(announced, announcement);
        try
        {
            access.apply(announced, access.announcementMode()); // 0600 as created; 0640 of the group with one
        }
        catch (final java.io.IOException ex)
        {
            throw new IllegalStateException("cannot set the mode of " + announced + ": " + ex.getMessage(), ex);
        }
    }

    /**
     * Serves {@code nic} in {@code directory} on a thread of its own.
     *
     * @param nic           the NIC; the caller closes it after this conductor.
     * @param directory     created (0700) if missing; refused when another user owns it or its group or others may
     *                      enter it, or while another live NIC serves it; cleaned of a dead one's files.
     * @param counters      where the conductor's counters go (the NIC's counters file).
     * @param clientTimeout time without a keepalive after which a client is released.
     * @param limits        what clients may hold.
     * @param idleStrategy  how the conductor thread idles.
     * @return the running conductor.
     */
    public static IpcConductor start(final EmbeddedNic nic, final Path directory, final CountersFile counters,
        final Duration clientTimeout, final Limits limits, final IdleStrategy idleStrategy)
    {
        return start(nic, nic, directory, counters, clientTimeout, limits, IpcAccess.OWNER_ONLY, idleStrategy);
    }

    /**
     * {@link #start(EmbeddedNic, Path, CountersFile, Duration, Limits, IdleStrategy)} for the users {@code access}
     * names: with a group, the directory is 0750, the announcement 0640 and the socket 0660, all of that group, and a
     * connection from a peer that is neither this user, root nor of the group is refused (I10.10).
     */
    public static IpcConductor start(final EmbeddedNic nic, final Path directory, final CountersFile counters,
        final Duration clientTimeout, final Limits limits, final IpcAccess access, final IdleStrategy idleStrategy)
    {
        return start(nic, nic, directory, counters, clientTimeout, limits, access, idleStrategy);
    }

    /**
     * Serves live capture only ({@code spraynic capture}) of a NIC that serves no connections (classify mode): clients
     * connect, keep alive and capture as from any NIC; every other command is refused with
     * {@link IpcMessages#ERR_NOT_PERMITTED}. Parameters as {@link #start(EmbeddedNic, Path, CountersFile, Duration,
     * Limits, IdleStrategy)}.
     */
    public static IpcConductor startCaptureOnly(final CaptureSource source, final Path directory,
        final CountersFile counters, final Duration clientTimeout, final Limits limits, final IpcAccess access,
        final IdleStrategy idleStrategy)
    {
        return start(null, source, directory, counters, clientTimeout, limits, access, idleStrategy);
    }

    private static IpcConductor start(final EmbeddedNic nic, final CaptureSource source, final Path directory,
        final CountersFile counters, final Duration clientTimeout, final Limits limits, final IpcAccess access,
        final IdleStrategy idleStrategy)
    {
        prepare(directory, access);
        final IpcConductor conductor = new IpcConductor(nic, source, directory, counters, clientTimeout, limits, access);
        conductor.runner = new AgentRunner(idleStrategy, throwable ->
        {
            // the duty cycle catches per client and per record: this is the last resort, rate-limited like the rest
            conductor.counters.unexpected(conductor.counters.errors, "duty cycle", throwable, System.currentTimeMillis(),
                LOG_INTERVAL_MS);
        }, null, conductor);
        AgentRunner.startOnThread(conductor.runner);
        return conductor;
    }

    /** Serves with the default {@link Limits}. */
    public static IpcConductor start(final EmbeddedNic nic, final Path directory, final CountersFile counters,
        final Duration clientTimeout, final IdleStrategy idleStrategy)
    {
        return start(nic, directory, counters, clientTimeout, Limits.DEFAULT, idleStrategy);
    }

    /** Serves with the default client timeout and {@link #newIdleStrategy()}. */
    public static IpcConductor start(final EmbeddedNic nic, final Path directory, final CountersFile counters)
    {
        return start(nic, directory, counters, DEFAULT_CLIENT_TIMEOUT, newIdleStrategy());
    }

    /**
     * @return how a conductor idles: it spins briefly, then parks up to 1 ms. It serves commands (register, connect,
     * keepalives) and is on no request's or completion's path (the workers read and write the connection rings), so
     * it needs no core of its own.
     */
    public static IdleStrategy newIdleStrategy()
    {
        return new BackoffIdleStrategy(100, 10, 1_000, 1_000_000);
    }

    private static void prepare(final Path directory, final IpcAccess access)
    {
        IpcFiles.prepareDirectory(directory, access);
        final Path control = directory.resolve(IpcFileDescriptor.CONTROL_FILE);
        if (Files.exists(control, LinkOption.NOFOLLOW_LINKS))
        {
            final String live = Files.isRegularFile(control, LinkOption.NOFOLLOW_LINKS) ?
                NicDiscovery.describeLiveNic(directory) : null;
            if (null != live)
            {
                throw new IllegalStateException("another NIC serves " + directory + " (" + live +
                    "): stop it or give this one another --ipc-dir");
            }
        }
        IpcFiles.removeNicFiles(directory);
    }

    /** @return the directory served. */
    public Path directory()
    {
        return directory;
    }

    /** @return a new id for a region or connection (they share one counter; never 0). */
    long nextObjectId()
    {
        return nextObjectId++;
    }

    /** @return connections open on the NIC's socket now (tests). */
    int socketConnections()
    {
        return socket.connections();
    }

    /** @return what clients may hold. */
    public Limits limits()
    {
        return limits;
    }

    public String roleName()
    {
        return "spraynic-ipc";
    }

    public int doWork()
    {
        final long now = clock.time();
        nowMs = now;
        header.putLongRelease(IpcFileDescriptor.HEARTBEAT_OFFSET, now);
        int work = commandRing.poll(now);
        work += socket.poll(now, socketHandler);
        work += control.runResults(now);
        // the workers read the connections' rings; a client that broke one is dropped here
        final ArrayList<ServedConnection> served = this.served;
        for (int i = 0, n = served.size(); i < n; i++)
        {
            final ServedConnection connection = served.get(i);
            final int broken = connection.requests.broken();
            if (0 != broken)
            {
                dropLater(connection.client, broken == ClientRequestRing.CORRUPT_REQUESTS ? counters.droppedCorruptRing :
                    counters.droppedBadAnswerRing, connection.requests.brokenReason() + " (connection " + connection.id + ")");
                work++;
            }
        }
        work += dropPending();
        if (now >= nextCheckMs)
        {
            nextCheckMs = now + CHECK_INTERVAL_MS;
            try
            {
                work += timeOutClients(now);
                work += captures.endExpired(now);
            }
            catch (final RuntimeException ex)
            {
                counters.unexpected(counters.unexpectedTimeOuts, "client time-outs", ex, now, LOG_INTERVAL_MS);
            }
        }
        return work;
    }

    // ---------------------------------------------------------------- commands (control path)

    /** One command record, copied out of the command ring; never throws (a client that makes it throw is dropped). */
    private boolean onCommand(final int type, final MutableDirectBuffer buffer, final int length)
    {
        onCommand(type, buffer, length, -1);
        return true;
    }

    /** One command of the socket: REGISTER with its memfd, or a HELLO, ADD_CLIENT or OPEN_MEMORY answered there. */
    private void onSocketCommand(final int type, final MutableDirectBuffer buffer, final int length, final int memoryFd)
    {
        socketExchange = type != IpcMessages.REGISTER;
        try
        {
            onCommand(type, buffer, length, memoryFd);
        }
        finally
        {
            socketExchange = false;
        }
    }

    /**
     * One command, copied out of the command ring ({@code memoryFd} -1) or received on the socket with the memfd it
     * carries (closed by the socket after this returns: what is kept is mapped); never throws.
     */
    private void onCommand(final int type, final MutableDirectBuffer buffer, final int length, final int memoryFd)
    {
        counters.commands.incrementRelease();
        if (length < IpcMessages.Header.LENGTH)
        {
            counters.commandsMalformed.incrementRelease(); // no ids to answer to
            counters.commandErrors.incrementRelease();
            return;
        }
        commandHeader.wrap(buffer, 0);
        final long clientId = commandHeader.clientId();
        final long correlationId = commandHeader.correlationId();
        IpcClient client = null;
        try
        {
            if (type == IpcMessages.ADD_CLIENT || type == IpcMessages.HELLO)
            {
                if (!socketExchange)
                {
                    counters.commandsMalformed.incrementRelease();
                    broadcastError(0, correlationId, type, IpcMessages.ERR_MALFORMED, IpcMessages.name(type) +
                        " goes on " + CommandSocket.SOCKET_FILE + " since IPC version 5, not on the command ring");
                }
                else if (type == IpcMessages.HELLO)
                {
                    socketCommands.onHello(correlationId);
                }
                else
                {
                    socketCommands.onAddClient(addClient.wrap(buffer, 0), correlationId, length);
                }
                return;
            }
            client = clients.get(clientId);
            if (null == client)
            {
                counters.commandsUnknownClient.incrementRelease();
                if (type != IpcMessages.KEEPALIVE)
                {
                    broadcastError(clientId, correlationId, type, IpcMessages.ERR_NOT_CONNECTED, "client " + clientId +
                        " is not connected to this NIC (it timed out, closed or was dropped): connect again");
                }
                return;
            }
            if (commandHeader.token() != client.token)
            {
                // someone writes in another client's name: no answer (that would let it flood the victim's answer ring)
                counters.commandsBadToken.incrementRelease();
                counters.log("dropped commands that name client " + clientId + " without its token", null, nowMs,
                    LOG_INTERVAL_MS);
                return;
            }
            client.lastSeenMs = nowMs;
            final int fixed = IpcMessages.fixedLength(type);
            if (fixed < 0 || length < fixed)
            {
                counters.commandsMalformed.incrementRelease();
                respondError(client, correlationId, type, IpcMessages.ERR_MALFORMED, fixed < 0 ?
                    "unknown command type " + type : IpcMessages.name(type) + " of " + length +
                    " B is shorter than its " + fixed + " B: is the client of another version?");
                return;
            }
            if (null == nic && type != IpcMessages.KEEPALIVE && type != IpcMessages.CLOSE_CLIENT &&
                type != IpcMessages.START_CAPTURE && type != IpcMessages.STOP_CAPTURE && type != IpcMessages.OPEN_MEMORY)
            {
                respondError(client, correlationId, type, IpcMessages.ERR_NOT_PERMITTED, "this NIC runs in classify mode: " +
                    "it serves live capture (spraynic capture) only, no memory or connections");
                return;
            }
            switch (type)
            {
                case IpcMessages.KEEPALIVE ->
                {
                }
                case IpcMessages.CLOSE_CLIENT ->
                {
                    respondOk(client, correlationId, 0); // before its answer ring goes
                    release(client, counters.clientsClosed, null);
                }
                case IpcMessages.REGISTER -> regionCommands.onRegister(client, register.wrap(buffer, 0), memoryFd);
                case IpcMessages.DEREGISTER -> regionCommands.onDeregister(client, objectCommand.wrap(buffer, 0));
                case IpcMessages.CONNECT, IpcMessages.ACCEPT, IpcMessages.CREATE_QUEUE_PAIR ->
                    connectionCommands.onConnect(client, type, connect.wrap(buffer, 0));
                case IpcMessages.CONNECT_QUEUE_PAIR -> connectionCommands.onConnectQueuePair(client, connectQueuePair.wrap(buffer, 0));
                case IpcMessages.CLOSE_CONNECTION -> connectionCommands.onCloseConnection(client, objectCommand.wrap(buffer, 0));
                case IpcMessages.START_CAPTURE -> captures.onStart(client, startCapture.wrap(buffer, 0));
                case IpcMessages.STOP_CAPTURE -> captures.onStop(client, objectCommand.wrap(buffer, 0));
                case IpcMessages.OPEN_MEMORY ->
                {
                    if (socketExchange)
                    {
                        socketCommands.onOpenMemory(client, objectCommand.wrap(buffer, 0));
                    }
                    else
                    {
                        counters.commandsMalformed.incrementRelease();
                        respondError(client, correlationId, type, IpcMessages.ERR_MALFORMED, "OPEN_MEMORY goes on " +
                            CommandSocket.SOCKET_FILE + ", which answers it with the memory");
                    }
                }
                default -> respondError(client, correlationId, type, IpcMessages.ERR_MALFORMED, "unknown command type " + type);
            }
        }
        catch (final RuntimeException ex)
        {
            counters.unexpected(counters.unexpectedCommands, "command " + IpcMessages.name(type), ex, nowMs,
                LOG_INTERVAL_MS);
            if (null != client && !client.released)
            {
                drop(client, counters.droppedUnexpected, "an unexpected error in its " + IpcMessages.name(type));
            }
        }
    }

    /** @return clients served now. */
    int clientCount()
    {
        return clients.size();
    }

    boolean hasClient(final long clientId)
    {
        return clients.containsKey(clientId);
    }

    void addClient(final IpcClient client)
    {
        clients.put(client.id, client);
        counters.clients.incrementRelease();
    }

    /** A client whose ADD_CLIENT answer could not be sent: it goes again, counted as closed. */
    void releaseUnanswered(final IpcClient client)
    {
        release(client, counters.clientsClosed, null);
    }

    /** @return now, as this duty cycle read the clock. */
    long nowMs()
    {
        return nowMs;
    }

    /** @return the memory of {@code client}'s running capture {@code captureId} not yet handed over, else null. */
    SealedMemory captureMemory(final IpcClient client, final long captureId)
    {
        return captures.memoryOf(client, captureId);
    }

    void refuseUnknownObject(final IpcClient client, final long correlationId, final int type, final String what,
        final long objectId)
    {
        for (final IpcClient other : clients.values())
        {
            if (other != client && (other.regions.containsKey(objectId) || other.connections.containsKey(objectId)))
            {
                counters.commandsForeignObject.incrementRelease();
                break;
            }
        }
        respondError(client, correlationId, type, IpcMessages.ERR_UNKNOWN_OBJECT, "client " + client.id + " has no " +
            what + " " + objectId);
    }

    // ---------------------------------------------------------------- releasing clients

    private int timeOutClients(final long now)
    {
        int released = 0;
        List<IpcClient> dead = null;
        for (final IpcClient client : clients.values())
        {
            if (now - client.lastSeenMs > clientTimeoutMs)
            {
                if (null == dead)
                {
                    dead = new ArrayList<>();
                }
                dead.add(client);
            }
        }
        if (null != dead)
        {
            for (final IpcClient client : dead)
            {
                release(client, counters.clientsTimedOut, "sent no keepalive for " + clientTimeoutMs + " ms");
                released++;
            }
        }
        return released;
    }

    /** Drops a client once the loop over served connections is done with the list it would change. */
    private void dropLater(final IpcClient client, final AtomicCounter reason, final String why)
    {
        if (null == client.dropReason)
        {
            client.dropReason = reason;
            client.dropWhy = why;
            drops.add(client);
        }
    }

    private int dropPending()
    {
        final int n = drops.size();
        for (int i = 0; i < n; i++)
        {
            final IpcClient client = drops.get(i);
            drop(client, client.dropReason, client.dropWhy);
        }
        drops.clear();
        return n;
    }

    /** Drops a client that broke the protocol: everything it held is released; the others carry on. */
    private void drop(final IpcClient client, final AtomicCounter reason, final String why)
    {
        if (!client.released)
        {
            release(client, reason, why);
        }
    }

    /**
     * Forgets a client: stops watching its connections, unmaps its answer ring, then closes its connections, frees
     * its regions and removes its files on a control thread.
     *
     * @param reason counted once.
     * @param why    logged (rate-limited) when not null.
     */
    private void release(final IpcClient client, final AtomicCounter reason, final String why)
    {
        if (client.released)
        {
            return;
        }
        client.released = true;
        captures.onReleased(client);
        clients.remove(client.id);
        counters.clients.decrementRelease();
        reason.incrementRelease();
        if (null != why)
        {
            counters.log("released client " + client.id + " (pid " + client.pid + "), which " + why + ", with its " +
                client.connections.size() + " connection(s) and " + client.regions.size() + " region(s)", null, nowMs,
                LOG_INTERVAL_MS);
        }
        final List<ServedConnection> connections = new ArrayList<>(client.connections.values());
        final List<IpcClient.Region> regions = new ArrayList<>(client.regions.values());
        for (final ServedConnection connection : connections)
        {
            served.remove(connection);
        }
        client.connections.clear();
        client.regions.clear();
        client.answerMemory.close();
        // a dead or dropped client's peers get CLOSE at once; a closing client already waited for its own completions
        final Duration drain = Duration.ofMillis(reason == counters.clientsClosed ? 100 : 0);
        releaseLater(() ->
        {
            releaseAll(connections, regions, drain);
            try
            {
                if (null != nic)
                {
                    nic.releaseProtectionDomain(client.domain()); // regions still being made keep it until the next client
                }
            }
            catch (final RuntimeException ex)
            {
                System.err.println("spraynic ipc: releasing client " + client.id + "'s domain failed: " + ex.getMessage());
            }
        });
    }

    /** Control thread: closes connections, then frees regions; a failure of one is told and the rest go on. */
    private void releaseAll(final Iterable<ServedConnection> connections, final Iterable<IpcClient.Region> regions,
        final Duration drain)
    {
        for (final ServedConnection connection : connections)
        {
            try
            {
                connectionCommands.releaseConnection(connection, drain);
            }
            catch (final RuntimeException ex)
            {
                System.err.println("spraynic ipc: closing connection " + connection.id + " failed: " + ex.getMessage());
            }
        }
        for (final IpcClient.Region region : regions)
        {
            try
            {
                regionCommands.releaseRegion(region);
            }
            catch (final RuntimeException ex)
            {
                System.err.println("spraynic ipc: freeing region " + region.id() + " failed: " + ex.getMessage());
            }
        }
    }

    /** Frees what a client no longer holds: on a control thread, or here once the conductor is closing. */
    void releaseLater(final Runnable release)
    {
        control.releaseLater(release);
    }

    /** As {@link ControlActions#submit}. */
    <T> void submit(final IpcClient client, final long correlationId, final int type, final Callable<T> action,
        final Consumer<T> onDone, final Runnable settle)
    {
        control.submit(client, correlationId, type, action, onDone, settle);
    }

    // ---------------------------------------------------------------- answers

    void respondOk(final IpcClient client, final long correlationId, final long value)
    {
        ok.wrap(response, 0).value(value);
        ok.ids(client.id, correlationId);
        answer(client, IpcMessages.OK, IpcAnswers.Ok.LENGTH);
    }

    void respondError(final IpcClient client, final long correlationId, final int type, final int code,
        final String message)
    {
        counters.commandErrors.incrementRelease();
        final int length = error.wrap(response, 0).set(type, code, message);
        error.ids(client.id, correlationId);
        answer(client, IpcMessages.ERROR, length);
    }

    /**
     * An ERROR for a client without an answer ring (unknown, or refused at ADD_CLIENT): on the socket it came on, else
     * on the broadcast; no key, address or token.
     */
    void broadcastError(final long clientId, final long correlationId, final int type, final int code,
        final String message)
    {
        counters.commandErrors.incrementRelease();
        final int length = error.wrap(response, 0).set(type, code, message);
        error.ids(clientId, correlationId);
        if (socketExchange)
        {
            socket.reply(IpcMessages.ERROR, response, length, -1);
            return;
        }
        toClients.transmit(IpcMessages.ERROR, response, 0, length);
    }

    /** Writes the answer in {@link #response} into the client's own ring; a client whose ring is broken is dropped. */
    void answer(final IpcClient client, final int type, final int length)
    {
        if (socketExchange)
        {
            socket.reply(type, response, length, -1); // a refused OPEN_MEMORY waits on the socket
            return;
        }
        if (client.released)
        {
            return;
        }
        final boolean written;
        try
        {
            written = client.answers.write(type, response, 0, length);
        }
        catch (final RuntimeException ex)
        {
            drop(client, counters.droppedBadAnswerRing, "broke its answer ring (" + ex.getMessage() + ")");
            return;
        }
        if (!written)
        {
            counters.answersLost.incrementRelease(); // the client stopped reading its answers: only it waits in vain
        }
    }

    /** Sends the answer in {@link #response} on the socket the command came on, with {@code fd} as its descriptor. */
    boolean answerWithMemory(final int type, final int length, final int fd)
    {
        return socket.reply(type, response, length, fd);
    }

    /**
     * Stops serving: the conductor thread stops, every client's connections are closed and regions freed, and the
     * directory's files are removed (clients see the heartbeat stop and their calls fail). Close the NIC after.
     */
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        if (null != runner)
        {
            runner.close();
        }
        header.putLongRelease(IpcFileDescriptor.HEARTBEAT_OFFSET, 0); // clients know at once that nobody serves
        captures.close();
        final List<ServedConnection> connections = new ArrayList<>();
        final List<IpcClient.Region> regions = new ArrayList<>();
        for (final IpcClient client : clients.values())
        {
            client.released = true;
            connections.addAll(client.connections.values());
            regions.addAll(client.regions.values());
            client.answerMemory.close();
        }
        clients.clear();
        served.clear();
        control.close();
        releaseAll(connections, regions, Duration.ZERO);
        socket.close();
        counters.close();
        controlMemory.close();
        IpcFiles.removeNicFiles(directory);
    }
}
