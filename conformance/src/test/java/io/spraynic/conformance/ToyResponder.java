package io.spraynic.conformance;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;

/**
 * A deliberately small spray responder for the suite's self-test, written in the test module from the same
 * document: the handshake with a fixed cookie (and a PSK proof when given a key), RETRYs and REJECTs within a
 * small response bucket, WRITEs placed into a heap region (a wrong R_Key refused with a NACK that puts its stream in
 * error), READs answered (one path, within a window that grows by one packet a round and shrinks on CE echoes as
 * S8.2 says, paced at the rateHint of the last ACK as S8.4 says; what an ACK shows missing sent again, stale ACKs ignored, the oldest packet again after a timeout), probes and data acknowledged at once with their CE marks echoed, CLOSE answered, a
 * per-source connection limit, keepalives and an idle timeout. Each {@link Fault} makes
 * it non-compliant in one way, so the self-test can show the suite catches exactly that. It runs on its own thread
 * until closed.
 */
final class ToyResponder implements AutoCloseable
{
    /** One way to break a clause. */
    enum Fault
    {
        /** S2.6-1: packets with a wrong ICRC are taken. */
        ACCEPT_BAD_ICRC,
        /** S6.4-2: ACKs carry the cumulative PSN but never a SACK bit. */
        OMIT_SACK,
        /** S12.2-1: a CONNECT's PSK proof is not checked. */
        IGNORE_PROOF,
        /** S12.2-2: the CONNECT_ACK's proof is zero. */
        NO_ACK_PROOF,
        /** S8.1-1: CE marks are not echoed. */
        NO_CE_ECHO,
        /** S12.4-1: data packets' message tags are not checked. */
        IGNORE_MESSAGE_TAG,
        /** S12.8-1: any NACK fails the connection (it is forgotten). */
        OBEY_ANY_NACK,
        /** S12.9-1: no connection limit. */
        NO_CONNECTION_LIMIT,
        /** S12.10-1: no keepalives. */
        NO_KEEPALIVE,
        /** S12.10-2: idle connections stay open. */
        NO_IDLE_CLOSE,
        /** S2.3-1: data sent Not-ECT. */
        NOT_ECT_DATA,
        /** S5.4-1: READ responses start one PSN above the announced initial PSN. */
        WRONG_INITIAL_PSN,
        /** S2.4: the CONNECT_ACK's ICRC covers an IPv4 header with identification 1 (SprayNIC's PSK-mode defect). */
        NONZERO_IDENTIFICATION,
        /** S9.4-1: a stream whose WRITE was refused goes on placing its later messages. */
        NO_STREAM_ERROR,
        /** S9.4-2: after any refusal nothing more is placed, on any stream of any connection. */
        ERROR_SPREADS,
        /** S12.9-2: every CONNECT is answered, without a response bucket. */
        NO_RESPONSE_RATE_LIMIT,
        /** S5.1-2: an ACK whose ackSequence is not above the last one taken is taken too. */
        ACCEPT_STALE_ACK,
        /** S8.2-1 (and S6.3): no window: a READ's responses all go at once. */
        NO_WINDOW,
        /** S8.2-1: CE echoes do not shrink the window, which grows by one packet every round. */
        IGNORE_CE,
        /** S8.4-1: READ responses go as fast as the window lets them, whatever rateHint the ACKs carry. */
        IGNORE_RATE_HINT,
        /** Not a fault: READ responses go {@link #SLOW_NANOS} after the READ_REQUEST or ACK, as a loaded host's. */
        SLOW,
        /**
         * Not a fault: S7.7 rotation. After {@link #ROTATE_PACKETS} data packets on one source port the path takes
         * new data only once none is unacknowledged, and then on the other of its two ports.
         */
        ROTATE_DRAINED,
        /** S7.7-1: the data port alternates every {@link #ROTATE_PACKETS} packets, whatever is in flight. */
        ROTATE_IN_FLIGHT,
        /**
         * Not a fault: S7.3 re-pathing. Once the data packets it sent since its last move lose more than 5 % (32 at
         * least), its data and ACKs move to the other of its two ports. Without it the toy keeps its port: a sender
         * that does not re-path.
         */
        REPATH,
        /**
         * Not a fault: S7.3-2 re-pathing. Once its path's smoothed RTT (gain 1/8, 32 samples since its last move at
         * least) exceeds 3 x the lowest it had since that move (a one-path sender's stand-in for the median of the
         * connection's paths), the data and ACKs of path 0 move to the other of its two ports; the other paths'
         * ACKs stay. Without it the toy keeps its port: a sender that does not re-path on RTT.
         */
        REPATH_RTT,
        /** S2.5-2: READ responses go with SETH flag bit 7, which is reserved, set. */
        RESERVED_FLAG_SET,
        /**
         * S9.3-3: an RNR refusal ends once as many packets of the message arrived as it has, copies counted, and the
         * next packet starts a new attempt whatever its SETH attempt (draft 0.6's SprayNIC).
         */
        RNR_BY_COUNT,
        /** S2.5-2: ACKs go with SACKH {@code reserved4} 0x5A. */
        RESERVED_ACK_FIELD,
        /** S12.4-1: data packets' message tags are checked as if every packet were of attempt 0 (draft 0.7's tag). */
        ATTEMPT_OUTSIDE_TAG,
        /** S9.3.1-2: a QUERY is never answered. */
        NO_QUERY_ANSWER,
        /** Not a fault: the answer to a connection's first QUERY is lost, as on a lossy link. */
        LOSE_FIRST_QUERY_ANSWER,
        /** S10.2-3: the CONNECT_ACK advertises no window and no READ limit (CONH window and reads 0). */
        NO_ADVERTISED_LIMITS,
        /** S10.2-1: WRITEs beyond the advertised window are placed, never refused (it advertises a window it lacks). */
        IGNORE_WINDOW,
        /** S10.2-2: every packet of a WRITE refused for want of records draws its NACK, without a response bucket. */
        NO_RESOURCES_RATE_LIMIT
    }

