package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.telemetry.OwnedDirectory;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;

/**
 * How a client finds and reaches a NIC (docs/IPC.md I11): it reads the announcement {@code DIR/nic.ctl} (a plain
 * read, nothing mapped) for the NIC's version, then on {@code DIR/nic.sock} asks with HELLO for the control memory and
 * with ADD_CLIENT for its own answer ring, each a sealed memfd it checks before it maps it. Also the liveness probe
 * ({@code spraynic health}) and the NIC's own check for a live NIC in its directory.
 */
final class NicDiscovery
{
    private static final Duration CONTROL_TIMEOUT = NicClient.CONTROL_TIMEOUT;

    private NicDiscovery()
    {
    }

    /**
     * Connects to the NIC serving {@code directory}, waiting up to {@code timeout} for one to start.
     *
     * @throws IllegalStateException when no NIC serves it, the NIC stopped, or it speaks another IPC version.
     */
    static NicClient connect(final Path directory, final Duration timeout)
    {
        final long deadline = System.nanoTime() + timeout.toNanos();
        String problem;
        while (true)
        {
            // the directory first: only once nobody but a trusted owner can have put nic.ctl there is it read
            problem = directoryTrustProblem(directory);
            if (null == problem)
            {
                problem = announcementProblem(directory);
            }
            if (null == problem)
            {
                final int socket = UnixSockets.connect(directory.resolve(CommandSocket.SOCKET_FILE).toString());
                if (socket >= 0)
                {
                    try
                    {
                        problem = peerTrustProblem(directory, socket);
                        if (null == problem)
                        {
                            return join(directory, socket, deadline);
                        }
                    }
                    finally
                    {
                        UnixSockets.close(socket);
                    }
                }
                else
                {
                    problem = "no NIC answers on " + directory.resolve(CommandSocket.SOCKET_FILE) + " (errno " +
                        -socket + ")";
                }
            }
            if (System.nanoTime() >= deadline || problem.startsWith("!"))
            {
                throw new IllegalStateException((problem.startsWith("!") ? problem.substring(1) : problem) +
                    " (start one with: spraynic nic ... --ipc-dir " + directory + ")");
            }
            sleep(20);
        }
    }

    /**
     * The directory a client hands its memory through must be one nobody but its owner could have filled, and that
     * owner one the client trusts (docs/IPC.md I10.12): this user or root, or another user whose directory lies where
     * only its owners can create entries. Otherwise another local user who made the directory first (the default one
     * lies in world-writable {@code /dev/shm}) would be handed every region this client registers.
     *
     * @return null when so (or when the directory does not exist yet, or the file system has no owners), else why
     * not, starting with '!' (waiting won't help).
     */
    static String directoryTrustProblem(final Path directory)
    {
        if (!Files.exists(directory, LinkOption.NOFOLLOW_LINKS) ||
            !directory.getFileSystem().supportedFileAttributeViews().contains("unix"))
        {
            return null;
        }
        if (!Files.isDirectory(directory, LinkOption.NOFOLLOW_LINKS))
        {
            return "!" + directory + " is not a directory (a link, or a file): a NIC serves from a directory of its own";
        }
        try
        {
            final int mode = (int)Files.getAttribute(directory, "unix:mode", LinkOption.NOFOLLOW_LINKS);
            final int owner = (int)Files.getAttribute(directory, "unix:uid", LinkOption.NOFOLLOW_LINKS);
            if ((mode & OwnedDirectory.GROUP_OR_OTHERS_WRITE) != 0)
            {
                return "!the IPC directory " + directory + " (mode " + Integer.toOctalString(mode & 0777) + ") may be " +
                    "written by others than its owner, who could have planted its socket: no NIC makes it so";
            }
            final Object self = IpcFiles.currentUid();
            if (owner != 0 && !Integer.valueOf(owner).equals(self))
            {
                // every directory above must be root's or the owner's and let nobody else write: else whoever may
                // write one of them could have made the path to it, and the directory with it
                for (Path above = directory.toRealPath().getParent(); null != above; above = above.getParent())
                {
                    final int aboveMode = (int)Files.getAttribute(above, "unix:mode");
                    final int aboveOwner = (int)Files.getAttribute(above, "unix:uid");
                    if ((aboveMode & OwnedDirectory.GROUP_OR_OTHERS_WRITE) != 0 || aboveOwner != 0 && aboveOwner != owner)
                    {
                        return "!the IPC directory " + directory + " belongs to uid " + owner + ", not to this user " +
                            "or root, and lies under " + above + " (uid " + aboveOwner + ", mode " +
                            Integer.toOctalString(aboveMode & 07777) + "), where others than root and its owner may " +
                            "create entries: anyone could have made it. A NIC of another user serves from a directory " +
                            "only root and its owner can have made (under /run, say)";
                    }
                }
            }
            return null;
        }
        catch (final IOException | RuntimeException ex)
        {
            return "!cannot check the owner and mode of the IPC directory " + directory + ": " + ex.getMessage();
        }
    }

