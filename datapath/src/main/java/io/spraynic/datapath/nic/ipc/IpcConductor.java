package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.nic.CountersFile;
import io.spraynic.datapath.nic.DrainReport;
import io.spraynic.datapath.nic.EmbeddedNic;
import io.spraynic.datapath.nic.NicConnection;
import io.spraynic.datapath.nic.RocevEndpoint;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionOpcode;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.agrona.IoUtil;
import org.agrona.MutableDirectBuffer;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.ControlledMessageHandler;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.SystemEpochClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.broadcast.BroadcastTransmitter;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.status.AtomicCounter;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Serves an {@link EmbeddedNic} to applications in other processes through shared memory in an IPC directory
 * (as Aeron's driver conductor serves its clients through the CnC file): clients write commands into the
 * control file's to-NIC ring ({@link IpcFileDescriptor}, {@link IpcMessages}) and read answers from its
 * broadcast; each region a client registers is a file both processes map, so what the NIC places there the
 * client sees; each connection has a file of rings ({@link ConnectionRings}) through which the client posts
 * work requests and takes completions.
 * <p>
 * The conductor is one Agrona {@link Agent} on its own thread, never on a worker: each duty cycle it beats the
 * heartbeat, takes commands, relays every connection's posted requests into its {@link NicConnection} and the
 * connection's completions back out, and times out clients that stopped sending keepalives (a client process
 * that died): their connections are closed, their regions deregistered and their files removed. Control
 * actions that wait on the NIC (register, connect, accept, close) run on a separate control thread pool and
 * hand their result back to the conductor, so one slow handshake never stalls another client's traffic. A
 * command that names what its client does not hold, or carries bad values, is answered with an error; it
 * never stops the conductor.
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
    private static final int COMMANDS_PER_CYCLE = 16;
    private static final int REQUESTS_PER_CYCLE = 64;
    private static final int CHECK_INTERVAL_MS = 50;
    private static final int OPCODES = WorkRequestOpcode.values().length;

    private final EmbeddedNic nic;
    private final Path directory;
    private final Path controlFile;
    private final long clientTimeoutMs;
    private final EpochClock clock = SystemEpochClock.INSTANCE;
    private final MappedByteBuffer mapped;
    private final UnsafeBuffer header;
    private final ManyToOneRingBuffer toNic;
    private final BroadcastTransmitter toClients;
    private final UnsafeBuffer response = new UnsafeBuffer(new byte[1024]);
    private final ManyToOneConcurrentArrayQueue<Runnable> results = new ManyToOneConcurrentArrayQueue<>(4096);
    // bounded, so clients cannot make the NIC start threads without end (a refused action is answered with an error)
    private final ExecutorService control = new ThreadPoolExecutor(0, MAX_CONTROL_ACTIONS, 30, TimeUnit.SECONDS,
        new SynchronousQueue<>(), runnable ->
        {
            final Thread t = new Thread(runnable, "spraynic-ipc-control");
            t.setDaemon(true);
            return t;
        });
    private final Long2ObjectHashMap<Client> clients = new Long2ObjectHashMap<>();
    private final ArrayList<Relay> relays = new ArrayList<>();
    private final IpcMessages.Header commandHeader = new IpcMessages.Header();
    private final IpcMessages.AddClient addClient = new IpcMessages.AddClient();
    private final IpcMessages.Register register = new IpcMessages.Register();
    private final IpcMessages.ObjectCommand objectCommand = new IpcMessages.ObjectCommand();
    private final IpcMessages.Connect connect = new IpcMessages.Connect();
    private final IpcMessages.ConnectQueuePair connectQueuePair = new IpcMessages.ConnectQueuePair();
    private final IpcMessages.Ok ok = new IpcMessages.Ok();
    private final IpcMessages.Error error = new IpcMessages.Error();
    private final IpcMessages.RegionReady regionReady = new IpcMessages.RegionReady();
    private final IpcMessages.ConnectionReady connectionReady = new IpcMessages.ConnectionReady();
    private final IpcMessages.ConnectionClosed connectionClosed = new IpcMessages.ConnectionClosed();
    private final MessageHandler commandHandler = this::onCommand;
    private final ControlledMessageHandler requestHandler = this::onRequest;
    private final SendWorkRequest sendRequest = new SendWorkRequest();
    private final ReceiveWorkRequest receiveRequest = new ReceiveWorkRequest();
    private final WorkCompletion errorCompletion = new WorkCompletion();
    private final Counters counters;
    private long nextObjectId = 1;
    private long nextCheckMs;
    private Relay current;
    private AgentRunner runner;
    private volatile boolean closed;

    /**
     * The conductor's counters in the NIC's counters file (gauges and totals). Regions and connections are made and
     * freed on control threads, so those two are updated atomically; the rest only by the conductor thread.
     */
    private static final class Counters
    {
        final AtomicCounter clients;
        final AtomicCounter regions;
        final AtomicCounter connections;
        final AtomicCounter commands;
        final AtomicCounter commandErrors;
        final AtomicCounter clientsTimedOut;
        final AtomicCounter clientsClosed;
        final AtomicCounter requestsRelayed;
        final AtomicCounter requestsRefused;
        final AtomicCounter completionsRelayed;
        final AtomicCounter errors;

        Counters(final CountersFile file)
        {
            clients = file.newCounter("ipc: clients");
            regions = file.newCounter("ipc: regions");
            connections = file.newCounter("ipc: connections");
            commands = file.newCounter("ipc: commands");
            commandErrors = file.newCounter("ipc: commands refused");
            clientsTimedOut = file.newCounter("ipc: clients timed out");
            clientsClosed = file.newCounter("ipc: clients closed");
            requestsRelayed = file.newCounter("ipc: work requests relayed");
            requestsRefused = file.newCounter("ipc: work requests refused");
            completionsRelayed = file.newCounter("ipc: completions relayed");
            errors = file.newCounter("ipc: conductor errors");
        }

        void close()
        {
            for (final AtomicCounter c : new AtomicCounter[]{clients, regions, connections, commands, commandErrors,
                clientsTimedOut, clientsClosed, requestsRelayed, requestsRefused, completionsRelayed, errors})
            {
                c.close();
            }
        }
    }

    /** What one client holds: conductor thread only. */
    private static final class Client
    {
        final long id;
        final long pid;
        long lastSeenMs;
        final Long2ObjectHashMap<Region> regions = new Long2ObjectHashMap<>();
        final Int2ObjectHashMap<MemoryRegion> regionsByLkey = new Int2ObjectHashMap<>();
        final Long2ObjectHashMap<Relay> connections = new Long2ObjectHashMap<>();

        Client(final long id, final long pid, final long nowMs)
        {
            this.id = id;
            this.pid = pid;
            this.lastSeenMs = nowMs;
        }
    }

    /** A region a client registered: the NIC's mapping of its file. */
    private record Region(long id, Path file, Arena arena, MemoryRegion region)
    {
    }

    /** One connection a client holds, and its relay state: conductor thread only. */
    private static final class Relay
    {
        final long id;
        final Client client;
        final NicConnection connection;
        final ConnectionRings rings;
        final WorkCompletion sendCompletion = new WorkCompletion();
        final WorkCompletion receiveCompletion = new WorkCompletion();
        boolean sendPending;
        boolean receivePending;

        Relay(final long id, final Client client, final NicConnection connection, final ConnectionRings rings)
        {
            this.id = id;
            this.client = client;
            this.connection = connection;
            this.rings = rings;
        }
    }

    private IpcConductor(final EmbeddedNic nic, final Path directory, final CountersFile countersFile,
        final Duration clientTimeout)
    {
        this.nic = nic;
        this.directory = directory;
        this.controlFile = directory.resolve(IpcFileDescriptor.CONTROL_FILE);
        this.clientTimeoutMs = clientTimeout.toMillis();
        this.mapped = IoUtil.mapNewFile(controlFile.toFile(), IpcFileDescriptor.fileLength());
        this.header = new UnsafeBuffer(mapped);
        final long now = clock.time();
        header.putInt(IpcFileDescriptor.MAGIC_OFFSET, IpcFileDescriptor.MAGIC, IpcMessages.ORDER);
        header.putLong(IpcFileDescriptor.PID_OFFSET, ProcessHandle.current().pid(), IpcMessages.ORDER);
        header.putLong(IpcFileDescriptor.START_TIME_OFFSET, now, IpcMessages.ORDER);
        header.putLong(IpcFileDescriptor.HEARTBEAT_OFFSET, now, IpcMessages.ORDER);
        header.putLong(IpcFileDescriptor.CLIENT_TIMEOUT_OFFSET, clientTimeoutMs, IpcMessages.ORDER);
        header.putInt(IpcFileDescriptor.TO_NIC_LENGTH_OFFSET, IpcFileDescriptor.toNicLength(), IpcMessages.ORDER);
        header.putInt(IpcFileDescriptor.TO_CLIENTS_LENGTH_OFFSET, IpcFileDescriptor.toClientsLength(), IpcMessages.ORDER);
        header.putInt(IpcFileDescriptor.MODE_OFFSET, nic.mode().ordinal(), IpcMessages.ORDER);
        header.putInt(IpcFileDescriptor.PLANES_OFFSET, nic.planes(), IpcMessages.ORDER);
        for (int p = 0; p < Math.min(nic.planes(), IpcMessages.MAX_PLANES); p++)
        {
            header.putInt(IpcFileDescriptor.LOCAL_IPV4_OFFSET + 4 * p, nic.localIpv4(p), IpcMessages.ORDER);
            header.putLong(IpcFileDescriptor.LOCAL_MAC_OFFSET + 8 * p, nic.localMac(p), IpcMessages.ORDER);
        }
        this.toNic = new ManyToOneRingBuffer(new UnsafeBuffer(header, IpcFileDescriptor.HEADER_LENGTH,
            IpcFileDescriptor.toNicLength()));
        this.toClients = new BroadcastTransmitter(new UnsafeBuffer(header,
            IpcFileDescriptor.HEADER_LENGTH + IpcFileDescriptor.toNicLength(), IpcFileDescriptor.toClientsLength()));
        this.counters = new Counters(countersFile);
        header.putIntRelease(IpcFileDescriptor.VERSION_OFFSET, IpcFileDescriptor.VERSION);
    }

    /**
     * Serves {@code nic} in {@code directory} on a thread of its own.
     *
     * @param nic           the NIC; the caller closes it after this conductor.
     * @param directory     created if missing; refused while another live NIC serves it, cleaned of a dead one's files.
     * @param counters      where the conductor's counters go (the NIC's counters file).
     * @param clientTimeout time without a keepalive after which a client is released.
     * @param idleStrategy  how the conductor thread idles.
     * @return the running conductor.
     */
    public static IpcConductor start(final EmbeddedNic nic, final Path directory, final CountersFile counters,
        final Duration clientTimeout, final IdleStrategy idleStrategy)
    {
        prepare(directory);
        final IpcConductor conductor = new IpcConductor(nic, directory, counters, clientTimeout);
        conductor.runner = new AgentRunner(idleStrategy, throwable ->
        {
            conductor.counters.errors.increment();
            throwable.printStackTrace();
        }, null, conductor);
        AgentRunner.startOnThread(conductor.runner);
        return conductor;
    }

    /** Serves with the default client timeout and a backoff idle strategy (spins briefly, then parks up to 1 ms). */
    public static IpcConductor start(final EmbeddedNic nic, final Path directory, final CountersFile counters)
    {
        return start(nic, directory, counters, DEFAULT_CLIENT_TIMEOUT,
            new BackoffIdleStrategy(100, 10, 1_000, 1_000_000));
    }

    private static void prepare(final Path directory)
    {
        try
        {
            if (!Files.isDirectory(directory))
            {
                // only this user's processes may command the NIC or map its regions (where the file system knows owners)
                try
                {
                    Files.createDirectories(directory, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                        java.nio.file.attribute.PosixFilePermissions.fromString("rwx------")));
                }
                catch (final UnsupportedOperationException notPosix)
                {
                    Files.createDirectories(directory);
                }
            }
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("cannot create the IPC directory " + directory + ": " + ex.getMessage(), ex);
        }
        final Path control = directory.resolve(IpcFileDescriptor.CONTROL_FILE);
        if (Files.exists(control))
        {
            final String live = NicClient.describeLiveNic(control);
            if (null != live)
            {
                throw new IllegalStateException("another NIC serves " + directory + " (" + live +
                    "): stop it or give this one another --ipc-dir");
            }
        }
        removeFiles(directory);
    }

    /** Removes the control, region and connection files a NIC leaves in {@code directory}. */
    private static void removeFiles(final Path directory)
    {
        try (Stream<Path> files = Files.list(directory))
        {
            files.filter(p ->
            {
                final String name = p.getFileName().toString();
                return name.equals(IpcFileDescriptor.CONTROL_FILE) || name.startsWith("mr-") || name.startsWith("conn-");
            }).forEach(IpcConductor::delete);
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("cannot list the IPC directory " + directory + ": " + ex.getMessage(), ex);
        }
    }

    private static void delete(final Path file)
    {
        try
        {
            Files.deleteIfExists(file);
        }
        catch (final IOException ex)
        {
            System.err.println("spraynic ipc: could not remove " + file + ": " + ex.getMessage());
        }
    }

    /** @return the directory served. */
    public Path directory()
    {
        return directory;
    }

    public String roleName()
    {
        return "spraynic-ipc";
    }

    public int doWork()
    {
        final long now = clock.time();
        header.putLongRelease(IpcFileDescriptor.HEARTBEAT_OFFSET, now);
        int work = toNic.read(commandHandler, COMMANDS_PER_CYCLE);
        Runnable result;
        while (null != (result = results.poll()))
        {
            result.run();
            work++;
        }
        final ArrayList<Relay> relays = this.relays;
        for (int i = 0, n = relays.size(); i < n; i++)
        {
            work += relay(relays.get(i));
        }
        if (now >= nextCheckMs)
        {
            nextCheckMs = now + CHECK_INTERVAL_MS;
            work += timeOutClients(now);
        }
        return work;
    }

    // ---------------------------------------------------------------- the relay (per duty cycle, no allocation)

    private int relay(final Relay relay)
    {
        current = relay;
        int work = relay.rings.requests().controlledRead(requestHandler, REQUESTS_PER_CYCLE);
        current = null;
        work += relayCompletions(relay.connection.sendCompletionQueue(), relay.rings.sendCompletions(),
            relay.sendCompletion, true, relay);
        work += relayCompletions(relay.connection.receiveCompletionQueue(), relay.rings.receiveCompletions(),
            relay.receiveCompletion, false, relay);
        return work;
    }

    private int relayCompletions(final io.spraynic.datapath.verbs.CompletionQueue cq, final OneToOneRingBuffer ring,
        final WorkCompletion holder, final boolean send, final Relay relay)
    {
        int work = 0;
        while ((send ? relay.sendPending : relay.receivePending) || cq.poll(holder))
        {
            if (!ConnectionRings.offerCompletion(ring, holder))
            {
                // the client is slow to poll: keep this one and leave the rest in the NIC's queue
                if (send)
                {
                    relay.sendPending = true;
                }
                else
                {
                    relay.receivePending = true;
                }
                return work;
            }
            if (send)
            {
                relay.sendPending = false;
            }
            else
            {
                relay.receivePending = false;
            }
            counters.completionsRelayed.incrementRelease();
            work++;
        }
        return work;
    }

    private ControlledMessageHandler.Action onRequest(
        final int type, final MutableDirectBuffer buffer, final int index, final int length)
    {
        final Relay relay = current;
        if (length < ConnectionRings.WR_LENGTH || (type != ConnectionRings.SEND_REQUEST &&
            type != ConnectionRings.RECEIVE_REQUEST))
        {
            counters.requestsRefused.incrementRelease();
            return ControlledMessageHandler.Action.CONTINUE; // not a request: nothing to complete it with
        }
        final long wrId = buffer.getLong(index + ConnectionRings.WR_ID_OFFSET, IpcMessages.ORDER);
        final int lkey = buffer.getInt(index + ConnectionRings.WR_LKEY_OFFSET, IpcMessages.ORDER);
        final long localAddress = buffer.getLong(index + ConnectionRings.WR_LOCAL_ADDRESS_OFFSET, IpcMessages.ORDER);
        final int bytes = buffer.getInt(index + ConnectionRings.WR_LENGTH_OFFSET, IpcMessages.ORDER);
        final int stream = buffer.getInt(index + ConnectionRings.WR_STREAM_OFFSET, IpcMessages.ORDER);
        // a client names only its own regions: another client's lkey is as unknown as a made-up one
        final MemoryRegion region = 0 == lkey ? null : relay.client.regionsByLkey.get(lkey);
        final boolean send = type == ConnectionRings.SEND_REQUEST;
        final int opcode = send ? buffer.getByte(index + ConnectionRings.WR_OPCODE_OFFSET) : 0;
        final WorkCompletionOpcode completionOpcode = !send ? WorkCompletionOpcode.RECV :
            opcode >= 0 && opcode < OPCODES ?
                WorkRequestOpcode.of(opcode).completionOpcode() : WorkCompletionOpcode.SEND;
        // the engines check bounds too; checking here keeps a client's mistake from reaching a worker at all
        if ((0 != lkey && null == region) || (null == region && bytes != 0) ||
            (null != region && !region.contains(localAddress, bytes)))
        {
            return refuse(relay, send, wrId, completionOpcode, WorkCompletionStatus.LOC_PROT_ERR);
        }
        if (send && (opcode < 0 || opcode >= OPCODES))
        {
            return refuse(relay, true, wrId, completionOpcode, WorkCompletionStatus.LOC_QP_OP_ERR);
        }
        final int result;
        if (send)
        {
            result = relay.connection.postSend(stream, ConnectionRings.readSendRequest(buffer, index, region, sendRequest));
        }
        else
        {
            receiveRequest.reset().wrId(wrId).buffer(region, localAddress, bytes);
            result = relay.connection.postReceive(stream, receiveRequest);
        }
        return switch (result)
        {
            case PostResult.OK ->
            {
                counters.requestsRelayed.incrementRelease();
                yield ControlledMessageHandler.Action.CONTINUE;
            }
            case PostResult.QUEUE_FULL -> ControlledMessageHandler.Action.ABORT; // stays in the ring: retried next cycle
            case PostResult.INVALID_ARGUMENT -> refuse(relay, send, wrId, completionOpcode, WorkCompletionStatus.LOC_QP_OP_ERR);
            default -> refuse(relay, send, wrId, completionOpcode, WorkCompletionStatus.WR_FLUSH_ERR);
        };
    }

    /** Completes a request the NIC cannot post with an error, straight into the client's completion ring. */
    private ControlledMessageHandler.Action refuse(final Relay relay, final boolean send, final long wrId,
        final WorkCompletionOpcode opcode, final WorkCompletionStatus status)
    {
        errorCompletion.set(wrId, status, opcode, 0, false, 0, relay.connection.localId());
        final OneToOneRingBuffer ring = send ? relay.rings.sendCompletions() : relay.rings.receiveCompletions();
        if ((send ? relay.sendPending : relay.receivePending) || !ConnectionRings.offerCompletion(ring, errorCompletion))
        {
            return ControlledMessageHandler.Action.ABORT; // no room for the error yet: try the request again later
        }
        counters.requestsRefused.incrementRelease();
        return ControlledMessageHandler.Action.CONTINUE;
    }

    // ---------------------------------------------------------------- commands (control path)

    private void onCommand(final int type, final MutableDirectBuffer buffer, final int index, final int length)
    {
        counters.commands.incrementRelease();
        if (length < IpcMessages.Header.LENGTH)
        {
            counters.commandErrors.incrementRelease(); // no ids to answer to
            return;
        }
        commandHeader.wrap(buffer, index);
        final long clientId = commandHeader.clientId();
        final long correlationId = commandHeader.correlationId();
        final int fixed = IpcMessages.fixedLength(type);
        if (fixed < 0)
        {
            respondError(clientId, correlationId, type, "unknown command type " + type);
            return;
        }
        if (length < fixed)
        {
            respondError(clientId, correlationId, type, IpcMessages.name(type) + " of " + length + " B is shorter than its " +
                fixed + " B: is the client of another version?");
            return;
        }
        if (type == IpcMessages.ADD_CLIENT)
        {
            onAddClient(addClient.wrap(buffer, index));
            return;
        }
        final Client client = clients.get(clientId);
        if (null == client)
        {
            if (type != IpcMessages.KEEPALIVE)
            {
                respondError(clientId, correlationId, type, "client " + clientId +
                    " is not connected to this NIC (it timed out or closed): connect again");
            }
            else
            {
                counters.commandErrors.incrementRelease();
            }
            return;
        }
        client.lastSeenMs = clock.time();
        switch (type)
        {
            case IpcMessages.KEEPALIVE ->
            {
            }
            case IpcMessages.CLOSE_CLIENT ->
            {
                release(client, false);
                respondOk(clientId, correlationId, 0);
            }
            case IpcMessages.REGISTER -> onRegister(client, register.wrap(buffer, index));
            case IpcMessages.DEREGISTER -> onDeregister(client, objectCommand.wrap(buffer, index));
            case IpcMessages.CONNECT, IpcMessages.ACCEPT, IpcMessages.CREATE_QUEUE_PAIR ->
                onConnect(client, type, connect.wrap(buffer, index));
            case IpcMessages.CONNECT_QUEUE_PAIR -> onConnectQueuePair(client, connectQueuePair.wrap(buffer, index));
            case IpcMessages.CLOSE_CONNECTION -> onCloseConnection(client, objectCommand.wrap(buffer, index));
            default -> respondError(clientId, correlationId, type, "unknown command type " + type);
        }
    }

    private void onAddClient(final IpcMessages.AddClient command)
    {
        final long id = command.clientId();
        if (clients.containsKey(id))
        {
            respondError(id, command.correlationId(), IpcMessages.ADD_CLIENT, "client id " + id + " is already in use");
            return;
        }
        clients.put(id, new Client(id, command.pid(), clock.time()));
        counters.clients.incrementRelease();
        respondOk(id, command.correlationId(), clientTimeoutMs);
    }

    private void onRegister(final Client client, final IpcMessages.Register command)
    {
        final long correlationId = command.correlationId();
        final long bytes = command.regionLength();
        final int access = command.access();
        if (bytes <= 0 || bytes > MAX_REGION_BYTES)
        {
            respondError(client.id, correlationId, IpcMessages.REGISTER, "a region of " + bytes + " B is not in 1.." +
                MAX_REGION_BYTES);
            return;
        }
        try
        {
            AccessFlags.validate(access);
        }
        catch (final IllegalArgumentException ex)
        {
            respondError(client.id, correlationId, IpcMessages.REGISTER, ex.getMessage());
            return;
        }
        final long regionId = nextObjectId++;
        final Path file = directory.resolve("mr-" + client.id + "-" + regionId);
        submit(client, correlationId, IpcMessages.REGISTER, () ->
        {
            final Arena arena = Arena.ofShared();
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE))
            {
                final MemorySegment segment = channel.map(FileChannel.MapMode.READ_WRITE, 0, bytes, arena);
                final MemoryRegion region = nic.register(segment, access);
                counters.regions.increment();
                return new Region(regionId, file, arena, region);
            }
            catch (final IOException | RuntimeException ex)
            {
                arena.close();
                delete(file);
                throw new IllegalStateException("could not make a region of " + bytes + " B in " + file + ": " +
                    ex.getMessage(), ex);
            }
        }, (Region made) ->
        {
            if (!clients.containsKey(client.id))
            {
                releaseLater(() -> releaseRegion(made)); // the client went while its region was made
                return;
            }
            client.regions.put(made.id(), made);
            client.regionsByLkey.put(made.region().lkey(), made.region());
            final int length = regionReady.wrap(response, 0).set(made.id(), made.region().address(), bytes,
                made.region().lkey(), made.region().rkey(), access, file.getFileName().toString());
            regionReady.ids(client.id, correlationId);
            toClients.transmit(IpcMessages.REGION_READY, response, 0, length);
        });
    }

    private void onDeregister(final Client client, final IpcMessages.ObjectCommand command)
    {
        final long correlationId = command.correlationId();
        final Region region = client.regions.remove(command.objectId());
        if (null == region)
        {
            respondError(client.id, correlationId, IpcMessages.DEREGISTER, "client " + client.id + " has no region " +
                command.objectId());
            return;
        }
        client.regionsByLkey.remove(region.region().lkey()); // requests naming it are refused from now on
        submit(client, correlationId, IpcMessages.DEREGISTER, () ->
        {
            releaseRegion(region);
            return region;
        }, (Region done) -> respondOk(client.id, correlationId, done.id()));
    }

    private void onConnect(final Client client, final int type, final IpcMessages.Connect command)
    {
        final long correlationId = command.correlationId();
        final int timeoutMs = command.timeoutMs();
        final int planes = command.planes();
        if (type != IpcMessages.CREATE_QUEUE_PAIR && (timeoutMs <= 0 || timeoutMs > MAX_TIMEOUT_MS))
        {
            respondError(client.id, correlationId, type, "a timeout of " + timeoutMs + " ms is not in 1.." + MAX_TIMEOUT_MS);
            return;
        }
        final NicConnection.Kind required = type == IpcMessages.CREATE_QUEUE_PAIR ?
            NicConnection.Kind.ROCEV2 : NicConnection.Kind.SPRAY;
        if (nic.mode() != required)
        {
            respondError(client.id, correlationId, type, "this NIC runs " + nic.mode() + ": " + IpcMessages.name(type) +
                " needs a " + required + " NIC");
            return;
        }
        if (type == IpcMessages.CONNECT && planes != nic.planes())
        {
            respondError(client.id, correlationId, type, "this NIC has " + nic.planes() + " plane(s), the CONNECT names " +
                planes + ": give the peer's address and MAC on each plane");
            return;
        }
        if (type == IpcMessages.CREATE_QUEUE_PAIR && (planes < 0 || planes >= nic.planes()))
        {
            respondError(client.id, correlationId, type, "plane " + planes + " is not one of this NIC's 0.." +
                (nic.planes() - 1));
            return;
        }
        final int[] ips = new int[Math.max(0, Math.min(planes, IpcMessages.MAX_PLANES))];
        final long[] macs = new long[ips.length];
        for (int p = 0; p < ips.length && type == IpcMessages.CONNECT; p++)
        {
            ips[p] = command.ipv4(p);
            macs[p] = command.mac(p);
        }
        final long connectionId = nextObjectId++;
        final Path file = directory.resolve("conn-" + client.id + "-" + connectionId);
        submit(client, correlationId, type, () ->
        {
            final NicConnection c = switch (type)
            {
                case IpcMessages.CONNECT -> nic.connect(ips, macs, Duration.ofMillis(timeoutMs));
                case IpcMessages.ACCEPT -> nic.accept(Duration.ofMillis(timeoutMs));
                default -> nic.createQueuePair(planes);
            };
            if (null == c)
            {
                throw new IllegalStateException("no peer connected within " + timeoutMs + " ms");
            }
            try
            {
                final Relay relay = new Relay(connectionId, client, c, ConnectionRings.create(file, connectionId));
                counters.connections.increment();
                return relay;
            }
            catch (final RuntimeException ex)
            {
                c.close(Duration.ZERO);
                throw ex;
            }
        }, (Relay made) ->
        {
            if (!clients.containsKey(client.id))
            {
                releaseLater(() -> releaseConnection(made, Duration.ZERO));
                return;
            }
            client.connections.put(made.id, made);
            relays.add(made);
            final NicConnection c = made.connection;
            final int length;
            if (c.kind() == NicConnection.Kind.ROCEV2)
            {
                final RocevEndpoint e = c.rocevEndpoint();
                length = connectionReady.wrap(response, 0).set(made.id, c.kind().ordinal(), c.localId(), c.streams(),
                    c.plane(), e.psn(), e.ipv4(), e.mac(), e.mtu(), file.getFileName().toString());
            }
            else
            {
                length = connectionReady.wrap(response, 0).set(made.id, c.kind().ordinal(), c.localId(), c.streams(),
                    c.plane(), 0, 0, 0, 0, file.getFileName().toString());
            }
            connectionReady.ids(client.id, correlationId);
            toClients.transmit(IpcMessages.CONNECTION_READY, response, 0, length);
        });
    }

    private void onConnectQueuePair(final Client client, final IpcMessages.ConnectQueuePair command)
    {
        final long correlationId = command.correlationId();
        final Relay relay = client.connections.get(command.connectionId());
        final int timeoutMs = command.timeoutMs();
        if (null == relay || relay.connection.kind() != NicConnection.Kind.ROCEV2)
        {
            respondError(client.id, correlationId, IpcMessages.CONNECT_QUEUE_PAIR, "client " + client.id +
                " has no queue pair " + command.connectionId());
            return;
        }
        if (timeoutMs <= 0 || timeoutMs > MAX_TIMEOUT_MS)
        {
            respondError(client.id, correlationId, IpcMessages.CONNECT_QUEUE_PAIR, "a timeout of " + timeoutMs +
                " ms is not in 1.." + MAX_TIMEOUT_MS);
            return;
        }
        final RocevEndpoint remote = new RocevEndpoint(command.qpn(), command.psn(), command.ipv4(), command.mac(),
            command.mtu());
        submit(client, correlationId, IpcMessages.CONNECT_QUEUE_PAIR, () ->
        {
            relay.connection.connect(remote, Duration.ofMillis(timeoutMs));
            return relay;
        }, (Relay done) -> respondOk(client.id, correlationId, done.id));
    }

    private void onCloseConnection(final Client client, final IpcMessages.ObjectCommand command)
    {
        final long correlationId = command.correlationId();
        final int timeoutMs = command.timeoutMs();
        if (timeoutMs < 0 || timeoutMs > MAX_TIMEOUT_MS)
        {
            respondError(client.id, correlationId, IpcMessages.CLOSE_CONNECTION, "a timeout of " + timeoutMs +
                " ms is not in 0.." + MAX_TIMEOUT_MS);
            return;
        }
        final Relay relay = client.connections.remove(command.objectId());
        if (null == relay)
        {
            respondError(client.id, correlationId, IpcMessages.CLOSE_CONNECTION, "client " + client.id +
                " has no connection " + command.objectId());
            return;
        }
        relay(relay); // what the client posted before closing still reaches the connection
        relays.remove(relay);
        submit(client, correlationId, IpcMessages.CLOSE_CONNECTION,
            () -> releaseConnection(relay, Duration.ofMillis(timeoutMs)),
            (DrainReport.ConnectionDrain drain) ->
            {
                connectionClosed.wrap(response, 0).set(relay.id, drain.postedSends(), drain.postedReceives(),
                    drain.waiting(), drain.idle());
                connectionClosed.ids(client.id, correlationId);
                toClients.transmit(IpcMessages.CONNECTION_CLOSED, response, 0, IpcMessages.ConnectionClosed.LENGTH);
            });
    }

    private int timeOutClients(final long now)
    {
        int released = 0;
        List<Client> dead = null;
        for (final Client client : clients.values())
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
            for (final Client client : dead)
            {
                release(client, true);
                released++;
            }
        }
        return released;
    }

    /** Forgets a client: stops relaying its connections, then closes them and frees its regions on a control thread. */
    private void release(final Client client, final boolean timedOut)
    {
        clients.remove(client.id);
        counters.clients.decrementRelease();
        (timedOut ? counters.clientsTimedOut : counters.clientsClosed).incrementRelease();
        if (timedOut)
        {
            System.err.println("spraynic ipc: client " + client.id + " (pid " + client.pid + ") sent no keepalive for " +
                clientTimeoutMs + " ms: releasing its " + client.connections.size() + " connection(s) and " +
                client.regions.size() + " region(s)");
        }
        final List<Relay> connections = new ArrayList<>(client.connections.values());
        final List<Region> regions = new ArrayList<>(client.regions.values());
        for (final Relay relay : connections)
        {
            relays.remove(relay);
        }
        client.connections.clear();
        client.regions.clear();
        client.regionsByLkey.clear();
        // a dead client's peers get CLOSE at once; a closing client already waited for its own completions
        final Duration drain = Duration.ofMillis(timedOut ? 0 : 100);
        releaseLater(() ->
        {
            for (final Relay relay : connections)
            {
                releaseConnection(relay, drain);
            }
            for (final Region region : regions)
            {
                releaseRegion(region);
            }
        });
    }

    /** Control thread: closes the NIC's connection, unmaps and removes its rings. */
    private DrainReport.ConnectionDrain releaseConnection(final Relay relay, final Duration timeout)
    {
        try
        {
            return relay.connection.close(timeout);
        }
        finally
        {
            relay.rings.close();
            delete(relay.rings.path());
            counters.connections.decrement();
        }
    }

    /** Control thread: deregisters a region, unmaps it and removes its file. */
    private void releaseRegion(final Region region)
    {
        try
        {
            nic.deregister(region.region());
        }
        finally
        {
            region.arena().close();
            delete(region.file());
            counters.regions.decrement();
        }
    }

    /** Frees what a client no longer holds: on a control thread, or here once the conductor is closing. */
    private void releaseLater(final Runnable release)
    {
        if (!closed)
        {
            try
            {
                control.execute(release);
                return;
            }
            catch (final RejectedExecutionException busy)
            {
                // every control thread is busy: free it here, late but certain
            }
        }
        release.run();
    }

    /** Runs {@code action} on a control thread, then {@code onDone} with its result, or an ERROR, on the conductor. */
    private <T> void submit(final Client client, final long correlationId, final int type,
        final java.util.concurrent.Callable<T> action, final java.util.function.Consumer<T> onDone)
    {
        final Runnable task = () ->
        {
            Runnable next;
            try
            {
                final T value = action.call();
                next = () -> onDone.accept(value);
            }
            catch (final Exception ex)
            {
                final String reason = null == ex.getMessage() ? ex.toString() : ex.getMessage();
                next = () -> respondError(client.id, correlationId, type, reason);
            }
            while (!results.offer(next) && !closed)
            {
                Thread.onSpinWait();
            }
        };
        try
        {
            control.execute(task);
        }
        catch (final RejectedExecutionException busy)
        {
            respondError(client.id, correlationId, type, "the NIC has " + MAX_CONTROL_ACTIONS +
                " control actions in progress: retry once some finished");
        }
    }

    private void respondOk(final long clientId, final long correlationId, final long value)
    {
        ok.wrap(response, 0).value(value);
        ok.ids(clientId, correlationId);
        toClients.transmit(IpcMessages.OK, response, 0, IpcMessages.Ok.LENGTH);
    }

    private void respondError(final long clientId, final long correlationId, final int type, final String message)
    {
        counters.commandErrors.incrementRelease();
        final int length = error.wrap(response, 0).set(type, message);
        error.ids(clientId, correlationId);
        toClients.transmit(IpcMessages.ERROR, response, 0, length);
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
        final List<Relay> connections = new ArrayList<>();
        final List<Region> regions = new ArrayList<>();
        for (final Client client : clients.values())
        {
            connections.addAll(client.connections.values());
            regions.addAll(client.regions.values());
        }
        clients.clear();
        relays.clear();
        control.shutdown();
        try
        {
            control.awaitTermination(10, TimeUnit.SECONDS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        Runnable late;
        while (null != (late = results.poll()))
        {
            late.run(); // made while closing: released below like the rest
        }
        for (final Relay relay : connections)
        {
            try
            {
                releaseConnection(relay, Duration.ZERO);
            }
            catch (final RuntimeException ex)
            {
                System.err.println("spraynic ipc: closing connection " + relay.id + " failed: " + ex.getMessage());
            }
        }
        for (final Region region : regions)
        {
            try
            {
                releaseRegion(region);
            }
            catch (final RuntimeException ex)
            {
                System.err.println("spraynic ipc: freeing region " + region.id() + " failed: " + ex.getMessage());
            }
        }
        counters.close();
        IoUtil.unmap(mapped);
        removeFiles(directory);
    }
}