    /** The toy's connections per source (S12.9) and idle timeout (S12.10), small so that the checks run fast. */
    static final int CONNECTION_LIMIT = 3;
    static final long IDLE_TIMEOUT_NANOS = 1_500 * ScriptedPeer.MILLI;
    static final long REGION_ADDRESS = 0x7F00_0000_0000L;
    static final int RKEY = 0x1234;
    /** S10.2-3: the window and READ limit its CONNECT_ACK advertises. */
    static final int ADVERTISED_WINDOW = 64;
    static final int ADVERTISED_READS = 16;
    /** S9.3-2: the retry time its RNR NACKs ask for. */
    static final int RNR_TIMER_MICROS = 10;
    /** The toy's one retransmission timer (S6.7-1): long, so that the suite's short silences do not trip it. */
    static final long RETRANSMIT_TIMEOUT_NANOS = 100 * ScriptedPeer.MILLI;
    /**
     * The toy's response bucket (S12.9), as CI gives SprayNIC's: small, so that the suite's floods (S12.9-2, S10.2-2)
     * outrun it even on a loaded host.
     */
    static final double RESPONSE_RATE = 500;
    static final int RESPONSE_BURST = 32;
    /** How late {@link Fault#SLOW} answers: above the window check's quiet of 4 ms. */
    static final long SLOW_NANOS = 10 * ScriptedPeer.MILLI;
    /** S8.2: the window a path starts with, and the gain of its CE estimate. */
    static final int INITIAL_WINDOW = 16;
    private static final double GAIN = 1.0 / 16;
    /** The run of data packets on one source port before the toy rotates (with a ROTATE_ fault). */
    static final int ROTATE_PACKETS = 8;
    /** The second source port of a rotating toy: its own port plus this. */
    static final int ROTATED_PORT_OFFSET = 10_000;
    private static final byte[] COOKIE = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

    final java.util.Set<Fault> faults;
    final boolean acceptBadIcrc;
    final boolean omitSack;
    private final byte[] psk;
    final byte[] region = new byte[(int)ConformanceSuite.REGION_BYTES];
    private final UdpLink link;
    /** With a ROTATE_ fault: a second socket, the other source port data alternates to; else null. */
    private final UdpLink rotatedLink;
    private UdpLink dataLink;
    /** The socket of the toy's ACKs of path 0: moved by a re-path (S7.3), never by rotation (S7.7); others use link. */
    private UdpLink controlLink;
    private int portPackets;
    /** {@link Fault#REPATH}: data packets sent since the last move, and the PSNs of those found lost. */
    private int sampleSent;
    private final java.util.Set<Integer> sampleLost = new java.util.HashSet<>();
    private final Thread thread;
    private volatile boolean running = true;
    private final Map<Integer, Connection> connections = new HashMap<>(); // by this end's CID
    private final Map<Long, Connection> byToken = new HashMap<>();
    private int nextCid = 0x100;
    private double responseTokens = RESPONSE_BURST;
    private long responseRefilled = System.nanoTime();
    /** A WRITE was refused somewhere (what {@link Fault#ERROR_SPREADS} spreads). */
    private boolean refusedAny;

