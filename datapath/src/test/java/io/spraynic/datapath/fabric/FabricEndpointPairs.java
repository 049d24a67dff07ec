package io.spraynic.datapath.fabric;

import io.spraynic.datapath.transport.rocev2.PathMtu;
import io.spraynic.datapath.transport.rocev2.RcConnectionAttributes;
import io.spraynic.datapath.transport.rocev2.RcEngineConfig;
import io.spraynic.datapath.transport.rocev2.RcQueuePair;
import io.spraynic.datapath.transport.spray.SprayConfig;
import io.spraynic.datapath.transport.spray.SprayConnection;
import io.spraynic.datapath.transport.spray.SprayConnectionConfig;
import io.spraynic.datapath.transport.spray.SprayEngine;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.wire.ParseCounters;

import java.lang.foreign.Arena;
import java.util.SplittableRandom;

/**
 * The tests' two hosts of a back-to-back fabric joined by one connection through their fabric endpoints: spray (host
 * 0 to host 1 over every plane, one stream, 4 KiB MTU, PSNs that wrap) or a RoCEv2 RC queue pair on plane 0 (in RTS,
 * remote writes allowed, endpoints not started). Host A is the sender in both; every endpoint ticks each microsecond.
 */
public final class FabricEndpointPairs
{
    private static final long TICK_NANOS = 1_000;

    private FabricEndpointPairs()
    {
    }

    /**
     * @param endpointA host 0's endpoint, the sender's.
     * @param endpointB host 1's endpoint.
     * @param pdA       host 0's protection domain.
     * @param pdB       host 1's protection domain.
     * @param cqA       host 0's send and receive completion queue.
     * @param a         host 0's end of the connection.
     */
    public record Spray(SprayFabricEndpoint endpointA, SprayFabricEndpoint endpointB, ProtectionDomain pdA,
        ProtectionDomain pdB, CompletionQueue cqA, SprayConnection a)
    {
    }

    /**
     * @param pdA   host 0's protection domain.
     * @param pdB   host 1's protection domain.
     * @param a     host 0's endpoint, attached, not started.
     * @param b     host 1's endpoint, attached, not started.
     * @param cqA   host 0's send and receive completion queue.
     * @param qpA   host 0's queue pair, in RTS.
     */
    public record Rc(ProtectionDomain pdA, ProtectionDomain pdB, RcFabricEndpoint a,
        RcFabricEndpoint b, CompletionQueue cqA, RcQueuePair qpA)
    {
    }

    /** @return a spray connection from host 0 to host 1 over {@code paths} paths, at the fabric's capacity. */
    public static Spray spray(final Fabric fabric, final int paths)
    {
        final long capacityMbps = fabric.config().hostLink().rateBitsPerSecond() / 1_000_000 * fabric.planes();
        final SprayFabricEndpoint endpointA = new SprayFabricEndpoint(fabric.host(0), TICK_NANOS, new ParseCounters());
        final SprayFabricEndpoint endpointB = new SprayFabricEndpoint(fabric.host(1), TICK_NANOS, new ParseCounters());
        final ProtectionDomain pdA = new ProtectionDomain(new SplittableRandom(1));
        final ProtectionDomain pdB = new ProtectionDomain(new SplittableRandom(2));
        final SprayEngine engineA = new SprayEngine(endpointA.configure(new SprayConfig().capacityMbps(capacityMbps)),
            pdA, endpointA.output());
        final SprayEngine engineB = new SprayEngine(endpointB.configure(new SprayConfig().capacityMbps(capacityMbps)),
            pdB, endpointB.output());
        endpointA.bind(engineA);
        endpointB.bind(engineB);
        final CompletionQueue cqA = new CompletionQueue(64);
        final CompletionQueue cqB = new CompletionQueue(64);
        final SprayConnection a = engineA.open(endpointA.remote(new SprayConnectionConfig().cids(1, 2).keysFromCids()
            .paths(paths).streams(1).mtu(4096).initialPsns(0xFFFF00, 0x100).completionQueues(cqA, cqA), 1));
        engineB.open(endpointB.remote(new SprayConnectionConfig().cids(2, 1).keysFromCids()
            .paths(paths).streams(1).mtu(4096).initialPsns(0x100, 0xFFFF00).completionQueues(cqB, cqB), 0));
        return new Spray(endpointA, endpointB, pdA, pdB, cqA, a);
    }

    /** @return an RC queue pair between hosts 0 and 1 on plane 0, its rings in {@code arena}. */
    public static Rc rc(final Fabric fabric, final Arena arena)
    {
        final ProtectionDomain pdA = new ProtectionDomain(new SplittableRandom(1));
        final ProtectionDomain pdB = new ProtectionDomain(new SplittableRandom(2));
        final FabricPort portA = fabric.host(0).port(0);
        final FabricPort portB = fabric.host(1).port(0);
        final RcFabricEndpoint a = new RcFabricEndpoint(portA, pdA, RcEngineConfig::defaults, new ParseCounters(),
            TICK_NANOS, arena);
        final RcFabricEndpoint b = new RcFabricEndpoint(portB, pdB, RcEngineConfig::defaults, new ParseCounters(),
            TICK_NANOS, arena);
        fabric.host(0).attach(a);
        fabric.host(1).attach(b);
        final CompletionQueue cqA = new CompletionQueue(64);
        final CompletionQueue cqB = new CompletionQueue(64);
        final RcQueuePair qpA = a.engine().createQueuePair(cqA, cqA, 64, 64);
        final RcQueuePair qpB = b.engine().createQueuePair(cqB, cqB, 64, 64);
        qpA.toInit(AccessFlags.REMOTE_WRITE);
        qpB.toInit(AccessFlags.REMOTE_WRITE);
        qpA.toRtr(RcConnectionAttributes.of(qpB.qpNumber(), portB.localMac(), portB.localAddress(), 0xC001,
            PathMtu.MTU_4096, 0xFFFF00, 7));
        qpB.toRtr(RcConnectionAttributes.of(qpA.qpNumber(), portA.localMac(), portA.localAddress(), 0xC002,
            PathMtu.MTU_4096, 7, 0xFFFF00));
        qpA.toRts();
        qpB.toRts();
        return new Rc(pdA, pdB, a, b, cqA, qpA);
    }
}
