package io.spraynic.apps.exchange;

import io.spraynic.datapath.api.BulkTransfer;
import io.spraynic.datapath.api.DrainReport;
import io.spraynic.datapath.api.ReceiveRequest;
import io.spraynic.datapath.api.RocevEndpoint;
import io.spraynic.datapath.api.SeededPattern;
import io.spraynic.datapath.nic.EmbeddedNic;
import io.spraynic.datapath.nic.NicConnection;
import io.spraynic.datapath.telemetry.OwnedDirectory;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Two NICs, possibly in different processes or network namespaces, exchange a verified transfer in both
 * directions: each registers a buffer of pseudo-random bytes and a target buffer, they meet through a
 * directory both can read (addresses, RoCEv2 queue pair attributes and regions, as an ibverbs application
 * would exchange them over TCP), open a connection (spray: on the wire; RoCEv2: out of band), RDMA-WRITE
 * their bytes into each other's target over several streams, the last write with immediate data so the
 * receiver knows the writer is done, and each checks every byte it received against the writer's seed.
 * Control path and application code: it allocates and blocks freely.
 */
public final class PeerExchange
{
    /** {@code nic.addr}'s field naming, once the exposed region is deregistered, the key it had (no addr, rkey, length). */
    static final String DEREGISTERED = "deregistered";

    /** The two roles: the client connects, the server accepts. */
    public enum Role
    {
        CLIENT, SERVER;

        Role peer()
        {
            return this == CLIENT ? SERVER : CLIENT;
        }

        long seed()
        {
            return this == CLIENT ? 0x5EED_0001L : 0x5EED_0002L;
        }

        String file(final String what)
        {
            return name().toLowerCase() + "." + what;
        }
    }

    /**
     * @param verified      every byte the peer wrote is what its seed says.
     * @param bytesEachWay  bytes written in each direction.
     * @param nanos         from connection open to both directions complete.
     * @param drain         what closing the NIC found.
     */
    public record Result(Role role, NicConnection.Kind mode, boolean verified, long bytesEachWay, long nanos,
        long firstMismatch, DrainReport drain)
    {
        /** @return one JSON object. */
        public String toJson()
        {
            return "{\"role\":\"" + role.name().toLowerCase() + "\",\"mode\":\"" + mode.name().toLowerCase() +
                "\",\"verified\":" + verified + ",\"bytes\":" + bytesEachWay + ",\"seconds\":" + nanos / 1e9 +
                ",\"firstMismatch\":" + firstMismatch + ",\"drained\":" + drain.drained() + "}";
        }
    }

    /** The warm-up's pattern: neither side's, so the timed part's read-back tells its bytes from the warm-up's. */
    static final long WARMUP_SEED = 0x5EED_0003L;
    /**
     * The most copies of the transfer's size held at once (a run: what it sends, what it receives, and the peer's
     * pattern to check that against): what a command checks against the host's memory before it starts.
     */
    public static final int COPIES_OF_SIZE = 3;

    private PeerExchange()
    {
    }

    /** Both sides of one exchange between two NICs of one process. */
    public record Pair(Result client, Result server)
    {
    }

    /**
     * Runs both sides between two NICs of this process (tests, benchmarks): the server on a thread of its own, the
     * client on the caller's; both NICs are closed (drained) before it returns.
     *
     * @param timeout for each wait; the server's whole run gets twice this after the client's ended.
     * @return what each side found.
     */
    public static Pair runBoth(final EmbeddedNic client, final EmbeddedNic server, final Path directory, final long bytes,
        final int messageBytes, final Duration timeout)
        throws IOException, InterruptedException, ExecutionException, TimeoutException
    {
        final CompletableFuture<Result> served = CompletableFuture.supplyAsync(() ->
        {
            try
            {
                return run(server, Role.SERVER, directory, bytes, messageBytes, timeout);
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException(ex);
            }
        });
        final Result clientResult = run(client, Role.CLIENT, directory, bytes, messageBytes, timeout);
        return new Pair(clientResult, served.get(timeout.multipliedBy(2).toNanos(), TimeUnit.NANOSECONDS));
    }

