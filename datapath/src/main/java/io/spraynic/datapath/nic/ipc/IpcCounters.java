package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.datapath.nic.WorkRequestSource;
import org.agrona.concurrent.status.AtomicCounter;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The IPC conductor's counters in the NIC's counters file ({@code ipc: ...}): gauges, totals, and one counter per
 * reason a command, a ring or a client was refused or dropped, so every hostile input is accounted for. Regions and
 * connections are made and freed on control threads, and the work request and completion counters by the workers that
 * read the clients' rings, so those are updated atomically; the rest only by the conductor thread. Also the conductor's rate-limited log of unexpected errors.
 */
final class IpcCounters
{
    final AtomicCounter clients;
    final AtomicCounter regions;
    final AtomicCounter connections;
    final AtomicCounter commands;
    final AtomicCounter commandErrors;
    final AtomicCounter clientsTimedOut;
    final AtomicCounter clientsClosed;
    final AtomicCounter requestsTaken;
    final AtomicCounter requestsRefused;
    /** Per {@code WorkRequestSource.REFUSED_*} reason. */
    final AtomicCounter[] requestsRefusedBy = new AtomicCounter[WorkRequestSource.REFUSAL_REASONS];
    final AtomicCounter requestsMalformed;
    final AtomicCounter completionsRelayed;
    final AtomicCounter errors;

    final AtomicCounter commandsBadToken;
    final AtomicCounter commandsUnknownClient;
    final AtomicCounter commandsMalformed;
    final AtomicCounter commandsForeignObject;
    final AtomicCounter commandRingResets;
    final AtomicCounter commandRingUnblocks;
    final AtomicCounter droppedCorruptRing;
    final AtomicCounter droppedBadAnswerRing;
    final AtomicCounter droppedUnexpected;
    final AtomicCounter refusedClients;
    final AtomicCounter refusedRegions;
    final AtomicCounter refusedConnections;
    final AtomicCounter answersLost;
    final AtomicCounter unexpectedCommands;
    final AtomicCounter unexpectedResults;
    final AtomicCounter unexpectedTimeOuts;
    final AtomicCounter captures;
    final AtomicCounter capturesEnded;
    final AtomicCounter refusedCaptures;
    final AtomicCounter refusedMemory;
    final AtomicCounter refusedPeerAddresses;
    /** Connections refused while the client had {@link IpcConductor#MAX_UNCOLLECTED_CONNECTIONS} uncollected. */
    final AtomicCounter refusedUncollected;
    /** Connections closed because their client did not collect their rings within the client timeout. */
    final AtomicCounter connectionsUncollected;
    final AtomicCounter socketConnections;
    final AtomicCounter socketRefusedConnections;
    final AtomicCounter socketRefusedCredentials;
    final AtomicCounter socketIdleClosed;
    final AtomicCounter socketDroppedTooLong;
    final AtomicCounter socketDroppedDescriptors;
    final AtomicCounter socketDroppedMalformed;
    final AtomicCounter socketRepliesLost;
    final AtomicCounter unexpectedSocket;

    private final List<AtomicCounter> all = new ArrayList<>();
    private final Map<String, long[]> logged = new HashMap<>();

