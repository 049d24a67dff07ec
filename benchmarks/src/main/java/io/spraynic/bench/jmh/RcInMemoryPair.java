package io.spraynic.bench.jmh;

import io.spraynic.datapath.nic.NicWorker;
import io.spraynic.datapath.port.PortFrameSink;
import io.spraynic.datapath.transport.rocev2.PathMtu;
import io.spraynic.datapath.transport.rocev2.RcConnectionAttributes;
import io.spraynic.datapath.transport.rocev2.RcCounters;
import io.spraynic.datapath.transport.rocev2.RcEngine;
import io.spraynic.datapath.transport.rocev2.RcEngineConfig;
import io.spraynic.datapath.transport.rocev2.RcQueuePair;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.SendWorkRequest;

/**
 * The RoCEv2 twin of {@link SprayInMemoryPair}: two real RC engines, sender A and receiver B, one queue pair
 * each, over one {@link io.spraynic.datapath.port.InMemoryLink} in virtual time (see
 * {@link InMemoryTransportPair}). The same-run baseline for the spray receive burst.
 */
final class RcInMemoryPair extends InMemoryTransportPair
{
    private static final long MAC_A = 0x02_00_00_00_00_01L;
    private static final long MAC_B = 0x02_00_00_00_00_02L;
    private static final int IP_A = 0x0A000001;
    private static final int IP_B = 0x0A000002;

    final RcEngine engineA;
    final RcEngine engineB;
    final RcQueuePair qpA;
    final RcQueuePair qpB;
    final NicWorker agentA;
    final NicWorker agentB;

    RcInMemoryPair(final int payload)
    {
        super("rc", PathMtu.MTU_4096 + 512, payload);
        final PortFrameSink sinkA = new PortFrameSink(portA, 64, PathMtu.maxFrameLength(PathMtu.MTU_4096));
        final PortFrameSink sinkB = new PortFrameSink(portB, 64, PathMtu.maxFrameLength(PathMtu.MTU_4096));
        engineA = new RcEngine(RcEngineConfig.defaults(MAC_A, IP_A), pdA, sinkA);
        engineB = new RcEngine(RcEngineConfig.defaults(MAC_B, IP_B), pdB, sinkB);
        qpA = engineA.createQueuePair(cqA, cqA, 1024, 1024);
        qpB = engineB.createQueuePair(cqB, cqB, 1024, 1024);
        qpA.toInit(AccessFlags.REMOTE_WRITE);
        qpB.toInit(AccessFlags.REMOTE_WRITE);
        qpA.toRtr(RcConnectionAttributes.of(qpB.qpNumber(), MAC_B, IP_B, 0xC001, PathMtu.MTU_4096, 0x1000, 0x2000));
        qpB.toRtr(RcConnectionAttributes.of(qpA.qpNumber(), MAC_A, IP_A, 0xC002, PathMtu.MTU_4096, 0x2000, 0x1000));
        qpA.toRts();
        qpB.toRts();
        agentA = NicWorker.builder().roleName("a").ports(portA).rocev2(engineA, sinkA).protectionDomain(pdA)
            .clock(this::now).burst(256).build();
        agentB = NicWorker.builder().roleName("b").ports(portB).rocev2(engineB, sinkB).protectionDomain(pdB)
            .clock(this::now).burst(32).rxBurstsPerLoop(1).build(); // one timed burst per loop
        agentA.onStart();
        agentB.onStart();
    }

    int postOnA(final SendWorkRequest request)
    {
        return qpA.postSend(request);
    }

    void stepA()
    {
        agentA.doWork();
    }

    int receiveBurst()
    {
        return agentB.doWork();
    }

    long receivedPackets()
    {
        return engineB.counters().get(RcCounters.RX_PACKETS);
    }

    long receiveAnomalies()
    {
        final var c = engineB.counters();
        return c.get(RcCounters.RX_DUPLICATES) + c.get(RcCounters.RX_OUT_OF_SEQUENCE) + c.get(RcCounters.RX_UNKNOWN_QP) +
            c.get(RcCounters.RX_INVALID_STATE) + c.get(RcCounters.TX_NAK_SEQUENCE) + c.get(RcCounters.TX_NAK_ACCESS);
    }

    String senderState()
    {
        return qpA + " " + engineA.counters();
    }

    void closeAgents()
    {
        agentA.onClose();
        agentB.onClose();
    }
}
