package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.FrameSink;
import io.spraynic.datapath.wire.ConnectionHeader;
import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.PlaneAddress;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceFrameWriter;
import io.spraynic.datapath.wire.SprayOpcodes;
import io.spraynic.datapath.wire.HandshakeBlock;
import io.spraynic.datapath.wire.Wire;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Connection set-up on the wire (docs/PROTOCOL.md S9.1, S12.2, S12.9), one per engine.
 * <ol>
 *     <li>The initiator sends {@code SPRAY_CONNECT} on plane 0 (DestQP 0), with a random token, a random CID
 *     of its engine's partition, a random initial PSN, an ephemeral X25519 public key and, in pre-shared-key
 *     mode, a proof; it retransmits with exponential backoff from {@code connectBackoff}, 8 CONNECTs in all.</li>
 *     <li>The responder validates every field; a CONNECT it cannot accept draws a {@code SPRAY_CONNECT_REJECT}
 *     with a reason (S9.1.1). One without a valid cookie draws a {@code SPRAY_CONNECT_RETRY} carrying a fresh
 *     stateless cookie ({@link CookieJar}), and nothing is remembered. RETRYs and REJECTs are rate-limited
 *     ({@link ConnectLimits}).</li>
 *     <li>The initiator resends its CONNECT with the cookie. With a valid cookie the responder checks its
 *     per-source and global limits, opens the connection (random CID and initial PSN, keys from the exchange)
 *     and answers {@code SPRAY_CONNECT_ACK} with its public key; a repeated CONNECT gets the same answer.</li>
 *     <li>The initiator derives the same keys and opens its side; a REJECT fails it at once with the reason.</li>
 * </ol>
 * Nothing here throws for any frame: every refusal is a REJECT or a counted drop. Control path: allocates.
 * <p>
 * The responder learns the initiator's plane-0 address (IPv4 or IPv6) from the CONNECT itself and its other
 * planes' from the address list the CONNECT carries (S5.5); a {@link PeerResolver} answers for a CONNECT
 * without one. Every CONH packet goes on plane 0 in the IP version of the peer's plane-0 address.
 */
public final class SprayHandshake
{
    /** Tries of a CONNECT (S9.1). */
    public static final int CONNECT_TRIES = 8;
    /** The longest wait between two CONNECTs, however far the exponential backoff has grown (S9.1). */
    public static final long CONNECT_BACKOFF_MAX_NANOS = 1_000_000_000L;
    /** A connect whose application sets no deadline: it gives up after {@link #CONNECT_TRIES} CONNECTs. */
    public static final long NO_DEADLINE = Long.MIN_VALUE;
    /** First retransmission timeout of a CONNECT (S9.1). */
    public static final long CONNECT_BACKOFF_NANOS = 100_000;
    private static final int BTH_LENGTH = 12;

    /**
     * The initiator's addresses on every plane, from its plane-0 address (the fabric's and a NIC's address
     * plan know it; CONH does not carry it).
     */
    public interface PeerResolver
    {
        /** @return the peer's IPv4 address on {@code plane}. */
        int ipv4(int plane, int plane0Ipv4);

        /** @return the peer's MAC on {@code plane}. */
        long mac(int plane, int plane0Ipv4, long plane0Mac);

        /**
         * For an initiator that spoke IPv6 on plane 0 (S2.1): sets its address and MAC on {@code plane} (1 or more)
         * in {@code config} with {@link SprayConnectionConfig#remoteIpv6}; by default its plane-0 address and MAC.
         */
        default void ipv6(final int plane, final long plane0High, final long plane0Low, final long plane0Mac,
            final SprayConnectionConfig config)
        {
            config.remoteIpv6(plane, plane0High, plane0Low, plane0Mac);
        }
    }

    /**
     * Told of every connection a listener accepts, on the engine's thread (control path): first to complete
     * the configuration the handshake made from the template (e.g. give the connection its own completion
     * queues), then with the connection once it is open.
     */
    public interface AcceptListener
    {
        /** @param config the accepted connection's configuration, before it is opened; may be changed. */
        default void onAccepting(final SprayConnectionConfig config)
        {
        }

        /** @param connection the connection, ESTABLISHED. */
        void onAccepted(SprayConnection connection);
    }

