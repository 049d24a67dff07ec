package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.nic.CaptureSource;
import io.spraynic.datapath.nic.EmbeddedNic;
import io.spraynic.datapath.telemetry.CountersFile;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.SystemEpochClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.broadcast.BroadcastTransmitter;

import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
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
 * heartbeat, takes commands (from the command ring and, with their memory, from the socket), drops clients whose
 * connection rings the workers found broken, and times out clients that stopped sending keepalives (a client process
 * that died): their connections are closed, their regions deregistered and their memory unmapped. Control actions
 * that wait on the NIC (register, connect, accept, close) run on a separate control thread pool ({@link ControlActions})
 * and hand their result back to the conductor, so one slow handshake never stalls another client's traffic.
 * <p>
 * By concern: {@link CommandDispatcher} checks every command at the boundary and hands it to its handler
 * ({@link SocketCommands}: HELLO, ADD_CLIENT, OPEN_MEMORY; {@link RegionCommands}; {@link ConnectionCommands};
 * {@link IpcCaptures}); {@link AnswerSender} answers; {@link ClientSessions} holds the clients, their liveness and
 * the release of what they held. This class makes them, runs the duty cycle and closes them.
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
    /**
     * Connections one client may hold without having collected their rings with OPEN_MEMORY, those being made for it
     * included: each holds a descriptor open in the NIC until it is collected, so that a client that never collects
     * holds at most this many (more are refused with {@link IpcMessages#ERR_LIMIT}, counted); one not collected within
     * the client timeout is closed (counted). An honest client collects each connection's rings at once.
     */
    public static final int MAX_UNCOLLECTED_CONNECTIONS = 8;
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
    private final CommandSocket socket;
    final IpcCounters counters;
    final ClientSessions sessions;
    final AnswerSender answers;
    final IpcCaptures captures;
    final RegionCommands regionCommands;
    final ConnectionCommands connectionCommands;
    private final CommandDispatcher commands;
    private long nextObjectId = 1;
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
        this.control = new ControlActions(this, counters);
        this.socket = CommandSocket.open(directory, counters, access);
        this.sessions = new ClientSessions(this, nic, counters, clientTimeoutMs);
        this.answers = new AnswerSender(counters, socket, toClients, sessions);
        this.captures = new IpcCaptures(this, answers, source, limits.capture());
        this.regionCommands = new RegionCommands(this, answers, nic, counters, limits);
        this.connectionCommands = new ConnectionCommands(this, answers, sessions, nic, counters, limits);
        final SocketCommands socketCommands = new SocketCommands(this, answers, sessions, counters, controlMemory,
            clientTimeoutMs);
        this.commands = new CommandDispatcher(this, null == nic, counters, sessions, answers, socketCommands,
            regionCommands, connectionCommands, captures);
        this.commandRing = new CommandRing(header, counters, unblockTimeoutMs, commands.ringHandler);
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
        work += socket.poll(now, commands.socketHandler);
        work += control.runResults(now);
        work += sessions.dropBrokenRings(); // the workers read the connections' rings; a client that broke one goes
        if (now >= nextCheckMs)
        {
            nextCheckMs = now + CHECK_INTERVAL_MS;
            try
            {
                work += sessions.timeOutClients(now);
                work += sessions.closeUncollected(now);
                work += captures.endExpired(now);
            }
            catch (final RuntimeException ex)
            {
                counters.unexpected(counters.unexpectedTimeOuts, "client time-outs", ex, now, LOG_INTERVAL_MS);
            }
        }
        return work;
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

    /** Frees what a client no longer holds: on a control thread, or here once the conductor is closing. */
    void releaseLater(final Runnable release)
    {
        control.releaseLater(release);
    }

    /** As {@link ControlActions#submit}. @return whether it was taken (false: answered LIMIT, nothing runs). */
    <T> boolean submit(final IpcClient client, final long correlationId, final int type, final Callable<T> action,
        final Consumer<T> onDone, final Runnable settle)
    {
        return control.submit(client, correlationId, type, action, onDone, settle);
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
        sessions.releaseEveryone(control);
        socket.close();
        counters.close();
        controlMemory.close();
        IpcFiles.removeNicFiles(directory);
    }
}