    /**
     * Runs one side; the NIC is closed (drained) before it returns.
     *
     * @param nic          a running NIC (spray NICs must listen on the server side).
     * @param role         this side's role.
     * @param directory    where both sides write what the other needs.
     * @param bytes        bytes to write each way.
     * @param messageBytes bytes per RDMA WRITE.
     * @param timeout      for each wait.
     */
    public static Result run(final EmbeddedNic nic, final Role role, final Path directory, final long bytes,
        final int messageBytes, final Duration timeout) throws IOException
    {
        try (Arena arena = Arena.ofShared())
        {
            try
            {
                return exchange(nic, role, directory, bytes, messageBytes, timeout, arena);
            }
            catch (final RuntimeException ex)
            {
                throw stopBeforeFreeing(nic, ex);
            }
            catch (final IOException ex)
            {
                throw stopBeforeFreeing(nic, ex);
            }
        }
    }

    private static Result exchange(final EmbeddedNic nic, final Role role, final Path directory, final long bytes,
        final int messageBytes, final Duration timeout, final Arena arena) throws IOException
    {
        final MemorySegment source = SeededPattern.allocate(arena, bytes, role.seed());
        final MemorySegment target = arena.allocate(bytes, 64);
        final MemoryRegion local = nic.register(source, AccessFlags.NONE);
        final MemoryRegion inbound = nic.register(target, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);

        publish(directory, role.file("addr"), addressLine(nic, inbound));
        final Map<String, String> peer = fields(await(directory, role.peer().file("addr"), timeout));

        final NicConnection connection;
        if (nic.mode() == NicConnection.Kind.SPRAY)
        {
            connection = role == Role.CLIENT ? nic.connect(ips(peer, nic.planes()), timeout) : nic.accept(timeout);
            if (null == connection)
            {
                throw new IllegalStateException("no spray connection from the client within " + timeout.toMillis() + " ms");
            }
        }
        else
        {
            connection = nic.createQueuePair(0);
            publish(directory, role.file("qp"), connection.rocevEndpoint().format());
            connection.connect(RocevEndpoint.parse(await(directory, role.peer().file("qp"), timeout)), timeout);
        }
        final ReceiveRequest receive = new ReceiveRequest().wrId(1).buffer(null, 0, 0);
        if (connection.postReceive(0, receive) != PostResult.OK)
        {
            throw new IllegalStateException("could not post the receive for the peer's last write");
        }
        publish(directory, role.file("ready"), "ready"); // the peer may write only once our receive is posted
        await(directory, role.peer().file("ready"), timeout);

        final long start = System.nanoTime();
        BulkTransfer.write(connection, local, Long.parseLong(peer.get("addr")), key(require(peer, "rkey")),
            messageBytes, true, timeout);
        BulkTransfer.awaitImmediate(connection, timeout);
        final long nanos = System.nanoTime() - start;
        final long mismatch = SeededPattern.allocate(arena, bytes, role.peer().seed()).mismatch(target);
        publish(directory, role.file("done"), "done");
        await(directory, role.peer().file("done"), timeout); // keep answering until the peer has all it needs
        final DrainReport drain = nic.close(timeout);
        return new Result(role, nic.mode(), mismatch == -1, bytes, nanos, mismatch, drain);
    }

    /**
     * What a serving NIC ({@code spraynic nic --expose}) publishes: its addresses and the region peers may write
     * and read, so that {@link #visit} can find it.
     *
     * @param nic       the serving NIC (spray, listening).
     * @param exposed   the region it exposes (remote write and read).
     * @param directory where to publish.
     */
    public static void publishServer(final EmbeddedNic nic, final MemoryRegion exposed, final Path directory) throws IOException
    {
        publish(directory, "nic.addr", addressLine(nic, exposed));
    }

    /**
     * The serving side of a RoCEv2 visit: creates a queue pair on plane 0 and publishes its attributes
     * ({@code nic.qp}); {@link #connectVisitor} connects it once a visitor published its own.
     */
    public static NicConnection offerQueuePair(final EmbeddedNic nic, final Path directory) throws IOException
    {
        final NicConnection qp = nic.createQueuePair(0);
        publish(directory, "nic.qp", qp.rocevEndpoint().format());
        return qp;
    }

