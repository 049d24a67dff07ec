package io.spraynic.bench.jmh;

import io.spraynic.datapath.port.InMemoryLink;
import io.spraynic.datapath.port.InMemoryPacketPort;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkRequestOpcode;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A sender A and a receiver B of one transport over one {@link InMemoryLink}, in virtual time: the source
 * of valid data frames for the receive-path benchmarks. A posts one-packet RDMA WRITEs of {@code payload}
 * bytes from its registered {@link #source} into B's {@link #target} (each packet a whole message); B's
 * ACKs flow back to A, so A's windows keep opening and every burst is fresh (a replayed frame would be a
 * duplicate). The subclasses build the two engines and agents: {@link SprayInMemoryPair},
 * {@link RcInMemoryPair}.
 * <p>
 * {@link #fillReceiveRing(int)} drives A (untimed, in a benchmark's set-up) until B's port holds a burst;
 * the benchmark then times B's side only ({@link #receiveBurst()}). Single-threaded.
 */
abstract class InMemoryTransportPair implements AutoCloseable
{
    static final int REGION_BYTES = 1 << 20;
    private static final int OUTSTANDING = 512;
    private static final long STEP_NANOS = 1_000;

    final Arena arena = Arena.ofShared();
    final InMemoryLink link;
    final InMemoryPacketPort portA;
    final InMemoryPacketPort portB;
    final ProtectionDomain pdA = new ProtectionDomain();
    final ProtectionDomain pdB = new ProtectionDomain();
    final CompletionQueue cqA = new CompletionQueue(1 << 14);
    final CompletionQueue cqB = new CompletionQueue(1 << 14);
    final MemoryRegion source;
    final MemoryRegion target;
    final int payload;
    private final SendWorkRequest request = new SendWorkRequest();
    private final WorkCompletion completion = new WorkCompletion();
    private long now = 1_000_000;
    private long posted;
    private long completed;

    /**
     * @param linkName       the in-memory link's name.
     * @param maxFrameLength the link's largest frame.
     * @param payload        bytes per WRITE, one packet each.
     */
    InMemoryTransportPair(final String linkName, final int maxFrameLength, final int payload)
    {
        this.payload = payload;
        link = new InMemoryLink(linkName, 4096, maxFrameLength);
        portA = link.first();
        portB = link.second();
        final MemorySegment src = arena.allocate(REGION_BYTES, 64);
        for (long i = 0; i < REGION_BYTES; i += 8)
        {
            src.set(ValueLayout.JAVA_LONG_UNALIGNED, i, i * 0x9E3779B97F4A7C15L);
        }
        source = pdA.register(src, AccessFlags.NONE);
        target = pdB.register(arena.allocate(REGION_BYTES, 64), AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
    }

    /** Posts one WRITE on A's connection or queue pair: a {@link PostResult} code. */
    abstract int postOnA(SendWorkRequest request);

    /** One duty cycle of A's agent: its ACKs in, its data out. */
    abstract void stepA();

    /** One duty cycle of B's agent: what the agent benchmarks time. */
    abstract int receiveBurst();

    /** @return data packets B accepted so far. */
    abstract long receivedPackets();

    /** @return packets B saw as duplicates, out of order or could not take, and what it refused: must stay 0. */
    abstract long receiveAnomalies();

    /** @return A's state, for the message when it stalls. */
    abstract String senderState();

    /** Closes both agents. */
    abstract void closeAgents();

    /** @return B's virtual time: the benchmark passes it to B's engine. */
    final long now()
    {
        return now;
    }

    /**
     * Steps A (posting writes, taking B's ACKs, sending data) until B's port holds at least {@code frames}
     * frames. B is not stepped here: its ACKs come from the timed part.
     */
    final void fillReceiveRing(final int frames)
    {
        for (int step = 0; portB.pendingReceive() < frames; step++)
        {
            if (step > 100_000)
            {
                throw new IllegalStateException("sender stalled: " + senderState() + ", B's ring " + portB.pendingReceive());
            }
            postWrites();
            now += STEP_NANOS;
            stepA();
            while (cqA.poll(completion))
            {
                completed++;
            }
        }
        now += STEP_NANOS;
    }

    /**
     * One step of A as a sender: posts WRITEs up to the outstanding limit, advances the clock, runs one duty cycle
     * of A's agent (B's ACKs in, data out) and polls A's completions. B is not stepped.
     *
     * @return WRITEs completed in this step.
     */
    final int senderStep()
    {
        postWrites();
        now += STEP_NANOS;
        stepA();
        int done = 0;
        while (cqA.poll(completion))
        {
            done++;
        }
        completed += done;
        return done;
    }

    private void postWrites()
    {
        while (posted - completed < OUTSTANDING)
        {
            final long offset = (posted * payload) % (REGION_BYTES - payload + 1);
            request.reset().wrId(posted).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(source, source.address() + offset, payload)
                .remote(target.address() + offset, target.rkey()).signaled(true);
            if (postOnA(request) != PostResult.OK)
            {
                return;
            }
            posted++;
        }
    }

    /**
     * @return whether the first {@code messages} WRITEs (fewer than wrap the region) arrived byte for byte:
     * they were written at the same offsets in source and target.
     */
    final boolean placed(final long messages)
    {
        final long bytes = Math.min(messages * payload, REGION_BYTES - payload);
        return source.segment().asSlice(0, bytes).mismatch(target.segment().asSlice(0, bytes)) == -1;
    }

    public final void close()
    {
        closeAgents();
        link.close();
        arena.close();
    }
}
