package io.spraynic.datapath.nic;

import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.datapath.transport.spray.SprayCounters;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.pmd.EalConfig;
import io.spraynic.pmd.MempoolConfig;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PortConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A one-worker NIC holds as many connections as its stated limits say, not as many as a spray engine's table held
 * before the NIC sized it (64): each of 100 connections it opens carries a verified WRITE, and the one over a limit is
 * refused by that limit, named and counted, not by the engine's table (REJECT {@code NO_RESOURCES}, which told the
 * operator nothing of the limit to raise). Two embedded NICs in one process on a crossed DPDK {@code net_ring} pair,
 * one worker each (one EAL per JVM: one DPDK for the class).
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class EmbeddedNicConnectionLimitsTest
{
    /** Over the 64 connections one engine held before it was sized from the NIC's limits. */
    private static final int OPENED_LIMIT = 100;
    private static final int ACCEPTED_LIMIT = 70;
    private static final int MESSAGE_BYTES = 4096;
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final String OPENED_OVER_LIMIT = "connections: opened over the limit, refused";
    private static final String REJECTS_SENT = SprayCounters.label(SprayCounters.CONNECT_REJECTS_SENT);

    private static DpdkNic dpdk;

    @TempDir
    Path dir;

    private final Arena arena = Arena.ofShared();
    private final EmbeddedNic[] nics = new EmbeddedNic[2];
    private final CountersFile[] counters = new CountersFile[2];

    @BeforeAll
    static void startDpdk()
    {
        dpdk = DpdkNic.start(NicConfig.of(EalConfig.DEFAULT.withFilePrefix("spraynic-limits-" + ProcessHandle.current().pid())
            .withLogLevels(List.of("lib.eal:warning")), MempoolConfig.DEFAULT.withMbufs(16383),
            List.of(PortConfig.ringPair("a", "b"), PortConfig.ringPair("b", "a"))));
    }

    @AfterAll
    static void stopDpdk()
    {
        dpdk.close();
    }

    @AfterEach
    void close()
    {
        for (int h = 0; h < 2; h++)
        {
            if (null != nics[h])
            {
                nics[h].close();
            }
            if (null != counters[h])
            {
                counters[h].close();
            }
        }
        arena.close(); // after the NICs stopped: their registrations point into it
    }

    @Test
    void shouldCarryAVerifiedWriteOnEachOfAHundredConnectionsAndRefuseTheNextNamingTheOpenedLimit()
    {
        start(EmbeddedNicConfig.DEFAULT_MAX_ACCEPTED_CONNECTIONS, OPENED_LIMIT);
        final EmbeddedNic server = nics[0];
        final EmbeddedNic client = nics[1];
        assertEquals(1, client.workers());
        final MemoryRegion target = server.register(arena.allocate((long)OPENED_LIMIT * MESSAGE_BYTES, 4096),
            InMemoryNicPair.EXPOSED_ACCESS);
        final MemorySegment source = arena.allocate((long)OPENED_LIMIT * MESSAGE_BYTES, 4096);
        for (long i = 0; i < source.byteSize(); i += 8)
        {
            source.set(ValueLayout.JAVA_LONG_UNALIGNED, i, i * 0x9E37_79B9_7F4A_7C15L + 1);
        }
        final MemoryRegion local = client.register(source, AccessFlags.NONE);
        final List<NicConnection> opened = new ArrayList<>();
        for (int i = 0; i < OPENED_LIMIT; i++)
        {
            final NicConnection c = client.connect(new int[]{server.localIpv4(0)}, WAIT);
            opened.add(c);
            write(c, local, target, i);
        }
        final MemorySegment written = target.segment();
        assertEquals(-1, source.mismatch(written.asSlice(0, source.byteSize())), "every connection's bytes, in place");

        final IllegalStateException refused = assertThrows(IllegalStateException.class,
            () -> client.connect(new int[]{server.localIpv4(0)}, WAIT));
        assertTrue(refused.getMessage().contains("limit of " + OPENED_LIMIT) &&
            refused.getMessage().contains("maxOpenedConnections"), refused.getMessage());
        assertEquals(1L, counter(client, OPENED_OVER_LIMIT));
        assertEquals(OPENED_LIMIT, client.connections().size(), "the one refused holds nothing");
        assertEquals(0L, HostileWire.sum(HostileWire.counters(server), REJECTS_SENT), "no engine refused one");

        opened.getFirst().close(WAIT); // a place freed is taken again
        await(() -> client.connections().size() == OPENED_LIMIT - 1, "the closed one forgotten");
        write(client.connect(new int[]{server.localIpv4(0)}, WAIT), local, target, 0);
        assertEquals(1L, counter(client, OPENED_OVER_LIMIT));
        assertEquals(0L, InMemoryNicPair.faults(client) + InMemoryNicPair.faults(server));
    }

    @Test
    void shouldCloseCountAndNameTheAcceptedLimitBeyondSixtyFourConnectionsOfOneWorker()
    {
        start(ACCEPTED_LIMIT, EmbeddedNicConfig.DEFAULT_MAX_OPENED_CONNECTIONS);
        final EmbeddedNic server = nics[0];
        final EmbeddedNic client = nics[1];
        assertEquals(1, server.workers());
        for (int i = 0; i < ACCEPTED_LIMIT; i++)
        {
            client.connect(new int[]{server.localIpv4(0)}, WAIT);
        }
        assertEquals(ACCEPTED_LIMIT, server.connections().size());
        assertEquals(0L, server.acceptedOverLimit());
        try
        {
            client.connect(new int[]{server.localIpv4(0)}, WAIT); // established by the handshake, then CLOSEd at once
        }
        catch (final IllegalStateException closedBeforeItWasSeen)
        {
            // the server's CLOSE may reach the client before its connect returns: refused either way
        }
        await(() -> server.acceptedOverLimit() == 1, "the one over the accepted limit counted: " + server.acceptedOverLimit());
        assertEquals(1L, HostileWire.sum(HostileWire.counters(server), "connections: accepted over the limit, closed"));
        assertEquals(ACCEPTED_LIMIT, server.connections().size(), "the server holds its limit, no more");
        assertEquals(0L, HostileWire.sum(HostileWire.counters(server), REJECTS_SENT),
            "refused by the NIC's limit, not by its engine's table");
        await(() -> client.connections().size() == ACCEPTED_LIMIT, "the client learnt of the CLOSE: " +
            client.connections().size());
    }

    private void start(final int maxAccepted, final int maxOpened)
    {
        for (int h = 0; h < 2; h++)
        {
            // every connection comes from one address: the per-source bound (S12.9) is raised above both limits
            final EmbeddedNicConfig config = new EmbeddedNicConfig().mode(NicConnection.Kind.SPRAY).planes(1)
                .local(0, 0x0A00_0001 + h, 0x02_00_00_00_00_01L + h).connections(2, 1, 1024)
                .maxAcceptedConnections(maxAccepted).maxOpenedConnections(maxOpened)
                .sprayConfig(() -> EmbeddedNicConfig.sharedCoreSprayConfig().maxConnectionsPerSource(2 * OPENED_LIMIT));
            counters[h] = CountersFile.create(dir, "limits" + h, 4096);
            nics[h] = EmbeddedNic.start(config, new PacketPort[][]{{dpdk.packetPort(h == 0 ? "a" : "b", 0)}}, counters[h]);
        }
    }

    private static void write(final NicConnection c, final MemoryRegion local, final MemoryRegion target, final int index)
    {
        final long offset = (long)index * MESSAGE_BYTES;
        final SendWorkRequest request = new SendWorkRequest().wrId(index).opcode(WorkRequestOpcode.RDMA_WRITE)
            .local(local, local.address() + offset, MESSAGE_BYTES).remote(target.address() + offset, target.rkey())
            .signaled(true);
        assertEquals(PostResult.OK, c.postSend(0, request), "connection " + index);
        final WorkCompletion completion = new WorkCompletion();
        final long deadline = System.nanoTime() + WAIT.toNanos();
        while (!c.sendCompletionQueue().poll(completion))
        {
            assertTrue(System.nanoTime() < deadline, "connection " + index + "'s WRITE completes");
            Thread.onSpinWait();
        }
        assertEquals(WorkCompletionStatus.SUCCESS, completion.status(), "connection " + index + ": " + completion);
        assertEquals(index, completion.wrId());
    }

    private static long counter(final EmbeddedNic nic, final String label)
    {
        return HostileWire.counters(nic).getOrDefault(label, -1L);
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
