package io.spraynic.datapath.nic.ipc;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.broadcast.BroadcastReceiver;
import org.agrona.concurrent.broadcast.CopyBroadcastReceiver;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/**
 * A {@link NicClient}'s command path to its NIC (docs/IPC.md I11): a command, built in {@link #command}, goes with
 * the client's id, a correlation id and its token into the command ring or, with the memory it carries, onto
 * {@code nic.sock}; its answer is awaited in the client's own answer ring, or as a refusal on the broadcast, and left
 * in {@link #reply}. The wait fails when the NIC stops, resets its command ring, or lets the deadline pass. Also the
 * socket exchange of OPEN_MEMORY, and the keepalives, sent on a daemon thread of their own. One caller at a time (the
 * client serializes its control calls); the keepalive thread only writes into the command ring, which takes many
 * producers.
 */
final class ClientCommandChannel
{
    /** Answer records a wait reads before it looks at its deadline again. */
    static final int ANSWERS_PER_PASS = 16;
    /** How long a control call waits for the NIC beyond the time the call itself gives the NIC. */
    static final Duration CONTROL_TIMEOUT = NicClient.CONTROL_TIMEOUT;

    /** Where the caller builds the command it sends next (after the 24-byte header, which {@link #send} writes). */
    final UnsafeBuffer command = new UnsafeBuffer(new byte[1024]);
    /** Where the answer of the last command is left. */
    final UnsafeBuffer reply = new UnsafeBuffer(new byte[1024]);
    private final Path directory;
    private final UnsafeBuffer header;
    private final ManyToOneRingBuffer toNic;
    private final CopyBroadcastReceiver fromNic;
    private final UntrustedRingReader answers;
    private final UntrustedRingReader.Handler replyHandler = this::onReply;
    private final long clientId;
    private final long token;
    private final long nicPid;
    private final long clientTimeoutMs;
    private final IpcMessages.Header commandHeader = new IpcMessages.Header();
    private final IpcAnswers.Ok ok = new IpcAnswers.Ok();
    private final IpcAnswers.Error error = new IpcAnswers.Error();
    private final MessageHandler refusalHandler = this::onRefusal;
    private final Thread keepalive;
    /**
     * This client's next correlation id: its own sequence from a random start, not the command ring's shared counter,
     * which any co-client may rewind to have this client take a stale answer for a new call (docs/IPC.md I10.8).
     */
    private long nextCorrelationId;
    private long awaitedCorrelationId;
    private long awaitedClientId;
    private int replyType;
    private int replyLength;
    private volatile boolean closed;

    /**
     * @param controlMemory the NIC's control memory (I3), checked by the caller.
     * @param answerMemory  this client's answer ring (I3.4), checked by the caller.
     * @param added         the NIC's OK to ADD_CLIENT: the client's id, token and timeout.
     */
    ClientCommandChannel(final Path directory, final MemorySegment controlMemory, final MemorySegment answerMemory,
        final IpcAnswers.Ok added)
    {
        this.directory = directory;
        this.answers = new UntrustedRingReader(new UnsafeBuffer(answerMemory.address(), (int)answerMemory.byteSize()),
            reply.capacity());
        this.header = new UnsafeBuffer(controlMemory.address(), (int)controlMemory.byteSize());
        this.nicPid = header.getLong(IpcFileDescriptor.PID_OFFSET, IpcMessages.ORDER);
        final int toNicLength = header.getInt(IpcFileDescriptor.TO_NIC_LENGTH_OFFSET, IpcMessages.ORDER);
        final int toClientsLength = header.getInt(IpcFileDescriptor.TO_CLIENTS_LENGTH_OFFSET, IpcMessages.ORDER);
        this.toNic = new ManyToOneRingBuffer(new UnsafeBuffer(header, IpcFileDescriptor.HEADER_LENGTH, toNicLength));
        this.fromNic = new CopyBroadcastReceiver(new BroadcastReceiver(
            new UnsafeBuffer(header, IpcFileDescriptor.HEADER_LENGTH + toNicLength, toClientsLength)));
        this.clientTimeoutMs = added.value();
        this.clientId = added.clientId();
        this.token = added.token();
        this.nextCorrelationId = new java.security.SecureRandom().nextLong() >>> 1;
        this.keepalive = new Thread(this::sendKeepalives, "spraynic-client-keepalive");
        keepalive.setDaemon(true);
        keepalive.start();
    }

    long clientId()
    {
        return clientId;
    }

    long token()
    {
        return token;
    }

    long nicPid()
    {
        return nicPid;
    }

    long clientTimeoutMs()
    {
        return clientTimeoutMs;
    }

    /** @return true once the NIC closed (one volatile read: the posting path checks it). */
    boolean isNicClosed()
    {
        return header.getLongVolatile(IpcFileDescriptor.HEARTBEAT_OFFSET) == 0;
    }

