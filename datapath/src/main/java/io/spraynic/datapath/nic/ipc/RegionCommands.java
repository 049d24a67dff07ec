package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.nic.EmbeddedNic;
import io.spraynic.datapath.nic.MemoryStillNamedException;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The {@link IpcConductor}'s REGISTER and DEREGISTER: a region is the client's own memfd, sealed against shrinking,
 * received on the NIC's socket ({@link CommandSocket}); its seals and size are checked and it is mapped on the
 * conductor, registered in the client's protection domain on a control thread, and deregistered and unmapped there.
 * Conductor thread only, except {@link #releaseRegion}.
 */
final class RegionCommands
{
    private final IpcConductor conductor;
    private final AnswerSender answers;
    private final EmbeddedNic nic;
    private final IpcCounters counters;
    private final IpcConductor.Limits limits;
    private final IpcAnswers.RegionReady regionReady = new IpcAnswers.RegionReady();

    RegionCommands(final IpcConductor conductor, final AnswerSender answers, final EmbeddedNic nic,
        final IpcCounters counters, final IpcConductor.Limits limits)
    {
        this.conductor = conductor;
        this.answers = answers;
        this.nic = nic;
        this.counters = counters;
        this.limits = limits;
    }

    /** REGISTER: the region is the client's own sealed memfd, checked and mapped here, registered on a control thread. */
    void onRegister(final IpcClient client, final IpcMessages.Register command, final int memoryFd)
    {
        final long correlationId = command.correlationId();
        final long bytes = command.regionLength();
        final int access = command.access();
        if (bytes <= 0 || bytes > IpcConductor.MAX_REGION_BYTES)
        {
            answers.respondError(client, correlationId, IpcMessages.REGISTER, IpcMessages.ERR_BAD_VALUE, "a region of " + bytes +
                " B is not in 1.." + IpcConductor.MAX_REGION_BYTES);
            return;
        }
        try
        {
            AccessFlags.validate(access);
        }
        catch (final IllegalArgumentException ex)
        {
            answers.respondError(client, correlationId, IpcMessages.REGISTER, IpcMessages.ERR_BAD_VALUE, ex.getMessage());
            return;
        }
        if (client.regions.size() + client.pendingRegions >= limits.maxRegionsPerClient())
        {
            counters.refusedRegions.incrementRelease();
            answers.respondError(client, correlationId, IpcMessages.REGISTER, IpcMessages.ERR_LIMIT, "client " + client.id +
                " holds its limit of " + limits.maxRegionsPerClient() + " regions: deregister one first, or start the " +
                "NIC with a higher --ipc-max-regions");
            return;
        }
        if (memoryFd < 0)
        {
            counters.commandsMalformed.incrementRelease();
            answers.respondError(client, correlationId, IpcMessages.REGISTER, IpcMessages.ERR_MALFORMED, "REGISTER carries the " +
                "region's memory: send it on " + CommandSocket.SOCKET_FILE + " with a sealed memfd (IPC version " +
                IpcFileDescriptor.VERSION + "), not on the command ring");
            return;
        }
        final String problem = SealedMemory.receivedProblem(memoryFd, bytes);
        if (null != problem)
        {
            counters.refusedMemory.incrementRelease();
            answers.respondError(client, correlationId, IpcMessages.REGISTER, IpcMessages.ERR_BAD_VALUE, "the region's memory " +
                "is refused: " + problem + "; pass a memfd_create(MFD_ALLOW_SEALING) of the length, sealed with " +
                "F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL");
            return;
        }
        final Arena arena = Arena.ofShared();
        final MemorySegment segment;
        try
        {
            segment = SealedMemory.mapReceived(memoryFd, bytes, arena); // sealed: no later truncation can fault it
        }
        catch (final IOException | RuntimeException ex)
        {
            arena.close();
            answers.respondError(client, correlationId, IpcMessages.REGISTER, IpcMessages.ERR_FAILED, "the NIC cannot map the " +
                "region's memfd of " + bytes + " B: " + ex.getMessage());
            return;
        }
        final long regionId = conductor.nextObjectId();
        client.pendingRegions++;
        conductor.submit(client, correlationId, IpcMessages.REGISTER, () ->
        {
            try
            {
                final MemoryRegion region = nic.register(segment, access, client.domain());
                counters.regions.increment();
                return new IpcClient.Region(regionId, arena, region);
            }
            catch (final MemoryStillNamedException stillNamed)
            {
                // a worker may yet place into it: unmapped only once every worker let go of it
                stillNamed.unnamed().thenRun(arena::close);
                throw new IllegalStateException("could not register a region of " + bytes + " B: " +
                    stillNamed.getMessage(), stillNamed);
            }
            catch (final RuntimeException ex)
            {
                arena.close();
                throw new IllegalStateException("could not register a region of " + bytes + " B: " + ex.getMessage(), ex);
            }
        }, (IpcClient.Region made) ->
        {
            if (client.released)
            {
                conductor.releaseLater(() -> // the client went while its region was made: its domain was made anew
                {
                    try
                    {
                        releaseRegion(made);
                    }
                    finally
                    {
                        conductor.sessions.releaseDomain(client);
                    }
                });
                return;
            }
            client.regions.put(made.id(), made);
            final int length = regionReady.wrap(answers.response, 0).set(made.id(), made.region().address(), bytes,
                made.region().lkey(), made.region().rkey(), access, "");
            regionReady.ids(client.id, correlationId);
            answers.answer(client, IpcMessages.REGION_READY, length);
        }, () ->
        {
            client.pendingRegions--;
            if (client.released)
            {
                // it went while this ran: a registration that failed may have made its domain anew on a worker
                conductor.releaseLater(() -> conductor.sessions.releaseDomain(client));
            }
        });
    }

    void onDeregister(final IpcClient client, final IpcMessages.ObjectCommand command)
    {
        final long correlationId = command.correlationId();
        final IpcClient.Region region = client.regions.get(command.objectId());
        if (null == region)
        {
            answers.refuseUnknownObject(client, correlationId, IpcMessages.DEREGISTER, "region", command.objectId());
            return;
        }
        if (conductor.submit(client, correlationId, IpcMessages.DEREGISTER, () ->
        {
            releaseRegion(region);
            return region;
        }, (IpcClient.Region done) -> answers.respondOk(client, correlationId, done.id()), null))
        {
            // the client's no longer (the control thread touches only the region); refused for a busy NIC, it stays
            // the client's, registered, counted, and released by a retry or when the client goes
            client.regions.remove(command.objectId());
        }
    }

    /** Control thread: deregisters a region and unmaps it (the client's memfd goes once the client unmaps it too). */
    void releaseRegion(final IpcClient.Region region)
    {
        try
        {
            nic.deregister(region.region());
        }
        catch (final MemoryStillNamedException notConfirmed)
        {
            // a worker did not confirm that it let go of the region (timed out or closing): it may still place into
            // it, so the mapping stays until every worker has (for good when one never answers)
            notConfirmed.unnamed().thenRun(region.arena()::close);
            counters.regions.decrement();
            throw notConfirmed;
        }
        catch (final RuntimeException refused)
        {
            // not a registered region of the NIC (cannot happen for a client's): its mapping stays, as named
            counters.regions.decrement();
            throw refused;
        }
        region.arena().close();
        counters.regions.decrement();
    }
}
