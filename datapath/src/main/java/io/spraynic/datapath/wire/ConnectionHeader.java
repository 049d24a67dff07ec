package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over the connection header (CONH), 40 bytes after the BTH of {@code SPRAY_CONNECT},
 * {@code SPRAY_CONNECT_RETRY}, {@code SPRAY_CONNECT_REJECT}, {@code SPRAY_CONNECT_ACK}, {@code SPRAY_CLOSE} and
 * {@code SPRAY_CLOSE_ACK}: one side's limits and
 * parameters, and a token that pairs a request with its answer (docs/PROTOCOL.md S5.4, S9.1).
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |    version    |     flags     |     paths     |    planes     |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |              MTU              |            streams            |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |   reserved    |                 sender CID (24)               |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |   reserved    |        initial PSN of path 0 (24)             |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                   ingress capacity (Mb/s)                     |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                                                               |
 * +                         token (64)                            +
 * |                                                               |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |    reason     |     reads     |            window             |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                                                               |
 * +                          tag (64)                             +
 * |                                                               |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 * The byte-offset table of S5.4 has the same rows (the reserved bytes before the 24-bit fields included).
 */
public final class ConnectionHeader
{
    public static final int VERSION_OFFSET = 0;
    public static final int FLAGS_OFFSET = 1;
    public static final int PATHS_OFFSET = 2;
    public static final int PLANES_OFFSET = 3;
    public static final int MTU_OFFSET = 4;
    public static final int STREAMS_OFFSET = 6;
    public static final int SENDER_CID_OFFSET = 8;
    public static final int INITIAL_PSN_OFFSET = 12;
    public static final int INGRESS_MBPS_OFFSET = 16;
    public static final int TOKEN_OFFSET = 20;
    /** S5.4: the reason of a {@code SPRAY_CONNECT_REJECT} (one byte; {@code reads} and {@code window} follow). */
    public static final int REASON_OFFSET = 28;
    /** S5.4, S10.2: in CONNECT and CONNECT_ACK the READ requests the sender serves at once (u8; 0: not advertised). */
    public static final int READS_OFFSET = 29;
    /** S5.4, S10.2: in CONNECT and CONNECT_ACK the sender's inbound message window (u16; 0: not advertised). */
    public static final int WINDOW_OFFSET = 30;
    /** S12.3: in CLOSE and CLOSE_ACK the SipHash-2-4 tag with the connection's key; zero in the other CONH packets. */
    public static final int TAG_OFFSET = 32;
    public static final int LENGTH = 40;

    /** The protocol version of S5.4: 2 since the authenticated headers of S12. */
    public static final int VERSION = 2;

    /** Flag (CONNECT): the payload is the sender's address on every plane, {@link PlaneAddress} entries (S5.5). */
    public static final int FLAG_ADDRESSES = 1;

    private ConnectionHeader()
    {
    }

    /**
     * Writes every field (reserved bytes zeroed). {@code streams} is written modulo 2^16: 65536 streams
     * travel as 0.
     */
    public static void write(
        final MemorySegment s,
        final long o,
        final int flags,
        final int paths,
        final int planes,
        final int mtu,
        final int streams,
        final int senderCid,
        final int initialPsn,
        final int ingressMbps,
        final long token)
    {
        s.set(Wire.BYTE, o + VERSION_OFFSET, (byte)VERSION);
        s.set(Wire.BYTE, o + FLAGS_OFFSET, (byte)flags);
        s.set(Wire.BYTE, o + PATHS_OFFSET, (byte)paths);
        s.set(Wire.BYTE, o + PLANES_OFFSET, (byte)planes);
        s.set(Wire.SHORT_BE, o + MTU_OFFSET, (short)mtu);
        s.set(Wire.SHORT_BE, o + STREAMS_OFFSET, (short)streams);
        s.set(Wire.INT_BE, o + SENDER_CID_OFFSET, senderCid & 0xFF_FFFF);
        s.set(Wire.INT_BE, o + INITIAL_PSN_OFFSET, initialPsn & 0xFF_FFFF);
        s.set(Wire.INT_BE, o + INGRESS_MBPS_OFFSET, ingressMbps);
        s.set(Wire.LONG_BE, o + TOKEN_OFFSET, token);
        s.set(Wire.INT_BE, o + REASON_OFFSET, 0);
        s.set(Wire.LONG_BE, o + TAG_OFFSET, 0L);
    }

