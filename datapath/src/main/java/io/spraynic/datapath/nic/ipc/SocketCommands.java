package io.spraynic.datapath.nic.ipc;

import java.security.SecureRandom;

/**
 * The {@link IpcConductor}'s commands that hand the NIC's sealed memory to a client on {@code nic.sock} (docs/IPC.md
 * I12), each answered on the socket connection it came on, an OK carrying the memory as its one descriptor:
 * HELLO (the control memory: header, command ring, broadcast), ADD_CLIENT (a new client's answer ring, with its id and
 * token) and OPEN_MEMORY (a connection's rings or a capture's rings, once each). The NIC makes every piece of memory
 * it maps as a memfd sealed against shrinking, growing and further seals, so no process, the client included, can
 * truncate it under the NIC; a descriptor handed once is closed here (the mappings keep the memory). Conductor thread
 * only.
 */
final class SocketCommands
{
    private final IpcConductor conductor;
    private final AnswerSender answers;
    private final ClientSessions sessions;
    private final IpcCounters counters;
    private final SealedMemory control;
    private final long clientTimeoutMs;
    private final SecureRandom random = new SecureRandom();
    private final IpcAnswers.Ok ok = new IpcAnswers.Ok();
    private long nextClientId = 1;

    SocketCommands(final IpcConductor conductor, final AnswerSender answers, final ClientSessions sessions,
        final IpcCounters counters, final SealedMemory control, final long clientTimeoutMs)
    {
        this.conductor = conductor;
        this.answers = answers;
        this.sessions = sessions;
        this.counters = counters;
        this.control = control;
        this.clientTimeoutMs = clientTimeoutMs;
    }

    /** HELLO: the control memory; the OK's value is its length. Asked by every client, and by liveness probes. */
    void onHello(final long correlationId)
    {
        ok.wrap(answers.response, 0).value(control.memory().byteSize());
        ok.ids(0, correlationId);
        answers.answerWithMemory(IpcMessages.OK, IpcAnswers.Ok.LENGTH, control.fd());
    }

    /** ADD_CLIENT: a new client with an answer ring of sealed memory, handed over with its id and token. */
    void onAddClient(final IpcMessages.AddClient command, final long correlationId, final int length)
    {
        if (length < IpcMessages.AddClient.LENGTH)
        {
            counters.commandsMalformed.incrementRelease();
            answers.broadcastError(0, correlationId, IpcMessages.ADD_CLIENT, IpcMessages.ERR_MALFORMED, "ADD_CLIENT of " +
                length + " B is shorter than its " + IpcMessages.AddClient.LENGTH + " B: is the client of another version?");
            return;
        }
        final IpcConductor.Limits limits = conductor.limits();
        if (sessions.clientCount() >= limits.maxClients())
        {
            counters.refusedClients.incrementRelease();
            answers.broadcastError(0, correlationId, IpcMessages.ADD_CLIENT, IpcMessages.ERR_LIMIT, "the NIC serves " +
                "its limit of " + limits.maxClients() + " clients: close one, or start the NIC with a higher " +
                "--ipc-max-clients");
            return;
        }
        final SealedMemory answerMemory;
        try
        {
            answerMemory = SealedMemory.create("spraynic-answers", IpcFileDescriptor.answerFileLength());
        }
        catch (final IllegalStateException ex)
        {
            answers.broadcastError(0, correlationId, IpcMessages.ADD_CLIENT, IpcMessages.ERR_FAILED,
                "the NIC cannot make an answer ring: " + ex.getMessage());
            return;
        }
        long token;
        do
        {
            token = random.nextLong();
        }
        while (0 == token);
        while (nextClientId > Integer.MAX_VALUE || sessions.hasClient(nextClientId))
        {
            nextClientId = nextClientId > Integer.MAX_VALUE ? 1 : nextClientId + 1; // an id is also a protection domain
        }
        final IpcClient client = new IpcClient(nextClientId++, command.pid(), token, answerMemory, conductor.nowMs(),
            answers.fromOwner());
        sessions.addClient(client);
        ok.wrap(answers.response, 0).value(clientTimeoutMs);
        ok.ids(client.id, correlationId, token);
        if (answers.answerWithMemory(IpcMessages.OK, IpcAnswers.Ok.LENGTH, answerMemory.fd()))
        {
            answerMemory.closeDescriptor(); // the client has it; the NIC keeps its mapping only
        }
        else
        {
            sessions.releaseClosed(client); // its maker went before it learnt its id: nobody can use it
        }
    }

    /** OPEN_MEMORY: the rings of one of the client's connections, or of its running capture; each handed once. */
    void onOpenMemory(final IpcClient client, final IpcMessages.ObjectCommand command)
    {
        final long correlationId = command.correlationId();
        final long objectId = command.objectId();
        final ServedConnection connection = client.connections.get(objectId);
        final SealedMemory memory = null != connection ? connection.rings.sealedMemory() :
            conductor.captureMemory(client, objectId);
        if (null == memory)
        {
            answers.refuseUnknownObject(client, correlationId, IpcMessages.OPEN_MEMORY, "connection or capture",
                objectId);
            return;
        }
        if (memory.fd() < 0)
        {
            answers.respondError(client, correlationId, IpcMessages.OPEN_MEMORY, IpcMessages.ERR_BAD_VALUE, "the memory " +
                "of " + objectId + " was handed over already: a client maps it once");
            return;
        }
        ok.wrap(answers.response, 0).value(memory.memory().byteSize());
        ok.ids(client.id, correlationId);
        if (answers.answerWithMemory(IpcMessages.OK, IpcAnswers.Ok.LENGTH, memory.fd()))
        {
            memory.closeDescriptor();
        }
    }
}
