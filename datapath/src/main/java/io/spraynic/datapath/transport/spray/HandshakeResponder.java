package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.wire.ConnectionHeader;
import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.HandshakeBlock;
import io.spraynic.datapath.wire.PlaneAddress;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.SprayOpcodes;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * The responder's side of S9.1 (a listening engine): validates each CONNECT, answers one without a valid cookie
 * with a stateless RETRY ({@link CookieJar}, S12.9) and one it cannot accept with a REJECT, both rate-limited
 * ({@link ConnectLimits}); with a valid cookie, within the per-source and global limits, opens the connection and
 * answers CONNECT_ACK, the same CONNECT_ACK to a repeated CONNECT. Control path: allocates.
 */
final class HandshakeResponder
{
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
    private final HandshakePackets packets;
    private final byte[] psk;
    private final Map<AcceptKey, Accepted> accepted = new HashMap<>();
    private final Map<SprayConnection, AcceptKey> acceptedBy = new IdentityHashMap<>();
    private final byte[] scratchCookie = new byte[CookieJar.LENGTH];
    private final byte[] scratchPublic = new byte[HandshakeCrypto.PUBLIC_KEY_LENGTH];
    private SprayConnectionConfig template;
    private SprayHandshake.PeerResolver resolver;
    private SprayHandshake.AcceptListener acceptListener;

    HandshakeResponder(final SprayEngine engine, final HandshakeCrypto crypto, final HandshakePackets packets,
        final byte[] psk)
    {
        this.engine = engine;
        this.crypto = crypto;
        this.packets = packets;
        this.psk = psk;
        final SprayConfig config = engine.config();
        this.cookies = new CookieJar(crypto, config.cookieEpochNanos);
        this.limits = new ConnectLimits(config.maxConnectionsPerSource, config.connectResponsesPerSecond,
            config.connectResponseBurst);
    }

    void listen(final SprayConnectionConfig template, final SprayHandshake.PeerResolver resolver,
        final SprayHandshake.AcceptListener listener)
    {
        this.template = template.copy();
        this.resolver = resolver;
        this.acceptListener = listener;
    }

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
        packets.to(ipv6, peerIpv4, peerHigh, peerLow, peerMac); // where a REJECT or RETRY goes
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
        if (null != psk && !packets.proofValid(seg, frame.bthOffset(), hsb, payload))
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
        packets.to(ipv6, peerIpv4, peerHigh, peerLow, peerMac);
        packets.writeHandshake(SprayOpcodes.CONNECT_ACK, c.remoteCid, c.sourcePortBase, c.paths, c.mtu, c.streams,
            c.localCid, c.sendInitialPsn, token, 0, null, a.responderPublic(), null, c);
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
        if (packets.writeHandshake(SprayOpcodes.CONNECT_REJECT, initiatorCid, frame.udpSourcePort(), 0, 0, 0, 0, 0,
            token, reason, null, null, null, null))
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
        if (packets.writeHandshake(SprayOpcodes.CONNECT_RETRY, initiatorCid, frame.udpSourcePort(), 0, 0, 0, 0, 0,
            token, 0, cookie, new byte[HandshakeCrypto.PUBLIC_KEY_LENGTH], null, null))
        {
            engine.counters().increment(SprayCounters.CONNECT_RETRIES_SENT);
        }
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
}