    private static final class Connection
    {
        int cid;
        int peerCid;
        long[] sendKey;
        long[] receiveKey;
        byte[] connectAck;
        int[] cumulative;
        BitSet[] above;
        int[] ackSequence;
        int[] ceSinceAck;
        int nextPsn;
        int mtu;
        boolean closed;
        long lastHeard = System.nanoTime();
        long lastSent = System.nanoTime();
        int refusals;
        /** S9.3-3: per SEND (stream << 32 | msn) refused: {attempt, refusal, packets of it that arrived}. */
        final Map<Long, int[]> rnr = new HashMap<>();
        /** S10.2: the WRITEs holding a record (begun, not every packet arrived), by stream << 32 | msn. */
        final Map<Long, BitSet> openWrites = new HashMap<>();
        /** S10.2-1: the WRITEs refused for want of a record, and their refusal numbers, by stream << 32 | msn. */
        final Map<Long, Integer> refusedForResources = new HashMap<>();
        final boolean[] streamErrored = new boolean[2];
        final int[] erroredMsn = new int[2];
        final int[] erroredRefusal = new int[2];
        boolean queryAnswered;
        /** The highest ackSequence taken of path 0 (S5.1-2). */
        int ackTaken;
        long lastAckHeard = System.nanoTime();
        /** READ_RESPONSEs sent and not yet acknowledged, by PSN (the toy's PSNs start at 1000 and never wrap). */
        final java.util.TreeMap<Integer, byte[]> unacknowledged = new java.util.TreeMap<>();
        /** READ_RESPONSEs the window holds back, by PSN (assigned in order: one path, so sending order is PSN order). */
        final java.util.TreeMap<Integer, byte[]> held = new java.util.TreeMap<>();
        /**
         * READ_RESPONSEs an ACK showed missing and that went again: once each (the timer covers a lost resend), so
         * that a run of ACKs behind a lossy path does not resend every gap at each ACK and flood the socket.
         */
        final java.util.Set<Integer> resent = new java.util.HashSet<>();
        /** S8.2: the window of path 0 in packets, its CE estimate, and the packets and CE echoes of this round. */
        double window = INITIAL_WINDOW;
        double alpha;
        int roundAcknowledged;
        int roundMarked;
        /** S8.4: the share the last ACK gave (Mb/s, 0: none), and when the pacer lets the next packet go. */
        int rateHintMbps;
        long nextSendAt;
        /** With {@link Fault#SLOW}: when the held READ_RESPONSEs may go. */
        long answerAt;
        /** {@link Fault#REPATH_RTT}: when each unacknowledged READ_RESPONSE first went, by PSN. */
        final Map<Integer, Long> sentAt = new HashMap<>();
        /** {@link Fault#REPATH_RTT}: path 0's smoothed RTT, the lowest it had, and its samples since the last move. */
        long srttNanos;
        long lowestSrttNanos = Long.MAX_VALUE;
        int rttSamples;
    }

    ToyResponder(final InetSocketAddress self, final InetSocketAddress suite, final byte[] psk,
        final java.util.Set<Fault> faults) throws IOException
    {
        this.faults = faults.isEmpty() ? java.util.EnumSet.noneOf(Fault.class) : java.util.EnumSet.copyOf(faults);
        this.acceptBadIcrc = faults.contains(Fault.ACCEPT_BAD_ICRC);
        this.omitSack = faults.contains(Fault.OMIT_SACK);
        this.psk = psk;
        this.link = new UdpLink(self, suite);
        this.rotatedLink = faults.contains(Fault.ROTATE_DRAINED) || faults.contains(Fault.ROTATE_IN_FLIGHT) ||
            faults.contains(Fault.REPATH) || faults.contains(Fault.REPATH_RTT) ?
            new UdpLink(new InetSocketAddress(self.getAddress(), self.getPort() + ROTATED_PORT_OFFSET), suite) : null;
        this.dataLink = link;
        this.controlLink = link;
        thread = new Thread(this::loop, "toy-responder");
        thread.setDaemon(true);
        thread.start();
    }

    private void loop()
    {
        try
        {
            while (running)
            {
                final Packet p = link.receive(ScriptedPeer.MILLI); // the pacer's tick
                if (null != p && (p.icrcValid || acceptBadIcrc) && p.tver() == 0 && p.wholeHeaders())
                {
                    handle(p);
                }
                tick();
            }
        }
        catch (final IOException e)
        {
            if (running)
            {
                throw new java.io.UncheckedIOException(e);
            }
        }
    }

    private void handle(final Packet p) throws IOException
    {
        if (p.opcode() == SprayWire.CONNECT)
        {
            onConnect(p);
            return;
        }
        final Connection c = connections.get(p.destQp());
        if (null == c || c.closed && p.opcode() != SprayWire.CLOSE)
        {
            return;
        }
        switch (p.opcode())
        {
            case SprayWire.WRITE, SprayWire.READ_REQUEST, SprayWire.SEND -> onData(c, p);
            case SprayWire.ACK ->
            {
                if (p.controlTagValid(c.receiveKey) && p.h8(0) == 0)
                {
                    c.lastHeard = System.nanoTime();
                    onAck(c, p);
                }
            }
            case SprayWire.PROBE ->
            {
                if (p.controlTagValid(c.receiveKey))
                {
                    c.lastHeard = System.nanoTime();
                    record(c, p.h8(0), p.psn());
                    ack(c, p.h8(0));
                }
            }
            case SprayWire.NACK ->
            {
                if (p.controlTagValid(c.receiveKey) && faults.contains(Fault.OBEY_ANY_NACK))
                {
                    c.closed = true; // the toy sends no message of its own: any NACK is unmatched
                }
            }
            case SprayWire.QUERY ->
            {
                if (p.controlTagValid(c.receiveKey) && p.wholeHeaders())
                {
                    c.lastHeard = System.nanoTime();
                    answerQuery(c, p.h16(2), p.h32(4));
                }
            }
            case SprayWire.CLOSE ->
            {
                if (p.controlTagValid(c.receiveKey))
                {
                    c.closed = true;
                    link.send(FrameBuilder.bth(SprayWire.CLOSE_ACK, c.peerCid, 0, false).u8(2).u8(0).u8(1).u8(1)
                        .u16(1024).u16(2).u8(0).u24(c.cid).u8(0).u24(0).u32(0).u64(p.h64(20)).u8(0).zeros(3)
                        .controlTag(c.sendKey).bytes(), false, UdpLink.NOT_ECT);
                }
            }
            default ->
            {
            }
        }
    }

