package io.spraynic.bench.raw;

import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.wire.FrameClass;
import io.spraynic.datapath.wire.MalformedReason;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceParser;

import java.lang.foreign.MemorySegment;

/**
 * The Java receive path's per-packet work on its own, the twin of {@code benchmarks/src/main/c/rx_twin.c}: one
 * {@link PacketPort#transmitAndReceive} per burst sends back what the last burst held and receives the next; every
 * frame is parsed with {@link RoceParser} (ICRC verified) and an RDMA WRITE Only's payload is copied to its RETH
 * address in a registered region. Both twins count the same outcomes ({@link #PLACED} ... {@link #OUT_OF_REGION},
 * the C enum's order), so a test can check that they judged the same frames alike.
 * <p>
 * Benchmark only; one thread.
 */
final class ReceiveTwin
{
    static final int PLACED = 0;
    static final int ACCEPTED = 1;
    static final int NOT_OURS = 2;
    static final int MALFORMED = 3;
    static final int BAD_ICRC = 4;
    static final int OUT_OF_REGION = 5;
    static final int OUTCOMES = 6;

    private final RoceParser parser = new RoceParser(new ParseCounters());
    private final RoceFrame frame = new RoceFrame();
    private final MemorySegment region;
    private final long regionBase;
    private final int rkey;
    private final long[] counters = new long[OUTCOMES];

    /**
     * @param region     where payloads go.
     * @param regionBase the virtual address RETHs give for the region's first byte.
     * @param rkey       the region's R_Key.
     */
    ReceiveTwin(final MemorySegment region, final long regionBase, final int rkey)
    {
        this.region = region;
        this.regionBase = regionBase;
        this.rkey = rkey;
    }

    /**
     * Runs {@code bursts} bursts on {@code port}.
     *
     * @return the frames received.
     */
    long bursts(final PacketPort port, final PacketBurst burst, final long bursts)
    {
        long received = 0;
        for (long i = 0; i < bursts; i++)
        {
            final int held = burst.size();
            final int unsent = held - port.transmitAndReceive(burst); // what the port did not take stays in front
            final MemorySegment memory = burst.memory();
            for (int f = unsent, size = burst.size(); f < size; f++)
            {
                onFrame(memory, burst.offset(f), burst.length(f));
            }
            received += burst.size() - unsent;
        }
        return received;
    }

    /**
     * Classifies one frame and places its payload if it is an RDMA WRITE Only into the region.
     *
     * @return the outcome, also counted.
     */
    int onFrame(final MemorySegment memory, final long offset, final int length)
    {
        final FrameClass frameClass = parser.parse(memory, offset, length, frame);
        if (frameClass == FrameClass.NOT_OURS)
        {
            return count(NOT_OURS);
        }
        if (frameClass == FrameClass.MALFORMED)
        {
            return count(frame.malformedReason() == MalformedReason.BAD_ICRC ? BAD_ICRC : MALFORMED);
        }
        if (frame.opcode() != Opcode.RC_RDMA_WRITE_ONLY)
        {
            return count(ACCEPTED);
        }
        final long at = frame.rethVirtualAddress() - regionBase;
        final int payloadLength = frame.payloadLength();
        if (frame.rethRkey() != rkey || Long.compareUnsigned(at, region.byteSize()) > 0 ||
            payloadLength > region.byteSize() - at)
        {
            return count(OUT_OF_REGION);
        }
        MemorySegment.copy(memory, frame.payloadOffset(), region, at, payloadLength);
        return count(PLACED);
    }

    /**
     * @return frames of each outcome so far, indexed by {@link #PLACED} ... {@link #OUT_OF_REGION}.
     */
    long[] counters()
    {
        return counters.clone();
    }

    private int count(final int outcome)
    {
        counters[outcome]++;
        return outcome;
    }
}
