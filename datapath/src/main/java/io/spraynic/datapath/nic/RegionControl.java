package io.spraynic.datapath.nic;

import io.spraynic.datapath.api.Region;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.ProtectionDomain;
import org.agrona.collections.Int2IntHashMap;
import org.agrona.collections.Int2ObjectHashMap;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

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
        calls.onEveryWorker((w, now) ->
            w.protectionDomain(domain).registerWithKeys(segment, access, region.lkey(), region.rkey()), "register memory");
        return region;
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
        calls.onEveryWorker((w, now) ->
        {
            final MemoryRegion copy = w.protectionDomain(domain).regionByLkey(region.lkey());
            if (null != copy)
            {
                w.protectionDomain(domain).deregister(copy);
                w.transport().revoke(copy);
            }
            return copy;
        }, "deregister memory");
        final Arena owned;
        synchronized (controlDomain)
        {
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