    private void onConnect(final Packet p) throws IOException
    {
        final int initiatorCid = p.h24(9);
        final long token = p.h64(20);
        if (p.h8(0) != SprayWire.VERSION || p.length() < SprayWire.BTH_LENGTH + SprayWire.CONH_LENGTH + 64)
        {
            if (mayRespond())
            {
                link.send(conh(SprayWire.CONNECT_REJECT, initiatorCid, 0, 0, token, p.h8(0) != SprayWire.VERSION ?
                    SprayWire.REASON_VERSION_UNSUPPORTED : SprayWire.REASON_BAD_PARAMETERS).bytes(), false);
            }
            return;
        }
        final int end = p.length() - SprayWire.ICRC_LENGTH - p.padCount();
        if (null != psk && !faults.contains(Fault.IGNORE_PROOF) && !Arrays.equals(ConnectRequest.proof(psk, p.bytes,
            end), Arrays.copyOfRange(p.bytes, ConnectRequest.PROOF_AT, ConnectRequest.PROOF_AT + 16)))
        {
            return; // S12.2: dropped silently
        }
        if (!Arrays.equals(p.hBytes(SprayWire.CONH_LENGTH, 16), COOKIE))
        {
            if (mayRespond())
            {
                link.send(conh(SprayWire.CONNECT_RETRY, initiatorCid, 0, 0, token, 0).bytes(COOKIE).zeros(48).bytes(),
                    false);
            }
            return;
        }
        Connection c = byToken.get(token);
        if (null == c && open() >= CONNECTION_LIMIT && !faults.contains(Fault.NO_CONNECTION_LIMIT))
        {
            if (mayRespond())
            {
                link.send(conh(SprayWire.CONNECT_REJECT, initiatorCid, 0, 0, token, SprayWire.REASON_SOURCE_LIMIT)
                    .bytes(), false);
            }
            return;
        }
        if (null == c)
        {
            final HandshakeKeys keys = HandshakeKeys.generate();
            final byte[] initiatorPublic = p.hBytes(SprayWire.CONH_LENGTH + 16, 32);
            c = new Connection();
            c.cid = nextCid++;
            c.peerCid = initiatorCid;
            final long[][] k = HandshakeKeys.derive(keys.shared(initiatorPublic), initiatorPublic, keys.publicKey,
                initiatorCid, c.cid, token, psk);
            c.receiveKey = k[0];
            c.sendKey = k[1];
            final int paths = Math.min(p.h8(2), 2);
            c.cumulative = new int[paths];
            c.above = new BitSet[paths];
            c.ackSequence = new int[paths];
            c.ceSinceAck = new int[paths];
            c.mtu = Math.min(1024, p.h16(4));
            for (int i = 0; i < paths; i++)
            {
                c.cumulative[i] = (p.h24(13) + i * SprayWire.PATH_PSN_STRIDE) & SprayWire.PSN_MASK;
                c.above[i] = new BitSet();
            }
            c.nextPsn = 1000;
            c.connectAck = conh(SprayWire.CONNECT_ACK, initiatorCid, paths, c.cid, token, 0).bytes(new byte[16])
                .bytes(keys.publicKey).zeros(16).bytes();
            c.connectAck[SprayWire.BTH_LENGTH + 13] = 0; // initial PSN 1000 (below)
            c.connectAck[SprayWire.BTH_LENGTH + 14] = (byte)(1000 >> 8);
            c.connectAck[SprayWire.BTH_LENGTH + 15] = (byte)1000;
            if (!faults.contains(Fault.NO_ADVERTISED_LIMITS))
            {
                // S10.2-3: the window is kept (S10.2-1, withinWindow); the READ limit is not (no check judges it)
                c.connectAck[SprayWire.BTH_LENGTH + SprayWire.CONH_READS] = (byte)ADVERTISED_READS;
                c.connectAck[SprayWire.BTH_LENGTH + SprayWire.CONH_WINDOW] = (byte)(ADVERTISED_WINDOW >> 8);
                c.connectAck[SprayWire.BTH_LENGTH + SprayWire.CONH_WINDOW + 1] = (byte)ADVERTISED_WINDOW;
            }
            if (null != psk && !faults.contains(Fault.NO_ACK_PROOF))
            {
                System.arraycopy(ConnectRequest.proof(psk, c.connectAck, c.connectAck.length), 0, c.connectAck,
                    ConnectRequest.PROOF_AT, 16);
            }
            if (faults.contains(Fault.WRONG_INITIAL_PSN))
            {
                c.nextPsn++;
            }
            connections.put(c.cid, c);
            byToken.put(token, c);
        }
        link.send(c.connectAck, false, UdpLink.NOT_ECT, faults.contains(Fault.NONZERO_IDENTIFICATION) ? 1 : 0);
    }

