package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.FrameSink;
import io.spraynic.datapath.wire.ConnectionHeader;
import io.spraynic.datapath.wire.HandshakeBlock;
import io.spraynic.datapath.wire.PlaneAddress;
import io.spraynic.datapath.wire.RoceFrameWriter;
import io.spraynic.datapath.wire.SprayOpcodes;
import io.spraynic.datapath.wire.Wire;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * The CONH packets of an engine (S5.4, S5.6, S9.1, S9.2), all on plane 0: addressed by {@link #to} first, then
 * written into the engine's output; a CONNECT or CONNECT_ACK in pre-shared-key mode carries the proof of S12.2,
 * which {@link #proofValid} checks on a received one. Control path: allocates.
 */
final class HandshakePackets
{
    private static final int BTH_LENGTH = 12;

    private final SprayEngine engine;
    private final HandshakeCrypto crypto;
    private final byte[] psk;

    HandshakePackets(final SprayEngine engine, final HandshakeCrypto crypto, final byte[] psk)
    {
        this.engine = engine;
        this.crypto = crypto;
        this.psk = psk;
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

    /** @return whether the handshake block at {@code hsb} carries the proof of the packet from {@code bth} (S12.2). */
    boolean proofValid(final MemorySegment seg, final long bth, final long hsb, final int payload)
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
    boolean writeHandshake(
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
        final boolean block = opcode != SprayOpcodes.CONNECT_REJECT;
        final int payload = (block ? HandshakeBlock.LENGTH : 0) +
            (null == addressesFor ? 0 : config.planes * PlaneAddress.LENGTH);
        final FrameSink output = engine.output();
        if (!claim(opcode, destCid, sourcePort, payload))
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
        final FrameSink output = engine.output();
        if (!claim(opcode, destCid, sourcePort, 0))
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

    // the BTH of every CONH packet (PSN 0, no flags) on plane 0's writer, then room for it: false when the output is full
    private boolean claim(final int opcode, final int destCid, final int sourcePort, final int payload)
    {
        final RoceFrameWriter writer = engine.writer(0);
        writer.dscp(engine.config().dscp).udpSourcePort(sourcePort)
            .destQp(destCid).psn(0).opcode(opcode).ecn(0).solicited(false).ackReq(false);
        return engine.output().claim(0, writer.frameLength(payload));
    }
}
