package io.spraynic.datapath.nic.ipc;

import org.agrona.MutableDirectBuffer;

/**
 * Takes each command of an {@link IpcConductor}'s clients, from the command ring or from the socket with the memory it
 * carries, and checks it at the boundary in one fixed order before any handler sees it: its length against the
 * header; HELLO and ADD_CLIENT only on the socket; a known client; that client's token (else no answer at all, so
 * nobody can flood another client's answer ring); its length against its type's fixed part; then what a capture-only
 * NIC serves. It then hands the command to its handler ({@link SocketCommands}, {@link RegionCommands},
 * {@link ConnectionCommands}, {@link IpcCaptures}). Never throws: an unexpected exception is counted and costs only
 * the client it came from. Conductor thread only.
 */
final class CommandDispatcher
{
    private static final long LOG_INTERVAL_MS = 10_000;

    private final IpcConductor conductor;
    private final boolean captureOnly;
    private final IpcCounters counters;
    private final ClientSessions sessions;
    private final AnswerSender answers;
    private final SocketCommands socketCommands;
    private final RegionCommands regionCommands;
    private final ConnectionCommands connectionCommands;
    private final IpcCaptures captures;
    private final IpcMessages.Header commandHeader = new IpcMessages.Header();
    private final IpcMessages.AddClient addClient = new IpcMessages.AddClient();
    private final IpcMessages.Register register = new IpcMessages.Register();
    private final IpcMessages.ObjectCommand objectCommand = new IpcMessages.ObjectCommand();
    private final IpcMessages.Connect connect = new IpcMessages.Connect();
    private final IpcMessages.ConnectQueuePair connectQueuePair = new IpcMessages.ConnectQueuePair();
    private final IpcMessages.StartCapture startCapture = new IpcMessages.StartCapture();
    /** The command ring's handler. */
    final UntrustedRingReader.Handler ringHandler = this::onRingCommand;
    /** The socket's handler. */
    final CommandSocket.Handler socketHandler = this::onSocketCommand;

    CommandDispatcher(final IpcConductor conductor, final boolean captureOnly, final IpcCounters counters,
        final ClientSessions sessions, final AnswerSender answers, final SocketCommands socketCommands,
        final RegionCommands regionCommands, final ConnectionCommands connectionCommands, final IpcCaptures captures)
    {
        this.conductor = conductor;
        this.captureOnly = captureOnly;
        this.counters = counters;
        this.sessions = sessions;
        this.answers = answers;
        this.socketCommands = socketCommands;
        this.regionCommands = regionCommands;
        this.connectionCommands = connectionCommands;
        this.captures = captures;
    }

    /** One command record, copied out of the command ring; never throws (a client that makes it throw is dropped). */
    private boolean onRingCommand(final int type, final MutableDirectBuffer buffer, final int length)
    {
        onCommand(type, buffer, length, -1);
        return true;
    }

    /** One command of the socket: REGISTER with its memfd, or a HELLO, ADD_CLIENT or OPEN_MEMORY answered there. */
    private void onSocketCommand(final int type, final MutableDirectBuffer buffer, final int length, final int memoryFd)
    {
        answers.socketExchange(type != IpcMessages.REGISTER);
        try
        {
            onCommand(type, buffer, length, memoryFd);
        }
        finally
        {
            answers.socketExchange(false);
        }
    }