    /**
     * @return true when a visitor's queue pair was published and {@code qp} is now connected to it (then
     * {@code nic.ready} tells the visitor it may write).
     */
    public static boolean connectVisitor(final NicConnection qp, final Path directory, final Duration timeout) throws IOException
    {
        final Path visitor = directory.resolve("visitor.qp");
        if (!Files.exists(visitor))
        {
            return false;
        }
        qp.connect(RocevEndpoint.parse(read(visitor)), timeout);
        publish(directory, "nic.ready", "ready");
        return true;
    }

    /**
     * What a serving NIC ({@link #publishServer}) published: its address per plane and the region it exposes (no
     * MAC: the visitor resolves it).
     *
     * @param ips     its address on each plane, IPv4 or IPv6.
     * @param address the exposed region's virtual address.
     * @param rkey    the exposed region's remote key.
     * @param length  the exposed region's bytes.
     */
    public record Served(InetAddress[] ips, long address, int rkey, long length)
    {
    }

    /**
     * Waits for a serving NIC's {@code nic.addr} in {@code directory} and reads it.
     *
     * @param planes the planes the visitor has (the server must say as many addresses).
     */
    public static Served awaitServed(final Path directory, final int planes, final Duration timeout) throws IOException
    {
        final Map<String, String> server = fields(await(directory, "nic.addr", timeout));
        if (server.containsKey(DEREGISTERED))
        {
            throw new IllegalStateException("the NIC serving " + directory + " deregistered the region it exposed " +
                "(rkey " + server.get(DEREGISTERED) + "): there is nothing to visit");
        }
        return new Served(ips(server, planes), Long.parseLong(require(server, "addr")),
            key(require(server, "rkey")), Long.parseLong(require(server, "length")));
    }

    /**
     * Reads the rkey a serving NIC's {@code nic.addr} names, its region deregistered or not (the NIC refuses a request
     * for one already gone, and says so).
     */
    static int servedKey(final Path directory) throws IOException
    {
        final Map<String, String> server = fields(read(directory.resolve("nic.addr")));
        return key(server.containsKey(DEREGISTERED) ? server.get(DEREGISTERED) : require(server, "rkey"));
    }

    /**
     * Serving NIC, once {@code deregistered} is: {@code nic.addr} names its addresses and, instead of the region, the
     * key it had ({@code deregistered=RKEY}), so a visitor reading it later is told why there is nothing to visit.
     */
    static void publishDeregistered(final EmbeddedNic nic, final MemoryRegion deregistered, final Path directory)
        throws IOException
    {
        publish(directory, "nic.addr", addresses(nic).append(' ').append(DEREGISTERED).append('=')
            .append(Integer.toUnsignedString(deregistered.rkey())).toString());
    }

    /** A key as the exchange files write it: unsigned decimal, as on the wire (RETH {@code rkey} is a u32). */
    static int key(final String text)
    {
        try
        {
            return Integer.parseUnsignedInt(text);
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalStateException("the peer's rkey '" + text + "' is not an unsigned 32-bit number", ex);
        }
    }

    /**
     * Visits a serving NIC: connects to it (spray: on the wire; RoCEv2: queue pairs through the directory), RDMA-WRITEs {@code bytes} of this side's pattern into the
     * region it exposes, RDMA-READs them back into a separate buffer and checks every byte: the serving NIC
     * placed the writes and answered the reads with no application on its side. The NIC is closed (drained)
     * before it returns.
     */
    public static Result visit(final EmbeddedNic nic, final Path directory, final long bytes, final int messageBytes,
        final Duration timeout) throws IOException
    {
        return visit(nic, directory, bytes, messageBytes, timeout, 0, VisitPhases.NONE);
    }

    /**
     * What a visit tells its caller between its parts ({@code spraynic transfer --warmup}), on the caller's thread,
     * while the connection is open and idle: it may read counters, or wait for someone else to.
     */
    public interface VisitPhases
    {
        /** Nothing between the parts. */
        VisitPhases NONE = new VisitPhases()
        {
        };

        /**
         * The warm-up was written, read back and verified; the timed part starts when this returns.
         *
         * @param nanos the warm-up's time, from its first WRITE to its last READ's completion.
         */
        default void warmedUp(final long nanos) throws IOException
        {
        }

        /** The timed part ended (its bytes not yet verified); the connection closes when this returns. */
        default void timed() throws IOException
        {
        }
    }

