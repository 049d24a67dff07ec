package io.spraynic.datapath.verbs;

import org.agrona.collections.Int2ObjectHashMap;

import java.lang.foreign.MemorySegment;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.random.RandomGenerator;

/**
 * A protection domain, as {@code ibv_pd}: the memory regions a set of queue pairs may touch, with a key
 * table that answers "may this rkey write these bytes?" in O(1) and without allocating.
 * <p>
 * Keys are drawn from a {@link SecureRandom} (or a given generator, for reproducible tests), never
 * sequential, never 0, and unique among the live lkeys and rkeys of the domain, so one 32-bit table serves
 * both lookups. A peer that guesses needs on average 2^31 tries per live region, each answered with a NAK.
 * <p>
 * Threading: registration is control path (it allocates); lookups are datapath. Like the engines that use
 * it, the domain is single-threaded: register and deregister before starting the agent that runs its queue
 * pairs, or on that agent's thread.
 */
public final class ProtectionDomain
{
    /** Key 0 is never handed out, so a zeroed work request never names a region by accident. */
    private static final int NO_KEY = 0;

    private final int id;
    private final RandomGenerator keys;
    private final Int2ObjectHashMap<MemoryRegion> byLkey = new Int2ObjectHashMap<>();
    private final Int2ObjectHashMap<MemoryRegion> byRkey = new Int2ObjectHashMap<>();

    /**
     * A domain whose keys come from a {@link SecureRandom}.
     */
    public ProtectionDomain()
    {
        this(new SecureRandom());
    }

    /**
     * @param keys where keys come from (a seeded generator makes tests reproducible).
     */
    public ProtectionDomain(final RandomGenerator keys)
    {
        this(0, keys);
    }

    /**
     * @param id   which tenant the domain is (0: the in-process application's; a NIC gives each IPC client its own):
     *             a region registered in one domain is unknown, by lkey and by rkey, to queue pairs of another.
     * @param keys where keys come from.
     */
    public ProtectionDomain(final int id, final RandomGenerator keys)
    {
        this.id = id;
        this.keys = keys;
    }

    /** @return the tenant id this domain was made for (0 by default). */
    public int id()
    {
        return id;
    }

    /** @return true when the domain holds no region. */
    public boolean isEmpty()
    {
        return byLkey.isEmpty();
    }

    /**
     * Registers off-heap memory (control path).
     *
     * @param segment native memory that outlives the registration.
     * @param access  {@link AccessFlags}.
     * @return the region.
     * @throws IllegalArgumentException for heap memory or bad flags. Overlapping registrations are allowed,
     *                                  as in ibverbs: each has its own keys and rights.
     */
    public MemoryRegion register(final MemorySegment segment, final int access)
    {
        if (!segment.isNative())
        {
            throw new IllegalArgumentException("only native (off-heap) memory can be registered: " + segment);
        }
        AccessFlags.validate(access);
        final int lkey = newKey();
        final MemoryRegion region = new MemoryRegion(this, segment, access, lkey, newKey(lkey));
        byLkey.put(region.lkey(), region);
        byRkey.put(region.rkey(), region);
        return region;
    }

    /**
     * Registers memory under keys chosen elsewhere (control path): a NIC whose workers each own a domain gives
     * every worker the same region, keys and rights, so a work request or a peer's rkey means the same on any of
     * them. The keys come from one domain's {@link #register}, which drew them at random.
     *
     * @param segment native memory that outlives the registration.
     * @param access  {@link AccessFlags}.
     * @param lkey    the local key, not 0 and not in use in this domain.
     * @param rkey    the remote key, not 0 and not in use in this domain.
     * @return the region.
     */
    public MemoryRegion registerWithKeys(final MemorySegment segment, final int access, final int lkey, final int rkey)
    {
        if (!segment.isNative())
        {
            throw new IllegalArgumentException("only native (off-heap) memory can be registered: " + segment);
        }
        AccessFlags.validate(access);
        if (lkey == NO_KEY || rkey == NO_KEY || byLkey.containsKey(lkey) || byRkey.containsKey(rkey))
        {
            throw new IllegalArgumentException("keys must be non-zero and unused: lkey=" + lkey + " rkey=" + rkey);
        }
        final MemoryRegion region = new MemoryRegion(this, segment, access, lkey, rkey);
        byLkey.put(lkey, region);
        byRkey.put(rkey, region);
        return region;
    }