    /**
     * An outgoing connection request: CONNECTING (a RETRY makes it resend its CONNECT with the cookie), then
     * ESTABLISHED (with a connection) or FAILED (with a {@link RejectReason reason}).
     */
    public static final class Pending
    {
        /** States of S9.1. */
        public enum State
        {
            CONNECTING, ESTABLISHED, FAILED
        }

        final SprayConnectionConfig config;
        final long token;
        final HandshakeCrypto.Ephemeral ephemeral;
        final byte[] cookie = new byte[CookieJar.LENGTH];
        int tries;
        long nextAt;
        long backoff = CONNECT_BACKOFF_NANOS;
        /** Until when the initiator's application waits: CONNECTs go on past {@link #CONNECT_TRIES} until then. */
        long giveUpAtNanos = NO_DEADLINE;
        State state = State.CONNECTING;
        int reason = RejectReason.NO_ANSWER;
        int retries;
        SprayConnection connection;

        Pending(final SprayConnectionConfig config, final long token, final HandshakeCrypto.Ephemeral ephemeral)
        {
            this.config = config;
            this.token = token;
            this.ephemeral = ephemeral;
        }

        public State state()
        {
            return state;
        }

        /** @return the connection once ESTABLISHED, else null. */
        public SprayConnection connection()
        {
            return connection;
        }

        /** @return CONNECTs sent (a CONNECT answered by a RETRY and its resend with the cookie are two). */
        public int tries()
        {
            return tries;
        }

        /** @return RETRYs that answered this request. */
        public int retries()
        {
            return retries;
        }

        /** @return when FAILED, why: a {@link RejectReason} ({@link RejectReason#NO_ANSWER} after 8 tries). */
        public int reason()
        {
            return reason;
        }

        /** @return this end's CID (random, chosen when the request started). */
        public int localCid()
        {
            return config.localCid;
        }

        /** @return a sentence saying why the request FAILED, or null when it did not. */
        public String failure()
        {
            if (state != State.FAILED)
            {
                return null;
            }
            return switch (reason)
            {
                case RejectReason.NO_ANSWER -> "no answer after " + tries + " CONNECTs";
                case RejectReason.AUTH_FAILED -> "the peer's CONNECT_ACK failed the pre-shared-key proof";
                case RejectReason.BAD_KEY -> "the peer's public key is unusable (BAD_KEY)";
                default -> "peer refused: " + RejectReason.name(reason);
            };
        }
    }

    /** A connection this engine accepted: what a repeated CONNECT is answered with, and whose limit it counts in. */
    private record Accepted(SprayConnection connection, SprayConnectionConfig config, ConnectLimits.Source source,
        byte[] initiatorPublic, byte[] responderPublic)
    {
    }

    /** A repeated CONNECT is known by its token together with who sent it (two initiators may draw one token). */
    private record AcceptKey(long token, ConnectLimits.Source source, int initiatorCid)
    {
    }

    private final SprayEngine engine;
    private final HandshakeCrypto crypto;
    private final CookieJar cookies;
    private final ConnectLimits limits;
    private final byte[] psk;
    private final List<Pending> pending = new ArrayList<>();
    private final Map<AcceptKey, Accepted> accepted = new HashMap<>();
    private final Map<SprayConnection, AcceptKey> acceptedBy = new IdentityHashMap<>();
    private final byte[] scratchCookie = new byte[CookieJar.LENGTH];
    private final byte[] scratchPublic = new byte[HandshakeCrypto.PUBLIC_KEY_LENGTH];
    private SprayConnectionConfig template;
    private PeerResolver resolver;
    private AcceptListener acceptListener;

    SprayHandshake(final SprayEngine engine)
    {
        this.engine = engine;
        final SprayConfig config = engine.config();
        this.crypto = new HandshakeCrypto(engine.secrets());
        this.cookies = new CookieJar(crypto, config.cookieEpochNanos);
        this.limits = new ConnectLimits(config.maxConnectionsPerSource, config.connectResponsesPerSecond,
            config.connectResponseBurst);
        this.psk = config.psk;
    }

    void listen(final SprayConnectionConfig template, final PeerResolver resolver, final AcceptListener listener)
    {
        this.template = template.copy();
        this.resolver = resolver;
        this.acceptListener = listener;
    }