    /**
     * {@link #visit(EmbeddedNic, Path, long, int, Duration)} after a warm-up over the same connection: the first
     * {@code warmupBytes} of the exposed region are written with a pattern of their own, read back and verified
     * (a mismatch fails the visit), so that the timed part runs on compiled code and warm paths. The timed part then
     * overwrites them with the visit's pattern, so its read-back proves its own WRITEs, not the warm-up's. The
     * result's time is the timed part's alone.
     *
     * @param warmupBytes 0 for none, else at most what the serving NIC exposes (more or fewer than {@code bytes}).
     * @param phases      told when the warm-up was verified and when the timed part ended.
     */
    public static Result visit(final EmbeddedNic nic, final Path directory, final long bytes, final int messageBytes,
        final Duration timeout, final long warmupBytes, final VisitPhases phases) throws IOException
    {
        return visit(nic, directory, bytes, messageBytes, timeout, warmupBytes, false, phases);
    }

    /**
     * {@link #visit(EmbeddedNic, Path, long, int, Duration, long, VisitPhases)}, with the timed part on the warm-up's
     * connection or, {@code freshConnection}, on a new one opened after the warm-up's was closed (spray only): the
     * process is warm (compiled code) but the connection is not (its paths' round-trip estimates and its learnt
     * margins start again), so the two tell a warm JVM apart from a warm connection. {@link VisitPhases#warmedUp}
     * is told after the warm-up's connection closed and before the new one opens.
     */
    public static Result visit(final EmbeddedNic nic, final Path directory, final long bytes, final int messageBytes,
        final Duration timeout, final long warmupBytes, final boolean freshConnection, final VisitPhases phases)
        throws IOException
    {
        if (warmupBytes < 0)
        {
            throw new IllegalArgumentException("a warm-up of " + warmupBytes + " bytes: must be 0 or more");
        }
        if (freshConnection && (warmupBytes == 0 || nic.mode() != NicConnection.Kind.SPRAY))
        {
            throw new IllegalArgumentException("a fresh connection after the warm-up needs a warm-up and spray (a " +
                "serving NIC connects one RoCEv2 queue pair): warm up over the same connection");
        }
        try (Arena arena = Arena.ofShared())
        {
            try
            {
                return visit(nic, directory, bytes, messageBytes, timeout, warmupBytes, freshConnection, phases, arena);
            }
            catch (final RuntimeException ex)
            {
                throw stopBeforeFreeing(nic, ex);
            }
            catch (final IOException ex)
            {
                throw stopBeforeFreeing(nic, ex);
            }
        }
    }

    /**
     * A failed exchange leaves work requests in flight that reference memory of the arena about to be closed: the
     * NIC stops (its workers with it) before that memory goes, or its workers would read freed memory on every
     * retransmission (issue 12, item 10).
     */
    private static <E extends Exception> E stopBeforeFreeing(final EmbeddedNic nic, final E failure)
    {
        try
        {
            nic.close(Duration.ZERO);
        }
        catch (final RuntimeException closeFailure)
        {
            failure.addSuppressed(closeFailure);
        }
        return failure;
    }

    private static Result visit(final EmbeddedNic nic, final Path directory, final long bytes, final int messageBytes,
        final Duration timeout, final long warmupBytes, final boolean freshConnection, final VisitPhases phases,
        final Arena arena) throws IOException
    {
        final Served server = awaitServed(directory, nic.planes(), timeout);
        final long exposedLength = server.length();
        if (bytes > exposedLength)
        {
            throw new IllegalArgumentException("the serving NIC exposes " + exposedLength + " bytes, fewer than the " + bytes +
                " to write: lower --size or expose more");
        }
        if (warmupBytes > exposedLength)
        {
            throw new IllegalArgumentException("the serving NIC exposes " + exposedLength + " bytes, fewer than the " +
                warmupBytes + " to warm up with: lower --warmup or expose more");
        }
        final MemorySegment source = SeededPattern.allocate(arena, bytes, Role.CLIENT.seed());
        final MemorySegment readBack = arena.allocate(bytes, 64);
        final MemoryRegion local = nic.register(source, AccessFlags.NONE);
        final MemoryRegion into = nic.register(readBack, AccessFlags.LOCAL_WRITE);
        NicConnection connection;
        if (nic.mode() == NicConnection.Kind.SPRAY)
        {
            connection = nic.connect(server.ips(), timeout);
        }
        else
        {
            // RoCEv2: queue pairs meet out of band; the serving NIC says when its side is connected
            connection = nic.createQueuePair(0);
            publish(directory, "visitor.qp", connection.rocevEndpoint().format());
            connection.connect(RocevEndpoint.parse(await(directory, "nic.qp", timeout)), timeout);
            await(directory, "nic.ready", timeout);
        }
        final long remote = server.address();
        final int rkey = server.rkey();
        if (warmupBytes > 0)
        {
            final long warmupNanos = warmUp(nic, connection, remote, rkey, warmupBytes, messageBytes, timeout, arena);
            if (freshConnection)
            {
                connection.close(timeout);
                phases.warmedUp(warmupNanos);
                connection = nic.connect(server.ips(), timeout);
            }
            else
            {
                phases.warmedUp(warmupNanos);
            }
        }
        final long start = System.nanoTime();
        BulkTransfer.write(connection, local, remote, rkey, messageBytes, false, timeout);
        BulkTransfer.read(connection, into, remote, rkey, messageBytes, timeout);
        final long nanos = System.nanoTime() - start;
        phases.timed();
        final long mismatch = source.mismatch(readBack);
        connection.close(timeout);
        final DrainReport drain = nic.close(timeout);
        return new Result(Role.CLIENT, nic.mode(), mismatch == -1, bytes, nanos, mismatch, drain);
    }

