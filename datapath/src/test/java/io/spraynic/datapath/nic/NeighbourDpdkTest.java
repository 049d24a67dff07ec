package io.spraynic.datapath.nic;

import io.spraynic.datapath.transport.spray.SprayConnection;

import io.spraynic.datapath.neighbour.NeighbourFrames;
import io.spraynic.datapath.wire.ArpHeader;
import io.spraynic.pmd.InterfaceAddress;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two NICs on real DPDK {@code net_ring} ports (two planes, two workers each, through {@link HostileWire}'s switch)
 * that know each other by IP address only: the connection's frames go to MACs the NICs resolved by ARP, on both
 * planes, on both sides. Then an attacker on B's link forges ARP replies for A's address, floods requests from random
 * addresses, sends malformed ARP and pings B, through both of B's workers (worker 1 steers them to worker 0): nothing
 * changes B's table or its connection, every frame is counted by reason, pings are answered, and a transfer stays
 * verified. A gratuitous ARP for A's address with a new MAC (the documented update of a known neighbour) moves B's
 * connection to it, and one with the old MAC moves it back.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class NeighbourDpdkTest
{
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final long ATTACKER_MAC = 0x02_66_66_66_66_66L;
    private static final String B0 = "worker 0: plane 0 neighbour ";

    @TempDir
    static Path dir;

    private static HostileWire wire;

    @BeforeAll
    static void start()
    {
        wire = new HostileWire(dir, "neighbour", c -> c.listen(true)); // A listens too: B connects to it once
    }

    @AfterAll
    static void stop()
    {
        if (null != wire)
        {
            wire.close();
        }
    }

    @Test
    void shouldConnectByAddressOnlyAndKeepItsNeighboursUnderAttack() throws Exception
    {
        final HostileWire.Legit legit = wire.connect(WAIT);
        for (int p = 0; p < HostileWire.PLANES; p++)
        {
            final int plane = p;
            assertEquals(HostileWire.mac(1, p), ((SprayNicConnection)legit.client()).spray().nextHopMac(p), "A sends to B's MAC on plane " + p);
            awaitEquals(HostileWire.mac(0, p), () -> ((SprayNicConnection)legit.server()).spray().nextHopMac(plane), "B sends to A's MAC");
        }
        final Map<String, Long> a = HostileWire.counters(wire.a());
        assertTrue(a.get(B0 + "arp_requests_sent") >= 1 && a.get(B0 + "resolved") >= 1, a.toString());
        // B taught A its MAC: by answering A's request, or by its gratuitous ARP when that reached A's INCOMPLETE entry
        // first (A asked before B's port ran); and on whichever of B's workers the frame met
        final Map<String, Long> b = HostileWire.counters(wire.b());
        assertTrue(HostileWire.sum(b, "plane 0 neighbour arp_replies_sent") + HostileWire.sum(b, "plane 0 neighbour gratuitous_arp_sent") >= 1,
            b.toString());
        assertEquals(-1, HostileWire.verifiedTransfer(legit, wire.a(), wire.b(), 1 << 20, 1, WAIT));

        final int ipA = HostileWire.ip(0, 0);
        final int ipB = HostileWire.ip(1, 0);
        // pings first, alone: the flood below uses up the reply budget (both workers' frames meet at worker 0)
        final List<byte[]> pings = new ArrayList<>();
        for (int i = 0; i < 10; i++)
        {
            pings.add(echo(ATTACKER_MAC, 0x0AC8_0002, ipB, i));
        }
        final Map<String, Long> beforePings = HostileWire.counters(wire.b());
        final long sentBefore = wire.attackFramesSent(); // the class's other tests send some of their own
        wire.attack(new HostileConnectDpdkTest.ListAttacker(pings));
        final long deadline = System.nanoTime() + WAIT.toNanos();
        while (delta(beforePings, HostileWire.counters(wire.b()), "echo_answered") < 10 && System.nanoTime() < deadline)
        {
            Thread.sleep(5);
        }
        assertEquals(10, delta(beforePings, HostileWire.counters(wire.b()), "echo_answered"), () -> "every ping answered: " +
            new java.util.TreeMap<>(HostileWire.counters(wire.b())).subMap("worker 0: p", "worker 1"));
        final List<byte[]> attack = new ArrayList<>();
        for (int i = 0; i < 50; i++)
        {
            attack.add(arp(ArpHeader.OPERATION_REPLY, ATTACKER_MAC, ipA, HostileWire.mac(1, 0), ipB, 60));
        }
        final SplittableRandom random = new SplittableRandom(14);
        for (int i = 0; i < 300; i++)
        {
            attack.add(arp(ArpHeader.OPERATION_REQUEST, 0x02_77_00_00_00_00L | i, 0x0AC8_0000 | random.nextInt(1 << 16), 0,
                ipB, 60));
        }
        attack.add(arp(ArpHeader.OPERATION_REQUEST, ATTACKER_MAC, 0x0AC8_0001, 0, ipB, 30)); // truncated
        final byte[] badType = arp(ArpHeader.OPERATION_REQUEST, ATTACKER_MAC, 0x0AC8_0001, 0, ipB, 60);
        badType[14 + ArpHeader.PROTOCOL_TYPE_OFFSET] = (byte)0x86; // IPv6 in an ARP header
        attack.add(badType);
        attack.add(arp(9, ATTACKER_MAC, 0x0AC8_0001, 0, ipB, 60));
        final Map<String, Long> before = HostileWire.counters(wire.b());
        wire.attack(new HostileConnectDpdkTest.ListAttacker(attack));
        awaitEquals(sentBefore + pings.size() + attack.size(), wire::attackFramesSent, "the attack went out");
        awaitEquals(before.get(B0 + "arp_requests_received") + 300,
            () -> HostileWire.counters(wire.b()).get(B0 + "arp_requests_received"), "the flood arrived");
        Thread.sleep(50); // and the frames behind it
        final Map<String, Long> after = HostileWire.counters(wire.b());
        assertEquals(50, delta(before, after, "dropped_unsolicited_reply"), after.toString());
        assertEquals(300, delta(before, after, "arp_requests_received"), "the flood; the malformed ones are not counted as requests");
        assertEquals(1, delta(before, after, "dropped_truncated"));
        assertEquals(1, delta(before, after, "dropped_bad_format"));
        assertEquals(1, delta(before, after, "dropped_bad_operation"));
        assertTrue(delta(before, after, "replies_rate_limited") > 0, "the flood's replies were limited");
        assertEquals(0, delta(before, after, "evictions") + delta(before, after, "cache_full"), "no entry was made");
        assertEquals(HostileWire.mac(0, 0), ((SprayNicConnection)legit.server()).spray().nextHopMac(0), "B still sends to A's real MAC");
        assertEquals(-1, HostileWire.verifiedTransfer(legit, wire.a(), wire.b(), 1 << 20, 2, WAIT));

        // a known neighbour announces a new MAC: B's connection follows it, and back
        final long moved = 0x02_00_00_00_AA_01L;
        wire.attack(new HostileConnectDpdkTest.ListAttacker(List.of(arp(ArpHeader.OPERATION_REQUEST, moved, ipA, 0, ipA, 60))));
        awaitEquals(moved, () -> ((SprayNicConnection)legit.server()).spray().nextHopMac(0), "B follows the gratuitous ARP");
        wire.attack(new HostileConnectDpdkTest.ListAttacker(List.of(
            arp(ArpHeader.OPERATION_REQUEST, HostileWire.mac(0, 0), ipA, 0, ipA, 60))));
        awaitEquals(HostileWire.mac(0, 0), () -> ((SprayNicConnection)legit.server()).spray().nextHopMac(0), "and back");
        // the counters file is published on the worker's schedule, after the connection already follows the MAC
        awaitEquals(1, () -> HostileWire.counters(wire.b()).get(B0 + "mac_changes") >= 2 ? 1 : 0, "both changes counted");
        assertEquals(-1, HostileWire.verifiedTransfer(legit, wire.a(), wire.b(), 1 << 20, 3, WAIT));
        assertEquals(0, HostileWire.sum(HostileWire.counters(wire.b()), "frame faults (exception handling a frame, dropped)"));
    }

    @Test
    void shouldGiveAWorkerThatMissedAMacChangeEveryNextHopOnceItHasRoom() throws Exception
    {
        // a connection of B's on worker 1 (worker 0 runs the neighbour agents and tells the others of each change): B's
        // connects take its workers in turn (where a peer's connection lands depends on the queue its CONNECT met)
        final ExecutorService acceptor = Executors.newSingleThreadExecutor();
        HostileWire.Legit legit;
        try
        {
            legit = connectFromB(acceptor);
            while (legit.client().worker() != 1)
            {
                legit = connectFromB(acceptor);
            }
        }
        finally
        {
            acceptor.shutdownNow();
        }
        final SprayConnection served = ((SprayNicConnection)legit.client()).spray();
        awaitEquals(HostileWire.mac(0, 0), () -> served.nextHopMac(0), "B sends to A's MAC");
        final int ipA = HostileWire.ip(0, 0);
        final long moved = 0x02_00_00_00_AA_02L;
        final String deferred = "neighbour: next-hop MAC updates deferred (worker command queue full)";
        final long deferredBefore = HostileWire.counters(wire.b()).get(deferred);

        final NicWorker worker = wire.b().worker(1);
        final CountDownLatch stall = new CountDownLatch(1);
        try
        {
            stall(worker, stall);
            int queued = 0;
            while (worker.offer((w, now) -> { }))
            {
                queued++;
            }
            assertTrue(queued > 0, "worker 1's command queue full");
            // A's address announces a new MAC (through worker 0, the first queue of plane 0): worker 0's table takes
            // it, and worker 1's queue has no room for the update; before, it was dropped for good, and the
            // connection went on sending to the old MAC while the table held the new one
            wire.attack(new HostileConnectDpdkTest.ListAttacker(List.of(arp(ArpHeader.OPERATION_REQUEST, moved, ipA, 0,
                ipA, 60))));
            awaitEquals(deferredBefore + 1, () -> HostileWire.counters(wire.b()).get(deferred), "the update deferred");
        }
        finally
        {
            stall.countDown();
        }
        awaitEquals(moved, () -> served.nextHopMac(0), "worker 1 given every next hop's MAC once it had room");
        wire.attack(new HostileConnectDpdkTest.ListAttacker(List.of(
            arp(ArpHeader.OPERATION_REQUEST, HostileWire.mac(0, 0), ipA, 0, ipA, 60))));
        awaitEquals(HostileWire.mac(0, 0), () -> served.nextHopMac(0), "and back");
        assertEquals(-1, HostileWire.verifiedTransfer(legit, wire.b(), wire.a(), 1 << 20, 5, WAIT));
    }

    @Test
    void shouldFollowAConnectionsNextHopsOnBothEndsWhileItLives() throws Exception
    {
        // each end follows the other's address on every plane while a connection sends to it: the entry is never
        // evicted, and asked again when it fails; a connection closed (B's: by A's CLOSE) follows it no more
        final long[] aOnB = {followers(wire.b(), 0, 0), followers(wire.b(), 0, 1)};
        final long[] bOnA = {followers(wire.a(), 1, 0), followers(wire.a(), 1, 1)};
        final HostileWire.Legit legit = wire.connect(WAIT);
        for (int p = 0; p < HostileWire.PLANES; p++)
        {
            final int plane = p;
            awaitEquals(aOnB[p] + 1, () -> followers(wire.b(), 0, plane), "B follows A on plane " + p);
            awaitEquals(bOnA[p] + 1, () -> followers(wire.a(), 1, plane), "A follows B on plane " + p);
        }
        legit.client().close(WAIT);
        for (int p = 0; p < HostileWire.PLANES; p++)
        {
            final int plane = p;
            awaitEquals(bOnA[p], () -> followers(wire.a(), 1, plane), "A's closed connection follows B no more");
            awaitEquals(aOnB[p], () -> followers(wire.b(), 0, plane), "nor B's, closed by A's CLOSE");
        }
    }

    @Test
    void shouldGiveAConnectionTheMacItsNextHopTookDuringItsHandshake() throws Exception
    {
        final ExecutorService acceptor = Executors.newSingleThreadExecutor();
        final ExecutorService connector = Executors.newSingleThreadExecutor();
        final CountDownLatch stall = new CountDownLatch(1);
        final int ipA = HostileWire.ip(0, 0);
        final long moved = 0x02_00_00_00_AA_03L;
        try
        {
            // B's connects take its workers in turn: after one on worker 0, the next goes to worker 1
            NicConnection last = connectFromB(acceptor).client();
            while (last.worker() != 0)
            {
                last = connectFromB(acceptor).client();
            }
            final NicWorker worker = wire.b().worker(1);
            stall(worker, stall);
            // B resolves A's MAC and queues the handshake on worker 1; A's address then moves, and worker 1 runs the
            // update before the connection exists (it attaches when the handshake completes): before, the update
            // was lost and the connection sent to the MAC resolved before it
            final java.util.concurrent.Future<NicConnection> accepted = acceptor.submit(() -> wire.a().accept(WAIT));
            final CompletableFuture<NicConnection> connected = CompletableFuture.supplyAsync(() ->
                wire.b().connect(new int[]{ipA, HostileWire.ip(0, 1)}, WAIT), connector);
            Thread.sleep(300); // the resolve (worker 0) and the handshake's command queued on worker 1
            wire.attack(new HostileConnectDpdkTest.ListAttacker(List.of(arp(ArpHeader.OPERATION_REQUEST, moved, ipA, 0,
                ipA, 60))));
            awaitEquals(moved, () -> macOnWorkerZero(ipA), "worker 0's table took the new MAC");
            stall.countDown();
            final NicConnection connection = connected.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertNotNull(accepted.get(WAIT.toSeconds(), TimeUnit.SECONDS));
            assertEquals(1, connection.worker());
            final SprayConnection spray = ((SprayNicConnection)connection).spray();
            awaitEquals(moved, () -> spray.nextHopMac(0), "the connection sends to the MAC A's address took");
            wire.attack(new HostileConnectDpdkTest.ListAttacker(List.of(
                arp(ArpHeader.OPERATION_REQUEST, HostileWire.mac(0, 0), ipA, 0, ipA, 60))));
            awaitEquals(HostileWire.mac(0, 0), () -> spray.nextHopMac(0), "and back");
        }
        finally
        {
            stall.countDown();
            acceptor.shutdownNow();
            connector.shutdownNow();
        }
    }

    // `worker` runs nothing else until `stall` is counted down; returns once it waits
    private static void stall(final NicWorker worker, final CountDownLatch stall) throws InterruptedException
    {
        final CountDownLatch stalled = new CountDownLatch(1);
        assertTrue(worker.offer((w, now) ->
        {
            stalled.countDown();
            try
            {
                stall.await(30, TimeUnit.SECONDS);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }));
        assertTrue(stalled.await(10, TimeUnit.SECONDS), "worker " + worker.index() + " stalled");
    }

    // a connection from B to A, A accepting on `acceptor`: B's handle the client, A's the server
    private static HostileWire.Legit connectFromB(final ExecutorService acceptor) throws Exception
    {
        final java.util.concurrent.Future<NicConnection> accepted = acceptor.submit(() -> wire.a().accept(WAIT));
        final NicConnection connection = wire.b().connect(new int[]{HostileWire.ip(0, 0), HostileWire.ip(0, 1)}, WAIT);
        final NicConnection server = accepted.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertNotNull(server);
        return new HostileWire.Legit(connection, server);
    }

    private static long macOnWorkerZero(final int ip)
    {
        return WorkerCalls.call(wire.b().worker(0), (w, now) -> w.neighbour(0).macOf(InterfaceAddress.MAPPED_HIGH,
            InterfaceAddress.mappedLow(ip)), EmbeddedNic.CONTROL_TIMEOUT, "read the table");
    }

    // connections of `nic` whose frames on `plane` go to host `host`'s address there, as worker 0's table counts them
    private static long followers(final EmbeddedNic nic, final int host, final int plane)
    {
        final int ip = HostileWire.ip(host, plane);
        return WorkerCalls.call(nic.worker(0), (w, now) -> (long)w.neighbour(plane).followers(InterfaceAddress.MAPPED_HIGH,
            InterfaceAddress.mappedLow(ip)), EmbeddedNic.CONTROL_TIMEOUT, "count followers");
    }

    private static long delta(final Map<String, Long> before, final Map<String, Long> after, final String what)
    {
        return after.get(B0 + what) - before.get(B0 + what);
    }

    private static void awaitEquals(final long expected, final LongSupplier actual, final String what) throws Exception
    {
        final long deadline = System.nanoTime() + WAIT.toNanos();
        while (actual.getAsLong() != expected && System.nanoTime() < deadline)
        {
            Thread.sleep(5);
        }
        assertEquals(expected, actual.getAsLong(), what);
    }

    private static byte[] arp(final int operation, final long senderMac, final int senderIp, final long targetMac,
        final int targetIp, final int length)
    {
        return NeighbourFrames.arp(operation, senderMac, senderIp, targetMac, targetIp, targetMac).asSlice(0, length)
            .toArray(ValueLayout.JAVA_BYTE);
    }

    private static byte[] echo(final long sourceMac, final int source, final int destination, final int sequence)
    {
        return NeighbourFrames.echo(HostileWire.mac(1, 0), sourceMac, source, destination, sequence, 16)
            .toArray(ValueLayout.JAVA_BYTE);
    }
}