    /**
     * Sets the resource limits a CONNECT or CONNECT_ACK advertises (S10.2): {@code window} inbound messages
     * (1..65535), {@code reads} READ requests served at once (1..255); 0 means not advertised.
     */
    public static void limits(final MemorySegment s, final long o, final int window, final int reads)
    {
        s.set(Wire.BYTE, o + READS_OFFSET, (byte)reads);
        s.set(Wire.SHORT_BE, o + WINDOW_OFFSET, (short)window);
    }

    /** @return the READ requests the sender serves at once (S10.2), 0 if not advertised. */
    public static int reads(final MemorySegment s, final long o)
    {
        return Wire.u8(s, o + READS_OFFSET);
    }

    /** @return the sender's inbound message window (S10.2), 0 if not advertised. */
    public static int window(final MemorySegment s, final long o)
    {
        return Short.toUnsignedInt(s.get(Wire.SHORT_BE, o + WINDOW_OFFSET));
    }

    /** @return the reject reason of a {@code SPRAY_CONNECT_REJECT} (S9.1.1), 0 in other packets. */
    public static int reason(final MemorySegment s, final long o)
    {
        return Wire.u8(s, o + REASON_OFFSET);
    }

    public static void reason(final MemorySegment s, final long o, final int reason)
    {
        s.set(Wire.BYTE, o + REASON_OFFSET, (byte)reason);
    }

    public static long tag(final MemorySegment s, final long o)
    {
        return s.get(Wire.LONG_BE, o + TAG_OFFSET);
    }

    public static void tag(final MemorySegment s, final long o, final long tag)
    {
        s.set(Wire.LONG_BE, o + TAG_OFFSET, tag);
    }

    public static int version(final MemorySegment s, final long o)
    {
        return Wire.u8(s, o + VERSION_OFFSET);
    }

    public static int flags(final MemorySegment s, final long o)
    {
        return Wire.u8(s, o + FLAGS_OFFSET);
    }

    public static int paths(final MemorySegment s, final long o)
    {
        return Wire.u8(s, o + PATHS_OFFSET);
    }

    public static int planes(final MemorySegment s, final long o)
    {
        return Wire.u8(s, o + PLANES_OFFSET);
    }

    public static int mtu(final MemorySegment s, final long o)
    {
        return Short.toUnsignedInt(s.get(Wire.SHORT_BE, o + MTU_OFFSET));
    }

    /** @return streams, 1..65536 (0 on the wire means 65536). */
    public static int streams(final MemorySegment s, final long o)
    {
        final int streams = Short.toUnsignedInt(s.get(Wire.SHORT_BE, o + STREAMS_OFFSET));
        return streams == 0 ? 65536 : streams;
    }

    public static int senderCid(final MemorySegment s, final long o)
    {
        return s.get(Wire.INT_BE, o + SENDER_CID_OFFSET) & 0xFF_FFFF;
    }

    public static int initialPsn(final MemorySegment s, final long o)
    {
        return s.get(Wire.INT_BE, o + INITIAL_PSN_OFFSET) & 0xFF_FFFF;
    }

    public static int ingressMbps(final MemorySegment s, final long o)
    {
        return s.get(Wire.INT_BE, o + INGRESS_MBPS_OFFSET);
    }

    public static long token(final MemorySegment s, final long o)
    {
        return s.get(Wire.LONG_BE, o + TOKEN_OFFSET);
    }

    public static String toString(final MemorySegment s, final long o)
    {
        return "CONH{version=" + version(s, o) + ", flags=0x" + Integer.toHexString(flags(s, o)) + ", paths=" +
            paths(s, o) + ", planes=" + planes(s, o) + ", mtu=" + mtu(s, o) + ", streams=" + streams(s, o) +
            ", senderCid=" + senderCid(s, o) + ", initialPsn=" + initialPsn(s, o) + ", ingressMbps=" +
            Integer.toUnsignedString(ingressMbps(s, o)) + ", token=0x" + Long.toHexString(token(s, o)) + ", reason=" +
            reason(s, o) + ", reads=" + reads(s, o) + ", window=" + window(s, o) + ", tag=0x" +
            Long.toHexString(tag(s, o)) + '}';
    }
}
