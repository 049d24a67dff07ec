package io.spraynic.datapath.api;

import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.datapath.nic.EmbeddedNic;
import io.spraynic.datapath.nic.EmbeddedNicConfig;
import io.spraynic.datapath.nic.NicConnection;
import io.spraynic.datapath.port.InMemoryLink;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.PostResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tools' post/poll loop over two in-process spray NICs joined by an in-JVM link (the same loop across processes
 * runs in {@code NicApiPlacementTest}): back-pressure from a small request ring, the immediate on the last WRITE, and
 * failures named, not hung on.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BulkTransferTest
{
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final int ALL = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;

    @TempDir
    Path base;

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private Nic a;
    private Nic b;
    private Connection fromA;
    private Connection toB;

    @BeforeEach
    void connect() throws Exception
    {
        final InMemoryLink link = new InMemoryLink("bulk", 1024, 2048 + InMemoryLink.HEADROOM);
        closeables.add(link);
        a = start(0, link.first());
        b = start(1, link.second());
        final CompletableFuture<NicConnection> accepted = CompletableFuture.supplyAsync(() -> ((EmbeddedNic)b).accept(WAIT));
        fromA = a.connect(new int[]{0x0A00_0002}, WAIT);
        toB = accepted.get(30, TimeUnit.SECONDS);
    }

    private Nic start(final int host, final PacketPort port)
    {
        final CountersFile counters = CountersFile.create(base, "host" + host, 4096);
        closeables.add(counters);
        // a request ring of 8: the loop meets QUEUE_FULL on nearly every post and must wait, not fail
        final EmbeddedNic nic = EmbeddedNic.start(new EmbeddedNicConfig().workers(1).planes(1).connections(4, 4, 1024)
            .queues(8, 4096, 8, 64).sprayConfig(EmbeddedNicConfig::sharedCoreSprayConfig)
            .local(0, 0x0A00_0001 + host, 0x02_00_00_00_00_01L + host), new PacketPort[][]{{port}}, counters);
        closeables.add(nic);
        return nic;
    }

    @AfterEach
    void close() throws Exception
    {
        for (int i = closeables.size() - 1; i >= 0; i--)
        {
            closeables.get(i).close();
        }
    }

    @Test
    void shouldWriteEveryByteThroughAFullRingAndEndWithTheImmediate()
    {
        final Region source = a.register(300_001, AccessFlags.LOCAL_WRITE);
        final Region target = b.register(300_001, ALL);
        final SplittableRandom random = new SplittableRandom(5);
        for (long i = 0; i < source.length(); i++)
        {
            source.segment().set(ValueLayout.JAVA_BYTE, i, (byte)random.nextInt());
        }
        assertEquals(PostResult.OK, toB.postReceive(0, new ReceiveRequest().wrId(9)));
        BulkTransfer.write(fromA, source, target.address(), target.rkey(), 1000, true, WAIT);
        assertEquals(301, BulkTransfer.awaitImmediate(toB, WAIT).immediateData(), "the message count, on the last WRITE");
        assertEquals(-1, source.segment().mismatch(target.segment()));
        assertTrue(fromA.postedSends() >= 301);

        // and back, into a part of the region
        final Region readBack = a.register(300_001, AccessFlags.LOCAL_WRITE);
        BulkTransfer.read(fromA, readBack, 1, 300_000, target.address() + 1, target.rkey(), 4096, WAIT);
        assertEquals(-1, source.segment().asSlice(1).mismatch(readBack.segment().asSlice(1)));
        assertEquals(0, readBack.segment().get(ValueLayout.JAVA_BYTE, 0), "nothing before the offset");
    }

    @Test
    void shouldNameTheFailedMessageWhenThePeerRefusesTheKey()
    {
        final Region source = a.register(64 * 1024, AccessFlags.LOCAL_WRITE);
        final Region target = b.register(64 * 1024, ALL);
        final IllegalStateException failure = assertThrows(IllegalStateException.class,
            () -> BulkTransfer.write(fromA, source, target.address(), target.rkey() ^ 1, 16 * 1024, false, WAIT));
        assertTrue(failure.getMessage().contains("REM_ACCESS_ERR"), failure.getMessage());
    }

    @Test
    void shouldRefuseABlockOutsideTheRegionBeforePostingAnything()
    {
        final Region source = a.register(4096, AccessFlags.LOCAL_WRITE);
        assertThrows(IllegalArgumentException.class,
            () -> BulkTransfer.write(fromA, source, 1, 4096, 0, 0, 1024, false, WAIT));
        assertThrows(IllegalArgumentException.class,
            () -> BulkTransfer.read(fromA, source, -1, 10, 0, 0, 1024, WAIT));
        assertThrows(IllegalArgumentException.class,
            () -> BulkTransfer.read(fromA, source, 0, 4096, 0, 0, 0, WAIT));
        assertEquals(0, fromA.postedSends());
    }

    @Test
    void shouldGiveUpWhenTheImmediateNeverComes()
    {
        final IllegalStateException failure = assertThrows(IllegalStateException.class,
            () -> BulkTransfer.awaitImmediate(toB, Duration.ofMillis(50)));
        assertTrue(failure.getMessage().contains("did not arrive"), failure.getMessage());
    }
}
