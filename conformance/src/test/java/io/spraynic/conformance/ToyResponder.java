package io.spraynic.conformance;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;

/**
 * A deliberately small spray responder for the suite's self-test, written in the test module from the same
 * document: the handshake with a fixed cookie (and a PSK proof when given a key; the CONNECT's parameters checked
 * before the cookie, S9.1 step 2), RETRYs and REJECTs within a small response bucket, malformed pads dropped (S3.1-3),
 * RESYNC probes within S12.6's bound taken (S5.2-2), data beyond the MSN window dropped (S12.7), WRITEs placed into a heap region within the window it advertises (a wrong R_Key refused
 * with a NACK that puts its stream in error, a WRITE beyond the window refused RNR NO_RESOURCES within the same
 * bucket: {@link ToyRefusals}), READs answered (sprayed over its paths, each within a window that grows by one packet
 * a round and shrinks on CE echoes as S8.2 says, paced at the rateHint of the last ACK as S8.4 says; what an ACK shows
 * missing sent again, stale ACKs ignored, the oldest packet again after an RTO that backs off, a failed path's packets
 * moved to the others, a lossy path moved to another source port: {@link ToyReadSender}), probes and data
 * acknowledged at once with their CE marks echoed, CLOSE answered, a per-source connection limit, keepalives and an
 * idle timeout. Each {@link Fault} makes it non-compliant in one way, so the self-test can show the suite catches
 * exactly that. It runs on its own thread until closed.
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
         * S7.3-1: a path is never moved for loss. Without it, once a path's data packets since its last move lose more
         * than 5 % (32 at least) while the median of the paths' is below half of that, its data and control packets
         * move to the next of the toy's spare ports, at that loss.
         */
        NO_REPATH,
        /**
         * S7.3-2: no re-pathing on RTT (the toy before session 18). Without this fault, at the end of each 32 RTT
         * samples of a path, their median above 3 x the median round trip of the packets the other paths sent over
         * the same time, two rounds in a row, moves its data and control packets to the next of the toy's spare
         * ports; the other paths stay.
         */
        NO_REPATH_RTT,
        /**
         * S6.5-2: a packet left on a path's old route is taken as lost as soon as an ACK acknowledges a PSN of the new
         * route above it (the toy before session 22). Without this fault it is held until an old-route PSN above it is
         * acknowledged or the old route's estimate has passed (a copy sent on the old route is not held).
         */
        NO_LEFT_BEHIND_HOLD,
        /** S7.2-1: a READ's responses go on one path at a time (the first that has not failed), never sprayed. */
        NO_SPRAY,
        /** S2.5-2: READ responses go with SETH flag bit 7, which is reserved, set. */
        RESERVED_FLAG_SET,
        /**
         * S9.3-3: an RNR refusal ends once as many packets of the message arrived as it has, copies counted, and the
         * next packet starts a new attempt whatever its SETH attempt (draft 0.6's SprayNIC).
         */
        RNR_BY_COUNT,
        /** S2.5-2: ACKs go with SACKH flag bit 6, which is reserved, set. */
        RESERVED_ACK_FIELD,
        /** S5.1-3: ACKs report no duplicates (SACKH {@code duplicates} 0: a receiver of wire version 2 before it). */
        NO_DUPLICATE_REPORT,
        /** S12.4-1: data packets' message tags are checked as if every packet were of attempt 0 (draft 0.7's tag). */
        ATTEMPT_OUTSIDE_TAG,
        /** S9.3.1-2: a QUERY is never answered. */
        NO_QUERY_ANSWER,
        /** S9.3.1-2: a QUERY of a message not refused is answered ACCEPTED, whether or not it was ever received. */
        QUERY_ALWAYS_ACCEPTED,
        /** Not a fault: the answer to a connection's first QUERY is lost, as on a lossy link. */
        LOSE_FIRST_QUERY_ANSWER,
        /** S10.2-3: the CONNECT_ACK advertises no window and no READ limit (CONH window and reads 0). */
        NO_ADVERTISED_LIMITS,
        /** S10.2-1: WRITEs beyond the advertised window are placed, never refused (it advertises a window it lacks). */
        IGNORE_WINDOW,
        /** S10.2-2: every packet of a WRITE refused for want of records draws its NACK, without a response bucket. */
        NO_RESOURCES_RATE_LIMIT,
        /** S9.1-2: the cookie is checked before the CONNECT's parameters, so a bad one draws a RETRY (the toy before session 16). */
        COOKIE_FIRST,
        /** S3.1-3: a packet whose payload plus pad is not a multiple of 4 bytes is taken. */
        IGNORE_PAD,
        /** S5.2-2: a RESYNC probe is taken as a plain probe (the toy before session 16). */
        NO_RESYNC,
        /** S12.6-1: every RESYNC probe is taken, outside the bound too: the path then expects the probe's BTH PSN. */
        UNBOUNDED_RESYNC,
        /** S12.7-1: a data packet creates message state whatever its MSN. */
        IGNORE_MSN_WINDOW,
        /** S7.4-1: a path that times out keeps its packets, however often (the toy before session 16). */
        NO_FAILOVER,
        /** S7.5-1: a failed path is never probed, so never used again. */
        NO_PROBE_BACK,
        /** S6.8-6: the RTO never backs off: every timeout of a packet comes as long after the one before. */
        NO_BACKOFF,
        /** S6.8-1: a report of duplicates that shows a timeout spurious is ignored, its backoff kept. */
        NO_SPURIOUS_UNDO,
        /**
         * S6.8-4 (and S6.8-6): the RTO is {@link #RTO_MIN_NANOS} whatever the path's srtt, backed off or not: an rtoMax
         * of that clamps it below the path's round trip (the toy before session 17: one fixed timer).
         */
        RTO_CAPPED,
        /**
         * Not a fault: the toy learns a late margin (S6.8.1), as a target with {@code lateMarginMax} above 0 does: each
         * timeout a report of duplicates shows spurious (S6.8-1 c) at least doubles it, from rtoSlack, and widens it to
         * 1.25 x how late its packet was, up to {@link #LATE_MARGIN_MAX_NANOS}; it is in each path's RTO but that of a
         * path a sibling shows silent alone (S6.8-3). Without it the toy learns none ({@code lateMarginMax} 0).
         */
        LATE_MARGIN,
        /** S6.8-2: with {@link #LATE_MARGIN}, a spurious timeout only doubles the margin, however late its packet was. */
        MARGIN_DOUBLED_ONLY,
        /** S6.8-3: with {@link #LATE_MARGIN}, the margin stays in every RTO, a path silent alone included. */
        MARGIN_KEPT_ALONE,
        /**
         * S9.3.2-1: a READ response under way when the region is deregistered goes on as if nothing happened (the toy
         * reads a READ's bytes when the request comes): no NACK, no ACK, the rest of its data sent.
         */
        READ_ON_AFTER_DEREGISTRATION,
        /**
         * S2.6-1 as a silence shows it: the toy answers nothing more, ever, once it drops a packet for a wrong ICRC (a
         * target that crashes on what it should only drop).
         */
        CRASH_ON_BAD_ICRC,
        /** S12.2-1 as a silence shows it: the toy answers nothing more once it drops a CONNECT whose proof fails. */
        CRASH_ON_BAD_PROOF,
        /** S12.10-2 as a silence shows it: the toy answers nothing more once it closes an idle connection. */
        CRASH_ON_IDLE_CLOSE
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
    /**
     * S12.7: its MSN window, the pool of inbound message records: the {@link #ADVERTISED_WINDOW} it places, the rest
     * holding refusals (S10.2-1). As SprayNIC's default, so that the suite's dropped messages, which never complete,
     * do not fill it in a run.
     */
    static final int MSN_WINDOW = 1024;
    /** S9.1-2: the toy's planes (every CONNECT must name as many), and the address list's entries (S5.5). */
    static final int PLANES = 1;
    private static final int FLAG_ADDRESSES = 1;
    private static final int ADDRESS_ENTRY_LENGTH = 24;
    /**
     * S6.8: the RTO's bounds and margin (rtoMin, rtoMax, rtoSlack; RFC 6298 gains, see {@link ToyReadSender#rtoNanos}).
     * rtoMin is long, so that the suite's short silences elsewhere (4 ms quiet, ACKs 16 ms late) do not trip it.
     */
    static final long RTO_MIN_NANOS = 100 * ScriptedPeer.MILLI;
    static final long RTO_MAX_NANOS = 1_000 * ScriptedPeer.MILLI;
    static final long RTO_SLACK_NANOS = 5 * ScriptedPeer.MILLI;
    /** S6.8.1: lateMarginMax, with {@link Fault#LATE_MARGIN}. */
    static final long LATE_MARGIN_MAX_NANOS = 2_000 * ScriptedPeer.MILLI;
    /** S7.4: consecutive timeouts with no ACK after which the path fails (failAfterTimeouts). */
    static final int FAIL_AFTER_TIMEOUTS = 3;
    /** S7.5: how often a failed path is probed with RESYNC (probeInterval; long beside S11's 1 ms: a toy's). */
    static final long PROBE_INTERVAL_NANOS = 50 * ScriptedPeer.MILLI;
    /**
     * The toy's response bucket (S12.9), as CI gives SprayNIC's: small, so that the suite's floods (S12.9-2, S10.2-2)
     * outrun it even on a loaded host.
     */
    static final double RESPONSE_RATE = 500;
    static final int RESPONSE_BURST = 32;
    /** How late {@link Fault#SLOW} answers: above the window check's quiet of 4 ms. */
    static final long SLOW_NANOS = 10 * ScriptedPeer.MILLI;
    /** S8.2: the window a path starts with. */
    static final int INITIAL_WINDOW = 16;
    /** The run of data packets on one source port before the toy rotates (with a ROTATE_ fault). */
    static final int ROTATE_PACKETS = 8;
    /** The toy's other source ports: its own plus this, plus 100 for each after the first (see spareLinks). */
    static final int ROTATED_PORT_OFFSET = 10_000;
    static final int SPARE_PORTS = 8;
    private static final byte[] COOKIE = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

    final java.util.Set<Fault> faults;
    final boolean acceptBadIcrc;
    final boolean omitSack;
    private final byte[] psk;
    final byte[] region = new byte[(int)ConformanceSuite.REGION_BYTES];
    private final UdpLink link;
    /** S5.5: the IP version of the toy's address, the only one an address list may name. */
    private final boolean ipv6;
    /**
     * The toy's other sockets: the source ports a path re-paths to (S7.3), each move to the next in turn, so that a
     * path moved again and again (a steady loss, a steady delay) does not come back to its old port soon; the first is
     * also the port a rotating toy (S7.7) alternates to.
     */
    private final UdpLink[] spareLinks = new UdpLink[SPARE_PORTS];
    private final ToyReadSender sender;
    private final ToyRefusals refusals;
    private final Thread thread;
    private volatile boolean running = true;
    /** S9.3.2: asked by {@link #deregisterRegion} on the suite's thread, done on the toy's. */
    private volatile boolean deregisterAsked;
    private final java.util.concurrent.CountDownLatch deregistered = new java.util.concurrent.CountDownLatch(1);
    private final Map<Integer, ToyConnection> connections = new HashMap<>(); // by this end's CID
    private final Map<Long, ToyConnection> byToken = new HashMap<>();
    private int nextCid = 0x100;
    private double responseTokens = RESPONSE_BURST;
    private long responseRefilled = System.nanoTime();
    /** A crash fault's trigger came ({@link Fault#CRASH_ON_BAD_ICRC}): nothing more is answered. */
    private boolean crashed;


    ToyResponder(final InetSocketAddress self, final InetSocketAddress suite, final byte[] psk,
        final java.util.Set<Fault> faults) throws IOException
    {
        this.faults = faults.isEmpty() ? java.util.EnumSet.noneOf(Fault.class) : java.util.EnumSet.copyOf(faults);
        this.acceptBadIcrc = faults.contains(Fault.ACCEPT_BAD_ICRC);
        this.omitSack = faults.contains(Fault.OMIT_SACK);
        this.psk = psk;
        this.link = new UdpLink(self, suite);
        this.ipv6 = self.getAddress() instanceof java.net.Inet6Address;
        for (int k = 0; k < SPARE_PORTS; k++)
        {
            spareLinks[k] = new UdpLink(new InetSocketAddress(self.getAddress(), self.getPort() + ROTATED_PORT_OFFSET +
                100 * k), suite);
        }
        this.sender = new ToyReadSender(this.faults, link, spareLinks);
        this.refusals = new ToyRefusals(link, this.faults, this::mayRespond);
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
                if (crashed)
                {
                    continue;
                }
                if (null != p && !p.icrcValid && !acceptBadIcrc)
                {
                    crashed = faults.contains(Fault.CRASH_ON_BAD_ICRC);
                }
                if (null != p && (p.icrcValid || acceptBadIcrc) && p.tver() == 0 && p.wholeHeaders() &&
                    (wellPadded(p) || faults.contains(Fault.IGNORE_PAD)))
                {
                    handle(p);
                }
                tick();
                if (deregisterAsked && deregistered.getCount() > 0)
                {
                    onRegionDeregistered();
                    deregistered.countDown();
                }
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
        final ToyConnection c = connections.get(p.destQp());
        if (null == c || c.closed && p.opcode() != SprayWire.CLOSE)
        {
            return;
        }
        switch (p.opcode())
        {
            case SprayWire.WRITE, SprayWire.READ_REQUEST, SprayWire.SEND -> onData(c, p);
            case SprayWire.ACK ->
            {
                if (p.controlTagValid(c.receiveKey))
                {
                    c.lastHeard = System.nanoTime();
                    sender.onAck(c, p);
                }
            }
            case SprayWire.PROBE ->
            {
                final int path = p.h8(0);
                if (p.controlTagValid(c.receiveKey) && path < c.cumulative.length &&
                    ((p.h8(1) & SprayWire.PRBH_RESYNC) == 0 || faults.contains(Fault.NO_RESYNC) ||
                    resync(c, path, p.psn(), p.h24(5), faults.contains(Fault.UNBOUNDED_RESYNC))))
                {
                    c.lastHeard = System.nanoTime();
                    record(c, path, p.psn());
                    ack(c, path);
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
                    refusals.answerQuery(c, p.h16(2), p.h32(4));
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
            crashed = faults.contains(Fault.CRASH_ON_BAD_PROOF);
            return; // S12.2: dropped silently
        }
        if (!faults.contains(Fault.COOKIE_FIRST) && !validParameters(p, end))
        {
            if (mayRespond())
            {
                link.send(conh(SprayWire.CONNECT_REJECT, initiatorCid, 0, 0, token, SprayWire.REASON_BAD_PARAMETERS)
                    .bytes(), false);
            }
            return; // S9.1-2: step 2 comes before the cookie (step 3), and keeps no state
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
        ToyConnection c = byToken.get(token);
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
            c = new ToyConnection();
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
            c.duplicatesSinceAck = new int[paths];
            c.mtu = Math.min(1024, p.h16(4));
            for (int i = 0; i < paths; i++)
            {
                c.cumulative[i] = (p.h24(13) + i * SprayWire.PATH_PSN_STRIDE) & SprayWire.PSN_MASK;
                c.above[i] = new BitSet();
            }
            c.ackTaken = new int[paths];
            // S5.4-1: path i's PSN space from 1000 + i * 2^18 (one above with WRONG_INITIAL_PSN)
            sender.open(c, paths, faults.contains(Fault.WRONG_INITIAL_PSN) ? 1001 : 1000);
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
            connections.put(c.cid, c);
            byToken.put(token, c);
        }
        link.send(c.connectAck, false, UdpLink.NOT_ECT, faults.contains(Fault.NONZERO_IDENTIFICATION) ? 1 : 0);
    }

    /**
     * S9.1 step 2 after the version, the block and the proof: DestQP 0, senderCid not 0, planes the toy's own
     * ({@link #PLANES}), paths 1..64, an mtu of S4.3, no flag but ADDRESSES, and with ADDRESSES (S5.5) an entry per
     * plane, no reserved entry flag, the toy's IP version, a non-zero address. Written here, not taken from the
     * suite's checks, so that the two do not share a mistake.
     */
    private boolean validParameters(final Packet p, final int end)
    {
        final int flags = p.h8(1);
        final int paths = p.h8(2);
        final int mtu = p.h16(4);
        if (p.destQp() != 0 || p.h24(9) == 0 || p.h8(3) != PLANES || paths < 1 || paths > 64 ||
            (flags & ~FLAG_ADDRESSES) != 0 || mtu < 256 || mtu > 4096 || Integer.bitCount(mtu) != 1)
        {
            return false;
        }
        if ((flags & FLAG_ADDRESSES) == 0)
        {
            return true;
        }
        final int list = SprayWire.BTH_LENGTH + SprayWire.CONH_LENGTH + SprayWire.HSB_LENGTH;
        if (end - list < PLANES * ADDRESS_ENTRY_LENGTH)
        {
            return false;
        }
        for (int plane = 0; plane < PLANES; plane++)
        {
            final int at = list + plane * ADDRESS_ENTRY_LENGTH;
            final int entryFlags = Packet.u8(p.bytes, at);
            boolean zero = true;
            for (int i = at + 8; i < at + ADDRESS_ENTRY_LENGTH; i++)
            {
                zero &= p.bytes[i] == 0;
            }
            if ((entryFlags & ~1) != 0 || ((entryFlags & 1) != 0) != ipv6 || zero)
            {
                return false;
            }
        }
        return true;
    }

    /**
     * S3.1-3: the payload plus pad is a multiple of 4 bytes, and an opcode without payload carries neither payload
     * nor a pad count.
     */
    private static boolean wellPadded(final Packet p)
    {
        final int rest = p.length() - SprayWire.BTH_LENGTH - SprayWire.headerBytes(p.opcode()) - SprayWire.ICRC_LENGTH;
        return switch (p.opcode())
        {
            case SprayWire.READ_REQUEST, SprayWire.CONNECT_REJECT, SprayWire.ACK, SprayWire.PROBE, SprayWire.NACK,
                SprayWire.QUERY, SprayWire.CLOSE, SprayWire.CLOSE_ACK -> rest == 0 && p.padCount() == 0;
            default -> rest % 4 == 0 && rest >= p.padCount();
        };
    }

    /**
     * S5.2-2, S12.6: a RESYNC probe whose nextPsn is its BTH PSN and that lies neither behind the path's receive
     * frontier (above its highest PSN received) nor behind its cumulative PSN forgets the path's receive state, to
     * expect that PSN (the caller records it); any other is dropped without an answer ({@code unbounded}, the
     * fault: every one is taken).
     *
     * @return whether the probe was taken.
     */
    private static boolean resync(final ToyConnection c, final int path, final int psn, final int nextPsn,
        final boolean unbounded)
    {
        final int frontier = (c.cumulative[path] + c.above[path].length()) & SprayWire.PSN_MASK;
        if (!unbounded && (nextPsn != psn || SprayWire.psnDistance(frontier, psn) < 0 ||
            SprayWire.psnDistance(c.cumulative[path], psn) < 0))
        {
            return false;
        }
        c.cumulative[path] = psn;
        c.above[path].clear();
        return true;
    }

    private static FrameBuilder conh(final int opcode, final int destQp, final int paths, final int cid,
        final long token, final int reason)
    {
        return FrameBuilder.bth(opcode, destQp, 0, false).u8(SprayWire.VERSION).u8(0).u8(paths).u8(1).u16(1024)
            .u16(2).u8(0).u24(cid).u8(0).u24(0).u32(10_000).u64(token).u8(reason).zeros(3).u64(0);
    }

    private void onData(final ToyConnection c, final Packet p) throws IOException
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
        if (!c.inMsnWindow(p.h16(2), p.h32(4)) && !faults.contains(Fault.IGNORE_MSN_WINDOW))
        {
            return; // S12.7-1: it would create message state beyond the window; dropped before the path layer
        }
        c.lastHeard = System.nanoTime();
        final boolean fresh = record(c, path, p.psn());
        if (!fresh && !faults.contains(Fault.NO_DUPLICATE_REPORT))
        {
            c.duplicatesSinceAck[path] = Math.min(255, c.duplicatesSinceAck[path] + 1);
        }
        if (fresh && p.ecn() == UdpLink.CE && !faults.contains(Fault.NO_CE_ECHO))
        {
            c.ceSinceAck[path]++;
        }
        final long va = p.h64(SprayWire.SETH_LENGTH) - REGION_ADDRESS;
        if (p.opcode() == SprayWire.WRITE && fresh && !refusals.admit(c, p))
        {
            c.complete(p.h16(2), p.h32(4)); // refused or flushed (S9.3, S9.4): it ends, and is never placed
            ack(c, path); // S9.3.1-1: a refused packet is acknowledged all the same, after its NACK
            return;
        }
        if (p.opcode() == SprayWire.WRITE && fresh && !refusals.withinWindow(c, p))
        {
            ack(c, path); // S10.2-1: refused for want of a record, but it arrived
            return;
        }
        if (p.opcode() == SprayWire.SEND && fresh)
        {
            refusals.refuseSend(c, p);
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
            c.complete(p.h16(2), p.h32(4)); // the request is whole in its one packet
            final int length = p.h32(12);
            final long tag = SprayWire.messageTag(c.sendKey, SprayWire.READ_RESPONSE, 0, p.h16(2), p.h32(4), length, 0, 0,
                0, c.peerCid, 0);
            for (int offset = 0; offset < length || offset == 0; offset += c.mtu)
            {
                final int n = Math.min(c.mtu, length - offset);
                final byte[] payload = va >= 0 && va + length <= region.length ?
                    Arrays.copyOfRange(region, (int)va + offset, (int)va + offset + n) : new byte[n];
                // its PSN and path are the sender's to fill in as it goes (S7.2)
                final byte[] response = FrameBuilder.bth(SprayWire.READ_RESPONSE, c.peerCid, 0, false).u8(0)
                    .u8((offset + n >= length ? SprayWire.SETH_LAST : 0) |
                        (faults.contains(Fault.RESERVED_FLAG_SET) ? 0x80 : 0)).u16(p.h16(2)).u32(p.h32(4)).u32(offset)
                    .u32(length).u32(0).u64(tag).bytes(payload).bytes();
                c.held.addLast(response);
                if (n <= 0)
                {
                    break;
                }
            }
            c.answerAt = System.nanoTime() + SLOW_NANOS;
            sender.sendWithinWindow(c);
        }
    }

    /** @return whether the PSN was new on the path. */
    private static boolean record(final ToyConnection c, final int path, final int psn)
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

    private void ack(final ToyConnection c, final int path) throws IOException
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
        final int duplicates = c.duplicatesSinceAck[path];
        c.duplicatesSinceAck[path] = 0;
        sender.controlLink(c, path).send(FrameBuilder.bth(SprayWire.ACK, c.peerCid, 0, false).u8(path)
            .u8((ce > 0 ? SprayWire.SACKH_ECE : 0) | (faults.contains(Fault.RESERVED_ACK_FIELD) ? 0x40 : 0))
            .u16(ce).u8(duplicates).u24(c.cumulative[path]).bytes(sack).u32(0).u32(++c.ackSequence[path])
            .u32(c.refusals)
            .controlTag(c.sendKey).bytes(), false, UdpLink.NOT_ECT);
        c.lastSent = System.nanoTime();
    }


    /**
     * The toy's region taken away (a {@link RegionRevoker} for the suite): returns once the toy's thread has refused
     * every READ response under way.
     *
     * @return null, or why it was not done.
     */
    String deregisterRegion() throws InterruptedException
    {
        deregisterAsked = true;
        return deregistered.await(5, java.util.concurrent.TimeUnit.SECONDS) ? null : "the toy did not deregister in 5 s";
    }

    /**
     * S9.3.2-1: each READ whose response is under way is refused with a NACK REMOTE_ACCESS_ERROR of a new number, its
     * packets not yet sent are dropped, those sent and unacknowledged stand as probes at their PSNs, and an ACK of path
     * 0 follows, counting the refusals. The connection lives.
     */
    private void onRegionDeregistered() throws IOException
    {
        if (faults.contains(Fault.READ_ON_AFTER_DEREGISTRATION))
        {
            return;
        }
        for (final ToyConnection c : connections.values())
        {
            if (c.closed || null == c.sendPaths)
            {
                continue;
            }
            final java.util.Set<Long> reads = new java.util.LinkedHashSet<>();
            for (final ToyPath path : c.sendPaths)
            {
                for (final Map.Entry<Integer, byte[]> sent : path.unacknowledged.entrySet())
                {
                    final byte[] body = sent.getValue();
                    if ((body[0] & 0xFF) == SprayWire.READ_RESPONSE)
                    {
                        reads.add(streamMsn(body));
                        final int psn = sent.getKey();
                        sent.setValue(FrameBuilder.bth(SprayWire.PROBE, c.peerCid, psn, false).u8(path.index).u8(0)
                            .u16(0).u8(0).u24(psn).controlTag(c.sendKey).bytes());
                    }
                }
            }
            for (final byte[] body : c.held)
            {
                reads.add(streamMsn(body));
            }
            c.held.clear();
            for (final long read : reads)
            {
                refusals.refuseAccess(c, (int)(read >>> 32), (int)read, ++c.refusals);
            }
            if (!reads.isEmpty())
            {
                ack(c, 0);
            }
        }
    }

    // the (stream << 32 | msn) of a READ_RESPONSE's SETH
    private static long streamMsn(final byte[] body)
    {
        final int seth = SprayWire.BTH_LENGTH;
        final int stream = (body[seth + 2] & 0xFF) << 8 | body[seth + 3] & 0xFF;
        final long msn = (body[seth + 4] & 0xFFL) << 24 | (body[seth + 5] & 0xFF) << 16 | (body[seth + 6] & 0xFF) << 8 |
            body[seth + 7] & 0xFF;
        return (long)stream << 32 | msn;
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
        for (final ToyConnection c : connections.values())
        {
            if (c.closed)
            {
                continue;
            }
            sender.sendWithinWindow(c);
            sender.probeFailedPaths(c, now);
            if (now - c.lastHeard > IDLE_TIMEOUT_NANOS && !faults.contains(Fault.NO_IDLE_CLOSE))
            {
                c.closed = true;
                crashed = faults.contains(Fault.CRASH_ON_IDLE_CLOSE);
            }
            else if (sender.checkTimers(c, now))
            {
                // S6.7-1 by a timeout: the oldest packet not acknowledged went again (S6.8), or the path failed
                // (S7.4) and its packets moved to the others
                continue;
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
        for (final ToyConnection c : connections.values())
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
        for (final UdpLink spare : spareLinks)
        {
            spare.close();
        }
    }
}

