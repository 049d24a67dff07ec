package io.spraynic.datapath.nic;

import io.spraynic.datapath.telemetry.CountersFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.agrona.concurrent.status.AtomicCounter;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(10)
class ConnectionRegistryTest
{
    @TempDir
    Path dir;

    private CountersFile file;
    private AtomicCounter overLimit;
    private AtomicCounter forgotten;

    @BeforeEach
    void counters()
    {
        file = CountersFile.create(dir, "registry", 64);
        overLimit = file.newCounter("over limit");
        forgotten = file.newCounter("forgotten");
    }

    @AfterEach
    void close()
    {
        file.close();
    }

    private static NicConnection connection()
    {
        return new SprayNicConnection(null, 0, 4, 4);
    }

    @Test
    void shouldRefuseAndCountAcceptedConnectionsOverTheBoundAndAdmitAgainOnceOneIsReleased()
    {
        final ConnectionRegistry registry = new ConnectionRegistry(2, overLimit, forgotten);
        final NicConnection a = connection();
        final NicConnection b = connection();
        assertTrue(registry.admitAccepted(a));
        assertTrue(registry.admitAccepted(b));
        registry.add(a);
        registry.add(b);
        for (int i = 0; i < 1000; i++)
        {
            assertFalse(registry.admitAccepted(connection()), "a flood stays out");
        }
        assertEquals(1000, overLimit.get());
        assertEquals(2, registry.liveAccepted(), "refusals take no room");

        assertTrue(registry.release(a));
        assertFalse(registry.release(a), "released once only, however often it is closed");
        assertEquals(1, registry.liveAccepted());
        assertEquals(List.of(b), registry.open());
        assertTrue(registry.admitAccepted(connection()));
        assertFalse(registry.admitAccepted(connection()));
    }

    @Test
    void shouldRefuseNamingTheLimitAndCountConnectionsOpenedOverItAndFreeThePlaceOfOneReleasedOrAbandoned()
    {
        final AtomicCounter openedOverLimit = file.newCounter("opened over limit");
        final ConnectionRegistry registry = new ConnectionRegistry(2, overLimit, forgotten, 2, openedOverLimit);
        final NicConnection a = connection();
        final NicConnection b = connection();
        registry.admitOpened(a);
        registry.admitOpened(b);
        registry.add(a);
        final IllegalStateException refused = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
            () -> registry.admitOpened(connection()));
        assertTrue(refused.getMessage().contains("limit of 2 connections it opened") &&
            refused.getMessage().contains("--ipc-max-connections"), refused.getMessage());
        assertEquals(1, openedOverLimit.get());
        assertEquals(2, registry.liveOpened(), "a refusal takes no room");
        assertTrue(registry.admitAccepted(connection()), "accepted ones have their own bound");

        registry.abandonOpened(b); // its connect failed: never established
        registry.abandonOpened(b);
        assertEquals(1, registry.liveOpened(), "abandoned once only");
        assertTrue(registry.release(a));
        assertEquals(0, registry.liveOpened());
        registry.admitOpened(connection());
        registry.admitOpened(connection());
        assertEquals(2, registry.liveOpened());
    }

    @Test
    void shouldNotCountConnectionsThisEndOpenedAgainstTheBound()
    {
        final ConnectionRegistry registry = new ConnectionRegistry(1, overLimit, forgotten);
        final NicConnection mine = connection();
        registry.add(mine);
        assertTrue(registry.release(mine));
        assertEquals(0, registry.liveAccepted());
        assertTrue(registry.admitAccepted(connection()));
    }

    @Test
    void shouldSkipConnectionsReleasedBeforeTheApplicationTookThem()
    {
        final ConnectionRegistry registry = new ConnectionRegistry(4, overLimit, forgotten);
        final NicConnection gone = connection();
        final NicConnection live = connection();
        for (final NicConnection c : new NicConnection[]{gone, live})
        {
            assertTrue(registry.admitAccepted(c));
            registry.add(c);
            assertTrue(registry.offerAccepted(c));
        }
        registry.release(gone);
        assertSame(live, registry.pollAccepted());
        assertNull(registry.pollAccepted());
    }
}
