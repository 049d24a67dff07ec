package io.spraynic.datapath.verbs;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ProtectionDomainTest
{
    private final Arena arena = Arena.ofConfined();
    private final ProtectionDomain pd = new ProtectionDomain();

    @AfterEach
    void close()
    {
        arena.close();
    }

    @Test
    void shouldHandOutUniqueNonZeroNonSequentialKeys()
    {
        final Set<Integer> keys = new HashSet<>();
        int sequential = 0;
        int previous = 0;
        for (int i = 0; i < 1000; i++)
        {
            final MemoryRegion region = pd.register(arena.allocate(64), AccessFlags.ALL);
            assertNotEquals(0, region.lkey());
            assertNotEquals(0, region.rkey());
            assertTrue(keys.add(region.lkey()));
            assertTrue(keys.add(region.rkey()));
            if (region.lkey() == previous + 1 || region.rkey() == region.lkey() + 1)
            {
                sequential++;
            }
            previous = region.rkey();
        }
        assertEquals(0, sequential);
    }

    @Test
    void shouldAllowAccessInsideTheRegionWithTheRight()
    {
        final MemoryRegion region = pd.register(arena.allocate(4096), AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        final long a = region.address();
        assertEquals(AccessCheck.OK, pd.checkRemoteAccess(region.rkey(), a, 4096, AccessFlags.REMOTE_WRITE));
        assertEquals(AccessCheck.OK, pd.checkRemoteAccess(region.rkey(), a + 4095, 1, AccessFlags.REMOTE_WRITE));
        assertEquals(AccessCheck.OK, pd.checkRemoteAccess(region.rkey(), a + 4096, 0, AccessFlags.REMOTE_WRITE));
        assertEquals(AccessCheck.OK, pd.checkLocalAccess(region.lkey(), a, 4096, AccessFlags.LOCAL_WRITE));
        assertSame(region, pd.regionByRkey(region.rkey()));
        assertSame(region, pd.regionByLkey(region.lkey()));
    }

    @Test
    void shouldRefuseWrongKeyOutOfBoundsAndMissingRights()
    {
        final MemoryRegion region = pd.register(arena.allocate(4096), AccessFlags.REMOTE_READ);
        final long a = region.address();
        assertEquals(AccessCheck.INVALID_KEY, pd.checkRemoteAccess(region.rkey() + 1, a, 1, AccessFlags.REMOTE_READ));
        assertEquals(AccessCheck.INVALID_KEY, pd.checkRemoteAccess(region.lkey(), a, 1, AccessFlags.REMOTE_READ),
            "an lkey is not an rkey");
        assertEquals(AccessCheck.OUT_OF_BOUNDS, pd.checkRemoteAccess(region.rkey(), a, 4097, AccessFlags.REMOTE_READ));
        assertEquals(AccessCheck.OUT_OF_BOUNDS, pd.checkRemoteAccess(region.rkey(), a - 1, 2, AccessFlags.REMOTE_READ));
        assertEquals(AccessCheck.OUT_OF_BOUNDS, pd.checkRemoteAccess(region.rkey(), a + 4096, 1, AccessFlags.REMOTE_READ));
        assertEquals(AccessCheck.OUT_OF_BOUNDS,
            pd.checkRemoteAccess(region.rkey(), a + 1, Long.MAX_VALUE, AccessFlags.REMOTE_READ), "no overflow");
        assertEquals(AccessCheck.OUT_OF_BOUNDS,
            pd.checkRemoteAccess(region.rkey(), Long.MIN_VALUE, 1, AccessFlags.REMOTE_READ));
        assertEquals(AccessCheck.OUT_OF_BOUNDS, pd.checkRemoteAccess(region.rkey(), a, -1, AccessFlags.REMOTE_READ));
        assertEquals(AccessCheck.ACCESS_DENIED, pd.checkRemoteAccess(region.rkey(), a, 1, AccessFlags.REMOTE_WRITE));
        assertEquals(AccessCheck.ACCESS_DENIED, pd.checkLocalAccess(region.lkey(), a, 1, AccessFlags.LOCAL_WRITE));
    }

    @Test
    void shouldForgetDeregisteredRegions()
    {
        final MemoryRegion region = pd.register(arena.allocate(64), AccessFlags.ALL);
        pd.deregister(region);
        assertFalse(region.isRegistered());
        assertNull(pd.regionByRkey(region.rkey()));
        assertEquals(AccessCheck.INVALID_KEY,
            pd.checkRemoteAccess(region.rkey(), region.address(), 1, AccessFlags.REMOTE_WRITE));
        assertEquals(0, pd.regions().size());
    }

    @Test
    void shouldRefuseHeapMemoryAndInvalidFlags()
    {
        assertThrows(IllegalArgumentException.class, () -> pd.register(MemorySegment.ofArray(new byte[8]), 0));
        assertThrows(IllegalArgumentException.class, () -> pd.register(arena.allocate(8), AccessFlags.REMOTE_WRITE));
        assertThrows(IllegalArgumentException.class, () -> pd.register(arena.allocate(8), 1 << 10));
        assertThrows(IllegalArgumentException.class,
            () -> new ProtectionDomain().deregister(pd.register(arena.allocate(8), 0)));
    }

    @Test
    void shouldKeepATenantsRegionUnknownToAnotherTenantsDomainByEitherKey()
    {
        final ProtectionDomain tenantA = new ProtectionDomain(1, new java.util.SplittableRandom(1));
        final ProtectionDomain tenantB = new ProtectionDomain(2, new java.util.SplittableRandom(2));
        assertEquals(0, pd.id());
        assertEquals(1, tenantA.id());
        assertTrue(tenantB.isEmpty());
        final MemoryRegion region = pd.register(arena.allocate(4096), AccessFlags.ALL);
        final MemoryRegion ofA = tenantA.registerWithKeys(region.segment(), AccessFlags.ALL, region.lkey(), region.rkey());
        assertFalse(tenantA.isEmpty());
        assertSame(ofA, tenantA.regionByRkey(region.rkey()));
        assertNull(tenantB.regionByLkey(region.lkey()));
        assertNull(tenantB.regionByRkey(region.rkey()));
        assertEquals(AccessCheck.INVALID_KEY, tenantB.checkRemoteAccess(region.rkey(), region.address(), 8,
            AccessFlags.REMOTE_WRITE));
        assertEquals(AccessCheck.INVALID_KEY, tenantB.checkLocalAccess(region.lkey(), region.address(), 8,
            AccessFlags.LOCAL_WRITE));
        assertEquals(AccessCheck.OK, tenantA.checkRemoteAccess(region.rkey(), region.address(), 8, AccessFlags.REMOTE_WRITE));
        tenantA.deregister(ofA);
        assertTrue(tenantA.isEmpty());
    }
}
