package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.spray.SprayHandshake.Pending;
import io.spraynic.datapath.wire.ConnectionHeader;
import io.spraynic.datapath.wire.HandshakeBlock;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.SprayOpcodes;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static io.spraynic.datapath.transport.spray.SprayHandshake.CONNECT_BACKOFF_MAX_NANOS;
import static io.spraynic.datapath.transport.spray.SprayHandshake.CONNECT_TRIES;
import static io.spraynic.datapath.transport.spray.SprayHandshake.NO_DEADLINE;

/**
 * The initiator's side of S9.1: its CONNECTING requests ({@link SprayHandshake.Pending}), each CONNECT resent with
 * exponential backoff until it is answered, its deadline passes or {@link SprayHandshake#CONNECT_TRIES} are spent;
 * a RETRY's cookie resent at once, a REJECT failing the request with its reason, a CONNECT_ACK opening the
 * connection with the keys of the exchange. Control path: allocates.
 */
final class HandshakeInitiator
{
    private final SprayEngine engine;
    private final HandshakeCrypto crypto;
    private final HandshakePackets packets;
    private final byte[] psk;
    private final List<Pending> pending = new ArrayList<>();

    HandshakeInitiator(final SprayEngine engine, final HandshakeCrypto crypto, final HandshakePackets packets,
        final byte[] psk)
    {
        this.engine = engine;
        this.crypto = crypto;
        this.packets = packets;
        this.psk = psk;
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
        packets.to(c.remoteIsIpv6[0], c.remoteIpv4[0], c.remoteIpv6High[0], c.remoteIpv6Low[0], c.remoteMac[0]);
        if (packets.writeHandshake(SprayOpcodes.CONNECT, 0, c.sourcePortBase, c.paths, c.mtu, c.streams, c.localCid,
            c.sendInitialPsn, p.token, 0, p.cookie, p.ephemeral.publicKey, c, c))
        {
            p.tries++;
        }
        p.nextAt = now + p.backoff;
        p.backoff = Math.min(2 * p.backoff, CONNECT_BACKOFF_MAX_NANOS);
    }

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
        if (null != psk && !packets.proofValid(seg, frame.bthOffset(), hsb, frame.payloadLength()))
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
}