    Pending connect(final SprayConnectionConfig config, final long now, final long giveUpAtNanos)
    {
        final SprayConnectionConfig c = config.copy();
        // S12.2: the initial PSN is a secret an off-path attacker must not guess; whatever the caller gave is replaced
        c.sendInitialPsn = engine.secrets().nextInt(1 << 24);
        final Pending p = new Pending(c, engine.secrets().nextLong(), crypto.newEphemeral());
        p.backoff = engine.config().connectBackoffNanos;
        p.giveUpAtNanos = giveUpAtNanos;
        pending.add(p);
        sendConnect(p, now);
        return p;
    }

    boolean isPendingCid(final int cid)
    {
        for (final Pending p : pending)
        {
            if (p.config.localCid == cid)
            {
                return true;
            }
        }
        return false;
    }

    int onTick(final long now)
    {
        if (pending.isEmpty())
        {
            return 0;
        }
        int work = 0;
        for (int i = 0; i < pending.size(); i++)
        {
            final Pending p = pending.get(i);
            if (now >= p.nextAt)
            {
                if (p.tries >= CONNECT_TRIES && pastDeadline(p, now))
                {
                    fail(p, RejectReason.NO_ANSWER);
                    i--;
                }
                else
                {
                    sendConnect(p, now);
                }
                work++;
            }
        }
        return work;
    }

    private static boolean pastDeadline(final Pending p, final long now)
    {
        return p.giveUpAtNanos == NO_DEADLINE || now - p.giveUpAtNanos >= 0;
    }

    private void fail(final Pending p, final int reason)
    {
        p.state = Pending.State.FAILED;
        p.reason = reason;
        pending.remove(p);
    }

    private void sendConnect(final Pending p, final long now)
    {
        final SprayConnectionConfig c = p.config;
        to(c.remoteIsIpv6[0], c.remoteIpv4[0], c.remoteIpv6High[0], c.remoteIpv6Low[0], c.remoteMac[0]);
        if (writeHandshake(SprayOpcodes.CONNECT, 0, c.sourcePortBase, c.paths, c.mtu, c.streams, c.localCid,
            c.sendInitialPsn, p.token, 0, p.cookie, p.ephemeral.publicKey, c, c))
        {
            p.tries++;
        }
        p.nextAt = now + p.backoff;
        p.backoff = Math.min(2 * p.backoff, CONNECT_BACKOFF_MAX_NANOS);
    }

    // ---------------------------------------------------------------------------------------------------------
    // Responder
    // ---------------------------------------------------------------------------------------------------------

    void onConnect(final RoceFrame frame, final long now)
    {
        final MemorySegment seg = frame.segment();
        final long conh = frame.customHeaderOffset();
        final SprayConfig config = engine.config();
        final boolean ipv6 = frame.ipVersion() == 6;
        if (ipv6 && config.localIpv6High[0] == 0 && config.localIpv6Low[0] == 0)
        {
            engine.counters().increment(SprayCounters.UNKNOWN_CONNECTION); // no IPv6 address here to answer from
            return;
        }
        final long token = ConnectionHeader.token(seg, conh);
        final int initiatorCid = ConnectionHeader.senderCid(seg, conh);
        final int peerIpv4 = ipv6 ? 0 : frame.ipv4Source();
        final long peerHigh = ipv6 ? frame.ipv6SourceHigh() : 0;
        final long peerLow = ipv6 ? frame.ipv6SourceLow() : 0;
        final long peerMac = EthernetHeader.sourceMac(seg, frame.frameOffset());
        to(ipv6, peerIpv4, peerHigh, peerLow, peerMac); // where a REJECT or RETRY goes
        if (ConnectionHeader.version(seg, conh) != ConnectionHeader.VERSION)
        {
            refuse(frame, initiatorCid, token, RejectReason.VERSION_UNSUPPORTED, now);
            return;
        }
        final int payload = frame.payloadLength();
        if (payload < HandshakeBlock.LENGTH)
        {
            refuse(frame, initiatorCid, token, RejectReason.BAD_PARAMETERS, now);
            return;
        }
        final long hsb = frame.payloadOffset();
        if (null != psk && !proofValid(seg, frame.bthOffset(), hsb, payload))
        {
            // silent: a host without the key learns nothing, not even that a NIC listens here (S12.2)
            engine.counters().increment(SprayCounters.HANDSHAKE_AUTH_FAILURES);
            return;
        }
        if (null == template)
        {
            refuse(frame, initiatorCid, token, RejectReason.NO_LISTENER, now);
            return;
        }
        if (!ConnectChecks.connectValid(frame, seg, conh, hsb, payload, initiatorCid, engine.config(), null != resolver))
        {
            refuse(frame, initiatorCid, token, RejectReason.BAD_PARAMETERS, now);
            return;
        }
        final ConnectLimits.Source source = ipv6 ? new ConnectLimits.Source(peerHigh, peerLow) :
            new ConnectLimits.Source(0, CookieJar.mappedLow(peerIpv4));
        HandshakeBlock.cookie(seg, hsb, scratchCookie);
        HandshakeBlock.publicKey(seg, hsb, scratchPublic);
        if (!cookies.verify(scratchCookie, now, source.high(), source.low(), initiatorCid, token, scratchPublic))
        {
            if (!HandshakeCrypto.isZero(scratchCookie))
            {
                engine.counters().increment(SprayCounters.COOKIE_FAILURES);
            }
            retry(frame, initiatorCid, token, source, now); // stateless: nothing is remembered (S12.9)
            return;
        }
        final AcceptKey key = new AcceptKey(token, source, initiatorCid);
        Accepted a = accepted.get(key);
        if (null == a)
        {
            a = accept(frame, seg, conh, hsb, key, now);
            if (null == a)
            {
                return; // refused
            }
            if (a.connection().isClosed())
            {
                // the listener closed it at once (e.g. nobody takes accepted connections): refuse, do not confirm
                refuse(frame, initiatorCid, token, RejectReason.NO_RESOURCES, now);
                return;
            }
        }
        else if (!Arrays.equals(a.initiatorPublic(), scratchPublic))
        {
            engine.counters().increment(SprayCounters.MALFORMED); // same token, CID and source, another key
            return;
        }
        final SprayConnectionConfig c = a.config();
        to(ipv6, peerIpv4, peerHigh, peerLow, peerMac);
        writeHandshake(SprayOpcodes.CONNECT_ACK, c.remoteCid, c.sourcePortBase, c.paths, c.mtu, c.streams, c.localCid,
            c.sendInitialPsn, token, 0, null, a.responderPublic(), null, c);
    }

