package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.RecordingFrameSink;
import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static io.spraynic.datapath.transport.spray.SprayConnection.PROBE_HANDLE;
import static io.spraynic.datapath.transport.spray.MessageKinds.WRITE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/PROTOCOL.md S4, S6.6, S8.4, S9.4: the send side makes the frames of posted messages into a real engine's
 * output: retransmissions at their path and PSN first, nothing lost when the output is full, no byte read of a
 * deregistered source, the pacing rate capped by the peer's share and the line rate.
 */
@Timeout(10)
class DataSenderTest
{
    private static final int MTU = 1024;
    private static final int PATHS = 2;

    private final RecordingFrameSink output = RecordingFrameSink.counting(8192);
    private final ProtectionDomain pd = new ProtectionDomain();
    private final SprayConfig config = new SprayConfig().planes(1).local(0, 0x0A000001, 0x020000000001L)
        .capacityMbps(100_000).startBudgetBytes(-1).seed(1);
    private final SprayEngine engine = new SprayEngine(config, pd, output);
    private final CompletionQueue sendCq = new CompletionQueue(16);
    private final SprayConnectionConfig connection = new SprayConnectionConfig().cids(5, 6).keysFromCids()
        .paths(PATHS).mtu(MTU).streams(2).initialPsns(0xFFFFFE, 0x100).depths(8, 8, 8).completionQueues(sendCq, sendCq)
        .remote(0, 0x0A000002, 0x020000000002L);
    private final TransportCounters counters = SprayCounters.create();
    private final TransportCounters[] pathCounters = {SprayCounters.create(), SprayCounters.create()};
    private final SendSlots slots = new SendSlots(8, 2, MTU);
    private final PathScheduler scheduler = new PathScheduler(PATHS, config, engine.random(), 0xFFFFFE, 50_000);
    private final RetransmitQueues resend = new RetransmitQueues(PATHS * PathSendWindow.CAPACITY);
    private final PacketAuthenticator auth = new PacketAuthenticator(connection);
    private final SendCompletions completions = new SendCompletions(slots, new PlacementMarks(1), 8, new Refusals(),
        sendCq, 5, MTU, config, scheduler, counters, engine.counters(), (streamId, msn) -> true);
    private final LossDetector loss = new LossDetector(scheduler, resend, completions, new Refusals(), config, counters, pathCounters);
    private final DataSender sender = new DataSender(slots, scheduler, resend, completions, loss,
        new SprayFrames(engine, connection, auth, counters, pathCounters, slots, scheduler), auth, config, MTU,
        counters, pathCounters, this::refuse, SprayConnectionConfig.DEFAULT_WINDOW, SprayConnectionConfig.DEFAULT_READS);
    private final MemoryRegion source = pd.register(Arena.ofAuto().allocate(16 * MTU), AccessFlags.NONE);

    private int refusalsAsked;
    private boolean refusalsKept = true;

    private boolean refuse(final int streamId, final int msn, final long now)
    {
        refusalsAsked++;
        return refusalsKept;
    }

    private void postWrite(final int streamId, final int length)
    {
        sender.post(streamId, WRITE, new SendWorkRequest().opcode(WorkRequestOpcode.RDMA_WRITE)
            .local(source, source.address(), length).remote(0x1000, 42).signaled(true));
    }

    private int outstanding()
    {
        return scheduler.sendWindows[0].outstanding() + scheduler.sendWindows[1].outstanding();
    }

    @Test
    void shouldSendEveryPacketOfAPostedMessageOverThePathsAcrossThePsnWrap()
    {
        postWrite(0, 5 * MTU - 100);
        assertEquals(5, sender.sendData(1_000));
        assertEquals(5, output.commits);
        assertEquals(5, outstanding());
        assertEquals(5, counters.get(SprayCounters.TX_PACKETS));
        assertEquals(5L * MTU - 100, counters.get(SprayCounters.TX_BYTES));
        assertTrue(scheduler.sendWindows[0].outstanding() > 0 && scheduler.sendWindows[1].outstanding() > 0,
            "sprayed over both paths");
        assertTrue(scheduler.sendWindows[0].nextPsn() < 0xFFFFFE, "path 0's PSNs wrapped");
        assertEquals(0, sender.sendData(2_000), "nothing more to send");
        assertEquals(0, slots.sendQueueSize(), "the finished message left the send queue");
    }

    @Test
    void shouldRetransmitAtThePathAndPsnOfTheLossAndSkipWhatIsNoLongerOutstanding()
    {
        postWrite(0, 3 * MTU);
        sender.sendData(1_000);
        final PathSendWindow window = scheduler.sendWindows[0];
        final int psn = window.basePsn();
        final long handle = window.oldestHandle();
        resend.queueRetransmission(0, psn, handle);
        resend.queueRetransmission(0, window.nextPsn(), handle); // not outstanding: never sent there
        resend.queueRetransmission(1, scheduler.sendWindows[1].basePsn(), PROBE_HANDLE);
        final long framesBefore = output.commits;
        assertEquals(2, sender.drainRetransmissions(2_000));
        assertEquals(framesBefore + 2, output.commits);
        assertEquals(1, counters.get(SprayCounters.RETRANSMITTED), "the probe is no retransmitted data");
        assertEquals(1, pathCounters[0].get(SprayCounters.RETRANSMITTED));
        assertEquals(0, resend.retransmissions());
        assertEquals(3, outstanding(), "a retransmission keeps its PSN: no new one taken");
    }