    /**
     * The process that answers on the directory's socket must be its owner's (the kernel's record of who bound the
     * socket's peer, {@code SO_PEERCRED}): a socket someone else listens on is not the NIC that made the directory.
     *
     * @return null when so (or the file system has no owners), else why not, starting with '!'.
     */
    private static String peerTrustProblem(final Path directory, final int socket)
    {
        if (!directory.getFileSystem().supportedFileAttributeViews().contains("unix"))
        {
            return null;
        }
        try (UnixSockets.Received credentials = new UnixSockets.Received(8))
        {
            final int owner = (int)Files.getAttribute(directory, "unix:uid", LinkOption.NOFOLLOW_LINKS);
            final int result = UnixSockets.peerCredentials(socket, credentials);
            if (result != 0)
            {
                return "!cannot read who answers on " + directory.resolve(CommandSocket.SOCKET_FILE) + " (errno " +
                    -result + ")";
            }
            return credentials.peerUid == owner ? null : "!the process answering on " +
                directory.resolve(CommandSocket.SOCKET_FILE) + " (pid " + credentials.peerPid + ") runs as uid " +
                credentials.peerUid + ", not as uid " + owner + ", who owns " + directory + ": it is not that " +
                "directory's NIC";
        }
        catch (final IOException | RuntimeException ex)
        {
            return "!cannot check who answers on " + directory.resolve(CommandSocket.SOCKET_FILE) + ": " + ex.getMessage();
        }
    }

    /** HELLO, then ADD_CLIENT, on one connection to the NIC's socket (docs/IPC.md I11). */
    private static NicClient join(final Path directory, final int socket, final long deadline)
    {
        final MemorySegment control = hello(directory, socket, deadline, Arena.ofAuto());
        final String problem = controlProblem(directory, new UnsafeBuffer(control.address(), (int)control.byteSize()),
            IpcFileDescriptor.NIC_LIVENESS_TIMEOUT_MS);
        if (null != problem)
        {
            throw new IllegalStateException(problem.startsWith("!") ? problem.substring(1) : problem);
        }
        final UnsafeBuffer command = new UnsafeBuffer(new byte[IpcMessages.AddClient.LENGTH]);
        new IpcMessages.AddClient().wrap(command, 0).pid(ProcessHandle.current().pid());
        final SocketReply added = SocketReply.exchange(socket, IpcMessages.ADD_CLIENT, command, IpcMessages.AddClient.LENGTH,
            deadline, directory);
        final Arena answerArena = Arena.ofShared();
        try
        {
            final MemorySegment answers = SealedMemory.mapChecked(added.fd, IpcFileDescriptor.answerFileLength(),
                answerArena, "an answer ring");
            final IpcAnswers.Ok ok = new IpcAnswers.Ok().wrap(added.answer, 0);
            if (ok.value() <= 0 || 0 == ok.clientId())
            {
                throw new IllegalStateException("the NIC answered ADD_CLIENT with client " + ok.clientId() +
                    " and a client timeout of " + ok.value() + " ms");
            }
            return new NicClient(directory, control, answerArena, answers, ok);
        }
        catch (final RuntimeException ex)
        {
            answerArena.close();
            throw ex;
        }
        finally
        {
            UnixSockets.close(added.fd);
        }
    }

