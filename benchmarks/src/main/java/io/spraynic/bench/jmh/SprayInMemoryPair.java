package io.spraynic.bench.jmh;

import io.spraynic.datapath.nic.NicWorker;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.port.PortFrameSink;
import io.spraynic.datapath.transport.spray.SprayConfig;
import io.spraynic.datapath.transport.spray.SprayConnection;
import io.spraynic.datapath.transport.spray.SprayConnectionConfig;
import io.spraynic.datapath.transport.spray.SprayCounters;
import io.spraynic.datapath.transport.spray.SprayEngine;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.SendWorkRequest;

/**
 * Two real spray engines, a sender A and a receiver B, over one {@link io.spraynic.datapath.port.InMemoryLink}
 * (one plane, {@value #PATHS} paths) in virtual time: see {@link InMemoryTransportPair}.
 */
final class SprayInMemoryPair extends InMemoryTransportPair
{
    static final int MTU = 4096;
    static final int PATHS = 4;
    static final int CID_A = 0xA1;
    static final int CID_B = 0xB2;

    final PortFrameSink outputA;
    final PortFrameSink outputB;
    final SprayEngine engineA;
    final SprayEngine engineB;
    final NicWorker agentA;
    final NicWorker agentB;
    final SprayConnection a;
    final SprayConnection b;

    SprayInMemoryPair(final int payload)
    {
        super("plane0", MTU + 512, checkPayload(payload));
        outputA = new PortFrameSink(new PacketPort[] {portA}, 64);
        outputB = new PortFrameSink(new PacketPort[] {portB}, 64);
        engineA = new SprayEngine(config(1), pdA, outputA);
        engineB = new SprayEngine(config(2), pdB, outputB);
        a = engineA.open(connection(CID_A, CID_B, 0x1000, 0x2000, 2, cqA));
        b = engineB.open(connection(CID_B, CID_A, 0x2000, 0x1000, 1, cqB));
        agentA = NicWorker.builder().roleName("a").ports(portA).spray(engineA, outputA).protectionDomain(pdA)
            .clock(this::now).burst(256).build();
        agentB = NicWorker.builder().roleName("b").ports(portB).spray(engineB, outputB).protectionDomain(pdB)
            .clock(this::now).burst(32).rxBurstsPerLoop(1).build(); // one timed burst per loop
        agentA.onStart();
        agentB.onStart();
    }

    private static int checkPayload(final int payload)
    {
        if (payload < 1 || payload > MTU)
        {
            throw new IllegalArgumentException("payload must be 1.." + MTU + ": " + payload);
        }
        return payload;
    }

    private static SprayConfig config(final int host)
    {
        // a capacity far above what one core moves, so that pacing never holds the sender back; no start probe or
        // budget (S8.3.1): every burst B receives is data
        return new SprayConfig().planes(1).local(0, 0x0A000000 | host, 0x020000000000L | host)
            .capacityMbps(10_000_000).window(64, 256).startBudgetBytes(-1).seed(host);
    }

    private static SprayConnectionConfig connection(
        final int localCid, final int remoteCid, final int sendPsn, final int receivePsn, final int remoteHost,
        final CompletionQueue cq)
    {
        return new SprayConnectionConfig().cids(localCid, remoteCid).keysFromCids().paths(PATHS).mtu(MTU).streams(1)
            .initialPsns(sendPsn, receivePsn).depths(1024, 1024, 1024)
            .completionQueues(cq, cq)
            .remote(0, 0x0A000000 | remoteHost, 0x020000000000L | remoteHost);
    }

    int postOnA(final SendWorkRequest request)
    {
        return a.postSend(0, request);
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
        return b.counters().get(SprayCounters.RX_PACKETS);
    }

    long receiveAnomalies()
    {
        return b.counters().get(SprayCounters.DUPLICATES) + b.counters().get(SprayCounters.OUT_OF_WINDOW) +
            b.counters().get(SprayCounters.NO_RESOURCES) + engineB.counters().get(SprayCounters.MALFORMED);
    }

    String senderState()
    {
        return "A " + a + ", B " + b;
    }

    void closeAgents()
    {
        agentA.onClose();
        agentB.onClose();
    }
}
