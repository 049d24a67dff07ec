package io.spraynic.datapath.nic;

import io.spraynic.datapath.api.BulkTransfer;
import io.spraynic.datapath.api.SeededPattern;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.datapath.transport.spray.SprayHandshake;
import io.spraynic.pmd.EalConfig;
import io.spraynic.pmd.MempoolConfig;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PortConfig;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import org.agrona.concurrent.status.CountersReader;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Two embedded spray NICs, A and B, on real DPDK {@code net_ring} ports joined through a switch thread on the
 * same L2 as an attacker: per plane, A's port and B's port are each a crossed ring pair with a switch port;
 * the switch forwards A to B and B to A (queue q to queue q, mbufs as received), shows every frame to a
 * tap, and merges an attacker's frames into what B receives, as one more host on the switch would. What the
 * attacker sends goes through B's real DPDK queues, parser, workers and transport.
 */
final class HostileWire implements AutoCloseable
{
    static final int PLANES = 2;
    static final int WORKERS = 2;
    static final int BURST = 32;

    /** Something that writes attack frames; called on the switch thread. */
    interface Attacker
    {
        /** @return whether there is a frame to send on {@code plane} now. */
        boolean hasNext(int plane);

        /**
         * Writes one frame into {@code memory} at {@code offset}.
         *
         * @param plane the plane it goes out on (to B).
         * @param room  the buffer's bytes.
         * @return the frame's length, 1..room.
         */
        int next(int plane, MemorySegment memory, long offset, int room);
    }

    /** Sees each frame the switch forwards; on the switch thread. */
    interface Tap
    {
        void onFrame(boolean toB, int plane, MemorySegment memory, long offset, int length);
    }

    final DpdkNic dpdk;
    final EmbeddedNic[] nics = new EmbeddedNic[2];
    final CountersFile[] counters = new CountersFile[2];
    private final Thread switchThread;
    private volatile boolean running = true;
    private volatile Attacker attacker;
    private volatile Tap tap;
    private volatile long attackFramesSent;
    // the fabric's random loss on legitimate frames, both ways (soak): a lost frame leaves the switch with the local
    // experimental EtherType, so the receiving parser drops it (not IP) before any transport sees it: a loss to the
    // transport, counted by the parser (a ring-pair burst cannot drop a frame from its middle)
    private volatile double lossFraction;
    private final java.util.SplittableRandom lossRandom = new java.util.SplittableRandom(0x105E);
    private volatile long framesLost;
    private volatile Throwable switchFailure;

    HostileWire(final Path dir, final String name, final Consumer<EmbeddedNicConfig> tune)
    {
        final List<PortConfig> ports = new ArrayList<>();
        for (int p = 0; p < PLANES; p++)
        {
            for (final String h : new String[]{"a", "b"})
            {
                ports.add(PortConfig.ringPair(h + p, "s" + h + p).withQueues(WORKERS, WORKERS).withDescriptors(512, 512));
                ports.add(PortConfig.ringPair("s" + h + p, h + p).withQueues(WORKERS, WORKERS).withDescriptors(512, 512));
            }
        }
        dpdk = DpdkNic.start(NicConfig.of(EalConfig.DEFAULT.withFilePrefix("spraynic-" + name + "-" + ProcessHandle.current().pid())
            .withLogLevels(List.of("lib.eal:warning")), MempoolConfig.DEFAULT.withMbufs(32767), ports));
        try
        {
            for (int h = 0; h < 2; h++)
            {
                final EmbeddedNicConfig config = new EmbeddedNicConfig().mode(NicConnection.Kind.SPRAY).workers(WORKERS)
                    .planes(PLANES).connections(8, 4, 1024).sprayConfig(EmbeddedNicConfig::sharedCoreSprayConfig)
                    .listen(h == 1);
                final PacketPort[][] nicPorts = new PacketPort[WORKERS][PLANES];
                for (int p = 0; p < PLANES; p++)
                {
                    config.local(p, ip(h, p), mac(h, p));
                    for (int w = 0; w < WORKERS; w++)
                    {
                        nicPorts[w][p] = dpdk.packetPort((h == 0 ? "a" : "b") + p, w);
                    }
                }
                config.peerResolver(new SprayHandshake.PeerResolver()
                {
                    public int ipv4(final int plane, final int plane0Ipv4)
                    {
                        return plane0Ipv4 + (plane << 16);
                    }

                    public long mac(final int plane, final int plane0Ipv4, final long plane0Mac)
                    {
                        return plane0Mac + ((long)plane << 16);
                    }
                });
                tune.accept(config);
                counters[h] = CountersFile.create(dir, name + h, 8192);
                nics[h] = EmbeddedNic.start(config, nicPorts, counters[h]);
            }
        }
        catch (final RuntimeException ex)
        {
            close();
            throw ex;
        }
        switchThread = new Thread(this::runSwitch, "hostile-switch");
        switchThread.setDaemon(true);
        switchThread.start();
    }