    IpcCounters(final CountersFile file)
    {
        clients = add(file, "ipc: clients");
        regions = add(file, "ipc: regions");
        connections = add(file, "ipc: connections");
        commands = add(file, "ipc: commands");
        commandErrors = add(file, "ipc: commands refused");
        clientsTimedOut = add(file, "ipc: clients timed out");
        clientsClosed = add(file, "ipc: clients closed");
        requestsTaken = add(file, "ipc: work requests taken");
        requestsRefused = add(file, "ipc: work requests refused");
        requestsRefusedBy[WorkRequestSource.REFUSED_LKEY] = add(file, "ipc: work requests refused: unknown lkey");
        requestsRefusedBy[WorkRequestSource.REFUSED_OUT_OF_REGION] =
            add(file, "ipc: work requests refused: memory outside the region");
        requestsRefusedBy[WorkRequestSource.REFUSED_LENGTH] = add(file, "ipc: work requests refused: negative length");
        requestsRefusedBy[WorkRequestSource.REFUSED_OPCODE] = add(file, "ipc: work requests refused: bad opcode or flags");
        requestsRefusedBy[WorkRequestSource.REFUSED_STREAM] = add(file, "ipc: work requests refused: unknown stream");
        requestsRefusedBy[WorkRequestSource.REFUSED_BY_TRANSPORT] = add(file, "ipc: work requests refused: by the transport");
        requestsMalformed = add(file, "ipc: request records skipped: not a work request");
        completionsRelayed = add(file, "ipc: completions relayed");
        errors = add(file, "ipc: conductor errors");
        commandsBadToken = add(file, "ipc: commands dropped: wrong token");
        commandsUnknownClient = add(file, "ipc: commands refused: unknown client");
        commandsMalformed = add(file, "ipc: commands refused: malformed");
        commandsForeignObject = add(file, "ipc: commands refused: object not the client's");
        commandRingResets = add(file, "ipc: command ring resets: corrupt records");
        commandRingUnblocks = add(file, "ipc: command ring claims unblocked");
        droppedCorruptRing = add(file, "ipc: clients dropped: corrupt request ring");
        droppedBadAnswerRing = add(file, "ipc: clients dropped: unwritable answer or completion ring");
        droppedUnexpected = add(file, "ipc: clients dropped: unexpected error");
        refusedClients = add(file, "ipc: refused: clients limit");
        refusedRegions = add(file, "ipc: refused: regions per client limit");
        refusedConnections = add(file, "ipc: refused: connections per client limit");
        answersLost = add(file, "ipc: answers lost: answer ring full");
        unexpectedCommands = add(file, "ipc: unexpected errors: commands");
        unexpectedResults = add(file, "ipc: unexpected errors: control results");
        unexpectedTimeOuts = add(file, "ipc: unexpected errors: client time-outs");
        captures = add(file, "ipc: captures started");
        capturesEnded = add(file, "ipc: captures ended");
        refusedCaptures = add(file, "ipc: captures refused");
        refusedMemory = add(file, "ipc: refused: memory not a sealed memfd of the size");
        refusedPeerAddresses = add(file, "ipc: refused: peer address not unicast or not of the plane's family");
        socketConnections = add(file, "ipc: socket connections");
        socketRefusedConnections = add(file, "ipc: socket connections refused: limit");
        socketRefusedCredentials = add(file, "ipc: socket connections refused: credentials");
        socketIdleClosed = add(file, "ipc: socket connections closed: idle");
        socketDroppedTooLong = add(file, "ipc: socket messages dropped: too long");
        socketDroppedDescriptors = add(file, "ipc: socket messages dropped: not the descriptors its type carries");
        socketDroppedMalformed = add(file, "ipc: socket messages dropped: not a socket command of this version");
        socketRepliesLost = add(file, "ipc: socket replies lost");
        unexpectedSocket = add(file, "ipc: unexpected errors: socket");
        refusedUncollected = add(file, "ipc: refused: connections with rings not collected limit");
        connectionsUncollected = add(file, "ipc: connections closed: rings not collected");
    }

    private AtomicCounter add(final CountersFile file, final String label)
    {
        final AtomicCounter counter = file.newCounter(label);
        all.add(counter);
        return counter;
    }

    /**
     * Counts an unexpected error and logs it: the first of each reason (where and which exception) with its stack,
     * then at most one line per reason every {@code intervalMs}, saying how many were not logged.
     */
    void unexpected(final AtomicCounter where, final String stage, final Throwable error, final long nowMs,
        final long intervalMs)
    {
        where.incrementRelease();
        errors.incrementRelease();
        log(stage + ": " + error.getClass().getName(), error, nowMs, intervalMs);
    }

    /**
     * Logs {@code reason} (with {@code error}'s stack the first time, when not null) at most once every
     * {@code intervalMs}; the next line says how many occurrences were not logged.
     *
     * Synchronized: the conductor and the release thread both log (control path, never per packet).
     *
     * @return true when it printed.
     */
    synchronized boolean log(final String reason, final Throwable error, final long nowMs, final long intervalMs)
    {
        final long[] state = logged.computeIfAbsent(reason, k -> new long[]{Long.MIN_VALUE, 0}); // {last logged, held back}
        if (state[0] != Long.MIN_VALUE && nowMs - state[0] < intervalMs)
        {
            state[1]++;
            return false;
        }
        final boolean first = state[0] == Long.MIN_VALUE;
        System.err.println("spraynic ipc: " + reason + (null != error && null != error.getMessage() ?
            ": " + error.getMessage() : "") + (state[1] > 0 ? " (and " + state[1] + " more not logged)" : ""));
        if (first && null != error)
        {
            error.printStackTrace();
        }
        state[0] = nowMs;
        state[1] = 0;
        return true;
    }

    void close()
    {
        for (final AtomicCounter c : all)
        {
            c.close();
        }
    }
}