    private static FrameBuilder conh(final int opcode, final int destQp, final int paths, final int cid,
        final long token, final int reason)
    {
        return FrameBuilder.bth(opcode, destQp, 0, false).u8(SprayWire.VERSION).u8(0).u8(paths).u8(1).u16(1024)
            .u16(2).u8(0).u24(cid).u8(0).u24(0).u32(10_000).u64(token).u8(reason).zeros(3).u64(0);
    }

    private void onData(final Connection c, final Packet p) throws IOException
    {
        final int path = p.h8(0);
        if (path >= c.cumulative.length)
        {
            return;
        }
        final boolean reth = p.opcode() == SprayWire.WRITE || p.opcode() == SprayWire.READ_REQUEST; // S12.4's w2, w3
        final long base = reth ? p.h64(SprayWire.SETH_LENGTH) - Integer.toUnsignedLong(p.h32(8)) : 0;
        final long expected = SprayWire.messageTag(c.receiveKey, p.opcode(),
            faults.contains(Fault.ATTEMPT_OUTSIDE_TAG) ? 0 : SprayWire.attempt(p), p.h16(2), p.h32(4), p.h32(12),
            p.h32(16), base, reth ? p.h32(SprayWire.SETH_LENGTH + 8) : 0, c.cid, 0);
        if (expected != p.h64(20) && !faults.contains(Fault.IGNORE_MESSAGE_TAG))
        {
            return;
        }
        c.lastHeard = System.nanoTime();
        final boolean fresh = record(c, path, p.psn());
        if (fresh && p.ecn() == UdpLink.CE && !faults.contains(Fault.NO_CE_ECHO))
        {
            c.ceSinceAck[path]++;
        }
        final long va = p.h64(SprayWire.SETH_LENGTH) - REGION_ADDRESS;
        if (p.opcode() == SprayWire.WRITE && fresh && !admit(c, p))
        {
            ack(c, path); // S9.3.1-1: a refused packet is acknowledged all the same, after its NACK
            return;
        }
        if (p.opcode() == SprayWire.WRITE && fresh && !withinWindow(c, p))
        {
            ack(c, path); // S10.2-1: refused for want of a record, but it arrived
            return;
        }
        if (p.opcode() == SprayWire.SEND && fresh)
        {
            refuseSend(c, p);
        }
        if (p.opcode() == SprayWire.WRITE && fresh)
        {
            final byte[] payload = p.payload();
            if (va >= 0 && va + payload.length <= region.length)
            {
                System.arraycopy(payload, 0, region, (int)va, payload.length);
            }
        }
        ack(c, path);
        if (p.opcode() == SprayWire.READ_REQUEST && fresh)
        {
            final int length = p.h32(12);
            final long tag = SprayWire.messageTag(c.sendKey, SprayWire.READ_RESPONSE, 0, p.h16(2), p.h32(4), length, 0, 0,
                0, c.peerCid, 0);
            for (int offset = 0; offset < length || offset == 0; offset += c.mtu)
            {
                final int n = Math.min(c.mtu, length - offset);
                final byte[] payload = va >= 0 && va + length <= region.length ?
                    Arrays.copyOfRange(region, (int)va + offset, (int)va + offset + n) : new byte[n];
                final byte[] response = FrameBuilder.bth(SprayWire.READ_RESPONSE, c.peerCid, c.nextPsn, false).u8(0)
                    .u8((offset + n >= length ? SprayWire.SETH_LAST : 0) |
                        (faults.contains(Fault.RESERVED_FLAG_SET) ? 0x80 : 0)).u16(p.h16(2)).u32(p.h32(4)).u32(offset)
                    .u32(length).u32(0).u64(tag).bytes(payload).bytes();
                c.held.put(c.nextPsn++, response);
                if (n <= 0)
                {
                    break;
                }
            }
            c.answerAt = System.nanoTime() + SLOW_NANOS;
            sendWithinWindow(c);
        }
    }

    /** @return whether the PSN was new on the path. */
    private static boolean record(final Connection c, final int path, final int psn)
    {
        final int d = SprayWire.psnDistance(c.cumulative[path], psn);
        if (d < 0 || d >= SprayWire.SACK_BITS || c.above[path].get(d))
        {
            return false;
        }
        c.above[path].set(d);
        int advance = 0;
        while (c.above[path].get(advance))
        {
            advance++;
        }
        c.above[path] = c.above[path].get(advance, SprayWire.SACK_BITS + advance);
        c.cumulative[path] = (c.cumulative[path] + advance) & SprayWire.PSN_MASK;
        return true;
    }

