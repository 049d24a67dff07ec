package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.nic.NicWorker;
import io.spraynic.datapath.port.ForwardingPort;
import io.spraynic.datapath.port.PortFrameSink;
import io.spraynic.datapath.port.FaultInjectingPacketPort;
import io.spraynic.datapath.port.InMemoryLink;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.Ipv4Header;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.SprayExtendedTransportHeader;
import io.spraynic.datapath.wire.SprayOpcodes;
import io.spraynic.datapath.wire.UdpHeader;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two spray engines, A and B, connected by one {@link InMemoryLink} per plane, each driven by a NIC worker (the
 * loop an embedded NIC runs) that the test thread steps by {@link #step()} in virtual time: deterministic, whatever
 * the machine's load. Each side's
 * transmit path may be wrapped (faults, a plane that goes down).
 */
final class SprayTestBed implements AutoCloseable
{
    static final int CID_A = 0x000A01;
    static final int CID_B = 0x000B02;
    static final long HALF_STEP_NANOS = 500;
    /** fd00:5350:5241:59pp::/64, pp the plane: unique-local addresses of the test bed's hosts. */
    static final long IPV6_PREFIX = 0xFD00_5350_5241_5900L;
    static final int DATA_OFFSET_BTH = EthernetHeader.LENGTH + Ipv4Header.LENGTH + UdpHeader.LENGTH;

    /** Options of a test bed; defaults: 8 paths over 2 planes, MTU 4096, 4 streams, no faults. */
    static final class Options
    {
        int planes = 2;
        int paths = 8;
        int mtu = 4096;
        int streams = 4;
        int initialPsnA = 0x1000;
        int initialPsnB = 0x2000;
        int depth = 1024;
        long capacityMbps = 400_000;
        int rnrRetries = 7;
        int rnrTimerMicros = 20;
        int cidBSeenByA = CID_B;
        long connectionTimeoutNanos = 1_000_000_000;
        /** 802.1Q tag of every frame both sides send, -1 for none (S2.1). */
        int vlanTci = -1;
        /** Both sides address each other over IPv6 (S2.1). */
        boolean ipv6;
        /** Set up the connection on the wire (S9.1) instead of opening both ends directly. */
        boolean handshake;
        /** The responder's resolver fails the test if asked: the CONNECT must say where the initiator is (S5.5). */
        boolean resolverMustNotBeAsked;
        /** The responder's limit on paths (the initiator's is {@link #paths}). */
        int responderPaths = 8;
        /** Further settings of a side's connections (host 1 is A, 2 is B; with a handshake, B's listener's). */
        java.util.function.BiConsumer<Integer, SprayConnectionConfig> configureConnection = (host, config) -> { };
        /** Further settings of a side's engine (host 1 is A, 2 is B). */
        java.util.function.BiConsumer<Integer, SprayConfig> configure = (host, config) -> { };
        /** With {@link #handshake}: B listens (else its CONNECTs are refused with NO_LISTENER). */
        boolean listen = true;
        /** With {@link #handshake}: how long A's application waits for the connection; 0: the 8 CONNECTs only. */
        long connectForNanos;
        /** Runs before every step (e.g. an attacker injecting frames). */
        Runnable beforeStep = () -> { };
        Wrapper wrapA = (plane, port) -> port;
        Wrapper wrapB = (plane, port) -> port;
        /** Where a test injects frames towards B (A's raw port of each plane) and towards A; null: the links. */
        PacketPort[] injectTowardsB;
        PacketPort[] injectTowardsA;

        Options mtu(final int mtu)
        {
            this.mtu = mtu;
            return this;
        }

        Options planes(final int planes)
        {
            this.planes = planes;
            return this;
        }

        Options paths(final int paths)
        {
            this.paths = paths;
            return this;
        }

        Options initialPsns(final int a, final int b)
        {
            this.initialPsnA = a;
            this.initialPsnB = b;
            return this;
        }

        Options wrapA(final Wrapper wrapper)
        {
            this.wrapA = wrapper;
            return this;
        }

        Options wrapB(final Wrapper wrapper)
        {
            this.wrapB = wrapper;
            return this;
        }
    }

    /** Wraps a side's port of a plane (to inject faults on what that side transmits). */
    @FunctionalInterface
    interface Wrapper
    {
        PacketPort wrap(int plane, PacketPort port);
    }

    final Arena arena = Arena.ofShared();
    final Options options;
    final InMemoryLink[] links;
    final PacketPort[] portsA;
    final PacketPort[] portsB;
    final ProtectionDomain pdA = new ProtectionDomain(new SplittableRandom(11));
    final ProtectionDomain pdB = new ProtectionDomain(new SplittableRandom(22));
    final CompletionQueue sendCqA = new CompletionQueue(1 << 16);
    final CompletionQueue receiveCqA = new CompletionQueue(1 << 16);
    final CompletionQueue sendCqB = new CompletionQueue(1 << 16);
    final CompletionQueue receiveCqB = new CompletionQueue(1 << 16);
    final SprayEngine engineA;
    final SprayEngine engineB;
    final NicWorker workerA;
    final NicWorker workerB;
    final SprayConnection a;
    final SprayConnection b;
    final SprayHandshake.Pending pending;
    final ParseCounters parseA = new ParseCounters();
    final ParseCounters parseB = new ParseCounters();
    long now = 1_000_000;
    long steps;

    SprayTestBed(final Options options)
    {
        this.options = options;
        final int planes = options.planes;
        links = new InMemoryLink[planes];
        portsA = new PacketPort[planes];
        portsB = new PacketPort[planes];
        final int slotSize = options.mtu + 512;
        for (int p = 0; p < planes; p++)
        {
            links[p] = new InMemoryLink("plane" + p, 2048, slotSize);
            portsA[p] = options.wrapA.wrap(p, links[p].first());
            portsB[p] = options.wrapB.wrap(p, links[p].second());
        }
        final SprayConfig configA = config(options, 1);
        final SprayConfig configB = config(options, 2);
        final PortFrameSink outputA = new PortFrameSink(portsA, 64);
        final PortFrameSink outputB = new PortFrameSink(portsB, 64);
        engineA = new SprayEngine(configA, pdA, outputA);
        engineB = new SprayEngine(configB, pdB, outputB);
        workerA = NicWorker.builder().roleName("a").ports(portsA).spray(engineA, outputA).parseCounters(parseA)
            .protectionDomain(pdA).clock(() -> now).burst(256).build();
        workerB = NicWorker.builder().roleName("b").ports(portsB).spray(engineB, outputB).parseCounters(parseB)
            .protectionDomain(pdB).clock(() -> now).burst(256).build();
        workerA.onStart();
        workerB.onStart();
        if (options.handshake && options.listen)
        {
            engineB.listen(connection(options, 0, 0, 0, 0, 1, sendCqB, receiveCqB).paths(options.responderPaths),
                new SprayHandshake.PeerResolver()
                {
                    public int ipv4(final int plane, final int plane0Ipv4)
                    {
                        assertFalse(options.resolverMustNotBeAsked, "the CONNECT carried the initiator's addresses");
                        return ip(plane, plane0Ipv4 & 0xFF);
                    }

                    public long mac(final int plane, final int plane0Ipv4, final long plane0Mac)
                    {
                        return SprayTestBed.mac(plane, plane0Ipv4 & 0xFF);
                    }

                    public void ipv6(final int plane, final long plane0High, final long plane0Low, final long plane0Mac,
                        final SprayConnectionConfig config)
                    {
                        assertFalse(options.resolverMustNotBeAsked, "the CONNECT carried the initiator's addresses");
                        config.remoteIpv6(plane, IPV6_PREFIX | plane, plane0Low, SprayTestBed.mac(plane, (int)plane0Low));
                    }
                });
        }
        if (options.handshake)
        {
            pending = engineA.connect(connection(options, CID_A, 0, options.initialPsnA, 0, 2, sendCqA, receiveCqA), now,
                0 == options.connectForNanos ? SprayHandshake.NO_DEADLINE : now + options.connectForNanos);
            for (int i = 0; i < 10_000 && pending.state() == SprayHandshake.Pending.State.CONNECTING; i++)
            {
                step();
            }
            a = pending.connection();
            b = null == a ? null : engineB.connection(a.remoteCid());
        }
        else
        {
            pending = null;
            // both ends opened directly: keys agreed out of band (S12.2), derived from the CIDs; B derives its own
            // from its view (CID_B, CID_A), so A's view of B's CID must be CID_B for the tags to verify
            a = engineA.open(connection(options, CID_A, options.cidBSeenByA, options.initialPsnA, options.initialPsnB, 2,
                sendCqA, receiveCqA).keysFromCids());
            b = engineB.open(connection(options, CID_B, CID_A, options.initialPsnB, options.initialPsnA, 1,
                sendCqB, receiveCqB).keysFromCids());
        }
    }

    private static SprayConfig config(final Options options, final int host)
    {
        final SprayConfig config = new SprayConfig().planes(options.planes).capacityMbps(options.capacityMbps)
            .rnr(options.rnrRetries, options.rnrTimerMicros).seed(host)
            .connectionTimeoutNanos(options.connectionTimeoutNanos);
        for (int p = 0; p < options.planes; p++)
        {
            config.local(p, ip(p, host), mac(p, host)).vlan(p, options.vlanTci)
                .localIpv6(p, IPV6_PREFIX | p, host);
        }
        options.configure.accept(host, config);
        return config;
    }

    private static SprayConnectionConfig connection(
        final Options options,
        final int localCid,
        final int remoteCid,
        final int sendPsn,
        final int receivePsn,
        final int remoteHost,
        final CompletionQueue sendCq,
        final CompletionQueue receiveCq)
    {
        final SprayConnectionConfig c = new SprayConnectionConfig().cids(localCid, remoteCid).paths(options.paths)
            .mtu(options.mtu).streams(options.streams).initialPsns(sendPsn, receivePsn)
            .depths(options.depth, options.depth, options.depth).completionQueues(sendCq, receiveCq)
            .sourcePortBase(0xC000 + remoteHost * 0x100);
        options.configureConnection.accept(remoteHost == 1 ? 2 : 1, c);
        for (int p = 0; p < options.planes; p++)
        {
            if (options.ipv6)
            {
                c.remoteIpv6(p, IPV6_PREFIX | p, remoteHost, mac(p, remoteHost));
            }
            else
            {
                c.remote(p, ip(p, remoteHost), mac(p, remoteHost));
            }
        }
        return c;
    }

    /** @return a configuration for another connection from A to B (random CID, drawn by the engine). */
    SprayConnectionConfig initiatorConfig()
    {
        return connection(options, 0, 0, 0, 0, 2, sendCqA, receiveCqA);
    }

    /** @return a configuration for another connection of B's towards A (CIDs and PSNs for the caller to set). */
    SprayConnectionConfig responderConfig()
    {
        return connection(options, 0, 0, 0, 0, 1, sendCqB, receiveCqB);
    }

    static int ip(final int plane, final int host)
    {
        return (10 << 24) | (plane << 8) | host;
    }

    static long mac(final int plane, final int host)
    {
        return 0x02_00_00_00_00_00L | ((long)plane << 8) | host;
    }

    /** @return the port whose transmissions on {@code plane} reach B ({@code towardsB}) or A, unwrapped. */
    PacketPort injector(final int plane, final boolean towardsB)
    {
        final PacketPort[] given = towardsB ? options.injectTowardsB : options.injectTowardsA;
        if (null != given)
        {
            return given[plane];
        }
        return towardsB ? links[plane].first() : links[plane].second();
    }

    /** Half a microsecond for A, then half for B. */
    void step()
    {
        options.beforeStep.run();
        now += HALF_STEP_NANOS;
        workerA.doWork();
        now += HALF_STEP_NANOS;
        workerB.doWork();
        steps++;
    }

    void runUntil(final BooleanSupplier done, final int maxSteps)
    {
        for (int i = 0; i < maxSteps; i++)
        {
            if (done.getAsBoolean())
            {
                return;
            }
            step();
        }
        assertTrue(done.getAsBoolean(), () -> "not done after " + maxSteps + " steps: A " + a + ", B " + b);
    }

    /** Steps until both engines are idle: nothing outstanding or queued anywhere. */
    void runToQuiet(final int steps)
    {
        for (int i = 0; i < steps; i++)
        {
            step();
        }
    }

    MemoryRegion region(final ProtectionDomain pd, final long size, final int access, final long seed)
    {
        final MemorySegment segment = arena.allocate(Math.max(1, size), 64);
        fill(segment, seed);
        return pd.register(segment, access);
    }

    static void fill(final MemorySegment segment, final long seed)
    {
        if (seed == 0)
        {
            segment.fill((byte)0);
            return;
        }
        final SplittableRandom random = new SplittableRandom(seed);
        long i = 0;
        final long size = segment.byteSize();
        for (; i + 8 <= size; i += 8)
        {
            segment.set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, i, random.nextLong());
        }
        for (; i < size; i++)
        {
            segment.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte)random.nextInt());
        }
    }

    /** Steps until A's send queue gave {@code count} completions, then 200 more steps; all of them. */
    List<WorkCompletion> sendCompletionsA(final int count)
    {
        final List<WorkCompletion> done = new ArrayList<>();
        runUntil(() ->
        {
            done.addAll(drain(sendCqA));
            return done.size() >= count;
        }, 50_000);
        runToQuiet(200);
        done.addAll(drain(sendCqA));
        return done;
    }

    static List<WorkCompletion> drain(final CompletionQueue cq)
    {
        final List<WorkCompletion> list = new ArrayList<>();
        while (true)
        {
            final WorkCompletion wc = new WorkCompletion();
            if (!cq.poll(wc))
            {
                return list;
            }
            list.add(wc);
        }
    }

    /** Data packets of the spray transport (SETH present), whatever their path. */
    static boolean isData(final MemorySegment memory, final long offset, final int length)
    {
        return length > DATA_OFFSET_BTH && SprayOpcodes.isData(BaseTransportHeader.opcode(memory, offset + DATA_OFFSET_BTH));
    }

    /** Data packets of one path with one PSN. */
    static FaultInjectingPacketPort.Selector dataOn(final int path, final int psn)
    {
        return (memory, offset, length) -> isData(memory, offset, length) &&
            BaseTransportHeader.psn(memory, offset + DATA_OFFSET_BTH) == psn &&
            SprayExtendedTransportHeader.path(memory, offset + DATA_OFFSET_BTH + BaseTransportHeader.LENGTH) == path;
    }

    long totalDropped(final PacketPort[] ports)
    {
        long dropped = 0;
        for (final PacketPort port : ports)
        {
            if (port instanceof FaultInjectingPacketPort faults)
            {
                dropped += faults.dropped();
            }
        }
        return dropped;
    }

    public void close()
    {
        workerA.onClose();
        workerB.onClose();
        for (final InMemoryLink link : links)
        {
            link.close();
        }
        arena.close();
    }

    /**
     * A port that drops everything it is asked to transmit while {@link #down} is set: a failed plane.
     */
    static final class SwitchablePort extends ForwardingPort
    {
        boolean down;
        long dropped;
        /** While set, frames it picks are corrupted (their ICRC fails at the receiver, which drops them). */
        FaultInjectingPacketPort.Selector corrupt;
        long corrupted;

        SwitchablePort(final PacketPort inner)
        {
            super(inner, "+switch");
        }

        public int transmit(final PacketBurst burst)
        {
            if (down)
            {
                final int n = burst.size();
                dropped += n;
                inner.release(burst);
                return n;
            }
            if (null != corrupt)
            {
                for (int i = 0; i < burst.size(); i++)
                {
                    final long at = burst.offset(i);
                    final int length = burst.length(i);
                    if (corrupt.test(burst.memory(), at, length))
                    {
                        final long last = at + length - 1;
                        burst.memory().set(java.lang.foreign.ValueLayout.JAVA_BYTE, last,
                            (byte)~burst.memory().get(java.lang.foreign.ValueLayout.JAVA_BYTE, last));
                        corrupted++;
                    }
                }
            }
            return inner.transmit(burst);
        }
    }
}