    /** @return the NIC's control memory, which HELLO on {@code socket} hands over, mapped in {@code arena}. */
    private static MemorySegment hello(final Path directory, final int socket, final long deadline, final Arena arena)
    {
        final UnsafeBuffer command = new UnsafeBuffer(new byte[IpcMessages.Header.LENGTH]);
        final SocketReply hello = SocketReply.exchange(socket, IpcMessages.HELLO, command, IpcMessages.Header.LENGTH,
            deadline, directory);
        try
        {
            return SealedMemory.mapChecked(hello.fd, IpcFileDescriptor.fileLength(), arena, "control memory");
        }
        finally
        {
            UnixSockets.close(hello.fd);
        }
    }

    /**
     * What a liveness probe asks ({@code spraynic health}): is a NIC of this build serving the directory, its
     * heartbeat at most {@code maxHeartbeatAgeMillis} old?
     *
     * @param ipcDir                a NIC's IPC directory.
     * @param maxHeartbeatAgeMillis the oldest heartbeat taken for a live NIC.
     * @return null when one is, else one sentence saying why not.
     */
    static String checkServed(final Path ipcDir, final long maxHeartbeatAgeMillis)
    {
        String problem = announcementProblem(ipcDir);
        if (null == problem)
        {
            final Path path = ipcDir.resolve(CommandSocket.SOCKET_FILE);
            final int socket = UnixSockets.connect(path.toString());
            if (socket < 0)
            {
                return "no NIC answers on " + path + " (errno " + -socket + "): it has stopped";
            }
            // a NIC that beats answers HELLO within its duty cycle: one that does not within the age is taken for stopped
            final long waitMs = Math.max(100, maxHeartbeatAgeMillis);
            try (Arena arena = Arena.ofConfined())
            {
                final MemorySegment control = hello(ipcDir, socket, System.nanoTime() + waitMs * 1_000_000L, arena);
                problem = controlProblem(ipcDir, new UnsafeBuffer(control.address(), (int)control.byteSize()),
                    maxHeartbeatAgeMillis);
            }
            catch (final IllegalStateException ex)
            {
                return ex.getMessage().contains("in time") ? "the NIC serving " + ipcDir + " has stopped: no heartbeat " +
                    "for " + waitMs + " ms or more (it answered no HELLO)" : ex.getMessage();
            }
            finally
            {
                UnixSockets.close(socket);
            }
        }
        return null == problem || !problem.startsWith("!") ? problem : problem.substring(1);
    }

    /**
     * Reads the announcement {@code DIR/nic.ctl} (a plain read: nothing is mapped) before anything is asked of the NIC.
     *
     * @return null when it announces a NIC of this version; else why not, starting with '!' when waiting won't help.
     */
    private static String announcementProblem(final Path directory)
    {
        final Path announcement = directory.resolve(IpcFileDescriptor.CONTROL_FILE);
        final byte[] bytes = readHeader(announcement);
        if (null == bytes)
        {
            return "no NIC serves " + directory + ": there is no " + IpcFileDescriptor.CONTROL_FILE + " in it";
        }
        final UnsafeBuffer h = new UnsafeBuffer(bytes);
        final int version = h.getInt(IpcFileDescriptor.VERSION_OFFSET, IpcMessages.ORDER);
        if (h.getInt(IpcFileDescriptor.MAGIC_OFFSET, IpcMessages.ORDER) != IpcFileDescriptor.MAGIC || version == 0)
        {
            return announcement + " is not (yet) a SprayNIC control file";
        }
        if (version != IpcFileDescriptor.VERSION)
        {
            return "!the NIC serving " + directory + " speaks IPC version " + version + ", this client " +
                IpcFileDescriptor.VERSION + ": use the same SprayNIC build on both sides";
        }
        return null;
    }