    /**
     * Deregisters a region (control path): its keys then fail every check.
     *
     * @param region a region of this domain.
     */
    public void deregister(final MemoryRegion region)
    {
        if (region.protectionDomain() != this)
        {
            throw new IllegalArgumentException("region belongs to another protection domain: " + region);
        }
        if (byLkey.remove(region.lkey()) != null)
        {
            byRkey.remove(region.rkey());
            region.markDeregistered();
        }
    }

    /**
     * @return the live regions (allocates).
     */
    public List<MemoryRegion> regions()
    {
        return new ArrayList<>(byLkey.values());
    }

    /**
     * @param rkey a remote key.
     * @return its region, or null.
     */
    public MemoryRegion regionByRkey(final int rkey)
    {
        return byRkey.get(rkey);
    }

    /**
     * @param lkey a local key.
     * @return its region, or null.
     */
    public MemoryRegion regionByLkey(final int lkey)
    {
        return byLkey.get(lkey);
    }

    /**
     * Validates a peer's access: the responder's check of a RETH before it writes or reads a byte.
     *
     * @param rkey           the remote key in the request.
     * @param virtualAddress first byte.
     * @param length         bytes (a RETH DMA length, unsigned 32 bits widened by the caller).
     * @param required       {@link AccessFlags#REMOTE_WRITE} or {@link AccessFlags#REMOTE_READ}.
     * @return an {@link AccessCheck} code.
     */
    public int checkRemoteAccess(final int rkey, final long virtualAddress, final long length, final int required)
    {
        return checkAccess(byRkey.get(rkey), virtualAddress, length, required);
    }

    /**
     * Validates a local work request's scatter/gather element.
     *
     * @param lkey           the local key.
     * @param virtualAddress first byte.
     * @param length         bytes.
     * @param required       {@link AccessFlags#LOCAL_WRITE} to write into it, {@link AccessFlags#NONE} to read.
     * @return an {@link AccessCheck} code.
     */
    public int checkLocalAccess(final int lkey, final long virtualAddress, final long length, final int required)
    {
        return checkAccess(byLkey.get(lkey), virtualAddress, length, required);
    }

    /**
     * The check of {@link #checkRemoteAccess} and {@link #checkLocalAccess} on a region already looked up (by a
     * caller that keeps the region its last key named, while {@link MemoryRegion#isRegistered registered}).
     *
     * @param region         the region the key names, or null.
     * @param virtualAddress first byte.
     * @param length         bytes.
     * @param required       {@link AccessFlags} the access needs.
     * @return an {@link AccessCheck} code.
     */
    public static int checkAccess(
        final MemoryRegion region, final long virtualAddress, final long length, final int required)
    {
        if (null == region)
        {
            return AccessCheck.INVALID_KEY;
        }
        if (!region.contains(virtualAddress, length))
        {
            return AccessCheck.OUT_OF_BOUNDS;
        }
        if (!AccessFlags.allows(region.access(), required))
        {
            return AccessCheck.ACCESS_DENIED;
        }
        return AccessCheck.OK;
    }

    private int newKey()
    {
        return newKey(NO_KEY);
    }

    private int newKey(final int alsoAvoid)
    {
        int key;
        do
        {
            key = keys.nextInt();
        }
        while (key == NO_KEY || key == alsoAvoid || byLkey.containsKey(key) || byRkey.containsKey(key));
        return key;
    }
}