    static int ip(final int host, final int plane)
    {
        return 0x0A00_0001 + (host << 8) + (plane << 16);
    }

    static long mac(final int host, final int plane)
    {
        return 0x02_00_00_00_00_01L + ((long)host << 8) + ((long)plane << 16);
    }

    EmbeddedNic a()
    {
        return nics[0];
    }

    EmbeddedNic b()
    {
        return nics[1];
    }

    void attack(final Attacker attacker)
    {
        this.attacker = attacker;
    }

    void tap(final Tap tap)
    {
        this.tap = tap;
    }

    /** Drops (as S6 sees a loss) this fraction of the legitimate frames the switch forwards, both ways. */
    void loss(final double fraction)
    {
        this.lossFraction = fraction;
    }

    long framesLost()
    {
        return framesLost;
    }

    long attackFramesSent()
    {
        return attackFramesSent;
    }

    Throwable switchFailure()
    {
        return switchFailure;
    }

    private void runSwitch()
    {
        final PacketPort[][] fromA = new PacketPort[PLANES][WORKERS];
        final PacketPort[][] fromB = new PacketPort[PLANES][WORKERS];
        final PacketBurst[][] burstsA = new PacketBurst[PLANES][WORKERS];
        final PacketBurst[][] burstsB = new PacketBurst[PLANES][WORKERS];
        final PacketBurst[][] attackBursts = new PacketBurst[PLANES][WORKERS];
        for (int p = 0; p < PLANES; p++)
        {
            for (int q = 0; q < WORKERS; q++)
            {
                fromA[p][q] = dpdk.packetPort("sa" + p, q);
                fromB[p][q] = dpdk.packetPort("sb" + p, q);
            }
        }
        fromA[0][0].onPollerStart();
        try
        {
            for (int p = 0; p < PLANES; p++)
            {
                for (int q = 0; q < WORKERS; q++)
                {
                    burstsA[p][q] = fromA[p][q].newBurst(BURST);
                    burstsB[p][q] = fromB[p][q].newBurst(BURST);
                    attackBursts[p][q] = fromB[p][q].newBurst(BURST);
                }
            }
            long sent = 0;
            final org.agrona.concurrent.IdleStrategy idle = new org.agrona.concurrent.BackoffIdleStrategy();
            while (running)
            {
                int work = 0;
                for (int p = 0; p < PLANES; p++)
                {
                    for (int q = 0; q < WORKERS; q++)
                    {
                        work += forward(fromA[p][q], burstsA[p][q], fromB[p][q], true, p);
                        work += forward(fromB[p][q], burstsB[p][q], fromA[p][q], false, p);
                        final Attacker a = attacker;
                        if (null != a || attackBursts[p][q].size() > 0)
                        {
                            final int n = inject(a, p, fromB[p][q], attackBursts[p][q]);
                            sent += n;
                            work += n;
                            attackFramesSent = sent;
                        }
                    }
                }
                idle.idle(work); // a shared 2-core CI machine: a spinning switch would starve the NICs' workers
            }
        }
        catch (final Throwable ex)
        {
            switchFailure = ex;
        }
        finally
        {
            for (int p = 0; p < PLANES; p++)
            {
                for (int q = 0; q < WORKERS; q++)
                {
                    for (final PacketBurst[][] bursts : List.of(burstsA, burstsB, attackBursts))
                    {
                        if (null != bursts[p][q])
                        {
                            (bursts == burstsA ? fromA : fromB)[p][q].release(bursts[p][q]);
                            bursts[p][q].close();
                        }
                    }
                }
            }
            fromA[0][0].onPollerClose();
        }
    }

