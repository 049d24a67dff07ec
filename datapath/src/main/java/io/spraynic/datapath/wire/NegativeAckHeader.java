package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over the negative acknowledgement header (NAKH), 24 bytes after the BTH of a
 * {@code SPRAY_NACK}: a message (stream, MSN) was refused, and why, and the refusal's number (the
 * receiver's refusal count once it was made), or, with syndrome 0, that the message was accepted (an
 * answer to a query); the same header in a {@code SPRAY_QUERY} asks about a message
 * (docs/PROTOCOL.md S5.3, S9.3). A NACK concerns a message, never a path.
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |   syndrome    |    reason     |            stream             |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                    message sequence number                    |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                  RNR timer (microseconds)                     |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                        refusal number                         |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                                                               |
 * +                tag (64, S12.3; last 8 bytes)                  +
 * |                                                               |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 */
public final class NegativeAckHeader
{
    public static final int SYNDROME_OFFSET = 0;
    /** S5.3: with {@link #SYNDROME_RNR}, what the receiver is not ready for (an {@code RNR_REASON_}); 0 otherwise. */
    public static final int REASON_OFFSET = 1;
    public static final int STREAM_OFFSET = 2;
    public static final int MSN_OFFSET = 4;
    public static final int RNR_TIMER_OFFSET = 8;
    public static final int REFUSAL_OFFSET = 12;
    /** S12.3: SipHash-2-4 tag over the BTH and this header up to the tag. */
    public static final int TAG_OFFSET = 16;
    public static final int LENGTH = 24;

    /** In an answer to a {@code SPRAY_QUERY}: every byte of the message was placed (S9.3). */
    public static final int SYNDROME_ACCEPTED = 0;
    /** No receive posted on the stream: retry after the RNR timer (S9.3). */
    public static final int SYNDROME_RNR = 1;
    /** Wrong R_Key, outside the region, or missing access right; nothing written (S9.3). */
    public static final int SYNDROME_REMOTE_ACCESS_ERROR = 2;
    /** SEND longer than the receive buffer, bad length (S9.3). */
    public static final int SYNDROME_REMOTE_INVALID_REQUEST = 3;
    /** The responder could not complete the operation (S9.3). */
    public static final int SYNDROME_REMOTE_OPERATION_ERROR = 4;

    /** RNR reason (S9.3): no receive posted on the stream. */
    public static final int RNR_REASON_NO_RECEIVE = 0;
    /** RNR reason (S10.2): no inbound message record, placement marks or READ response resources for it now. */
    public static final int RNR_REASON_NO_RESOURCES = 1;

    private NegativeAckHeader()
    {
    }

    public static int syndrome(final MemorySegment s, final long o)
    {
        return Wire.u8(s, o + SYNDROME_OFFSET);
    }

    public static void syndrome(final MemorySegment s, final long o, final int syndrome)
    {
        s.set(Wire.BYTE, o + SYNDROME_OFFSET, (byte)syndrome);
        s.set(Wire.BYTE, o + SYNDROME_OFFSET + 1, (byte)0);
    }

    /** @return the RNR reason (S5.3, S10.2), 0 with any other syndrome. */
    public static int reason(final MemorySegment s, final long o)
    {
        return Wire.u8(s, o + REASON_OFFSET);
    }

    /** Sets the RNR reason; write it after {@link #syndrome(MemorySegment, long, int)}, which zeroes it. */
    public static void reason(final MemorySegment s, final long o, final int reason)
    {
        s.set(Wire.BYTE, o + REASON_OFFSET, (byte)reason);
    }

    /** @return the RNR reason's name as in docs/PROTOCOL.md S5.3. */
    public static String reasonName(final int reason)
    {
        return switch (reason)
        {
            case RNR_REASON_NO_RECEIVE -> "NO_RECEIVE";
            case RNR_REASON_NO_RESOURCES -> "NO_RESOURCES";
            default -> "REASON_" + reason;
        };
    }

    public static int stream(final MemorySegment s, final long o)
    {
        return Short.toUnsignedInt(s.get(Wire.SHORT_BE, o + STREAM_OFFSET));
    }

    public static void stream(final MemorySegment s, final long o, final int stream)
    {
        s.set(Wire.SHORT_BE, o + STREAM_OFFSET, (short)stream);
    }

    public static int msn(final MemorySegment s, final long o)
    {
        return s.get(Wire.INT_BE, o + MSN_OFFSET);
    }

    public static void msn(final MemorySegment s, final long o, final int msn)
    {
        s.set(Wire.INT_BE, o + MSN_OFFSET, msn);
    }

    public static int rnrTimerMicros(final MemorySegment s, final long o)
    {
        return s.get(Wire.INT_BE, o + RNR_TIMER_OFFSET);
    }

    public static void rnrTimerMicros(final MemorySegment s, final long o, final int micros)
    {
        s.set(Wire.INT_BE, o + RNR_TIMER_OFFSET, micros);
    }

    /**
     * @return the refusal's number (S9.3), 0 in a query or an ACCEPTED answer.
     */
    public static int refusal(final MemorySegment s, final long o)
    {
        return s.get(Wire.INT_BE, o + REFUSAL_OFFSET);
    }

    public static void refusal(final MemorySegment s, final long o, final int refusal)
    {
        s.set(Wire.INT_BE, o + REFUSAL_OFFSET, refusal);
    }

    /**
     * @return the syndrome's name as in docs/PROTOCOL.md S9.3.
     */
    public static String syndromeName(final int syndrome)
    {
        return switch (syndrome)
        {
            case SYNDROME_ACCEPTED -> "ACCEPTED";
            case SYNDROME_RNR -> "RNR";
            case SYNDROME_REMOTE_ACCESS_ERROR -> "REMOTE_ACCESS_ERROR";
            case SYNDROME_REMOTE_INVALID_REQUEST -> "REMOTE_INVALID_REQUEST";
            case SYNDROME_REMOTE_OPERATION_ERROR -> "REMOTE_OPERATION_ERROR";
            default -> "UNKNOWN_" + syndrome;
        };
    }

    public static String toString(final MemorySegment s, final long o)
    {
        return "NAKH{syndrome=" + syndromeName(syndrome(s, o)) + ", reason=" + reasonName(reason(s, o)) + ", stream=" +
            stream(s, o) + ", msn=" + Integer.toUnsignedString(msn(s, o)) + ", rnrTimerMicros=" + rnrTimerMicros(s, o) +
            ", refusal=" + Integer.toUnsignedString(refusal(s, o)) + '}';
    }

    public static long tag(final MemorySegment s, final long o)
    {
        return s.get(Wire.LONG_BE, o + TAG_OFFSET);
    }

    public static void tag(final MemorySegment s, final long o, final long tag)
    {
        s.set(Wire.LONG_BE, o + TAG_OFFSET, tag);
    }
}