    private void ack(final Connection c, final int path) throws IOException
    {
        final byte[] sack = new byte[32];
        if (!omitSack)
        {
            for (int i = c.above[path].nextSetBit(1); i >= 0 && i < SprayWire.SACK_BITS; i = c.above[path].nextSetBit(i + 1))
            {
                sack[i >> 3] |= (byte)(0x80 >>> (i & 7));
            }
        }
        final int ce = c.ceSinceAck[path];
        c.ceSinceAck[path] = 0;
        (0 == path ? controlLink : link).send(FrameBuilder.bth(SprayWire.ACK, c.peerCid, 0, false).u8(path).u8(ce > 0 ? SprayWire.SACKH_ECE : 0)
            .u16(ce).u8(faults.contains(Fault.RESERVED_ACK_FIELD) ? 0x5A : 0).u24(c.cumulative[path]).bytes(sack).u32(0).u32(++c.ackSequence[path]).u32(c.refusals)
            .controlTag(c.sendKey).bytes(), false, UdpLink.NOT_ECT);
        c.lastSent = System.nanoTime();
    }

    /**
     * S9.3-2, S9.3-3: the toy posts no receive, so every SEND is refused RNR, an attempt at a time: the copies of a
     * refused attempt keep its refusal, a packet of a later attempt is refused as a new attempt with a new number,
     * one of an earlier attempt draws nothing.
     */
    private void refuseSend(final Connection c, final Packet p) throws IOException
    {
        final int stream = p.h16(2);
        final int msn = p.h32(4);
        final int attempt = (p.h8(1) >>> SprayWire.SETH_ATTEMPT_SHIFT) & SprayWire.SETH_ATTEMPT_MASK;
        final int packets = Math.max(1, (p.h32(12) + c.mtu - 1) / c.mtu);
        final int[] state = c.rnr.computeIfAbsent((long)stream << 32 | (msn & 0xFFFF_FFFFL), k -> new int[]{attempt, 0, 0});
        final int ahead = (attempt - state[0]) & SprayWire.SETH_ATTEMPT_MASK;
        if (faults.contains(Fault.RNR_BY_COUNT) ? state[1] == 0 || state[2] >= packets : state[1] == 0 || (ahead > 0 && ahead < 4))
        {
            state[0] = attempt;
            state[1] = ++c.refusals;
            state[2] = 0;
        }
        else if (ahead >= 4 && !faults.contains(Fault.RNR_BY_COUNT))
        {
            return; // a late copy of an attempt the sender has finished
        }
        state[2]++;
        link.send(FrameBuilder.bth(SprayWire.NACK, c.peerCid, 0, false).u8(SprayWire.SYNDROME_RNR).u8(0)
            .u16(stream).u32(msn).u32(RNR_TIMER_MICROS).u32(state[1]).controlTag(c.sendKey).bytes(), false,
            UdpLink.NOT_ECT);
    }

    /**
     * S9.3, S9.4: a WRITE with a wrong R_Key is refused with a NACK and puts its stream in error; later messages of
     * an errored stream are not placed.
     *
     * @return whether the packet may be placed.
     */
    private boolean admit(final Connection c, final Packet p) throws IOException
    {
        final int stream = p.h16(2);
        final int msn = p.h32(4);
        if (p.h32(SprayWire.SETH_LENGTH + 8) == RKEY)
        {
            return !(faults.contains(Fault.ERROR_SPREADS) && refusedAny) && !(stream < c.streamErrored.length &&
                c.streamErrored[stream] && msn - c.erroredMsn[stream] > 0);
        }
        refusedAny = true;
        refuseAccess(c, stream, msn, ++c.refusals);
        if (stream < c.streamErrored.length && !faults.contains(Fault.NO_STREAM_ERROR))
        {
            c.streamErrored[stream] = true;
            c.erroredMsn[stream] = msn;
            c.erroredRefusal[stream] = c.refusals;
        }
        return false;
    }

    /**
     * S10.2-1, S10.2-2: a WRITE begun while {@link #ADVERTISED_WINDOW} others hold a record is refused, RNR
     * NO_RESOURCES, and so is every later packet of it (its retries too, with the same number: the toy gives no
     * record back), each NACK within the response bucket that RETRYs and REJECTs share.
     *
     * @return whether the packet's WRITE holds a record (it may be placed).
     */
    private boolean withinWindow(final Connection c, final Packet p) throws IOException
    {
        final int stream = p.h16(2);
        final int msn = p.h32(4);
        final long key = (long)stream << 32 | (msn & 0xFFFF_FFFFL);
        Integer refusal = c.refusedForResources.get(key);
        if (null == refusal)
        {
            BitSet arrived = c.openWrites.get(key);
            if (null == arrived && (c.openWrites.size() < ADVERTISED_WINDOW || faults.contains(Fault.IGNORE_WINDOW) ||
                faults.contains(Fault.NO_ADVERTISED_LIMITS)))
            {
                arrived = new BitSet();
                c.openWrites.put(key, arrived);
            }
            if (null != arrived)
            {
                arrived.set(p.h32(8) / c.mtu);
                if (arrived.cardinality() >= Math.max(1, (p.h32(12) + c.mtu - 1) / c.mtu))
                {
                    c.openWrites.remove(key);
                }
                return true;
            }
            refusal = ++c.refusals;
            c.refusedForResources.put(key, refusal);
        }
        if (faults.contains(Fault.NO_RESOURCES_RATE_LIMIT) || mayRespond())
        {
            link.send(FrameBuilder.bth(SprayWire.NACK, c.peerCid, 0, false).u8(SprayWire.SYNDROME_RNR)
                .u8(SprayWire.RNR_REASON_NO_RESOURCES).u16(stream).u32(msn).u32(RNR_TIMER_MICROS).u32(refusal)
                .controlTag(c.sendKey).bytes(), false, UdpLink.NOT_ECT);
        }
        return false;
    }