    /**
     * One command, copied out of the command ring ({@code memoryFd} -1) or received on the socket with the memfd it
     * carries (closed by the socket after this returns: what is kept is mapped); never throws.
     */
    void onCommand(final int type, final MutableDirectBuffer buffer, final int length, final int memoryFd)
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
                if (!answers.socketExchange())
                {
                    counters.commandsMalformed.incrementRelease();
                    answers.broadcastError(0, correlationId, type, IpcMessages.ERR_MALFORMED, IpcMessages.name(type) +
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
            client = sessions.client(clientId);
            if (null == client)
            {
                counters.commandsUnknownClient.incrementRelease();
                if (type != IpcMessages.KEEPALIVE)
                {
                    answers.broadcastError(clientId, correlationId, type, IpcMessages.ERR_NOT_CONNECTED, "client " +
                        clientId + " is not connected to this NIC (it timed out, closed or was dropped): connect again");
                }
                return;
            }
            if (commandHeader.token() != client.token)
            {
                // someone writes in another client's name: no answer (that would let it flood the victim's answer ring)
                counters.commandsBadToken.incrementRelease();
                counters.log("dropped commands that name client " + clientId + " without its token", null,
                    conductor.nowMs(), LOG_INTERVAL_MS);
                return;
            }
            client.lastSeenMs = conductor.nowMs();
            final int fixed = IpcMessages.fixedLength(type);
            if (fixed < 0 || length < fixed)
            {
                counters.commandsMalformed.incrementRelease();
                answers.respondError(client, correlationId, type, IpcMessages.ERR_MALFORMED, fixed < 0 ?
                    "unknown command type " + type : IpcMessages.name(type) + " of " + length +
                    " B is shorter than its " + fixed + " B: is the client of another version?");
                return;
            }
            if (captureOnly && type != IpcMessages.KEEPALIVE && type != IpcMessages.CLOSE_CLIENT &&
                type != IpcMessages.START_CAPTURE && type != IpcMessages.STOP_CAPTURE && type != IpcMessages.OPEN_MEMORY)
            {
                answers.respondError(client, correlationId, type, IpcMessages.ERR_NOT_PERMITTED, "this NIC runs in " +
                    "classify mode: it serves live capture (spraynic capture) only, no memory or connections");
                return;
            }
            switch (type)
            {
                case IpcMessages.KEEPALIVE ->
                {
                }
                case IpcMessages.CLOSE_CLIENT ->
                {
                    answers.respondOk(client, correlationId, 0); // before its answer ring goes
                    sessions.releaseClosed(client);
                }
                case IpcMessages.REGISTER -> regionCommands.onRegister(client, register.wrap(buffer, 0), memoryFd);
                case IpcMessages.DEREGISTER -> regionCommands.onDeregister(client, objectCommand.wrap(buffer, 0));
                case IpcMessages.CONNECT, IpcMessages.ACCEPT, IpcMessages.CREATE_QUEUE_PAIR ->
                    connectionCommands.onConnect(client, type, connect.wrap(buffer, 0));
                case IpcMessages.CONNECT_QUEUE_PAIR ->
                    connectionCommands.onConnectQueuePair(client, connectQueuePair.wrap(buffer, 0));
                case IpcMessages.CLOSE_CONNECTION ->
                    connectionCommands.onCloseConnection(client, objectCommand.wrap(buffer, 0));
                case IpcMessages.START_CAPTURE -> captures.onStart(client, startCapture.wrap(buffer, 0));
                case IpcMessages.STOP_CAPTURE -> captures.onStop(client, objectCommand.wrap(buffer, 0));
                case IpcMessages.OPEN_MEMORY ->
                {
                    if (answers.socketExchange())
                    {
                        socketCommands.onOpenMemory(client, objectCommand.wrap(buffer, 0));
                    }
                    else
                    {
                        counters.commandsMalformed.incrementRelease();
                        answers.respondError(client, correlationId, type, IpcMessages.ERR_MALFORMED, "OPEN_MEMORY " +
                            "goes on " + CommandSocket.SOCKET_FILE + ", which answers it with the memory");
                    }
                }
                default -> answers.respondError(client, correlationId, type, IpcMessages.ERR_MALFORMED,
                    "unknown command type " + type);
            }
        }
        catch (final RuntimeException ex)
        {
            counters.unexpected(counters.unexpectedCommands, "command " + IpcMessages.name(type), ex,
                conductor.nowMs(), LOG_INTERVAL_MS);
            if (null != client && !client.released)
            {
                sessions.drop(client, counters.droppedUnexpected, "an unexpected error in its " +
                    IpcMessages.name(type));
            }
        }
    }
}
