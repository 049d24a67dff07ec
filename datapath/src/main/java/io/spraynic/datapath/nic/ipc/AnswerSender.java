package io.spraynic.datapath.nic.ipc;

import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.broadcast.BroadcastTransmitter;

/**
 * How an {@link IpcConductor} answers its clients: into a client's own answer ring, on the socket connection a command
 * came on (HELLO, ADD_CLIENT, OPEN_MEMORY, with a descriptor or refused), or, for a client without an answer ring, on
 * the broadcast. Every answer is built in {@link #response} by the command's handler and sent from there. A client
 * whose answer ring is broken is dropped; one that stopped reading its answers only loses them (counted). Conductor
 * thread only.
 */
final class AnswerSender
{
    /** Where handlers build the answer they send next. */
    final UnsafeBuffer response = new UnsafeBuffer(new byte[1024]);
    private final IpcCounters counters;
    private final CommandSocket socket;
    private final BroadcastTransmitter toClients;
    private final ClientSessions sessions;
    private final IpcAnswers.Ok ok = new IpcAnswers.Ok();
    private final IpcAnswers.Error error = new IpcAnswers.Error();
    /** True while a HELLO, ADD_CLIENT or OPEN_MEMORY of the socket is handled: its answers go back on the socket. */
    private boolean socketExchange;

    AnswerSender(final IpcCounters counters, final CommandSocket socket, final BroadcastTransmitter toClients,
        final ClientSessions sessions)
    {
        this.counters = counters;
        this.socket = socket;
        this.toClients = toClients;
        this.sessions = sessions;
    }

    /** Answers go back on the socket while {@code onSocket} (a HELLO, ADD_CLIENT or OPEN_MEMORY is handled). */
    void socketExchange(final boolean onSocket)
    {
        socketExchange = onSocket;
    }

    /** @return whether the command handled now came on the socket and is answered there. */
    boolean socketExchange()
    {
        return socketExchange;
    }

    /** @return whether the command being handled came on the socket from this NIC's user or root. */
    boolean fromOwner()
    {
        return socket.fromOwner();
    }

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

    /** Refuses a command naming an object the client does not hold; counts it apart when another client holds it. */
    void refuseUnknownObject(final IpcClient client, final long correlationId, final int type, final String what,
        final long objectId)
    {
        if (sessions.heldByAnother(client, objectId))
        {
            counters.commandsForeignObject.incrementRelease();
        }
        respondError(client, correlationId, type, IpcMessages.ERR_UNKNOWN_OBJECT, "client " + client.id + " has no " +
            what + " " + objectId);
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
            sessions.drop(client, counters.droppedBadAnswerRing, "broke its answer ring (" + ex.getMessage() + ")");
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
}