    /** @return the warm-up's time in nanoseconds, once its bytes were read back and verified. */
    private static long warmUp(final EmbeddedNic nic, final NicConnection connection, final long remote, final int rkey,
        final long warmupBytes, final int messageBytes, final Duration timeout, final Arena arena) throws IOException
    {
        final MemorySegment pattern = SeededPattern.allocate(arena, warmupBytes, WARMUP_SEED);
        final MemorySegment readBack = arena.allocate(warmupBytes, 64);
        final MemoryRegion source = nic.register(pattern, AccessFlags.NONE);
        final MemoryRegion into = nic.register(readBack, AccessFlags.LOCAL_WRITE);
        final long start = System.nanoTime();
        BulkTransfer.write(connection, source, remote, rkey, messageBytes, false, timeout);
        BulkTransfer.read(connection, into, remote, rkey, messageBytes, timeout);
        final long nanos = System.nanoTime() - start;
        final long mismatch = pattern.mismatch(readBack);
        if (mismatch != -1)
        {
            throw new IllegalStateException("the warm-up's bytes did not read back: the first mismatch is at byte " +
                mismatch + " of " + warmupBytes);
        }
        return nanos;
    }

    private static String addressLine(final EmbeddedNic nic, final MemoryRegion region)
    {
        return addresses(nic).append(" addr=").append(region.address()).append(" rkey=")
            .append(Integer.toUnsignedString(region.rkey())).append(" length=").append(region.length()).toString();
    }

    private static StringBuilder addresses(final EmbeddedNic nic)
    {
        final StringBuilder address = new StringBuilder("planes=" + nic.planes());
        for (int p = 0; p < nic.planes(); p++)
        {
            address.append(" ip.").append(p).append('=').append(nic.localAddressText(p));
        }
        return address;
    }

    // per plane, the peer's address as it said it: IPv6 text or IPv4 dotted, a literal (never a name to look up)
    private static InetAddress[] ips(final Map<String, String> peer, final int planes)
    {
        final InetAddress[] ips = new InetAddress[planes];
        for (int p = 0; p < planes; p++)
        {
            ips[p] = InetAddress.ofLiteral(require(peer, "ip." + p));
        }
        return ips;
    }

    private static String require(final Map<String, String> fields, final String key)
    {
        final String value = fields.get(key);
        if (null == value)
        {
            throw new IllegalStateException("the peer did not say its " + key + " (does it have as many planes?)");
        }
        return value;
    }

    private static Map<String, String> fields(final String line)
    {
        final Map<String, String> fields = new HashMap<>();
        for (final String field : line.trim().split("\\s+"))
        {
            final int eq = field.indexOf('=');
            if (eq > 0)
            {
                fields.put(field.substring(0, eq), field.substring(eq + 1));
            }
        }
        return fields;
    }

    /** The largest file of an exchange directory read: each holds one line. */
    static final int MAX_FILE_BYTES = 64 * 1024;