    /** @return true once the NIC closed or its heartbeat is older than {@link IpcFileDescriptor#NIC_LIVENESS_TIMEOUT_MS}. */
    boolean isNicStopped()
    {
        final long heartbeat = header.getLongVolatile(IpcFileDescriptor.HEARTBEAT_OFFSET);
        return heartbeat == 0 || System.currentTimeMillis() - heartbeat > IpcFileDescriptor.NIC_LIVENESS_TIMEOUT_MS;
    }

    /**
     * Sends the command in {@link #command} in this client's name and waits for its answer, left in {@link #reply}.
     *
     * @return the OK's value, or 0 for other answers.
     */
    long send(final int type, final int length, final Duration timeout, final int memoryFd)
    {
        return send(type, length, timeout, clientId, token, memoryFd);
    }

    /** Sends a command on the command ring or, with the memory it carries ({@code memoryFd} >= 0), on the NIC's socket. */
    private long send(final int type, final int length, final Duration timeout, final long clientId, final long token,
        final int memoryFd)
    {
        final int epoch = commandRingEpoch();
        final long correlationId = nextCorrelationId++;
        commandHeader.wrap(command, 0);
        commandHeader.ids(clientId, correlationId, token);
        final long deadline = System.nanoTime() + timeout.toNanos();
        if (memoryFd >= 0)
        {
            sendWithMemory(type, length, memoryFd);
        }
        else
        {
            while (!toNic.write(type, command, 0, length))
            {
                failIfStopped(type, deadline, epoch);
                Thread.onSpinWait();
            }
        }
        awaitedCorrelationId = correlationId;
        awaitedClientId = clientId;
        replyType = 0;
        int idle = 0;
        while (0 == replyType)
        {
            // a few records a pass: a NIC that never stops writing answers must not keep the deadline from its check
            int work = answers.read(replyHandler, ANSWERS_PER_PASS);
            if (work == UntrustedRingReader.CORRUPT)
            {
                throw new IllegalStateException("the NIC (pid " + nicPid + ") serving " + directory + " wrote " +
                    answers.corruption() + " into this client's answer ring, which no NIC of this version writes: " +
                    "the answer to " + IpcMessages.name(type) + " is lost");
            }
            if (0 == replyType)
            {
                try
                {
                    work += fromNic.receive(refusalHandler);
                }
                catch (final IllegalStateException lapped)
                {
                    // the broadcast lapped this client while it copied: a refusal may be gone, the deadline tells
                    work++;
                }
            }
            if (0 == replyType)
            {
                // on every pass, not only idle ones: records a co-client keeps writing into the broadcast (or a lap
                // it forces) must not keep a call from its deadline
                failIfStopped(type, deadline, epoch);
            }
            if (0 == work && 0 == replyType)
            {
                // spin for a quick answer, then park: a handshake may take seconds
                if (++idle < 1000)
                {
                    Thread.onSpinWait();
                }
                else
                {
                    LockSupport.parkNanos(100_000);
                }
            }
        }
        if (replyType == IpcMessages.ERROR)
        {
            final IpcAnswers.Error refusal = error.wrap(reply, 0);
            final String message = refusal.boundedMessage(replyLength);
            throw new NicRefusedException(type, refusal.code(), "the NIC refused " + IpcMessages.name(type) + " (" +
                IpcMessages.errorName(refusal.code()) + "): " + (null == message ? "(its reason's length is " +
                "corrupt)" : message));
        }
        return replyType == IpcMessages.OK ? ok.wrap(reply, 0).value() : 0;
    }

    /** One message on {@code DIR/nic.sock}: type, version, the command; the memfd as its one descriptor. */
    private void sendWithMemory(final int type, final int length, final int memoryFd)
    {
        if (isNicStopped())
        {
            throw new IllegalStateException("the NIC (pid " + nicPid + ") serving " + directory + " has stopped");
        }
        final Path path = directory.resolve(CommandSocket.SOCKET_FILE);
        final int socket = UnixSockets.connect(path.toString());
        if (socket < 0)
        {
            throw new IllegalStateException("cannot connect to the NIC's socket " + path + " (errno " + -socket +
                "): is the NIC of IPC version " + IpcFileDescriptor.VERSION + " still running?");
        }
        try
        {
            final byte[] message = new byte[CommandSocket.MESSAGE_HEADER_LENGTH + length];
            final UnsafeBuffer buffer = new UnsafeBuffer(message);
            buffer.putInt(0, type, IpcMessages.ORDER);
            buffer.putInt(CommandSocket.VERSION_OFFSET, IpcFileDescriptor.VERSION, IpcMessages.ORDER);
            buffer.putBytes(CommandSocket.MESSAGE_HEADER_LENGTH, command, 0, length);
            final long sent = UnixSockets.send(socket, message, memoryFd);
            if (sent != message.length)
            {
                throw new IllegalStateException("cannot send " + IpcMessages.name(type) + " on " + path + " (" +
                    (sent < 0 ? "errno " + -sent : sent + " B of " + message.length) + ")");
            }
        }
        finally
        {
            UnixSockets.close(socket);
        }
    }