    // S9.1 step 4: limits, then the connection; null when refused (the REJECT is sent here)
    private Accepted accept(final RoceFrame frame, final MemorySegment seg, final long conh, final long hsb,
        final AcceptKey key, final long now)
    {
        final int initiatorCid = key.initiatorCid();
        final long token = key.token();
        if (!limits.sourceHasRoom(key.source()))
        {
            refuse(frame, initiatorCid, token, RejectReason.SOURCE_LIMIT, now);
            return null;
        }
        final int cid = engine.hasRoom() ? engine.newCid() : -1;
        if (cid < 0)
        {
            refuse(frame, initiatorCid, token, RejectReason.NO_RESOURCES, now);
            return null;
        }
        final byte[] initiatorPublic = scratchPublic.clone();
        final HandshakeCrypto.Ephemeral own = crypto.newEphemeral();
        final byte[] shared = crypto.sharedSecret(own.privateKey, initiatorPublic);
        if (null == shared)
        {
            refuse(frame, initiatorCid, token, RejectReason.BAD_KEY, now);
            return null;
        }
        final long[] k = crypto.deriveKeys(psk, shared, initiatorPublic, own.publicKey, initiatorCid, cid, token);
        final SprayConnectionConfig config = template.copy();
        config.cids(cid, initiatorCid)
            .paths(Math.min(template.paths, ConnectionHeader.paths(seg, conh)))
            .mtu(Math.min(template.mtu, ConnectionHeader.mtu(seg, conh)))
            .streams(Math.min(template.streams, ConnectionHeader.streams(seg, conh)))
            .initialPsns(engine.secrets().nextInt(1 << 24), ConnectionHeader.initialPsn(seg, conh))
            .peerLimits(ConnectionHeader.window(seg, conh), ConnectionHeader.reads(seg, conh))
            .keys(k[2], k[3], k[0], k[1]);
        peerAddresses(frame, seg, conh, hsb, config);
        if (null != acceptListener)
        {
            acceptListener.onAccepting(config);
        }
        final SprayConnection c;
        try
        {
            c = engine.open(config);
        }
        catch (final IllegalArgumentException e)
        {
            refuse(frame, initiatorCid, token, RejectReason.NO_RESOURCES, now); // a listener's config it cannot open
            return null;
        }
        c.handshakeConfig = config;
        final Accepted a = new Accepted(c, config, key.source(), initiatorPublic, own.publicKey);
        accepted.put(key, a);
        acceptedBy.put(c, key);
        limits.opened(key.source());
        if (null != acceptListener)
        {
            acceptListener.onAccepted(c);
        }
        return a;
    }