    private void refuseAccess(final Connection c, final int stream, final int msn, final int refusal) throws IOException
    {
        link.send(FrameBuilder.bth(SprayWire.NACK, c.peerCid, 0, false).u8(SprayWire.SYNDROME_REMOTE_ACCESS_ERROR).u8(0)
            .u16(stream).u32(msn).u32(0).u32(refusal).controlTag(c.sendKey).bytes(), false, UdpLink.NOT_ECT);
    }

    /** S9.3.1-2: a QUERY of a message of an errored stream is answered with the refusal's NACK again. */
    private void answerQuery(final Connection c, final int stream, final int msn) throws IOException
    {
        if (faults.contains(Fault.NO_QUERY_ANSWER) || stream >= c.streamErrored.length || !c.streamErrored[stream] ||
            msn - c.erroredMsn[stream] < 0)
        {
            return; // the toy keeps no other fate of a message to tell
        }
        final boolean first = !c.queryAnswered;
        c.queryAnswered = true;
        if (!(first && faults.contains(Fault.LOSE_FIRST_QUERY_ANSWER)))
        {
            refuseAccess(c, stream, c.erroredMsn[stream], c.erroredRefusal[stream]);
        }
    }

    /**
     * An ACK of the toy's path 0: a stale one (S5.1-2) is ignored; what it acknowledges is forgotten, and what it
     * shows missing below the highest PSN acknowledged is sent again with RETRANSMIT (S6.5, S6.6).
     */
    private void onAck(final Connection c, final Packet p) throws IOException
    {
        final int sequence = p.h32(44);
        if (sequence - c.ackTaken <= 0 && !faults.contains(Fault.ACCEPT_STALE_ACK))
        {
            return;
        }
        c.ackTaken = Math.max(c.ackTaken, sequence);
        c.rateHintMbps = p.h32(40);
        c.answerAt = System.nanoTime() + SLOW_NANOS;
        c.lastAckHeard = System.nanoTime();
        final int cumulative = p.h24(5);
        final int outstanding = c.unacknowledged.size();
        final long now = System.nanoTime();
        for (final int psn : c.unacknowledged.headMap(cumulative).keySet())
        {
            sampleRtt(c, psn, now);
        }
        c.unacknowledged.headMap(cumulative).clear();
        int highest = cumulative - 1;
        for (int i = 1; i < SprayWire.SACK_BITS; i++)
        {
            if (ScriptedPeer.sackBit(p, i))
            {
                if (null != c.unacknowledged.remove(cumulative + i))
                {
                    sampleRtt(c, cumulative + i, now);
                }
                highest = cumulative + i;
            }
        }
        endOfRound(c, outstanding - c.unacknowledged.size(), p.h16(2));
        for (final Map.Entry<Integer, byte[]> lost : c.unacknowledged.headMap(highest).entrySet())
        {
            if (!c.resent.add(lost.getKey()))
            {
                continue;
            }
            if (faults.contains(Fault.REPATH) && sampleLost.add(lost.getKey()) && sampleSent >= 32 &&
                sampleLost.size() * 20 > sampleSent)
            {
                // S7.3: a new route for data and ACKs alike
                dataLink = controlLink = dataLink == link ? rotatedLink : link;
                sampleSent = 0;
                sampleLost.clear();
            }
            final byte[] again = lost.getValue().clone();
            again[SprayWire.BTH_LENGTH + 1] |= SprayWire.SETH_RETRANSMIT;
            sendData(again);
        }
        sendWithinWindow(c);
    }

    /**
     * {@link Fault#REPATH_RTT}: an RTT sample of a packet acknowledged without having gone again (Karn), and the move
     * of path 0 when its smoothed RTT exceeds 3 x the lowest since its last move.
     */
    private void sampleRtt(final Connection c, final int psn, final long now)
    {
        final Long sent = c.sentAt.remove(psn);
        if (!faults.contains(Fault.REPATH_RTT) || null == sent || c.resent.contains(psn))
        {
            return;
        }
        final long rtt = now - sent;
        c.srttNanos = 0 == c.rttSamples ? rtt : c.srttNanos + (rtt - c.srttNanos) / 8;
        c.rttSamples++;
        if (c.rttSamples >= 8)
        {
            c.lowestSrttNanos = Math.min(c.lowestSrttNanos, c.srttNanos);
        }
        if (c.rttSamples >= 32 && c.srttNanos > 3 * c.lowestSrttNanos)
        {
            dataLink = controlLink = dataLink == link ? rotatedLink : link;
            c.rttSamples = 0;
            c.lowestSrttNanos = Long.MAX_VALUE;
        }
    }

