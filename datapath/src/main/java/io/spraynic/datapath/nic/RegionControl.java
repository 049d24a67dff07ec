package io.spraynic.datapath.nic;

import io.spraynic.datapath.api.Region;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.ProtectionDomain;
import org.agrona.collections.Int2IntHashMap;
import org.agrona.collections.Int2ObjectHashMap;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;

/**
 * Memory registration and protection domains of an {@link EmbeddedNic}: a region is registered on every worker under
 * the same keys, drawn from one control-path domain so that keys are unique over every tenant; connections are bound
 * to a tenant's domain on their worker.
 */
final class RegionControl
{
    private final WorkerCalls calls;
    private final ProtectionDomain controlDomain = new ProtectionDomain();
    // the tenant of each region outside the default domain (0, the map's missing value)
    private final Int2IntHashMap domainsByLkey = new Int2IntHashMap(0);
    // the memory of regions registered by size (register(long, int)), freed when they are deregistered
    private final Int2ObjectHashMap<Arena> ownedMemory = new Int2ObjectHashMap<>();

    RegionControl(final WorkerCalls calls)
    {
        this.calls = calls;
    }

    /** See {@link EmbeddedNic#register(MemorySegment, int, int)}. */
    MemoryRegion register(final MemorySegment segment, final int access, final int domain)
    {
        final MemoryRegion region;
        synchronized (controlDomain)
        {
            region = controlDomain.register(segment, access); // keys unique over every domain
            if (0 != domain)
            {
                domainsByLkey.put(region.lkey(), domain); // absent: the default domain
            }
        }
        final List<CompletableFuture<?>> registered = calls.submitToEveryWorker((w, now) ->
            w.protectionDomain(domain).registerWithKeys(segment, access, region.lkey(), region.rkey()));
        try
        {
            calls.awaitEach(registered, "register memory");
        }
        catch (final RuntimeException failed)
        {
            throw takeBack(region, domain, failed);
        }
        return region;
    }

    /**
     * A registration that some worker refused or did not confirm: the others hold it, and one that did not answer may
     * yet take it (its command is queued), so it is undone on every worker by a command queued after it, and its keys
     * are forgotten once every worker did so.
     *
     * @return {@code failed} when every worker confirmed (nothing names the memory: the caller may free it), else a
     * {@link MemoryStillNamedException} that tells when it may.
     */
    private RuntimeException takeBack(final MemoryRegion region, final int domain, final RuntimeException failed)
    {
        final List<CompletableFuture<?>> revoked = calls.submitToEveryWorker(revoke(region, domain));
        try
        {
            calls.awaitEach(revoked, "take back a registration");
        }
        catch (final RuntimeException notConfirmed)
        {
            failed.addSuppressed(notConfirmed);
            return new MemoryStillNamedException("could not register memory (" + failed.getMessage() + "), and a " +
                "worker did not confirm that it let go of it: it stays mapped until every worker has", failed,
                WorkerCalls.allAnswered(revoked).thenRunAsync(() -> forget(region)));
        }
        forget(region);
        return failed;
    }

    /** See {@link EmbeddedNic#register(long, int)}. */
    MemoryRegion register(final long bytes, final int access)
    {
        if (bytes < 1)
        {
            throw new IllegalArgumentException("a region holds at least 1 byte, not " + bytes);
        }
        final Arena memory = Arena.ofShared();
        try
        {
            final MemoryRegion region = register(memory.allocate(bytes, 4096), access, 0);
            synchronized (controlDomain)
            {
                ownedMemory.put(region.lkey(), memory);
            }
            return region;
        }
        catch (final MemoryStillNamedException stillNamed)
        {
            stillNamed.unnamed().thenRun(memory::close);
            throw stillNamed;
        }
        catch (final RuntimeException ex)
        {
            memory.close();
            throw ex;
        }
    }

    /** See {@link EmbeddedNic#deregister}. */
    void deregister(final Region registered)
    {
        if (!(registered instanceof MemoryRegion region) || region.protectionDomain() != controlDomain)
        {
            throw new IllegalArgumentException("not a region of this NIC: " + registered);
        }
        if (!region.isRegistered())
        {
            throw new IllegalStateException("already deregistered: " + region);
        }
        final int domain;
        synchronized (controlDomain)
        {
            domain = domainsByLkey.get(region.lkey());
        }
        final List<CompletableFuture<?>> revoked = calls.submitToEveryWorker(revoke(region, domain));
        try
        {
            calls.awaitEach(revoked, "deregister memory");
        }
        catch (final RuntimeException notConfirmed)
        {
            throw new MemoryStillNamedException("could not deregister memory: " + notConfirmed.getMessage() +
                "; it stays registered and mapped until every worker let go of it", notConfirmed,
                WorkerCalls.allAnswered(revoked).thenRunAsync(() -> forget(region)));
        }
        forget(region);
    }

    /** Worker: forgets the region of that lkey in {@code domain} and cuts short every operation that uses it. */
    private static BiFunction<NicWorker, Long, MemoryRegion> revoke(final MemoryRegion region, final int domain)
    {
        return (w, now) ->
        {
            final ProtectionDomain pd = w.existingProtectionDomain(domain); // never made anew by a revoke
            final MemoryRegion copy = null == pd ? null : pd.regionByLkey(region.lkey());
            if (null != copy)
            {
                pd.deregister(copy);
                w.transport().revoke(copy);
            }
            return copy;
        };
    }

    /** No worker names the region any more: its keys are free, and memory the NIC allocated for it is freed. */
    private void forget(final MemoryRegion region)
    {
        final Arena owned;
        synchronized (controlDomain)
        {
            if (!region.isRegistered())
            {
                return; // forgotten already (a retried deregistration)
            }
            controlDomain.deregister(region);
            domainsByLkey.remove(region.lkey());
            owned = ownedMemory.remove(region.lkey());
        }
        if (null != owned)
        {
            owned.close(); // no worker touches it any more
        }
    }

    /** See {@link EmbeddedNic#bindProtectionDomain}. */
    void bind(final NicConnection connection, final int domain)
    {
        WorkerCalls.call(calls.worker(connection.worker()), (w, now) ->
        {
            final ProtectionDomain pd = w.protectionDomain(domain);
            connection.protectionDomain = pd;
            connection.bindProtectionDomain(pd);
            return connection;
        }, EmbeddedNic.CONTROL_TIMEOUT, "bind a connection to a protection domain");
    }

    /** See {@link EmbeddedNic#releaseProtectionDomain}. */
    void release(final int domain)
    {
        if (0 == domain)
        {
            return;
        }
        calls.onEveryWorker((w, now) ->
        {
            w.releaseProtectionDomain(domain);
            return null;
        }, "release a protection domain");
    }

    /** Frees the memory of regions registered by size, once the workers stopped: nothing touches it any more. */
    void freeOwnedMemory()
    {
        synchronized (controlDomain)
        {
            ownedMemory.values().forEach(Arena::close);
            ownedMemory.clear();
        }
    }
}