    // plane 0 from the frame, the others from the S5.5 list or the resolver
    private void peerAddresses(final RoceFrame frame, final MemorySegment seg, final long conh, final long hsb,
        final SprayConnectionConfig config)
    {
        final boolean ipv6 = frame.ipVersion() == 6;
        final int peerIpv4 = ipv6 ? 0 : frame.ipv4Source();
        final long peerHigh = ipv6 ? frame.ipv6SourceHigh() : 0;
        final long peerLow = ipv6 ? frame.ipv6SourceLow() : 0;
        final long peerMac = EthernetHeader.sourceMac(seg, frame.frameOffset());
        if (ipv6)
        {
            config.remoteIpv6(0, peerHigh, peerLow, peerMac);
        }
        else
        {
            config.remote(0, peerIpv4, peerMac);
        }
        final boolean carried = (ConnectionHeader.flags(seg, conh) & ConnectionHeader.FLAG_ADDRESSES) != 0;
        for (int plane = 1; plane < engine.config().planes; plane++)
        {
            if (carried)
            {
                final long entry = PlaneAddress.entry(hsb + HandshakeBlock.LENGTH, plane);
                if (PlaneAddress.isIpv6(seg, entry))
                {
                    config.remoteIpv6(plane, PlaneAddress.ipv6High(seg, entry), PlaneAddress.ipv6Low(seg, entry),
                        PlaneAddress.mac(seg, entry));
                }
                else
                {
                    config.remote(plane, PlaneAddress.ipv4(seg, entry), PlaneAddress.mac(seg, entry));
                }
            }
            else if (ipv6)
            {
                resolver.ipv6(plane, peerHigh, peerLow, peerMac, config);
            }
            else
            {
                config.remote(plane, resolver.ipv4(plane, peerIpv4), resolver.mac(plane, peerIpv4, peerMac));
            }
        }
    }

    /** @return whether a response may go now within the engine's rate (S12.9, S10.2); takes a token if so. */
    boolean tryRespond(final long now)
    {
        return limits.tryRespond(now);
    }

    // a REJECT to the CONNECT's source (addressed by to(...) before), within the response rate limit
    private void refuse(final RoceFrame frame, final int initiatorCid, final long token, final int reason, final long now)
    {
        engine.counters().increment(switch (reason)
        {
            case RejectReason.NO_LISTENER -> SprayCounters.REFUSED_NO_LISTENER;
            case RejectReason.VERSION_UNSUPPORTED -> SprayCounters.REFUSED_VERSION;
            case RejectReason.NO_RESOURCES -> SprayCounters.REFUSED_NO_RESOURCES;
            case RejectReason.SOURCE_LIMIT -> SprayCounters.SOURCE_LIMITED;
            case RejectReason.BAD_KEY -> SprayCounters.REFUSED_BAD_KEY;
            default -> SprayCounters.REFUSED_BAD_PARAMETERS;
        });
        if (!limits.tryRespond(now))
        {
            engine.counters().increment(SprayCounters.CONNECT_RESPONSES_RATE_LIMITED);
            return;
        }
        if (writeHandshake(SprayOpcodes.CONNECT_REJECT, initiatorCid, frame.udpSourcePort(), 0, 0, 0, 0, 0, token,
            reason, null, null, null, null))
        {
            engine.counters().increment(SprayCounters.CONNECT_REJECTS_SENT);
        }
    }

