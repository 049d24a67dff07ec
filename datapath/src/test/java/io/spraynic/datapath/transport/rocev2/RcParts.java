package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.transport.RecordingFrameSink;
import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.QueuePairState;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.wire.FrameClass;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceFrameWriter;
import io.spraynic.datapath.wire.RoceParser;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The collaborators of one queue pair's parts, real and unconnected, for testing a part alone: the engine's
 * configuration and counters, a {@link RcFrameOutput} into a sink that keeps every frame, a state machine, a
 * protection domain, one completion queue, and a failure handler that records what it was asked and moves the
 * state machine to ERROR (then runs {@link #onError}, the flush a test wants).
 */
final class RcParts implements AutoCloseable
{
    static final long LOCAL_MAC = 0x02_00_00_00_00_0AL;
    static final long REMOTE_MAC = 0x02_00_00_00_00_0BL;
    static final int LOCAL_IP = 0x0A_00_00_0A;
    static final int REMOTE_IP = 0x0A_00_00_0B;
    static final int QP_NUMBER = 0x1234;
    static final int REMOTE_QP_NUMBER = 0x4321;
    static final int MTU = PathMtu.MTU_256;

    final Arena arena = Arena.ofConfined();
    final RcEngineConfig config;
    final TransportCounters counters = RcCounters.create();
    final RecordingFrameSink sink = new RecordingFrameSink(PathMtu.maxFrameLength(PathMtu.MTU_4096));
    final DcqcnRateLimiter rateLimiter;
    final RcFrameOutput output;
    final RcStateMachine states = new RcStateMachine();
    final ProtectionDomain pd = new ProtectionDomain(new SplittableRandom(3));
    final CompletionQueue cq = new CompletionQueue(64);
    final WorkCompletion wc = new WorkCompletion();
    final List<MemoryRegion> revoked = new ArrayList<>();
    int errors;
    Runnable onError = () -> { };
    final RcFailureHandler failures = new RcFailureHandler()
    {
        public void enterError()
        {
            errors++;
            if (states.enterError())
            {
                onError.run();
            }
        }

        public boolean revoke(final MemoryRegion region)
        {
            revoked.add(region);
            enterError();
            return true;
        }
    };

    private final RoceParser parser = new RoceParser(new ParseCounters());

    RcParts(final UnaryOperator<RcEngineConfig> tweak)
    {
        config = tweak.apply(RcEngineConfig.defaults(LOCAL_MAC, LOCAL_IP));
        rateLimiter = new DcqcnRateLimiter(config.dcqcn());
        output = new RcFrameOutput(config, counters, new RoceFrameWriter(), sink, rateLimiter);
    }

    RcParts()
    {
        this(UnaryOperator.identity());
    }

    static RcConnectionAttributes attributes(final int sendPsn, final int receivePsn)
    {
        return RcConnectionAttributes.of(REMOTE_QP_NUMBER, REMOTE_MAC, REMOTE_IP, 0xC0DE, MTU, sendPsn, receivePsn);
    }

    /** Walks the state machine to {@code target} the way the verbs do (RESET, INIT, RTR, RTS, SQD). */
    void moveTo(final QueuePairState target)
    {
        final QueuePairState[] path = {QueuePairState.INIT, QueuePairState.RTR, QueuePairState.RTS, QueuePairState.SQD};
        for (final QueuePairState state : path)
        {
            if (states.state() == target)
            {
                return;
            }
            states.checkTransitionTo(state);
            states.moveTo(state);
        }
    }

    MemoryRegion register(final int length, final int access)
    {
        return pd.register(arena.allocate(length, 64), access);
    }

    static void fill(final MemorySegment segment, final int seed)
    {
        for (long i = 0; i < segment.byteSize(); i++)
        {
            segment.set(ValueLayout.JAVA_BYTE, i, (byte)(i * 31 + seed));
        }
    }

    /** A writer with the peer's addressing: a frame from it to this queue pair. */
    static RoceFrameWriter fromPeer(final int opcode, final int psn)
    {
        return new RoceFrameWriter().ethernet(REMOTE_MAC, LOCAL_MAC).ipv4(REMOTE_IP, LOCAL_IP).udpSourcePort(0xC0DE)
            .opcode(opcode).destQp(QP_NUMBER).psn(psn);
    }

    /** Writes and parses a frame, with {@code payload} bytes from {@code source} (or none). */
    RoceFrame inbound(final RoceFrameWriter writer, final MemorySegment source, final int payload)
    {
        final MemorySegment buffer = arena.allocate(PathMtu.maxFrameLength(PathMtu.MTU_4096), 64);
        final int length = payload > 0 ? writer.writeFrame(buffer, 0, source, 0, payload) :
            writer.writeFrame(buffer, 0, 0);
        return parse(buffer, length);
    }

    RoceFrame inbound(final RoceFrameWriter writer)
    {
        return inbound(writer, null, 0);
    }

    /** @return the {@code index}th frame the output wrote, parsed. */
    RoceFrame sent(final int index)
    {
        final byte[] bytes = sink.frames.get(index);
        final MemorySegment buffer = arena.allocate(bytes.length, 64);
        MemorySegment.copy(MemorySegment.ofArray(bytes), 0, buffer, 0, bytes.length);
        return parse(buffer, bytes.length);
    }

    int sentCount()
    {
        return sink.frames.size();
    }

    private RoceFrame parse(final MemorySegment buffer, final int length)
    {
        final RoceFrame frame = new RoceFrame();
        assertEquals(FrameClass.ROCE, parser.parse(buffer, 0, length, frame), () -> "" + frame.malformedReason());
        return frame;
    }

    /** @return the next completion, which must be there. */
    WorkCompletion completion()
    {
        assertTrue(cq.poll(wc), "a completion");
        return wc;
    }

    public void close()
    {
        arena.close();
    }
}
