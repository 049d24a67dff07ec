package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.port.FaultInjectingPacketPort;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.SprayExtendedTransportHeader;
import io.spraynic.datapath.wire.SprayOpcodes;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * S9.3-3: the attempt number in the SETH tells a receiver the packets of an RNR retry from late copies of the
 * refused attempt. A's path 1 is held (every frame A sends on it is kept back), so A re-sends its packets on path 0
 * at their RTO (S7.4.1): the receiver sees every packet of the refused attempt once, by way of the moved copies,
 * and the held originals arrive late, while A waits out its RNR timer. Counting arrivals (the rule before S9.3-3)
 * ended the refusal when the moved copies were in, took the late originals for the start of a new attempt and
 * refused it with a new number, which A, still waiting, learned and set aside; its retry was then partly refused
 * under that number and A completed the SEND with SUCCESS while B never completed its receive.
 */
class SprayRnrAttemptTest
{
    private static final int MTU = 1024;
    private static final int SIZE = 6 * MTU; // 6 packets, some of them on path 1
    private static final int HELD_PATH = 1;
    private static final long HEADER = SprayTestBed.DATA_OFFSET_BTH + BaseTransportHeader.LENGTH;

    /** Keeps back (drops, keeping a copy) every data packet and probe A sends on {@link #HELD_PATH} while held. */
    static final class PathHolder
    {
        final List<byte[]> held = new ArrayList<>();
        final List<Integer> attempts = new ArrayList<>();
        boolean holding = true;

        SprayTestBed.Wrapper wrapper()
        {
            return (plane, port) -> new FaultInjectingPacketPort(port, 0, 1.0, 0, 0, (memory, offset, length) ->
            {
                if (!holding || length <= HEADER)
                {
                    return false;
                }
                final int opcode = BaseTransportHeader.opcode(memory, offset + SprayTestBed.DATA_OFFSET_BTH);
                final boolean data = opcode >= SprayOpcodes.WRITE && opcode <= SprayOpcodes.READ_RESPONSE;
                if ((!data && opcode != SprayOpcodes.PROBE) ||
                    SprayExtendedTransportHeader.path(memory, offset + HEADER) != HELD_PATH)
                {
                    return false; // the SETH and the PRBH both name the path in their first byte
                }
                held.add(memory.asSlice(offset, length).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
                if (data)
                {
                    attempts.add(SprayExtendedTransportHeader.attempt(memory, offset + HEADER));
                }
                return true;
            });
        }

        /** Puts every held frame on the wire towards B, in the order A sent them (a path is FIFO, S6.2). */
        void release(final SprayTestBed bed)
        {
            release(bed, -1);
        }

        /**
         * As {@link #release(SprayTestBed)}, with the SETH attempt of every held data packet rewritten to
         * {@code attempt} (none when negative) and the IPv4 checksum and ICRC, which no key protects, made good again:
         * what an on-path writer can do. @return the data packets rewritten.
         */
        int release(final SprayTestBed bed, final int attempt)
        {
            holding = false;
            int rewritten = 0;
            final PacketPort port = bed.injector(0, true);
            for (final byte[] frame : held)
            {
                final MemorySegment f = MemorySegment.ofArray(frame.clone());
                final int opcode = BaseTransportHeader.opcode(f, SprayTestBed.DATA_OFFSET_BTH);
                if (attempt >= 0 && opcode != SprayOpcodes.PROBE)
                {
                    final long flags = HEADER + 1;
                    final int others = f.get(ValueLayout.JAVA_BYTE, flags) &
                        ~SprayExtendedTransportHeader.attemptFlags(SprayExtendedTransportHeader.ATTEMPT_MASK);
                    f.set(ValueLayout.JAVA_BYTE, flags, (byte)(others | SprayExtendedTransportHeader.attemptFlags(attempt)));
                    SprayAuthenticationTest.reseal(f);
                    rewritten++;
                }
                try (PacketBurst burst = port.newBurst(1))
                {
                    assertTrue(port.allocate(burst, 1));
                    MemorySegment.copy(f, 0, burst.memory(), burst.offset(0), frame.length);
                    burst.length(0, frame.length);
                    assertEquals(1, port.transmit(burst));
                }
            }
            return rewritten;
        }
    }