    // a RETRY with a fresh cookie, no larger than the CONNECT (addressed by to(...) before)
    private void retry(final RoceFrame frame, final int initiatorCid, final long token, final ConnectLimits.Source source,
        final long now)
    {
        if (!limits.tryRespond(now))
        {
            engine.counters().increment(SprayCounters.CONNECT_RESPONSES_RATE_LIMITED);
            return;
        }
        final byte[] cookie = cookies.issue(now, source.high(), source.low(), initiatorCid, token, scratchPublic);
        if (writeHandshake(SprayOpcodes.CONNECT_RETRY, initiatorCid, frame.udpSourcePort(), 0, 0, 0, 0, 0, token, 0,
            cookie, new byte[HandshakeCrypto.PUBLIC_KEY_LENGTH], null, null))
        {
            engine.counters().increment(SprayCounters.CONNECT_RETRIES_SENT);
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // Initiator
    // ---------------------------------------------------------------------------------------------------------

    private Pending pendingFor(final RoceFrame frame)
    {
        final long token = ConnectionHeader.token(frame.segment(), frame.customHeaderOffset());
        for (final Pending p : pending)
        {
            if (p.token == token && p.config.localCid == frame.destQp())
            {
                return p;
            }
        }
        return null;
    }

    /** A RETRY or REJECT: for one of this engine's CONNECTING requests, or counted and dropped. */
    void onRetryOrReject(final RoceFrame frame, final long now)
    {
        final Pending p = pendingFor(frame);
        if (null == p)
        {
            engine.counters().increment(SprayCounters.UNKNOWN_CONNECTION);
            return;
        }
        final MemorySegment seg = frame.segment();
        if (frame.opcode() == SprayOpcodes.CONNECT_REJECT)
        {
            engine.counters().increment(SprayCounters.CONNECT_REJECTS_RECEIVED);
            final int reason = ConnectionHeader.reason(seg, frame.customHeaderOffset());
            fail(p, reason == RejectReason.NO_ANSWER ? RejectReason.BAD_PARAMETERS : reason);
            return;
        }
        if (frame.payloadLength() < HandshakeBlock.LENGTH)
        {
            engine.counters().increment(SprayCounters.MALFORMED);
            return;
        }
        p.retries++;
        HandshakeBlock.cookie(seg, frame.payloadOffset(), p.cookie);
        if (p.tries < CONNECT_TRIES || !pastDeadline(p, now))
        {
            sendConnect(p, now); // at once, with the cookie; still at most 8 CONNECTs in all, or until the deadline
        }
    }

    /**
     * @return true if the frame answered one of this engine's CONNECTs (it is then consumed).
     */
    boolean onConnectAck(final RoceFrame frame, final long now)
    {
        final Pending p = pendingFor(frame);
        if (null == p)
        {
            return false; // a repeated ACK of an open connection: the connection counts it
        }
        final MemorySegment seg = frame.segment();
        final long conh = frame.customHeaderOffset();
        final long hsb = frame.payloadOffset();
        final int paths = ConnectionHeader.paths(seg, conh);
        final int responderCid = ConnectionHeader.senderCid(seg, conh);
        if (!ConnectChecks.acceptValid(frame, seg, conh, engine.config()))
        {
            engine.counters().increment(SprayCounters.MALFORMED);
            return true;
        }
        if (null != psk && !proofValid(seg, frame.bthOffset(), hsb, frame.payloadLength()))
        {
            engine.counters().increment(SprayCounters.HANDSHAKE_AUTH_FAILURES); // maybe forged: keep waiting
            return true;
        }
        final SprayConnectionConfig c = p.config;
        final byte[] responderPublic = new byte[HandshakeCrypto.PUBLIC_KEY_LENGTH];
        HandshakeBlock.publicKey(seg, hsb, responderPublic);
        final byte[] shared = crypto.sharedSecret(p.ephemeral.privateKey, responderPublic);
        if (null == shared)
        {
            fail(p, RejectReason.BAD_KEY);
            return true;
        }
        final long[] k = crypto.deriveKeys(psk, shared, p.ephemeral.publicKey, responderPublic, c.localCid, responderCid,
            p.token);
        c.cids(c.localCid, responderCid)
            .paths(Math.min(c.paths, paths))
            .mtu(Math.min(c.mtu, ConnectionHeader.mtu(seg, conh)))
            .streams(Math.min(c.streams, ConnectionHeader.streams(seg, conh)))
            .initialPsns(c.sendInitialPsn, ConnectionHeader.initialPsn(seg, conh))
            .peerLimits(ConnectionHeader.window(seg, conh), ConnectionHeader.reads(seg, conh))
            .keys(k[0], k[1], k[2], k[3]);
        pending.remove(p); // its CID is the connection's from here
        try
        {
            p.connection = engine.open(c);
        }
        catch (final IllegalArgumentException e)
        {
            fail(p, RejectReason.NO_RESOURCES); // this engine filled up meanwhile
            return true;
        }
        p.connection.handshakeConfig = c;
        p.state = Pending.State.ESTABLISHED;
        return true;
    }

    // ---------------------------------------------------------------------------------------------------------
    // Packets
    // ---------------------------------------------------------------------------------------------------------

    // S12.2: the proof = HMAC-SHA256(psk, BTH .. end of payload with the proof zeroed)[0, 16)
    private byte[] proof(final MemorySegment seg, final long bth, final long hsb, final int payload)
    {
        final int length = (int)(hsb + payload - bth);
        final byte[] bytes = new byte[length];
        MemorySegment.copy(seg, Wire.BYTE, bth, bytes, 0, length);
        Arrays.fill(bytes, (int)(hsb - bth) + HandshakeBlock.PROOF_OFFSET,
            (int)(hsb - bth) + HandshakeBlock.PROOF_OFFSET + HandshakeBlock.PROOF_LENGTH, (byte)0);
        return crypto.hmac(psk, bytes);
    }

    private boolean proofValid(final MemorySegment seg, final long bth, final long hsb, final int payload)
    {
        final byte[] received = new byte[HandshakeBlock.PROOF_LENGTH];
        HandshakeBlock.proof(seg, hsb, received);
        return HandshakeCrypto.equalPrefix(proof(seg, bth, hsb, payload), received, HandshakeBlock.PROOF_LENGTH);
    }

    /**
     * Writes a CONNECT, CONNECT_RETRY, CONNECT_ACK (CONH + handshake block, S5.4, S5.6; a CONNECT with the
     * address list of S5.5 after it) or CONNECT_REJECT (CONH with the reason), addressed by to(...) just before;
     * a CONNECT or CONNECT_ACK advertises the limits of {@code limitsOf} (S10.2).
     */
    private boolean writeHandshake(
        final int opcode,
        final int destCid,
        final int sourcePort,
        final int paths,
        final int mtu,
        final int streams,
        final int senderCid,
        final int initialPsn,
        final long token,
        final int reason,
        final byte[] cookie,
        final byte[] publicKey,
        final SprayConnectionConfig addressesFor,
        final SprayConnectionConfig limitsOf)
    {
        final SprayConfig config = engine.config();
        final RoceFrameWriter writer = engine.writer(0);
        writer.dscp(config.dscp).udpSourcePort(sourcePort)
            .destQp(destCid).psn(0).opcode(opcode).ecn(0).solicited(false).ackReq(false);
        final boolean block = opcode != SprayOpcodes.CONNECT_REJECT;
        final int payload = (block ? HandshakeBlock.LENGTH : 0) +
            (null == addressesFor ? 0 : config.planes * PlaneAddress.LENGTH);
        final FrameSink output = engine.output();
        if (!output.claim(0, writer.frameLength(payload)))
        {
            return false;
        }
        final MemorySegment seg = output.buffer();
        final long base = output.offset();
        final long hsb = base + writer.payloadOffset();
        final long conh = hsb - ConnectionHeader.LENGTH;
        ConnectionHeader.write(seg, conh, null == addressesFor ? 0 : ConnectionHeader.FLAG_ADDRESSES, paths,
            config.planes, mtu, streams, senderCid, initialPsn, (int)Math.min(Integer.MAX_VALUE, config.capacityMbps),
            token);
        ConnectionHeader.reason(seg, conh, reason);
        if (null != limitsOf)
        {
            // S10.2: this end's inbound message window and the READs it serves at once (CONNECT, CONNECT_ACK)
            ConnectionHeader.limits(seg, conh, limitsOf.advertisedWindow(), limitsOf.responderReads);
        }
        if (block)
        {
            seg.asSlice(hsb, HandshakeBlock.LENGTH).fill((byte)0);
            if (null != cookie)
            {
                HandshakeBlock.writeCookie(seg, hsb, cookie);
            }
            if (null != publicKey)
            {
                HandshakeBlock.writePublicKey(seg, hsb, publicKey);
            }
        }
        for (int plane = 0; null != addressesFor && plane < config.planes; plane++)
        {
            // this end's address on each plane, in the IP version the connection uses there (S5.5)
            final long entry = PlaneAddress.entry(hsb + HandshakeBlock.LENGTH, plane);
            if (addressesFor.remoteIsIpv6[plane])
            {
                PlaneAddress.writeIpv6(seg, entry, config.localIpv6High[plane], config.localIpv6Low[plane], config.localMac[plane]);
            }
            else
            {
                PlaneAddress.writeIpv4(seg, entry, config.localIpv4[plane], config.localMac[plane]);
            }
        }
        int length = writer.writeFrame(seg, base, payload);
        if (null != psk && (opcode == SprayOpcodes.CONNECT || opcode == SprayOpcodes.CONNECT_ACK))
        {
            // the proof covers the BTH, which writeFrame has just laid down; then the ICRC is computed again,
            // over the same IPv4 identification 0 (S2.4): writeFrame advanced it
            HandshakeBlock.writeProof(seg, hsb, proof(seg, conh - BTH_LENGTH, hsb, payload));
            length = writer.ipv4Identification(0).writeFrame(seg, base, payload);
        }
        output.commit(length);
        return true;
    }

    // S9.2: answers a CLOSE for a connection already forgotten (its CLOSE_ACK was lost) from the packet itself;
    // the engine verified its tag (S12.3), and the answer is tagged with the closed connection's send key
    void onCloseForUnknown(final RoceFrame frame, final long sendKey0, final long sendKey1)
    {
        final MemorySegment seg = frame.segment();
        final long conh = frame.customHeaderOffset();
        engine.counters().increment(SprayCounters.CLOSES_RECEIVED);
        final boolean ipv6 = frame.ipVersion() == 6;
        to(ipv6, ipv6 ? 0 : frame.ipv4Source(), ipv6 ? frame.ipv6SourceHigh() : 0, ipv6 ? frame.ipv6SourceLow() : 0,
            EthernetHeader.sourceMac(seg, frame.frameOffset()));
        engine.writer(0).tagNext(sendKey0, sendKey1);
        writeConnectionHeader(SprayOpcodes.CLOSE_ACK, ConnectionHeader.senderCid(seg, conh), frame.udpSourcePort(),
            ConnectionHeader.paths(seg, conh), ConnectionHeader.mtu(seg, conh), ConnectionHeader.streams(seg, conh),
            frame.destQp(), 0, ConnectionHeader.token(seg, conh));
        engine.writer(0).clearTag();
    }

    // a closed connection is no longer the answer to a repeated CONNECT, nor counts in its source's limit
    void forget(final SprayConnection connection)
    {
        final AcceptKey key = acceptedBy.remove(connection);
        if (null != key)
        {
            accepted.remove(key);
            limits.closed(key.source());
        }
    }

    // addresses the next CONH packet: plane 0, in the IP version of the peer's plane-0 address (S2.1, S2.4)
    void to(final boolean ipv6, final int remoteIpv4, final long remoteIpv6High, final long remoteIpv6Low, final long remoteMac)
    {
        final SprayConfig config = engine.config();
        final RoceFrameWriter writer = engine.writer(0);
        writer.ethernet(config.localMac[0], remoteMac).vlan(config.vlanTci[0]);
        if (ipv6)
        {
            writer.ipv6(config.localIpv6High[0], config.localIpv6Low[0], remoteIpv6High, remoteIpv6Low).ipv6UdpChecksum(config.ipv6UdpChecksum[0]);
        }
        else
        {
            writer.ipv4(config.localIpv4[0], remoteIpv4).ipv4Identification(0);
        }
    }

    // the teardown's CONH packets (S5.4, S9.2): CLOSE and CLOSE_ACK, no payload (the handshake's go through
    // writeHandshake); addressed by to(...) and tagged by the caller's RoceFrameWriter.tagNext just before (S12.3)
    boolean writeConnectionHeader(
        final int opcode,
        final int destCid,
        final int sourcePort,
        final int paths,
        final int mtu,
        final int streams,
        final int senderCid,
        final int initialPsn,
        final long token)
    {
        final SprayConfig config = engine.config();
        final RoceFrameWriter writer = engine.writer(0);
        writer.dscp(config.dscp).udpSourcePort(sourcePort)
            .destQp(destCid).psn(0).opcode(opcode).ecn(0).solicited(false).ackReq(false);
        final FrameSink output = engine.output();
        if (!output.claim(0, writer.frameLength(0)))
        {
            return false;
        }
        final MemorySegment seg = output.buffer();
        final long base = output.offset();
        ConnectionHeader.write(seg, base + writer.payloadOffset() - ConnectionHeader.LENGTH, 0, paths, config.planes, mtu,
            streams, senderCid, initialPsn, (int)Math.min(Integer.MAX_VALUE, config.capacityMbps), token);
        output.commit(writer.writeFrame(seg, base, 0));
        return true;
    }
}
