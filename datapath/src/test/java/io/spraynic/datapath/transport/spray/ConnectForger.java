package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.port.PortFrameSink;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.wire.ConnectionHeader;
import io.spraynic.datapath.wire.HandshakeBlock;
import io.spraynic.datapath.wire.PlaneAddress;
import io.spraynic.datapath.wire.RoceFrameWriter;
import io.spraynic.datapath.wire.SprayOpcodes;

import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The attacker of the handshake tests: writes {@code SPRAY_CONNECT} frames with the real frame writer (correct
 * ICRC) onto a port, from any source address, with any field values. Fields default to a valid CONNECT of the
 * test bed's plane layout; change them, then {@link #send()}.
 */
final class ConnectForger
{
    private final RoceFrameWriter writer = new RoceFrameWriter(SprayOpcodes.TABLE);
    private final PortFrameSink output;

    int sourceIpv4 = SprayTestBed.ip(0, 1);
    long sourceMac = SprayTestBed.mac(0, 1);
    int destinationIpv4 = SprayTestBed.ip(0, 2);
    long destinationMac = SprayTestBed.mac(0, 2);
    int udpSourcePort = 0xC000;
    int destQp;
    int version = ConnectionHeader.VERSION;
    int flags;
    int paths = 8;
    int planes = 2;
    int mtu = 4096;
    int streams = 4;
    int senderCid = 0x123;
    int initialPsn;
    long token = 1;
    byte[] cookie = new byte[HandshakeBlock.COOKIE_LENGTH];
    byte[] publicKey = new byte[HandshakeBlock.PUBLIC_KEY_LENGTH];
    /** Payload bytes: the handshake block and, with {@link ConnectionHeader#FLAG_ADDRESSES}, the address list. */
    int payload = HandshakeBlock.LENGTH;
    /** Per plane, the address list's IPv4 address and MAC in place of the initiator's own (null: its own). */
    int[] entryIpv4;
    long[] entryMac;
    long sent;

    ConnectForger(final PacketPort port)
    {
        output = new PortFrameSink(new PacketPort[]{port}, 256);
        output.onStart();
    }

    /** Queues the CONNECT; {@link #flush()} transmits. */
    void send()
    {
        writer.ethernet(sourceMac, destinationMac).vlan(-1).ipv4(sourceIpv4, destinationIpv4).ipv4Identification(0)
            .udpSourcePort(udpSourcePort).destQp(destQp).psn(0).opcode(SprayOpcodes.CONNECT);
        assertTrue(output.claim(0, writer.frameLength(payload)), "room in the port");
        final MemorySegment seg = output.buffer();
        final long base = output.offset();
        final long hsb = base + writer.payloadOffset();
        final long conh = hsb - ConnectionHeader.LENGTH;
        ConnectionHeader.write(seg, conh, flags, paths, planes, mtu, streams, senderCid, initialPsn, 100_000, token);
        seg.set(io.spraynic.datapath.wire.Wire.BYTE, conh + ConnectionHeader.VERSION_OFFSET, (byte)version);
        seg.asSlice(hsb, payload).fill((byte)0);
        if (payload >= HandshakeBlock.LENGTH)
        {
            HandshakeBlock.writeCookie(seg, hsb, cookie);
            HandshakeBlock.writePublicKey(seg, hsb, publicKey);
        }
        for (int plane = 0; (flags & ConnectionHeader.FLAG_ADDRESSES) != 0 &&
            payload >= HandshakeBlock.LENGTH + (plane + 1) * PlaneAddress.LENGTH; plane++)
        {
            PlaneAddress.writeIpv4(seg, PlaneAddress.entry(hsb + HandshakeBlock.LENGTH, plane),
                null == entryIpv4 ? SprayTestBed.ip(plane, sourceIpv4 & 0xFF) : entryIpv4[plane],
                null == entryMac ? SprayTestBed.mac(plane, sourceIpv4 & 0xFF) : entryMac[plane]);
        }
        output.commit(writer.writeFrame(seg, base, payload));
        sent++;
    }

    void flush()
    {
        output.flush();
    }
}
