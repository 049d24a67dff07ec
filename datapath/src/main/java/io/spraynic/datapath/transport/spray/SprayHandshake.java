package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.wire.ConnectionHeader;
import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.PlaneAddress;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceFrameWriter;
import io.spraynic.datapath.wire.SprayOpcodes;
import org.agrona.collections.Long2ObjectHashMap;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * Connection set-up on the wire (docs/PROTOCOL.md S9.1), one per engine: the initiator sends
 * {@code SPRAY_CONNECT} on path 0 (plane 0, DestQP 0: it does not know the responder's CID yet) and
 * retransmits it with exponential backoff from 100 us, 8 tries; a listening responder allocates a CID, opens
 * the connection with the minimum of each pair of limits (paths, MTU, streams) and answers
 * {@code SPRAY_CONNECT_ACK} echoing the token; the initiator then opens its side. A repeated CONNECT (its
 * ACK was lost) is answered again, never opened twice. Control path: allocates.
 * <p>
 * The responder learns the initiator's plane-0 address (IPv4 or IPv6) from the CONNECT itself and its other
 * planes' from the address list the CONNECT carries (S5.5); a {@link PeerResolver} answers for a CONNECT
 * without one. Every CONH packet goes on plane 0 in
 * the IP version of the peer's plane-0 address.
 */
public final class SprayHandshake
{
    /** Tries of a CONNECT (S9.1). */
    public static final int CONNECT_TRIES = 8;
    /** First retransmission timeout of a CONNECT (S9.1). */
    public static final long CONNECT_BACKOFF_NANOS = 100_000;
    private static final int FIRST_CID = 0x100;

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

    /** An outgoing connection request: CONNECTING, then ESTABLISHED (with a connection) or FAILED. */
    public static final class Pending
    {
        /** States of S9.1. */
        public enum State
        {
            CONNECTING, ESTABLISHED, FAILED
        }

        final SprayConnectionConfig config;
        final long token;
        int tries;
        long nextAt;
        long backoff = CONNECT_BACKOFF_NANOS;
        State state = State.CONNECTING;
        SprayConnection connection;

        Pending(final SprayConnectionConfig config, final long token)
        {
            this.config = config;
            this.token = token;
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

        /** @return CONNECTs sent. */
        public int tries()
        {
            return tries;
        }
    }

    private final SprayEngine engine;
    private final List<Pending> pending = new ArrayList<>();
    private final Long2ObjectHashMap<SprayConnection> accepted = new Long2ObjectHashMap<>();
    private SprayConnectionConfig template;
    private PeerResolver resolver;
    private AcceptListener acceptListener;
    private int connecting;
    private int nextCid = FIRST_CID;

    SprayHandshake(final SprayEngine engine)
    {
        this.engine = engine;
    }

    void listen(final SprayConnectionConfig template, final PeerResolver resolver, final AcceptListener listener)
    {
        this.template = template.copy();
        this.resolver = resolver;
        this.acceptListener = listener;
    }

    Pending connect(final SprayConnectionConfig config, final long now)
    {
        final Pending p = new Pending(config.copy(), engine.random().nextLong());
        p.backoff = engine.config().connectBackoffNanos;
        pending.add(p);
        connecting++;
        sendConnect(p, now);
        return p;
    }

    int onTick(final long now)
    {
        if (connecting == 0)
        {
            return 0;
        }
        int work = 0;
        for (final Pending p : pending)
        {
            if (p.state == Pending.State.CONNECTING && now >= p.nextAt)
            {
                if (p.tries >= CONNECT_TRIES)
                {
                    p.state = Pending.State.FAILED;
                    connecting--;
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

    private void sendConnect(final Pending p, final long now)
    {
        final SprayConnectionConfig c = p.config;
        to(c.remoteIsIpv6[0], c.remoteIpv4[0], c.remoteIpv6High[0], c.remoteIpv6Low[0], c.remoteMac[0]);
        if (writeConnectionHeader(SprayOpcodes.CONNECT, 0, c.sourcePortBase, c.paths, c.mtu, c.streams, c.localCid,
            c.sendInitialPsn, p.token, c))
        {
            p.tries++;
        }
        p.nextAt = now + p.backoff;
        p.backoff *= 2;
    }

    void onConnect(final RoceFrame frame, final long now)
    {
        final MemorySegment seg = frame.segment();
        final long conh = frame.customHeaderOffset();
        if (ConnectionHeader.version(seg, conh) != ConnectionHeader.VERSION ||
            ConnectionHeader.planes(seg, conh) != engine.config().planes || !validLimits(seg, conh))
        {
            engine.counters().increment(SprayCounters.MALFORMED);
            return;
        }
        final boolean ipv6 = frame.ipVersion() == 6;
        if (ipv6 && engine.config().localIpv6High[0] == 0 && engine.config().localIpv6Low[0] == 0)
        {
            engine.counters().increment(SprayCounters.UNKNOWN_CONNECTION); // no IPv6 address here to answer from
            return;
        }
        final long token = ConnectionHeader.token(seg, conh);
        final int peerIpv4 = ipv6 ? 0 : frame.ipv4Source();
        final long peerHigh = ipv6 ? frame.ipv6SourceHigh() : 0;
        final long peerLow = ipv6 ? frame.ipv6SourceLow() : 0;
        final long peerMac = EthernetHeader.sourceMac(seg, frame.frameOffset());
        // a repeated CONNECT is known by its token together with who sent it: two initiators (or two engines of
        // one NIC) may draw the same token
        final long key = acceptKey(token, ipv6 ? peerHigh * 31 + peerLow : peerIpv4, ConnectionHeader.senderCid(seg, conh));
        SprayConnection c = accepted.get(key);
        if (null == c)
        {
            if (null == template)
            {
                engine.counters().increment(SprayCounters.UNKNOWN_CONNECTION); // nobody listens
                return;
            }
            if (!engine.hasRoom())
            {
                engine.counters().increment(SprayCounters.NO_RESOURCES); // full: dropped (no reject message yet)
                return;
            }
            final SprayConnectionConfig config = template.copy();
            config.cids(newCid(), ConnectionHeader.senderCid(seg, conh))
                .paths(Math.min(template.paths, ConnectionHeader.paths(seg, conh)))
                .mtu(Math.min(template.mtu, ConnectionHeader.mtu(seg, conh)))
                .streams(Math.min(template.streams, ConnectionHeader.streams(seg, conh)))
                .initialPsns(engine.random().nextInt(1 << 24), ConnectionHeader.initialPsn(seg, conh));
            if (ipv6)
            {
                config.remoteIpv6(0, peerHigh, peerLow, peerMac);
            }
            else
            {
                config.remote(0, peerIpv4, peerMac);
            }
            final int planes = engine.config().planes;
            final boolean carried = (ConnectionHeader.flags(seg, conh) & ConnectionHeader.FLAG_ADDRESSES) != 0 &&
                frame.payloadLength() >= planes * PlaneAddress.LENGTH;
            for (int plane = 1; plane < planes; plane++)
            {
                if (carried)
                {
                    // S5.5: the initiator said where it is on every plane
                    final long entry = PlaneAddress.entry(frame.payloadOffset(), plane);
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
            if (null != acceptListener)
            {
                acceptListener.onAccepting(config);
            }
            c = engine.open(config);
            accepted.put(key, c);
            c.handshakeConfig = config;
            if (null != acceptListener)
            {
                acceptListener.onAccepted(c);
            }
        }
        final SprayConnectionConfig config = c.handshakeConfig;
        to(ipv6, peerIpv4, peerHigh, peerLow, peerMac);
        writeConnectionHeader(SprayOpcodes.CONNECT_ACK, config.remoteCid, config.sourcePortBase, config.paths, config.mtu,
            config.streams, config.localCid, config.sendInitialPsn, token, null);
    }

    /**
     * @return true if the frame answered one of this engine's CONNECTs (it is then consumed).
     */
    boolean onConnectAck(final RoceFrame frame, final long now)
    {
        final MemorySegment seg = frame.segment();
        final long conh = frame.customHeaderOffset();
        final long token = ConnectionHeader.token(seg, conh);
        for (final Pending p : pending)
        {
            if (p.token == token && p.config.localCid == frame.destQp())
            {
                if (!validLimits(seg, conh))
                {
                    engine.counters().increment(SprayCounters.MALFORMED);
                    return true;
                }
                if (p.state == Pending.State.CONNECTING)
                {
                    final SprayConnectionConfig c = p.config;
                    c.cids(c.localCid, ConnectionHeader.senderCid(seg, conh))
                        .paths(Math.min(c.paths, ConnectionHeader.paths(seg, conh)))
                        .mtu(Math.min(c.mtu, ConnectionHeader.mtu(seg, conh)))
                        .streams(Math.min(c.streams, ConnectionHeader.streams(seg, conh)))
                        .initialPsns(c.sendInitialPsn, ConnectionHeader.initialPsn(seg, conh));
                    p.connection = engine.open(c);
                    p.state = Pending.State.ESTABLISHED;
                    connecting--;
                }
                return true;
            }
        }
        return false;
    }

    // S4.3, S1.4: limits the connection's constructor would refuse; checked before a remote frame can open one
    private static boolean validLimits(final MemorySegment seg, final long conh)
    {
        final int paths = ConnectionHeader.paths(seg, conh);
        final int mtu = ConnectionHeader.mtu(seg, conh);
        final int streams = ConnectionHeader.streams(seg, conh);
        return paths >= 1 && paths <= 64 && (mtu == 256 || mtu == 512 || mtu == 1024 || mtu == 2048 || mtu == 4096) &&
            streams >= 1 && streams <= 65536;
    }

    private static long acceptKey(final long token, final long peer, final int senderCid)
    {
        return token ^ (peer << 24 ^ senderCid) * 0x9E37_79B9_7F4A_7C15L;
    }

    private int newCid()
    {
        final int index = engine.config().cidPartition();
        final int count = engine.config().cidPartitions();
        while (!engine.isCidFree(nextCid) || nextCid == 0 || nextCid % count != index)
        {
            nextCid = (nextCid + 1) & 0xFF_FFFF;
        }
        final int cid = nextCid;
        nextCid = (nextCid + 1) & 0xFF_FFFF;
        return cid;
    }

    // S9.2: answers a CLOSE for a connection already forgotten (its CLOSE_ACK was lost) from the packet itself
    void onCloseForUnknown(final RoceFrame frame)
    {
        final MemorySegment seg = frame.segment();
        final long conh = frame.customHeaderOffset();
        engine.counters().increment(SprayCounters.CLOSES_RECEIVED);
        final boolean ipv6 = frame.ipVersion() == 6;
        to(ipv6, ipv6 ? 0 : frame.ipv4Source(), ipv6 ? frame.ipv6SourceHigh() : 0, ipv6 ? frame.ipv6SourceLow() : 0,
            EthernetHeader.sourceMac(seg, frame.frameOffset()));
        writeConnectionHeader(SprayOpcodes.CLOSE_ACK, ConnectionHeader.senderCid(seg, conh), frame.udpSourcePort(),
            ConnectionHeader.paths(seg, conh), ConnectionHeader.mtu(seg, conh), ConnectionHeader.streams(seg, conh),
            frame.destQp(), 0, ConnectionHeader.token(seg, conh), null);
    }

    // a closed connection is no longer the answer to a repeated CONNECT
    void forget(final SprayConnection connection)
    {
        accepted.values().removeIf(c -> c == connection);
    }

    // addresses the next CONH packet: plane 0, in the IP version of the peer's plane-0 address (S2.1, S2.4)
    void to(final boolean ipv6, final int remoteIpv4, final long remoteIpv6High, final long remoteIpv6Low, final long remoteMac)
    {
        final SprayConfig config = engine.config();
        final RoceFrameWriter writer = engine.writer(0);
        writer.ethernet(config.localMac[0], remoteMac).vlan(config.vlanTci[0]);
        if (ipv6)
        {
            writer.ipv6(config.localIpv6High[0], config.localIpv6Low[0], remoteIpv6High, remoteIpv6Low).ipv6UdpChecksum(false);
        }
        else
        {
            writer.ipv4(config.localIpv4[0], remoteIpv4).ipv4Identification(0);
        }
    }

    // CONH packets (S5.4): CONNECT and CONNECT_ACK here, CLOSE and CLOSE_ACK for the connections (S9.2); addressed
    // by to(...) just before
    boolean writeConnectionHeader(
        final int opcode,
        final int destCid,
        final int sourcePort,
        final int paths,
        final int mtu,
        final int streams,
        final int senderCid,
        final int initialPsn,
        final long token,
        final SprayConnectionConfig addressesFor)
    {
        final SprayConfig config = engine.config();
        final RoceFrameWriter writer = engine.writer(0);
        writer.dscp(config.dscp).udpSourcePort(sourcePort)
            .destQp(destCid).psn(0).opcode(opcode).ecn(0).solicited(false).ackReq(false);
        final int payload = null == addressesFor ? 0 : config.planes * PlaneAddress.LENGTH;
        final SprayFrameOutput output = engine.output();
        if (!output.claim(0, writer.frameLength(payload)))
        {
            return false;
        }
        final MemorySegment seg = output.buffer();
        final long base = output.offset();
        ConnectionHeader.write(seg, base + writer.payloadOffset() - ConnectionHeader.LENGTH,
            null == addressesFor ? 0 : ConnectionHeader.FLAG_ADDRESSES, paths, config.planes, mtu, streams, senderCid,
            initialPsn, (int)Math.min(Integer.MAX_VALUE, config.capacityMbps), token);
        for (int plane = 0; null != addressesFor && plane < config.planes; plane++)
        {
            // this end's address on each plane, in the IP version the connection uses there (S5.5)
            final long entry = PlaneAddress.entry(base + writer.payloadOffset(), plane);
            if (addressesFor.remoteIsIpv6[plane])
            {
                PlaneAddress.writeIpv6(seg, entry, config.localIpv6High[plane], config.localIpv6Low[plane], config.localMac[plane]);
            }
            else
            {
                PlaneAddress.writeIpv4(seg, entry, config.localIpv4[plane], config.localMac[plane]);
            }
        }
        output.commit(writer.writeFrame(seg, base, payload));
        return true;
    }
}