    @Test
    void shouldKeepEverythingQueuedWhileTheOutputIsFull()
    {
        postWrite(1, 2 * MTU);
        output.full = true;
        assertEquals(0, sender.sendData(1_000));
        assertEquals(0, outstanding(), "no PSN taken by a frame that was not written");
        output.full = false;
        assertEquals(2, sender.sendData(2_000));
        assertEquals(2, outstanding());
        final int psn = scheduler.sendWindows[0].basePsn();
        resend.queueRetransmission(0, psn, scheduler.sendWindows[0].oldestHandle());
        output.full = true;
        assertEquals(0, sender.drainRetransmissions(3_000));
        assertEquals(1, resend.retransmissions(), "kept for the next try");
        output.full = false;
        assertEquals(1, sender.drainRetransmissions(4_000));
    }

    @Test
    void shouldReadNoByteOfADeregisteredSourceAndFailLocally()
    {
        postWrite(0, 2 * MTU);
        pd.deregister(source);
        assertEquals(0, sender.sendData(1_000));
        assertTrue(sender.localError());
        assertEquals(0, output.commits);
    }

    @Test
    void shouldRefuseAReadResponseWhoseRegionWasDeregisteredAndStandInForItsPacketsInFlightS932()
    {
        sender.queueReadResponse(1, 7, source, source.address(), 3 * MTU);
        assertEquals(3, sender.sendData(1_000));
        pd.deregister(source); // every packet sent, none acknowledged yet
        final long[] handles = {scheduler.sendWindows[0].oldestHandle(), scheduler.sendWindows[1].oldestHandle()};

        final long framesBefore = output.commits;
        resend.queueRetransmission(0, scheduler.sendWindows[0].basePsn(), handles[0]);
        assertEquals(1, sender.drainRetransmissions(2_000), "a placeholder at the packet's PSN");
        assertEquals(framesBefore + 1, output.commits);
        assertEquals(1, refusalsAsked, "the READ is refused");
        assertFalse(sender.localError(), "the connection carries on");
        resend.queueRetransmission(1, scheduler.sendWindows[1].basePsn(), handles[1]);
        assertEquals(1, sender.drainRetransmissions(3_000));
        assertEquals(2, refusalsAsked, "the NACK is repeated for every further packet");
        assertEquals(3, outstanding(), "no new PSN taken");
        assertEquals(1, slots.inUse(), "its slot lives while a packet of it is in flight");
        for (int path = 0; path < PATHS; path++)
        {
            scheduler.sendWindows[path].drain(handle -> completions.onPacketAcked(handle, 4_000));
        }
        assertEquals(0, slots.inUse(), "and is freed once they are accounted for");
        assertFalse(sender.localError());
    }

    @Test
    void shouldSendNothingOfAReadResponseWhoseRegionWasDeregisteredBeforeItsFirstPacketS932()
    {
        sender.queueReadResponse(0, 3, source, source.address(), 2 * MTU);
        pd.deregister(source);
        assertEquals(0, sender.sendData(1_000));
        assertEquals(1, refusalsAsked);
        assertFalse(sender.localError());
        assertEquals(0, sender.sendData(2_000));
        assertEquals(0, output.commits, "not a byte read, not a packet sent");
        assertEquals(0, slots.inUse());
        assertEquals(0, outstanding());
    }

    @Test
    void shouldFailLocallyWhenARefusedReadResponseCannotBeKept()
    {
        refusalsKept = false;
        sender.queueReadResponse(0, 3, source, source.address(), MTU);
        pd.deregister(source);
        assertEquals(0, sender.sendData(1_000));
        assertTrue(sender.localError());
        assertEquals(0, output.commits);
    }

    @Test
    void shouldCompleteAPostOnAStreamInErrorAtOnceWithoutSendingS94()
    {
        slots.errored(1, true);
        postWrite(1, MTU);
        final WorkCompletion wc = new WorkCompletion();
        assertTrue(sendCq.poll(wc));
        assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, wc.status());
        assertEquals(0, sender.sendData(1_000));
        assertEquals(0, output.commits);
        assertEquals(0, slots.inUse());
    }

    @Test
    void shouldPaceNoFasterThanThePeersShareOrTheLineRate()
    {
        final double windows = scheduler.windowRate(MTU);
        assertEquals(Math.min(windows, 100_000 / 8000.0), sender.pacingRate());
        sender.onShare(800, 0);
        assertEquals(800, sender.peerRateHintMbps());
        assertEquals(Math.min(windows, 0.1), sender.pacingRate(), 1e-12);
        sender.onShare(0, 0);
        assertEquals(Math.min(windows, 100_000 / 8000.0), sender.pacingRate(), "0: no share told");
        assertFalse(sender.localError());
    }
}