    /** @return the first {@link IpcFileDescriptor#HEADER_LENGTH} bytes of a regular file (not a link), or null. */
    private static byte[] readHeader(final Path file)
    {
        if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS))
        {
            return null;
        }
        try (java.io.InputStream in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS))
        {
            final byte[] bytes = in.readNBytes(IpcFileDescriptor.HEADER_LENGTH);
            return bytes.length == IpcFileDescriptor.HEADER_LENGTH ? bytes : null;
        }
        catch (final IOException ex)
        {
            return null;
        }
    }

    /** @return null when the control memory a NIC sent is of this version and layout, with a fresh heartbeat. */
    private static String controlProblem(final Path directory, final UnsafeBuffer h, final long maxHeartbeatAgeMillis)
    {
        final int version = h.getIntVolatile(IpcFileDescriptor.VERSION_OFFSET);
        if (h.getInt(IpcFileDescriptor.MAGIC_OFFSET, IpcMessages.ORDER) != IpcFileDescriptor.MAGIC ||
            version != IpcFileDescriptor.VERSION)
        {
            return "!the control memory the NIC serving " + directory + " sent has magic 0x" +
                Integer.toHexString(h.getInt(IpcFileDescriptor.MAGIC_OFFSET, IpcMessages.ORDER)) + " and version " +
                version + ": it is corrupt";
        }
        final int toNic = h.getInt(IpcFileDescriptor.TO_NIC_LENGTH_OFFSET, IpcMessages.ORDER);
        final int toClients = h.getInt(IpcFileDescriptor.TO_CLIENTS_LENGTH_OFFSET, IpcMessages.ORDER);
        if (toNic != IpcFileDescriptor.toNicLength() || toClients != IpcFileDescriptor.toClientsLength())
        {
            // one version has one layout (docs/IPC.md, Versions): other lengths are corruption, not a variant
            return "!the control memory of the NIC serving " + directory + " has rings of " + toNic + " and " +
                toClients + " B, not the " + IpcFileDescriptor.toNicLength() + " and " +
                IpcFileDescriptor.toClientsLength() + " B of version " + version + ": it is corrupt";
        }
        final long heartbeat = h.getLongVolatile(IpcFileDescriptor.HEARTBEAT_OFFSET);
        final long age = System.currentTimeMillis() - heartbeat;
        if (age > maxHeartbeatAgeMillis)
        {
            return "the NIC that served " + directory + " (pid " + h.getLong(IpcFileDescriptor.PID_OFFSET,
                IpcMessages.ORDER) + ") has stopped: " + (heartbeat == 0 ? "it closed" : "no heartbeat for " + age + " ms");
        }
        return null;
    }

    /**
     * @param directory an IPC directory whose {@code nic.ctl} exists.
     * @return "pid N, ..." when a live NIC serves it (of this version: its socket takes connections; of another: the
     * heartbeat in its file is fresh and its process alive), else null. Nothing is mapped.
     */
    static String describeLiveNic(final Path directory)
    {
        final byte[] bytes = readHeader(directory.resolve(IpcFileDescriptor.CONTROL_FILE));
        if (null == bytes)
        {
            return null;
        }
        final UnsafeBuffer h = new UnsafeBuffer(bytes);
        final long pid = h.getLong(IpcFileDescriptor.PID_OFFSET, IpcMessages.ORDER);
        if (h.getInt(IpcFileDescriptor.MAGIC_OFFSET, IpcMessages.ORDER) != IpcFileDescriptor.MAGIC ||
            ProcessHandle.of(pid).map(p -> !p.isAlive()).orElse(true))
        {
            return null;
        }
        if (h.getInt(IpcFileDescriptor.VERSION_OFFSET, IpcMessages.ORDER) == IpcFileDescriptor.VERSION)
        {
            final int socket = UnixSockets.connect(directory.resolve(CommandSocket.SOCKET_FILE).toString());
            if (socket < 0)
            {
                return null;
            }
            UnixSockets.close(socket);
            return "pid " + pid + ", which takes connections on " + CommandSocket.SOCKET_FILE;
        }
        final long age = System.currentTimeMillis() - h.getLong(IpcFileDescriptor.HEARTBEAT_OFFSET, IpcMessages.ORDER);
        return age <= IpcFileDescriptor.NIC_LIVENESS_TIMEOUT_MS ? "pid " + pid + " of IPC version " +
            h.getInt(IpcFileDescriptor.VERSION_OFFSET, IpcMessages.ORDER) + ", heartbeat " + age + " ms ago" : null;
    }

    private static void sleep(final long millis)
    {
        try
        {
            Thread.sleep(millis);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the NIC", ex);
        }
    }
}
