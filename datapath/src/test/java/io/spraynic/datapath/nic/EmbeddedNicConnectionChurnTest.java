package io.spraynic.datapath.nic;

import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A peer that plays the attacker against an embedded NIC's connection state: it opens and closes connection after
 * connection, or holds more than the NIC allows. The NIC forgets every connection its transport closed (counters
 * freed, detached from its worker) and holds at most {@code maxAcceptedConnections} that peers opened, closing and
 * counting each one over.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class EmbeddedNicConnectionChurnTest
{
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final String OVER_LIMIT = "connections: accepted over the limit, closed";
    private static final String FORGOTTEN = "connections: forgotten after their transport closed them";

    @TempDir
    Path dir;

    @AutoClose
    private InMemoryNicPair pair;

    @Test
    void shouldForgetEveryConnectionAPeerOpensAndClosesWhetherTheApplicationTookItOrNot()
    {
        final int limit = 4;
        final EmbeddedNic[] nics = start(limit);
        final EmbeddedNic server = nics[0];
        final EmbeddedNic attacker = nics[1];
        final int baseline = allocatedCounters(server);
        final int rounds = 40;
        NicConnection heldByApplication = null;
        for (int i = 0; i < rounds; i++)
        {
            final NicConnection c = attacker.connect(new int[]{server.localIpv4(0)}, WAIT);
            if (i % 2 == 0)
            {
                final NicConnection taken = server.accept(WAIT); // the application takes every other one
                assertNotNull(taken, "round " + i);
                heldByApplication = taken;
            }
            c.close(WAIT);
            assertTrue(server.connections().size() <= limit, "round " + i + ": " + server.connections().size() + " held");
        }
        await(() -> server.connections().isEmpty(), "the server forgets every closed connection");
        await(() -> counter(server, FORGOTTEN) == rounds, "each one counted: " + counter(server, FORGOTTEN));
        await(() -> allocatedCounters(server) == baseline, "their counters freed: " + allocatedCounters(server) +
            " allocated, " + baseline + " before the first");
        assertNull(server.accept(Duration.ofMillis(50)), "one the peer closed before the application took it is not offered");
        assertEquals(PostResult.INVALID_STATE,
            heldByApplication.postReceive(0, new ReceiveWorkRequest().wrId(1).buffer(null, 0, 0)),
            "a connection the peer closed takes no more posts");
        assertEquals(0, heldByApplication.close(WAIT).waiting(), "and closing it again is harmless");
        assertEquals(0, counter(server, OVER_LIMIT));
        assertTrue(attacker.connections().isEmpty());
    }

    @Test
    void shouldCloseAndCountEveryConnectionOverTheLimit()
    {
        final int limit = 2;
        final EmbeddedNic[] nics = start(limit);
        final EmbeddedNic server = nics[0];
        final EmbeddedNic attacker = nics[1];
        for (int i = 0; i < limit; i++)
        {
            attacker.connect(new int[]{server.localIpv4(0)}, WAIT);
        }
        final int over = 3;
        for (int i = 0; i < over; i++)
        {
            attacker.connect(new int[]{server.localIpv4(0)}, WAIT); // accepted by the handshake, then CLOSEd at once
        }
        await(() -> counter(server, OVER_LIMIT) == over, "each one over the limit counted: " + counter(server, OVER_LIMIT));
        assertEquals(limit, server.connections().size(), "the server holds its limit, no more");
        await(() -> attacker.connections().size() == limit, "the attacker learnt of each CLOSE and forgot them: " +
            attacker.connections().size());
        assertEquals(over, counter(attacker, FORGOTTEN));

        server.accept(WAIT).close(WAIT); // one closed by the application: room for one more
        attacker.connect(new int[]{server.localIpv4(0)}, WAIT);
        assertEquals(over, counter(server, OVER_LIMIT), "taken within the limit");
        await(() -> server.connections().size() == limit, "held: " + server.connections().size());
    }

    private EmbeddedNic[] start(final int maxAccepted)
    {
        pair = new InMemoryNicPair(dir, "churn", (config, host) -> config.connections(2, 1, 1024)
            .maxAcceptedConnections(maxAccepted));
        return new EmbeddedNic[]{pair.nic(0), pair.nic(1)};
    }

    private static int allocatedCounters(final EmbeddedNic nic)
    {
        final int[] n = new int[1];
        nic.counters().counters().forEach((value, id, label) -> n[0]++);
        return n[0];
    }

    private static long counter(final EmbeddedNic nic, final String label)
    {
        final long[] found = {-1};
        nic.counters().counters().forEach((value, id, l) ->
        {
            if (l.equals(label))
            {
                found[0] = value;
            }
        });
        return found[0];
    }

    private static void await(final BooleanSupplier condition, final String what)
    {
        final long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean())
        {
            assertTrue(System.nanoTime() < deadline, what);
            WorkerCalls.sleepBriefly();
        }
    }
}