    /**
     * Makes the exchange directory if it is missing and checks it is this user's (or root's) and nobody else's to write
     * into ({@link OwnedDirectory}): in one another user made, a link planted at a name this process writes would
     * have it write into a file of that user's choosing.
     *
     * @throws IllegalArgumentException saying why the directory is refused.
     */
    public static void prepare(final Path directory) throws IOException
    {
        Files.createDirectories(directory);
        final String problem = OwnedDirectory.problem(directory, "the exchange directory");
        if (null != problem)
        {
            throw new IllegalArgumentException(problem + ": give --exchange a directory of your own");
        }
    }

    /**
     * Writes a file whole (write then rename), so the peer never reads half of it: the temporary file is made afresh
     * (a link or file left at its name is removed, never followed), and the rename replaces a link at the final name
     * rather than writing through it.
     */
    public static void publish(final Path directory, final String name, final String content) throws IOException
    {
        final Path tmp = directory.resolve(name + ".tmp");
        Files.deleteIfExists(tmp); // removes a link itself, not what it points to
        try (OutputStream out = Files.newOutputStream(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
            LinkOption.NOFOLLOW_LINKS))
        {
            out.write(content.getBytes(StandardCharsets.UTF_8));
        }
        Files.move(tmp, directory.resolve(name), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /**
     * Reads a file a peer published: a regular file (not a link, a FIFO or a device), at most {@link #MAX_FILE_BYTES}.
     *
     * @throws IOException naming the file when it is not one.
     */
    public static String read(final Path file) throws IOException
    {
        // a directory others may write into lets them swap a pipe in between the check below and the open (which
        // would then wait for a writer for good), or publish a file of their own: a reader that never prepared the
        // directory (spraynic client --peer-exchange) takes the same rule as the one that did
        final String directoryProblem = OwnedDirectory.problem(file.toAbsolutePath().getParent(), "the exchange directory");
        if (null != directoryProblem)
        {
            throw new IOException(directoryProblem + ": refused");
        }
        if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS))
        {
            throw new IOException(file + " is not a regular file (a link, a FIFO or a device): refused");
        }
        if (file.getFileSystem().supportedFileAttributeViews().contains("unix"))
        {
            // in a sticky directory (as /tmp) others may make a name first, and swap a pipe in for their own file
            // between the check above and the open; a file of this user, root or the directory's owner they cannot
            final int owner = (int)Files.getAttribute(file, "unix:uid", LinkOption.NOFOLLOW_LINKS);
            final int directoryOwner = (int)Files.getAttribute(file.toAbsolutePath().getParent(), "unix:uid",
                LinkOption.NOFOLLOW_LINKS);
            if (owner != 0 && owner != directoryOwner && owner != OwnedDirectory.currentUid())
            {
                throw new IOException(file + " belongs to uid " + owner + ", not to this user, root or the " +
                    "directory's owner: refused");
            }
        }
        try (SeekableByteChannel channel = Files.newByteChannel(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS))
        {
            if (channel.size() > MAX_FILE_BYTES)
            {
                throw new IOException(file + " holds " + channel.size() + " B, more than the " + MAX_FILE_BYTES +
                    " B an exchange file may: refused");
            }
            final ByteBuffer bytes = ByteBuffer.allocate(MAX_FILE_BYTES + 1);
            while (bytes.hasRemaining() && channel.read(bytes) > 0)
            {
                // until the end, or one byte past the bound (a file that grew as it was read)
            }
            if (bytes.position() > MAX_FILE_BYTES)
            {
                throw new IOException(file + " grew past " + MAX_FILE_BYTES + " B as it was read: refused");
            }
            return new String(bytes.array(), 0, bytes.position(), StandardCharsets.UTF_8);
        }
    }

    /** Waits for a file a peer {@link #publish published} and reads it; throws if it does not come in time. */
    public static String await(final Path directory, final String name, final Duration timeout) throws IOException
    {
        final Path file = directory.resolve(name);
        final long deadline = System.nanoTime() + timeout.toNanos();
        while (!Files.exists(file))
        {
            if (System.nanoTime() >= deadline)
            {
                throw new IllegalStateException("the peer did not write " + file + " within " + timeout.toMillis() +
                    " ms: is it running, with the same exchange directory?");
            }
            try
            {
                Thread.sleep(5);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for " + file, ex);
            }
        }
        return read(file);
    }
}
