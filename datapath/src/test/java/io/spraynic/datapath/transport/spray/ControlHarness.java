package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.RecordingFrameSink;
import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.wire.BaseTransportHeader;

/**
 * A connection's control-packet parts wired to a real engine whose output keeps a copy of every frame, for the
 * unit tests of {@link ControlPackets} and {@link ReadResponseRefusals}: two paths over one IPv4 plane.
 */
final class ControlHarness
{
    static final int PATHS = 2;
    static final int STREAMS = 2;
    static final int MTU = 1024;
    static final int LOCAL_CID = 5;
    static final int RECEIVE_PSN = 0x200;
    static final int RNR_TIMER_MICROS = 77;
    /** Where the header after the BTH starts in a frame of this harness (Ethernet, IPv4, UDP, BTH). */
    static final long HEADER = SprayTestBed.DATA_OFFSET_BTH + BaseTransportHeader.LENGTH;

    final RecordingFrameSink output = new RecordingFrameSink(16384);
    final SprayConfig config = new SprayConfig().planes(1).local(0, 0x0A000001, 0x020000000001L)
        .capacityMbps(100_000).seed(1);
    final SprayEngine engine = new SprayEngine(config, new ProtectionDomain(), output);
    final CompletionQueue cq = new CompletionQueue(16);
    final SprayConnectionConfig connection = new SprayConnectionConfig().cids(LOCAL_CID, 6).keysFromCids()
        .paths(PATHS).mtu(MTU).streams(STREAMS).initialPsns(0x100, RECEIVE_PSN).depths(8, 8, 8)
        .completionQueues(cq, cq).remote(0, 0x0A000002, 0x020000000002L);
    final TransportCounters counters = SprayCounters.create();
    final TransportCounters[] pathCounters = {SprayCounters.createForPath(), SprayCounters.createForPath()};
    final PathScheduler scheduler = new PathScheduler(PATHS, config, engine.random(), 0x100, 50_000);
    final PacketAuthenticator auth = new PacketAuthenticator(connection);
    final SprayFrames frames = new SprayFrames(engine, connection, auth, counters, pathCounters,
        new SendSlots(8, STREAMS, MTU), scheduler);
    final AckScheduler acks = new AckScheduler(PATHS, RECEIVE_PSN, config, counters, pathCounters);
    final Refusals refusals = new Refusals();
    final ControlPackets control = new ControlPackets(frames, scheduler, acks, engine.rateHint(), refusals, counters,
        pathCounters, RNR_TIMER_MICROS, STREAMS, LOCAL_CID);

    /** @return the opcode of the {@code index}-th frame written. */
    int opcode(final int index)
    {
        return BaseTransportHeader.opcode(output.frame(index), SprayTestBed.DATA_OFFSET_BTH);
    }
}
