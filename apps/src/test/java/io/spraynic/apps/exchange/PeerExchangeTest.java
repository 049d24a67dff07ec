package io.spraynic.apps.exchange;

import io.spraynic.datapath.api.SeededPattern;
import io.spraynic.datapath.nic.EmbeddedNic;
import io.spraynic.datapath.nic.EmbeddedNicConfig;
import io.spraynic.datapath.nic.InMemoryNicPair;
import io.spraynic.datapath.nic.NicConnection;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.wire.Wire;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tools' exchange through a directory, as two processes would run it ({@code spraynic transfer}), and the
 * visit of a serving NIC ({@code spraynic nic --expose}), between two embedded NICs on an in-memory link.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PeerExchangeTest
{
    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    @AutoClose
    private InMemoryNicPair pair;

    private EmbeddedNic[] start(final NicConnection.Kind mode, final String name)
    {
        pair = new InMemoryNicPair(dir, name, (config, host) -> config.mode(mode).workers(1).connections(8, 4, 1024)
            .sprayConfig(EmbeddedNicConfig::sharedCoreSprayConfig).rocevRetry(20_000_000L, 7)
            .listen(mode == NicConnection.Kind.SPRAY && host == 1));
        return new EmbeddedNic[]{pair.nic(0), pair.nic(1)};
    }

    @Test
    void shouldExchangeThroughADirectoryAsTwoProcessesWouldInBothModes() throws Exception
    {
        for (final NicConnection.Kind mode : NicConnection.Kind.values())
        {
            final EmbeddedNic[] nics = start(mode, "exchange-" + mode);
            final Path exchange = Files.createDirectory(dir.resolve("exchange-" + mode));
            final PeerExchange.Pair both = PeerExchange.runBoth(nics[0], nics[1], exchange, 3L << 20, 64 * 1024, WAIT);
            final PeerExchange.Result client = both.client();
            final PeerExchange.Result served = both.server();
            assertTrue(client.verified(), client.toJson());
            assertTrue(served.verified(), served.toJson());
            assertEquals(mode, client.mode());
            assertEquals(3L << 20, client.bytesEachWay());
            assertTrue(client.drain().drained() && served.drain().drained(), client.drain().describe());
            // what each side published for the other, as an ibverbs application would send it over TCP
            assertTrue(Files.readString(exchange.resolve("client.addr")).startsWith("planes=1 ip.0=10.0.0.1 addr="));
            assertTrue(Files.readString(exchange.resolve("server.addr")).startsWith("planes=1 ip.0=10.0.0.2 addr="));
            assertEquals(mode == NicConnection.Kind.ROCEV2, Files.exists(exchange.resolve("client.qp")),
                "queue pair attributes go through the directory for RoCEv2 only");
            pair.close(); // a second close, by @AutoClose after the last mode, does nothing
        }
    }

    @Test
    void shouldFailAVisitToANicThatClaimsMoreThanItRegistered() throws Exception
    {
        final EmbeddedNic[] nics = start(NicConnection.Kind.SPRAY, "lying");
        final EmbeddedNic visitor = nics[0];
        final EmbeddedNic server = nics[1];
        final long registered = 256 * 1024 + 1000;
        final MemoryRegion exposed = pair.expose(1, registered);
        // what spraynic nic --expose publishes, with the length a lying server would claim
        Files.writeString(dir.resolve("nic.addr"), "planes=1 ip.0=" + Wire.ipv4ToString(server.localIpv4(0)) +
            " addr=" + exposed.address() + " rkey=" + Integer.toUnsignedString(exposed.rkey()) + " length=" + (16L << 20));
        final long start = System.nanoTime();
        final IllegalStateException failure = assertThrows(IllegalStateException.class,
            () -> PeerExchange.visit(visitor, dir, 4L << 20, 64 * 1024, WAIT));
        final long millis = (System.nanoTime() - start) / 1_000_000;
        assertTrue(failure.getMessage().contains("REM_ACCESS_ERR"), failure.getMessage());
        assertTrue(millis < 5_000, "failed after " + millis + " ms: " + failure.getMessage());
        // the writes still in flight referenced memory visit() frees on its way out: its NIC must have stopped first
        Thread.sleep(200);
        assertEquals(0, InMemoryNicPair.faults(visitor), "exceptions in the visitor's workers");
    }

    /**
     * An rkey is a u32 on the wire: {@code nic.addr} writes it unsigned, whatever its sign in Java, and a reader takes
     * back the same key; a signed or wider number (another writer's, a forged file) is refused with the reason rather
     * than cut to some other key.
     */
    @Test
    void shouldWriteAnRkeyUnsignedAndRefuseOneOutsideThirtyTwoBits() throws Exception
    {
        final String[] keys = {"1", "2147483648", "4294967295"};
        for (final String key : keys)
        {
            Files.writeString(dir.resolve("nic.addr"), "planes=1 ip.0=10.0.0.2 addr=4096 rkey=" + key + " length=65536");
            assertEquals(Integer.parseUnsignedInt(key), PeerExchange.awaitServed(dir, 1, WAIT).rkey(), key);
        }
        for (final String key : new String[]{"-1", "4294967296", "0x10", ""})
        {
            Files.writeString(dir.resolve("nic.addr"), "planes=1 ip.0=10.0.0.2 addr=4096 rkey=" + key + " length=65536");
            final IllegalStateException refused = assertThrows(IllegalStateException.class,
                () -> PeerExchange.awaitServed(dir, 1, WAIT), key);
            assertTrue(refused.getMessage().contains("is not an unsigned 32-bit number") ||
                refused.getMessage().contains("did not say its rkey"), refused.getMessage());
        }
        final EmbeddedNic[] nics = start(NicConnection.Kind.SPRAY, "unsigned");
        MemoryRegion exposed = pair.expose(1, 4096);
        for (int tries = 0; exposed.rkey() >= 0 && tries < 64; tries++) // keys are drawn at random: half negative
        {
            exposed = pair.expose(1, 4096);
        }
        assertTrue(exposed.rkey() < 0, "a key above 2^31 - 1 to write");
        PeerExchange.publishServer(nics[1], exposed, dir);
        final String published = Files.readString(dir.resolve("nic.addr"));
        assertTrue(published.contains(" rkey=" + Integer.toUnsignedString(exposed.rkey()) + " "), published);
        assertEquals(exposed.rkey(), PeerExchange.awaitServed(dir, 1, WAIT).rkey());
    }

    @Test
    void shouldVisitAServingNicAndReadBackEveryByteItWrote() throws Exception
    {
        final EmbeddedNic[] nics = start(NicConnection.Kind.SPRAY, "visit");
        final MemoryRegion exposed = pair.expose(1, 1L << 20);
        PeerExchange.publishServer(nics[1], exposed, dir);
        final PeerExchange.Result visited = PeerExchange.visit(nics[0], dir, 1L << 20, 64 * 1024, WAIT);
        assertTrue(visited.verified(), visited.toJson());
        assertEquals(-1, SeededPattern.allocate(pair.arena(), 1L << 20, 0x5EED_0001L).mismatch(exposed.segment()),
            "the serving NIC's memory holds the visitor's pattern, placed with no application on its side");
    }

    @Test
    void shouldWarmUpOverTheSameConnectionBeforeTheTimedPartAndProveTheTimedWritesApart() throws Exception
    {
        final EmbeddedNic[] nics = start(NicConnection.Kind.SPRAY, "warm");
        final MemoryRegion exposed = pair.expose(1, 1L << 20);
        PeerExchange.publishServer(nics[1], exposed, dir);
        final long warmup = 512 * 1024;
        final java.util.List<String> events = new java.util.ArrayList<>();
        final PeerExchange.Result visited = PeerExchange.visit(nics[0], dir, 1L << 20, 64 * 1024, WAIT, warmup,
            new PeerExchange.VisitPhases()
            {
                @Override
                public void warmedUp(final long nanos)
                {
                    // the warm-up's own pattern is in the served memory before the timed part begins
                    final long mismatch = SeededPattern.allocate(pair.arena(), warmup, PeerExchange.WARMUP_SEED)
                        .mismatch(exposed.segment().asSlice(0, warmup));
                    events.add("warm " + (nanos > 0) + " " + mismatch);
                }

                @Override
                public void timed()
                {
                    events.add("timed");
                }
            });
        assertEquals(java.util.List.of("warm true -1", "timed"), events);
        assertTrue(visited.verified(), visited.toJson());
        assertEquals(-1, SeededPattern.allocate(pair.arena(), 1L << 20, 0x5EED_0001L).mismatch(exposed.segment()),
            "the timed part overwrote the warm-up's bytes with its own");
    }

    @Test
    void shouldTimeAFreshConnectionAfterWarmingUpOnAnotherThatItClosedFirst() throws Exception
    {
        final EmbeddedNic[] nics = start(NicConnection.Kind.SPRAY, "fresh");
        final MemoryRegion exposed = pair.expose(1, 1L << 20);
        PeerExchange.publishServer(nics[1], exposed, dir);
        final java.util.List<String> events = new java.util.ArrayList<>();
        final int[] timedConnection = {-1};
        final PeerExchange.Result visited = PeerExchange.visit(nics[0], dir, 1L << 20, 64 * 1024, WAIT, 256 * 1024,
            true, new PeerExchange.VisitPhases()
            {
                @Override
                public void warmedUp(final long nanos)
                {
                    // the warm-up's connection is closed before the hold: nothing of it carries into the timed part
                    events.add("warm, open " + nics[0].connections().size());
                }

                @Override
                public void timed()
                {
                    final java.util.List<NicConnection> open = nics[0].connections();
                    events.add("timed, open " + open.size());
                    timedConnection[0] = open.isEmpty() ? -1 : open.get(0).localId();
                }
            });
        assertEquals(java.util.List.of("warm, open 0", "timed, open 1"), events);
        assertTrue(timedConnection[0] >= 0);
        assertTrue(visited.verified(), visited.toJson());
        assertEquals(-1, SeededPattern.allocate(pair.arena(), 1L << 20, 0x5EED_0001L).mismatch(exposed.segment()),
            "the fresh connection's WRITEs are in the served memory");
    }

    @Test
    void shouldRefuseAFreshConnectionForRoceV2() throws Exception
    {
        final EmbeddedNic[] nics = start(NicConnection.Kind.ROCEV2, "fresh-rocev2");
        final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () ->
            PeerExchange.visit(nics[0], dir, 1L << 20, 64 * 1024, WAIT, 1L << 20, true, PeerExchange.VisitPhases.NONE));
        assertTrue(refused.getMessage().contains("warm up over the same connection"), refused.getMessage());
    }

    @Test
    void shouldRefuseAWarmupLargerThanTheServingNicExposes() throws Exception
    {
        final EmbeddedNic[] nics = start(NicConnection.Kind.SPRAY, "warm-too-large");
        final MemoryRegion exposed = pair.expose(1, 256 * 1024);
        PeerExchange.publishServer(nics[1], exposed, dir);
        final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () ->
            PeerExchange.visit(nics[0], dir, 256 * 1024, 64 * 1024, WAIT, 1L << 20, PeerExchange.VisitPhases.NONE));
        assertTrue(refused.getMessage().contains("fewer than the 1048576 to warm up with: lower --warmup"),
            refused.getMessage());
    }

    @Test
    void shouldNeverWriteThroughALinkPlantedAtAFileItPublishes() throws Exception
    {
        final Path exchange = Files.createDirectory(dir.resolve("exchange"));
        final Path victim = Files.writeString(dir.resolve("victim"), "precious");
        Files.createSymbolicLink(exchange.resolve("nic.addr.tmp"), victim); // planted where the NIC writes first
        Files.createSymbolicLink(exchange.resolve("nic.ready"), victim);
        PeerExchange.publish(exchange, "nic.addr", "addr=1 rkey=2\n");
        PeerExchange.publish(exchange, "nic.ready", "ready");
        assertEquals("precious", Files.readString(victim), "before, Files.writeString followed the link");
        assertEquals("addr=1 rkey=2\n", PeerExchange.read(exchange.resolve("nic.addr")));
        assertTrue(Files.isRegularFile(exchange.resolve("nic.ready"), LinkOption.NOFOLLOW_LINKS), "the link replaced");
    }

    @Test
    void shouldReadOnlyASmallRegularFileAPeerPublished() throws Exception
    {
        final Path exchange = Files.createDirectory(dir.resolve("exchange"));
        Files.createSymbolicLink(exchange.resolve("visitor.qp"), Path.of("/dev/zero")); // read whole: the heap
        assertTrue(assertThrows(IOException.class, () -> PeerExchange.read(exchange.resolve("visitor.qp"))).getMessage()
            .contains("is not a regular file"));
        final Path fifo = exchange.resolve("fifo");
        assertEquals(0, new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor()); // read whole: blocks for ever
        assertThrows(IOException.class, () -> PeerExchange.read(fifo));
        final Path big = Files.write(exchange.resolve("big"), new byte[PeerExchange.MAX_FILE_BYTES + 1]);
        assertTrue(assertThrows(IOException.class, () -> PeerExchange.read(big)).getMessage().contains("more than"));
        // a directory others may write into (a reader that never prepared it: spraynic client --peer-exchange): they
        // could swap a pipe in for a file between its check and its open, or publish one of their own
        final Path addr = Files.writeString(exchange.resolve("nic.addr"), "addr=1\n");
        assertEquals("addr=1\n", PeerExchange.read(addr));
        Files.setPosixFilePermissions(exchange, PosixFilePermissions.fromString("rwxrwxrwx"));
        final IOException open = assertThrows(IOException.class, () -> PeerExchange.read(addr));
        assertTrue(open.getMessage().contains("others may replace the files in it"), open.getMessage());
        if ("root".equals(System.getProperty("user.name")))
        {
            // sticky, as /tmp: another user may make a name first (and swap a pipe in for it): its file is refused
            assertEquals(0, new ProcessBuilder("chmod", "1777", exchange.toString()).start().waitFor());
            assertEquals("addr=1\n", PeerExchange.read(addr));
            assertEquals(0, new ProcessBuilder("chown", "65534", addr.toString()).start().waitFor());
            final IOException theirs = assertThrows(IOException.class, () -> PeerExchange.read(addr));
            assertTrue(theirs.getMessage().contains("belongs to uid 65534"), theirs.getMessage());
        }
    }

    @Test
    void shouldRefuseAnExchangeDirectoryOthersMayWriteIntoOrAnotherUserOwns() throws Exception
    {
        final Path open = Files.createDirectory(dir.resolve("open"));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
        final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
            () -> PeerExchange.prepare(open));
        assertTrue(refused.getMessage().contains("the exchange directory " + open + " has mode 777"), refused.getMessage());
        final Path sticky = Files.createDirectory(dir.resolve("sticky")); // as /tmp: others cannot replace its files
        assertEquals(0, new ProcessBuilder("chmod", "1777", sticky.toString()).start().waitFor());
        PeerExchange.prepare(sticky);
        final Path made = dir.resolve("made/by/it");
        PeerExchange.prepare(made);
        assertTrue(Files.isDirectory(made));
        if ("root".equals(System.getProperty("user.name")))
        {
            final Path theirs = Files.createDirectory(dir.resolve("theirs"));
            assertEquals(0, new ProcessBuilder("chown", "65534", theirs.toString()).start().waitFor());
            final IllegalArgumentException other = assertThrows(IllegalArgumentException.class,
                () -> PeerExchange.prepare(theirs));
            assertTrue(other.getMessage().contains("belongs to another user (uid 65534)"), other.getMessage());
        }
    }
}
