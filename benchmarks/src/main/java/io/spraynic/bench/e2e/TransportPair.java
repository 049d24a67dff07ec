package io.spraynic.bench.e2e;

import io.spraynic.bench.OptionEnums;
import io.spraynic.datapath.nic.NicWorker;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.port.PortFrameSink;
import io.spraynic.datapath.transport.rocev2.PathMtu;
import io.spraynic.datapath.transport.rocev2.RcConnectionAttributes;
import io.spraynic.datapath.transport.rocev2.RcCounters;
import io.spraynic.datapath.transport.rocev2.RcEngine;
import io.spraynic.datapath.transport.rocev2.RcEngineConfig;
import io.spraynic.datapath.transport.rocev2.RcQueuePair;
import io.spraynic.datapath.transport.spray.SprayConfig;
import io.spraynic.datapath.transport.spray.SprayConnection;
import io.spraynic.datapath.transport.spray.SprayConnectionConfig;
import io.spraynic.datapath.transport.spray.SprayCounters;
import io.spraynic.datapath.transport.spray.SprayEngine;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.pmd.MempoolConfig;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.SystemNanoClock;

/**
 * Two endpoints of one transport, A and B, each on its own packet port (one side of a crossed
 * {@code net_ring} pair): the real engines, each driven by the NIC's own poll loop ({@link NicWorker}, the one an
 * embedded NIC runs), connected without a fabric or a handshake, as {@code FabricDemo} and the ring tests connect
 * them. Each endpoint's worker and everything that posts on it must run on one thread (the engines are
 * single-threaded): the benchmarks compose the workload into the same agent.
 */
public final class TransportPair
{
    /** The default path MTU, PROTOCOL.md S11's: frames of 4096 B of payload fit a default mbuf. */
    public static final int MTU = 4096;
    /** Paths of a spray connection over its one plane. */
    public static final int SPRAY_PATHS = 4;
    static final int BURST = 32;
    static final int MAX_FRAME = MempoolConfig.DEFAULT_MAX_FRAME_LENGTH;
    // Real time on a shared machine: a poll thread may wait milliseconds for a core, so the timers start
    // from millisecond RTTs instead of the data-centre defaults (as FabricDemo does).
    private static final long RTO_MIN_NANOS = 5_000_000L;
    // RC gives up after 7 timeouts in a row (RETRY_EXC_ERR): with 20 ms, two starved poll threads on this
    // 2-core machine under a load of 8 did so in a 64 B ping-pong on a lossless ring; net_ring never loses a
    // frame, so a timeout here only ever means a thread waited for a core.
    private static final long RC_ACK_TIMEOUT_NANOS = 100_000_000L;

    /** Which transport. */
    public enum Kind
    {
        SPRAY, ROCEV2;

        public String text()
        {
            return OptionEnums.text(this);
        }

        public static Kind parse(final String text)
        {
            return OptionEnums.parse(values(), text, "transport");
        }
    }

    /** One side: its poll agent, its memory and its queues. */
    public interface Endpoint
    {
        /** The NIC worker (RX, parse, engine, TX) to run on this endpoint's poll thread. */
        Agent agent();

        ProtectionDomain pd();

        /** Completions of this side's sends; also of receives, for one queue per side. */
        CompletionQueue cq();

        int postSend(SendWorkRequest request);

        int postReceive(ReceiveWorkRequest request);

        /** Data packets this side sent again. */
        long retransmitted();

        /** The connection's or queue pair's counters, for diagnosis (control path; allocates). */
        String describe();
    }

    private final Kind kind;
    private final Endpoint a;
    private final Endpoint b;

    private TransportPair(final Kind kind, final Endpoint a, final Endpoint b)
    {
        this.kind = kind;
        this.a = a;
        this.b = b;
    }

    public static TransportPair create(final Kind kind, final PacketPort portA, final PacketPort portB)
    {
        return create(kind, portA, portB, MTU);
    }

    /** @param mtu the path MTU of both endpoints (256..4096, a power of two). */
    public static TransportPair create(final Kind kind, final PacketPort portA, final PacketPort portB, final int mtu)
    {
        PathMtu.validate(mtu);
        return kind == Kind.SPRAY ? spray(portA, portB, mtu) : rocev2(portA, portB, mtu);
    }

    public Kind kind()
    {
        return kind;
    }

    public Endpoint a()
    {
        return a;
    }

    public Endpoint b()
    {
        return b;
    }

    static int ip(final int host)
    {
        return 0x0A000000 | host;
    }

    static long mac(final int host)
    {
        return 0x02_53_50_00_00_00L | host;
    }

