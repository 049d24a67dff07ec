package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.wire.ConnectionHeader;
import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.SprayOpcodes;

import java.lang.foreign.MemorySegment;

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
 * <p>
 * In parts: {@link HandshakeInitiator} (the CONNECTING requests), {@link HandshakeResponder} (the listener's
 * answers) and {@link HandshakePackets} (every CONH packet written, the proof checked); this class is the engine's
 * one entry to them and the public face of a request ({@link Pending}).
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

    private final SprayEngine engine;
    private final HandshakePackets packets;
    private final HandshakeInitiator initiator;
    private final HandshakeResponder responder;

    SprayHandshake(final SprayEngine engine)
    {
        final HandshakeCrypto crypto = new HandshakeCrypto(engine.secrets());
        final byte[] psk = engine.config().psk;
        this.packets = new HandshakePackets(engine, crypto, psk);
        this.initiator = new HandshakeInitiator(engine, crypto, packets, psk);
        this.responder = new HandshakeResponder(engine, crypto, packets, psk);
        this.engine = engine;
    }

    void listen(final SprayConnectionConfig template, final PeerResolver resolver, final AcceptListener listener)
    {
        responder.listen(template, resolver, listener);
    }

    Pending connect(final SprayConnectionConfig config, final long now, final long giveUpAtNanos)
    {
        return initiator.connect(config, now, giveUpAtNanos);
    }

    boolean isPendingCid(final int cid)
    {
        return initiator.isPendingCid(cid);
    }

    int onTick(final long now)
    {
        return initiator.onTick(now);
    }

    void onConnect(final RoceFrame frame, final long now)
    {
        responder.onConnect(frame, now);
    }

    /** A RETRY or REJECT: for one of this engine's CONNECTING requests, or counted and dropped. */
    void onRetryOrReject(final RoceFrame frame, final long now)
    {
        initiator.onRetryOrReject(frame, now);
    }

    /**
     * @return true if the frame answered one of this engine's CONNECTs (it is then consumed).
     */
    boolean onConnectAck(final RoceFrame frame, final long now)
    {
        return initiator.onConnectAck(frame, now);
    }

    /** @return whether a response may go now within the engine's rate (S12.9, S10.2); takes a token if so. */
    boolean tryRespond(final long now)
    {
        return responder.tryRespond(now);
    }

    // a closed connection is no longer the answer to a repeated CONNECT, nor counts in its source's limit
    void forget(final SprayConnection connection)
    {
        responder.forget(connection);
    }

    // S9.2: answers a CLOSE for a connection already forgotten (its CLOSE_ACK was lost) from the packet itself;
    // the engine verified its tag (S12.3), and the answer is tagged with the closed connection's send key
    void onCloseForUnknown(final RoceFrame frame, final long sendKey0, final long sendKey1)
    {
        final MemorySegment seg = frame.segment();
        final long conh = frame.customHeaderOffset();
        engine.counters().increment(SprayCounters.CLOSES_RECEIVED);
        final boolean ipv6 = frame.ipVersion() == 6;
        packets.to(ipv6, ipv6 ? 0 : frame.ipv4Source(), ipv6 ? frame.ipv6SourceHigh() : 0,
            ipv6 ? frame.ipv6SourceLow() : 0, EthernetHeader.sourceMac(seg, frame.frameOffset()));
        engine.writer(0).tagNext(sendKey0, sendKey1);
        packets.writeConnectionHeader(SprayOpcodes.CLOSE_ACK, ConnectionHeader.senderCid(seg, conh),
            frame.udpSourcePort(), ConnectionHeader.paths(seg, conh), ConnectionHeader.mtu(seg, conh),
            ConnectionHeader.streams(seg, conh), frame.destQp(), 0, ConnectionHeader.token(seg, conh));
        engine.writer(0).clearTag();
    }

    // addresses the next CONH packet: plane 0, in the IP version of the peer's plane-0 address (S2.1, S2.4)
    void to(final boolean ipv6, final int remoteIpv4, final long remoteIpv6High, final long remoteIpv6Low,
        final long remoteMac)
    {
        packets.to(ipv6, remoteIpv4, remoteIpv6High, remoteIpv6Low, remoteMac);
    }

    // a CLOSE or CLOSE_ACK (S5.4, S9.2), addressed by to(...) and tagged by the caller just before (S12.3)
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
        return packets.writeConnectionHeader(opcode, destCid, sourcePort, paths, mtu, streams, senderCid, initialPsn,
            token);
    }
}