    private int forward(final PacketPort from, final PacketBurst burst, final PacketPort to, final boolean toB, final int plane)
    {
        final int n = from.receive(burst);
        if (n == 0)
        {
            return 0;
        }
        final Tap t = tap;
        if (null != t)
        {
            for (int i = 0; i < burst.size(); i++)
            {
                t.onFrame(toB, plane, burst.memory(), burst.offset(i), burst.length(i));
            }
        }
        final double loss = lossFraction;
        if (loss > 0)
        {
            for (int i = 0; i < burst.size(); i++)
            {
                if (lossRandom.nextDouble() < loss)
                {
                    burst.memory().set(java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN),
                        burst.offset(i) + 12, (short)0x88B5);
                    framesLost++;
                }
            }
        }
        to.transmit(burst);
        to.release(burst); // a full ring drops, as a switch would
        return n;
    }

    // what the ring does not take stays in the burst for the next round: every frame the attacker wrote reaches B
    private static int inject(final Attacker attacker, final int plane, final PacketPort to, final PacketBurst burst)
    {
        while (null != attacker && burst.size() < BURST && attacker.hasNext(plane) && to.allocate(burst, 1))
        {
            final int i = burst.size() - 1;
            burst.length(i, attacker.next(plane, burst.memory(), burst.offset(i), burst.room(i)));
        }
        return burst.size() == 0 ? 0 : to.transmit(burst);
    }

    /** A connection from A to B, established, with B's handle; the test's legitimate traffic. */
    record Legit(NicConnection client, NicConnection server)
    {
    }

    Legit connect(final Duration timeout) throws Exception
    {
        final CompletableFuture<NicConnection> accepted = CompletableFuture.supplyAsync(() -> b().accept(timeout));
        final int[] ips = new int[PLANES];
        for (int p = 0; p < PLANES; p++)
        {
            ips[p] = ip(1, p);
        }
        final NicConnection client = a().connect(ips, timeout);
        final NicConnection server = accepted.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        if (null == server)
        {
            throw new IllegalStateException("B accepted nothing");
        }
        return new Legit(client, server);
    }

    /**
     * A WRITEs {@code bytes} of a seeded pattern into a region of B, the last write with immediate data; B waits
     * for it and compares every byte.
     *
     * @return the first mismatching offset, or -1 when every byte is right.
     */
    static long verifiedTransfer(final Legit legit, final EmbeddedNic a, final EmbeddedNic b, final long bytes,
        final long seed, final Duration timeout)
    {
        try (Arena arena = Arena.ofShared())
        {
            final MemorySegment source = SeededPattern.allocate(arena, bytes, seed);
            final MemorySegment target = arena.allocate(bytes, 64);
            final MemoryRegion local = a.register(source, AccessFlags.NONE);
            final MemoryRegion inbound = b.register(target, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
            if (legit.server().postReceive(0, new ReceiveWorkRequest().wrId(1).buffer(null, 0, 0)) != PostResult.OK)
            {
                throw new IllegalStateException("could not post B's receive");
            }
            BulkTransfer.write(legit.client(), local, inbound.address(), inbound.rkey(), 64 * 1024, true, timeout);
            BulkTransfer.awaitImmediate(legit.server(), timeout);
            final long mismatch = source.mismatch(target);
            b.deregister(inbound);
            a.deregister(local);
            return mismatch;
        }
    }

    /** @return every counter of a NIC by label. */
    static Map<String, Long> counters(final EmbeddedNic nic)
    {
        final CountersReader reader = nic.counters().counters();
        final Map<String, Long> values = new HashMap<>();
        reader.forEach((value, id, label) -> values.put(label, value));
        return values;
    }

    /** @return the sum of the counters whose label ends with {@code suffix}, over workers. */
    static long sum(final Map<String, Long> counters, final String suffix)
    {
        long total = 0;
        for (final Map.Entry<String, Long> e : counters.entrySet())
        {
            if (e.getKey().endsWith(suffix))
            {
                total += e.getValue();
            }
        }
        return total;
    }

    public void close()
    {
        running = false;
        if (null != switchThread)
        {
            try
            {
                switchThread.join(10_000);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }
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
        dpdk.close();
    }
}