    private static TransportPair spray(final PacketPort portA, final PacketPort portB, final int mtu)
    {
        return new TransportPair(Kind.SPRAY, sprayEndpoint(portA, 1, 2, mtu), sprayEndpoint(portB, 2, 1, mtu));
    }

    private static Endpoint sprayEndpoint(final PacketPort port, final int host, final int peer, final int mtu)
    {
        final ProtectionDomain pd = new ProtectionDomain();
        final CompletionQueue cq = new CompletionQueue(1 << 14);
        final SprayConfig config = new SprayConfig().planes(1).local(0, ip(host), mac(host)).capacityMbps(400_000)
            .rto(RTO_MIN_NANOS, 200_000_000L).initialRttNanos(1_000_000L).probeMinNanos(2_000_000L).seed(host);
        final PortFrameSink output = new PortFrameSink(new PacketPort[] {port}, BURST);
        final SprayEngine engine = new SprayEngine(config, pd, output);
        final SprayConnection connection = engine.open(new SprayConnectionConfig().cids(host, peer).keysFromCids()
            .paths(SPRAY_PATHS).streams(1).mtu(mtu).initialPsns(host * 0x10000, peer * 0x10000)
            .remote(0, ip(peer), mac(peer)).completionQueues(cq, cq));
        final NicWorker agent = NicWorker.builder().roleName("spray-" + host).ports(port).spray(engine, output)
            .protectionDomain(pd).clock(new SystemNanoClock()).burst(BURST).build();
        return new Endpoint()
        {
            public Agent agent()
            {
                return agent;
            }

            public ProtectionDomain pd()
            {
                return pd;
            }

            public CompletionQueue cq()
            {
                return cq;
            }

            public int postSend(final SendWorkRequest request)
            {
                return connection.postSend(0, request);
            }

            public int postReceive(final ReceiveWorkRequest request)
            {
                return connection.postReceive(0, request);
            }

            public long retransmitted()
            {
                return connection.counters().get(SprayCounters.RETRANSMITTED);
            }

            public String describe()
            {
                final StringBuilder text = new StringBuilder(connection.toString()).append(' ').append(engine.counters());
                for (int p = 0; p < connection.paths(); p++)
                {
                    text.append(" path").append(p).append(connection.pathState(p) == SprayConnection.ACTIVE ? "" : "(FAILED)")
                        .append(" cwnd=").append(connection.congestionControl().toString(p)).append(' ').append(connection.pathCounters(p));
                }
                return text.toString();
            }
        };
    }

    private static TransportPair rocev2(final PacketPort portA, final PacketPort portB, final int mtu)
    {
        final RcSide sideA = new RcSide(portA, 1);
        final RcSide sideB = new RcSide(portB, 2);
        sideA.connect(sideB, mtu);
        sideB.connect(sideA, mtu);
        return new TransportPair(Kind.ROCEV2, sideA, sideB);
    }

    private static final class RcSide implements Endpoint
    {
        private final int host;
        private final ProtectionDomain pd = new ProtectionDomain();
        private final CompletionQueue cq = new CompletionQueue(1 << 14);
        private final RcEngine engine;
        private final RcQueuePair qp;
        private final NicWorker agent;

        RcSide(final PacketPort port, final int host)
        {
            this.host = host;
            final PortFrameSink sink = new PortFrameSink(port, BURST, MAX_FRAME);
            engine = new RcEngine(RcEngineConfig.defaults(mac(host), ip(host)), pd, sink);
            qp = engine.createQueuePair(cq, cq, 1024, 1024);
            qp.toInit(AccessFlags.REMOTE_WRITE);
            agent = NicWorker.builder().roleName("rocev2-" + host).ports(port).rocev2(engine, sink)
                .protectionDomain(pd).clock(new SystemNanoClock()).burst(BURST).build();
        }

        void connect(final RcSide peer, final int mtu)
        {
            qp.toRtr(RcConnectionAttributes.of(peer.qp.qpNumber(), mac(peer.host), ip(peer.host), 49152 + host, mtu,
                host * 0x10000, peer.host * 0x10000).withRetry(RC_ACK_TIMEOUT_NANOS, 7));
            qp.toRts();
        }

        public Agent agent()
        {
            return agent;
        }

        public ProtectionDomain pd()
        {
            return pd;
        }

        public CompletionQueue cq()
        {
            return cq;
        }

        public int postSend(final SendWorkRequest request)
        {
            return qp.postSend(request);
        }

        public int postReceive(final ReceiveWorkRequest request)
        {
            return qp.postReceive(request);
        }

        public long retransmitted()
        {
            return engine.counters().get(RcCounters.RETRANSMITTED);
        }

        public String describe()
        {
            return qp + " " + engine.counters();
        }
    }
}