    /**
     * S8.2: a round ends when its ACKs acknowledged a window of packets; with CE echoed in it the window shrinks by
     * alpha / 2 (alpha the smoothed fraction of marked packets), else it grows by one, up to 256.
     */
    private void endOfRound(final Connection c, final int acknowledged, final int marked)
    {
        c.roundAcknowledged += acknowledged;
        c.roundMarked += marked;
        if (c.roundAcknowledged < (int)c.window)
        {
            return;
        }
        if (c.roundMarked > 0 && !faults.contains(Fault.IGNORE_CE))
        {
            c.alpha = (1 - GAIN) * c.alpha + GAIN * Math.min(1.0, (double)c.roundMarked / c.roundAcknowledged);
            c.window = Math.max(1, c.window * (1 - c.alpha / 2));
        }
        else
        {
            c.window = Math.min(SprayWire.SACK_BITS, c.window + 1);
        }
        c.roundAcknowledged = 0;
        c.roundMarked = 0;
    }

    /**
     * Sends the held READ_RESPONSEs the window has room for (all of them with {@link Fault#NO_WINDOW}) and the
     * pacer lets go: with a rateHint, a packet's payload plus 128 B at that rate after the one before, no burst.
     */
    private void sendWithinWindow(final Connection c) throws IOException
    {
        final int window = faults.contains(Fault.NO_WINDOW) ? Integer.MAX_VALUE : (int)c.window;
        final boolean paced = c.rateHintMbps > 0 && !faults.contains(Fault.IGNORE_RATE_HINT);
        final long now = System.nanoTime();
        if (faults.contains(Fault.SLOW) && now < c.answerAt)
        {
            return;
        }
        while (!c.held.isEmpty() && c.unacknowledged.size() < window && (!paced || now >= c.nextSendAt))
        {
            if ((faults.contains(Fault.ROTATE_DRAINED) || faults.contains(Fault.ROTATE_IN_FLIGHT)) &&
                portPackets >= ROTATE_PACKETS)
            {
                if (faults.contains(Fault.ROTATE_DRAINED) && !c.unacknowledged.isEmpty())
                {
                    break; // due to rotate: wait for the path to drain
                }
                dataLink = dataLink == link ? rotatedLink : link;
                portPackets = 0;
            }
            portPackets++;
            sampleSent++;
            final Map.Entry<Integer, byte[]> next = c.held.pollFirstEntry();
            if (paced)
            {
                c.nextSendAt = Math.max(c.nextSendAt, now) +
                    (next.getValue().length - SprayWire.BTH_LENGTH - SprayWire.SETH_LENGTH + 128) * 8_000L / c.rateHintMbps;
            }
            c.unacknowledged.put(next.getKey(), next.getValue());
            if (faults.contains(Fault.REPATH_RTT))
            {
                c.sentAt.put(next.getKey(), System.nanoTime());
            }
            sendData(next.getValue());
            c.lastSent = System.nanoTime();
        }
    }

    private void sendData(final byte[] body) throws IOException
    {
        dataLink.send(body, false, faults.contains(Fault.NOT_ECT_DATA) ? UdpLink.NOT_ECT : UdpLink.ECT_0);
    }

    /** @return whether the response bucket (S12.9) lets one more RETRY or REJECT go. */
    private boolean mayRespond()
    {
        if (faults.contains(Fault.NO_RESPONSE_RATE_LIMIT))
        {
            return true;
        }
        final long now = System.nanoTime();
        responseTokens = Math.min(RESPONSE_BURST, responseTokens + RESPONSE_RATE * (now - responseRefilled) / 1e9);
        responseRefilled = now;
        if (responseTokens < 1)
        {
            return false;
        }
        responseTokens--;
        return true;
    }

    /** Keepalives after a third of the idle timeout without sending; idle connections closed (S12.10). */
    private void tick() throws IOException
    {
        final long now = System.nanoTime();
        for (final Connection c : connections.values())
        {
            if (c.closed)
            {
                continue;
            }
            sendWithinWindow(c);
            if (now - c.lastHeard > IDLE_TIMEOUT_NANOS && !faults.contains(Fault.NO_IDLE_CLOSE))
            {
                c.closed = true;
            }
            else if (!c.unacknowledged.isEmpty() && now - c.lastAckHeard > RETRANSMIT_TIMEOUT_NANOS)
            {
                // S6.7-1 by a timeout: the oldest packet not acknowledged goes again
                c.lastAckHeard = now;
                final byte[] again = c.unacknowledged.firstEntry().getValue().clone();
                again[SprayWire.BTH_LENGTH + 1] |= SprayWire.SETH_RETRANSMIT;
                sendData(again);
            }
            else if (now - c.lastSent > IDLE_TIMEOUT_NANOS / 3 && !faults.contains(Fault.NO_KEEPALIVE))
            {
                ack(c, 0);
            }
        }
    }

    private int open()
    {
        int open = 0;
        for (final Connection c : connections.values())
        {
            open += c.closed ? 0 : 1;
        }
        return open;
    }

    @Override
    public void close() throws Exception
    {
        running = false;
        thread.join(2_000);
        link.close();
        if (null != rotatedLink)
        {
            rotatedLink.close();
        }
    }
}