    /**
     * OPEN_MEMORY on the NIC's socket: the memory of connection or capture {@code objectId}, whose descriptor the
     * caller maps and closes.
     *
     * @throws NicRefusedException when the NIC refuses.
     */
    SocketReply openMemory(final long objectId)
    {
        final UnsafeBuffer open = new UnsafeBuffer(new byte[IpcMessages.ObjectCommand.LENGTH]);
        final IpcMessages.ObjectCommand c = new IpcMessages.ObjectCommand().wrap(open, 0);
        c.object(objectId, 0);
        c.ids(clientId, nextCorrelationId++, token);
        final Path path = directory.resolve(CommandSocket.SOCKET_FILE);
        final int socket = UnixSockets.connect(path.toString());
        if (socket < 0)
        {
            throw new IllegalStateException("cannot connect to the NIC's socket " + path + " (errno " + -socket + ")");
        }
        try
        {
            return SocketReply.exchange(socket, IpcMessages.OPEN_MEMORY, open, IpcMessages.ObjectCommand.LENGTH,
                System.nanoTime() + CONTROL_TIMEOUT.toNanos(), directory);
        }
        finally
        {
            UnixSockets.close(socket);
        }
    }

    private int commandRingEpoch()
    {
        return header.getIntVolatile(IpcFileDescriptor.COMMAND_RING_EPOCH_OFFSET);
    }

    private void failIfStopped(final int type, final long deadline, final int epoch)
    {
        if (isNicStopped())
        {
            throw new IllegalStateException("the NIC (pid " + nicPid + ") serving " + directory + " has stopped");
        }
        if (commandRingEpoch() != epoch)
        {
            throw new IllegalStateException("the NIC (pid " + nicPid + ") reset its command ring, which some process " +
                "corrupted, and " + IpcMessages.name(type) + " may have been lost with it: retry the call");
        }
        if (System.nanoTime() >= deadline)
        {
            throw new IllegalStateException("the NIC (pid " + nicPid + ") did not answer " + IpcMessages.name(type) +
                " in time: is it overloaded, or did it time this client out?");
        }
    }

    /** An answer from this client's own ring, copied out of it: older answers (of calls that failed) are skipped. */
    private boolean onReply(final int type, final MutableDirectBuffer record, final int length)
    {
        if (0 == replyType && length >= IpcMessages.Header.LENGTH &&
            record.getLong(IpcMessages.Header.CORRELATION_ID_OFFSET, IpcMessages.ORDER) == awaitedCorrelationId)
        {
            takeReply(type, record, 0, length);
        }
        return true;
    }

    /** Leaves an answer in {@link #reply}, the rest of it zeroed: nothing of an earlier answer is read as this one's. */
    private void takeReply(final int type, final MutableDirectBuffer buffer, final int index, final int length)
    {
        final int taken = Math.min(length, reply.capacity());
        reply.putBytes(0, buffer, index, taken);
        reply.setMemory(taken, reply.capacity() - taken, (byte)0);
        replyLength = taken;
        replyType = type;
    }

    /** A refusal on the broadcast: for a client the NIC does not know (any more), or an ADD_CLIENT it refused. */
    private void onRefusal(final int type, final MutableDirectBuffer buffer, final int index, final int length)
    {
        if (type != IpcMessages.ERROR || length < IpcMessages.Header.LENGTH ||
            buffer.getLong(index + IpcMessages.Header.CLIENT_ID_OFFSET, IpcMessages.ORDER) != awaitedClientId ||
            buffer.getLong(index + IpcMessages.Header.CORRELATION_ID_OFFSET, IpcMessages.ORDER) != awaitedCorrelationId)
        {
            return;
        }
        takeReply(type, buffer, index, length);
    }

    /** Stops the keepalives, as a process that hangs would (tests). */
    void stopKeepalives()
    {
        keepalive.interrupt();
    }

    /** Stops the keepalives for good: the client left. */
    void close()
    {
        closed = true;
        keepalive.interrupt();
    }

    private void sendKeepalives()
    {
        final UnsafeBuffer keepaliveCommand = new UnsafeBuffer(new byte[IpcMessages.Header.LENGTH]);
        new IpcMessages.Header().wrap(keepaliveCommand, 0).ids(clientId, 0, token);
        final long intervalMs = Math.max(10, clientTimeoutMs / 5);
        while (!closed)
        {
            toNic.write(IpcMessages.KEEPALIVE, keepaliveCommand, 0, IpcMessages.Header.LENGTH);
            try
            {
                Thread.sleep(intervalMs);
            }
            catch (final InterruptedException ex)
            {
                return;
            }
        }
    }

}