    @Test
    void lateCopiesOfTheRefusedAttemptAreNotTakenForItsRetryS933()
    {
        runLateCopies(false);
    }

    /**
     * S12.4 covers the attempt: an on-path writer that gives the late copies the retry's attempt (1), to have them
     * taken for its start, makes them fail the message tag instead, each dropped and counted, and nothing else
     * changes. Were the attempt outside the tag, they would start attempt 1 before A sent it, refused under a number
     * A learns while it waits, and A's retry would then be refused under that number, which A takes for stale: A
     * completes the SEND with SUCCESS and B never completes its receive (the defect of draft 0.6, by an attacker).
     */
    @Test
    void lateCopiesRewrittenToTheRetrysAttemptFailTheMessageTagS124S933()
    {
        runLateCopies(true);
    }

    private static void runLateCopies(final boolean rewrite)
    {
        final PathHolder holder = new PathHolder();
        final SprayTestBed.Options options = new SprayTestBed.Options().planes(1).paths(2).mtu(MTU)
            .wrapA(holder.wrapper());
        options.rnrTimerMicros = 5_000; // A waits 5 ms before its retry: the late originals arrive meanwhile
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final MemoryRegion src = bed.region(bed.pdA, SIZE, AccessFlags.NONE, 3);
            final MemoryRegion dst = bed.region(bed.pdB, SIZE, AccessFlags.LOCAL_WRITE, 0);
            bed.a.postSend(0, new SendWorkRequest().wrId(1).opcode(WorkRequestOpcode.SEND)
                .local(src, src.address(), SIZE));

            // the refused attempt: every packet in at B (path 1's moved to path 0 at their RTO), A waiting
            bed.runUntil(() -> bed.a.counters().get(SprayCounters.RNR_RETRIES) == 1 &&
                bed.a.counters().get(SprayCounters.LOST) > 0 && bed.a.sendSlotsInUse() == 1 &&
                bed.a.counters().get(SprayCounters.ACKS_RECEIVED) > 0, 20_000);
            bed.runToQuiet(1_000);
            assertTrue(holder.attempts.contains(0), "a packet of the first attempt was held: " + holder.attempts);
            assertEquals(1, bed.a.counters().get(SprayCounters.RNR_RETRIES), "A still waits for its retry");

            // the held originals arrive late, then the receive is posted before the retry
            final long nacksBefore = bed.b.counters().get(SprayCounters.NACKS_SENT);
            final long authFailuresBefore = bed.b.counters().get(SprayCounters.AUTH_FAILURES);
            final int rewritten = holder.release(bed, rewrite ? 1 : -1);
            bed.runToQuiet(100);
            if (rewrite)
            {
                assertTrue(rewritten > 0, "a data packet was held");
                assertEquals(rewritten, bed.b.counters().get(SprayCounters.AUTH_FAILURES) - authFailuresBefore,
                    "every rewritten copy fails its message tag");
                assertEquals(nacksBefore, bed.b.counters().get(SprayCounters.NACKS_SENT), "and draws nothing");
            }
            else
            {
                assertTrue(bed.b.counters().get(SprayCounters.NACKS_SENT) > nacksBefore, "the late packets are refused");
            }
            bed.b.postReceive(0, new ReceiveWorkRequest().wrId(10).buffer(dst, dst.address(), SIZE));

            final List<WorkCompletion> done = bed.sendCompletionsA(1);
            assertEquals(1, done.size());
            assertEquals(WorkCompletionStatus.SUCCESS, done.get(0).status());
            final List<WorkCompletion> received = SprayTestBed.drain(bed.receiveCqB);
            assertEquals(1, received.size(), "B completed the receive the SEND consumed");
            assertEquals(WorkCompletionStatus.SUCCESS, received.get(0).status());
            assertEquals(SIZE, received.get(0).byteLength());
            assertEquals(-1L, src.segment().mismatch(dst.segment()));
            assertEquals(1, bed.a.counters().get(SprayCounters.RNR_RETRIES), "one retry, accepted whole");
        }
    }
}
