package io.spraynic.bench.nic;

import io.spraynic.datapath.nic.NicConnection;
import io.spraynic.pmd.HugepageMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code spraynic bench connections}, small (this JVM's EAL: one run per test class): 256 spray connections between
 * two embedded NICs on net_ring, each writing two 4 KiB messages at once, with connection tables for only 32 of them
 * at a time on each NIC, so that most connections with traffic find the pool empty and wait (their work requests
 * stay queued, their peer's packets are refused) rather than fail or hang. Every connection opens, every byte
 * arrives and matches, every set of tables is back in its pool once idle, and no connection is left after closing.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ConnectionScaleTest
{
    @Test
    void shouldCarryAndVerifyEveryConnectionsWritesWithTablesForAFewAtATime() throws Exception
    {
        final ConnectionScale.Options options = new ConnectionScale.Options(NicConnection.Kind.SPRAY, 256, 4096, 2, 2, 1,
            HugepageMode.OFF, 32, 120);
        final ConnectionScale.Result result = ConnectionScale.run(options, line -> { });
        final String report = result.toText();
        assertNull(result.failure(), report);
        assertEquals(256, result.opened(), report);
        assertEquals(512, result.messagesCompleted(), report);
        assertEquals(512, result.messagesVerified(), report);
        assertEquals(0, result.openAfterClose(), report);
        for (final String nic : new String[]{"a", "b"})
        {
            assertEquals(0L, result.storage().get(nic + " sets lent"), "every set back in the pool: " + report);
            assertTrue(result.storage().get(nic + " sets lent at peak") <= 32, report);
            assertTrue(result.storage().get(nic + " sets made") <= 32, report);
        }
        assertTrue(result.storage().get("a sets lent at peak") == 32, "the sender used its whole pool: " + report);
        assertTrue(result.storage().get("a borrows refused") > 0, "connections waited for tables: " + report);
        assertTrue(result.ok(), report);
        assertTrue(result.toJson().contains("\"ok\":true"), result.toJson());
    }
}
