package io.spraynic.datapath.capture;

import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.ConnectionHeader;
import io.spraynic.datapath.wire.HandshakeBlock;
import io.spraynic.datapath.wire.ImmediateDataHeader;
import io.spraynic.datapath.wire.PlaneAddress;
import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.Ipv4Header;
import io.spraynic.datapath.wire.NegativeAckHeader;
import io.spraynic.datapath.wire.RdmaExtendedTransportHeader;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceFrameWriter;
import io.spraynic.datapath.wire.SelectiveAckHeader;
import io.spraynic.datapath.wire.SprayExtendedTransportHeader;
import io.spraynic.datapath.wire.SprayOpcodes;
import io.spraynic.datapath.wire.UdpHeader;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/PROTOCOL.md S3.1: spray packets are RoCEv2 packets with manufacturer opcodes; the decoder
 * frames them, checks their ICRC and shows their own headers.
 */
class SprayDecodeTest
{
    private static final long HEADERS = EthernetHeader.LENGTH + Ipv4Header.LENGTH + UdpHeader.LENGTH + BaseTransportHeader.LENGTH;

    @Test
    void shouldDecodeSprayWriteWithItsPlacementHeaders()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment buffer = arena.allocate(2048);
            final RoceFrameWriter writer = writer(SprayOpcodes.WRITE).psn(0xFFFFFF);
            SprayExtendedTransportHeader.path(buffer, HEADERS, 5);
            SprayExtendedTransportHeader.flags(buffer, HEADERS, SprayExtendedTransportHeader.FLAG_RETRANSMIT);
            SprayExtendedTransportHeader.stream(buffer, HEADERS, 300);
            SprayExtendedTransportHeader.msn(buffer, HEADERS, 7);
            SprayExtendedTransportHeader.messageOffset(buffer, HEADERS, 4096);
            SprayExtendedTransportHeader.messageLength(buffer, HEADERS, 1 << 20);
            final long reth = HEADERS + SprayExtendedTransportHeader.LENGTH;
            RdmaExtendedTransportHeader.virtualAddress(buffer, reth, 0x7F00_0000_1000L);
            RdmaExtendedTransportHeader.rkey(buffer, reth, 0x1234_5678);
            RdmaExtendedTransportHeader.dmaLength(buffer, reth, 1 << 20);
            assertEquals(HEADERS + 44, writer.payloadOffset(), "SETH 28 + RETH 16");
            final int length = writer.writeFrame(buffer, 0, 1024);

            final FrameDecoder decoder = new FrameDecoder();
            final RoceFrame frame = decoder.parse(buffer, 0, length, LinkType.ETHERNET);
            assertTrue(frame.isRoce() && frame.icrcValid(), String.valueOf(frame));
            final StringBuilder text = new StringBuilder();
            FrameDecoder.appendText(text, 0, frame);
            assertTrue(text.toString().contains(" SPRAY_WRITE qp=0x000042 psn=16777215"), text.toString());
            assertTrue(text.toString().contains(
                " seth(path=5 stream=300 msn=7 offset=4096 length=1048576 retransmit) reth(va=0x7f0000001000 rkey=0x12345678 len=1048576)"),
                text.toString());
            assertTrue(text.toString().contains(" len=1024 "), text.toString());
        }
    }

    @Test
    void shouldDecodeSprayAckWithItsSack()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment buffer = arena.allocate(2048);
            // PSNs 100-101 arrived, 102 is missing, then 103, 104 and 110: bits 1, 2 and 8 above 102.
            SelectiveAckHeader.cumulativePsn(buffer, HEADERS, 102);
            SelectiveAckHeader.sackWord(buffer, HEADERS, 0, (Long.MIN_VALUE >>> 1) | (Long.MIN_VALUE >>> 2) | (Long.MIN_VALUE >>> 8));
            for (int word = 1; word < 4; word++)
            {
                SelectiveAckHeader.sackWord(buffer, HEADERS, word, 0);
            }
            SelectiveAckHeader.path(buffer, HEADERS, 2);
            SelectiveAckHeader.ceCount(buffer, HEADERS, 3);
            SelectiveAckHeader.rateHintMbps(buffer, HEADERS, 25_000);
            SelectiveAckHeader.refusals(buffer, HEADERS, 7);
            final int length = writer(SprayOpcodes.ACK).writeFrame(buffer, 0, 0);

            final FrameDecoder decoder = new FrameDecoder();
            final RoceFrame frame = decoder.parse(buffer, 0, length, LinkType.ETHERNET);
            final StringBuilder text = new StringBuilder();
            FrameDecoder.appendText(text, 0, frame);
            assertTrue(text.toString().contains(" SPRAY_ACK "), text.toString());
            assertTrue(text.toString().contains(" sack(path=2 cumulative=102 above=3 ce=3 rateHintMbps=25000 refusals=7)"), text.toString());
            assertTrue(text.toString().endsWith(" ok"), text.toString());
        }
    }

    @Test
    void shouldNameTheQueryNackAndTeardownPacketsS31S92S93()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment buffer = arena.allocate(2048);
            NegativeAckHeader.syndrome(buffer, HEADERS, NegativeAckHeader.SYNDROME_REMOTE_ACCESS_ERROR);
            NegativeAckHeader.stream(buffer, HEADERS, 3);
            NegativeAckHeader.msn(buffer, HEADERS, 9);
            NegativeAckHeader.rnrTimerMicros(buffer, HEADERS, 0);
            NegativeAckHeader.refusal(buffer, HEADERS, 4);
            assertTrue(decode(buffer, writer(SprayOpcodes.NACK).writeFrame(buffer, 0, 0))
                .contains(" SPRAY_NACK qp=0x000042 psn=0 pad=0 pkey=0xffff nack(syndrome=REMOTE_ACCESS_ERROR stream=3 msn=9" +
                    " rnrTimerMicros=0 refusal=4) len=0"));
            NegativeAckHeader.syndrome(buffer, HEADERS, NegativeAckHeader.SYNDROME_ACCEPTED);
            NegativeAckHeader.refusal(buffer, HEADERS, 0);
            final String query = decode(buffer, writer(SprayOpcodes.QUERY).writeFrame(buffer, 0, 0));
            assertTrue(query.contains(" SPRAY_QUERY ") && query.contains(" query(syndrome=ACCEPTED stream=3 msn=9"), query);
            assertTrue(query.endsWith(" ok"), query);

            for (final int opcode : new int[] {SprayOpcodes.CLOSE, SprayOpcodes.CLOSE_ACK})
            {
                ConnectionHeader.write(buffer, HEADERS, 0, 8, 2, 4096, 4, 0x0A01, 0, 100_000, 0x1234L);
                final String close = decode(buffer, writer(opcode).writeFrame(buffer, 0, 0));
                assertTrue(close.contains(" " + SprayOpcodes.name(opcode) + " ") &&
                    close.contains(" conh(version=2 senderCid=2561 paths=8 planes=2 mtu=4096 streams=4 initialPsn=0 token=0x1234)"),
                    close);
                assertTrue(close.endsWith(" ok"), close);
            }
        }
    }

    @Test
    void shouldDecodeTheAddressesAConnectCarriesS55()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment buffer = arena.allocate(2048);
            final RoceFrameWriter writer = writer(SprayOpcodes.CONNECT);
            ConnectionHeader.write(buffer, HEADERS, ConnectionHeader.FLAG_ADDRESSES, 8, 2, 4096, 4, 0x0A01, 77, 100_000, 0x99L);
            final long list = writer.payloadOffset() + HandshakeBlock.LENGTH; // after the handshake block (S5.6)
            PlaneAddress.writeIpv4(buffer, PlaneAddress.entry(list, 0), 0x0A000001, 0x02_0000_0000_01L);
            PlaneAddress.writeIpv6(buffer, PlaneAddress.entry(list, 1), 0xFD00_0000_0000_0001L, 0x2L, 0x02_0000_0001_01L);
            final String connect = decode(buffer, writer.writeFrame(buffer, 0, HandshakeBlock.LENGTH + 2 * PlaneAddress.LENGTH));
            assertTrue(connect.contains(" SPRAY_CONNECT ") && connect.contains(" initialPsn=77 token=0x99 window=0 reads=0 addresses=[" +
                "10.0.0.1/02:00:00:00:00:01, fd00:0:0:1::2/02:00:00:00:01:01])"), connect);
            assertTrue(connect.endsWith(" ok"), connect);

            final RoceFrameWriter reject = writer(SprayOpcodes.CONNECT_REJECT);
            ConnectionHeader.write(buffer, HEADERS, 0, 0, 2, 0, 0, 0, 0, 100_000, 0x99L);
            ConnectionHeader.reason(buffer, HEADERS, 5);
            final String rejected = decode(buffer, reject.writeFrame(buffer, 0, 0));
            assertTrue(rejected.contains(" SPRAY_CONNECT_REJECT ") && rejected.contains(" token=0x99 reason=5)"), rejected);
        }
    }

    @Test
    void shouldShowEveryFieldOfASprayWriteImmInJsonWithItsRethAndImmediate()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment buffer = arena.allocate(2048);
            final RoceFrameWriter writer = writer(SprayOpcodes.WRITE_WITH_IMMEDIATE).psn(77);
            SprayExtendedTransportHeader.path(buffer, HEADERS, 3);
            SprayExtendedTransportHeader.flags(buffer, HEADERS, SprayExtendedTransportHeader.FLAG_LAST);
            SprayExtendedTransportHeader.stream(buffer, HEADERS, 65535);
            SprayExtendedTransportHeader.msn(buffer, HEADERS, -1);
            SprayExtendedTransportHeader.messageOffset(buffer, HEADERS, 8192);
            SprayExtendedTransportHeader.messageLength(buffer, HEADERS, 8200);
            SprayExtendedTransportHeader.rsn(buffer, HEADERS, 4);
            SprayExtendedTransportHeader.messageTag(buffer, HEADERS, -2L);
            final long reth = HEADERS + SprayExtendedTransportHeader.LENGTH;
            RdmaExtendedTransportHeader.virtualAddress(buffer, reth, 0xFFFF_0000_0000_2000L);
            RdmaExtendedTransportHeader.rkey(buffer, reth, 0x8000_0001);
            RdmaExtendedTransportHeader.dmaLength(buffer, reth, 8200);
            ImmediateDataHeader.immediateData(buffer, reth + RdmaExtendedTransportHeader.LENGTH, 0xCAFE_BABE);
            final int length = writer.writeFrame(buffer, 0, 8);

            final String json = json(buffer, length);
            assertTrue(json.contains("\"valid\":true,\"error\":null,"), json);
            assertTrue(json.contains("\"rethVa\":\"18446462598732849152\",\"rethRkey\":2147483649,\"rethLength\":8200,"), json);
            assertTrue(json.contains("\"immediate\":3405691582,\"payloadLength\":8,"), json);
            assertTrue(json.endsWith(",\"spray\":{\"name\":\"SPRAY_WRITE_IMM\",\"seth\":{\"path\":3,\"flags\":2,\"stream\":65535," +
                "\"msn\":4294967295,\"offset\":8192,\"length\":8200,\"rsn\":4,\"messageTag\":\"18446744073709551614\"}," +
                "\"reth\":{\"va\":\"18446462598732849152\",\"rkey\":2147483649,\"length\":8200}," +
                "\"immdt\":{\"immediate\":3405691582}}}"), json);
            final StringBuilder text = new StringBuilder();
            FrameDecoder.appendText(text, 0, new FrameDecoder().parse(buffer, 0, length, LinkType.ETHERNET));
            assertTrue(text.toString().contains(" imm=0xcafebabe len=8 "), text.toString());
        }
    }

    @Test
    void shouldShowTheFieldsATruncatedHeaderHoldsWithItsReasonS31()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment buffer = arena.allocate(2048);
            ConnectionHeader.write(buffer, HEADERS, 0, 8, 2, 4096, 0, 0xABCDEF, 0x123456, 1000, 0x99L);
            final int length = writer(SprayOpcodes.CLOSE).writeFrame(buffer, 0, 0);
            // cut the CONH after its token (28 of 40 bytes): shorten IP and UDP lengths, move the ICRC up
            final int cut = 12;
            final long ip = EthernetHeader.LENGTH;
            Ipv4Header.totalLength(buffer, ip, Ipv4Header.totalLength(buffer, ip) - cut);
            Ipv4Header.updateChecksum(buffer, ip, Ipv4Header.LENGTH);
            final long udp = ip + Ipv4Header.LENGTH;
            UdpHeader.length(buffer, udp, UdpHeader.length(buffer, udp) - cut);
            final String json = json(buffer, length - cut);
            assertTrue(json.contains("\"valid\":false,\"error\":\"BAD_ICRC\","), json);
            assertTrue(json.endsWith(",\"spray\":{\"name\":\"SPRAY_CLOSE\",\"conh\":{\"version\":2,\"flags\":0,\"paths\":8," +
                "\"planes\":2,\"mtu\":4096,\"streams\":0,\"reserved8\":0,\"senderCid\":11259375,\"reserved12\":0," +
                "\"initialPsn\":1193046,\"ingressMbps\":1000,\"token\":\"153\"}}}"), json);
            // TVer 1: the parser judges nothing after the BTH, the text still shows what the headers hold
            buffer.set(java.lang.foreign.ValueLayout.JAVA_BYTE, HEADERS - 11, (byte)1);
            final StringBuilder text = new StringBuilder();
            FrameDecoder.appendText(text, 0, new FrameDecoder().parse(buffer, 0, length - cut, LinkType.ETHERNET));
            assertTrue(text.toString().contains(" SPRAY_CLOSE qp=0x000042 psn=0 pad=0 tver=1 pkey=0xffff conh(version=2 flags=0 " +
                "paths=8 planes=2 mtu=4096 streams=0 reserved8=0 senderCid=11259375 reserved12=0 initialPsn=1193046 " +
                "ingressMbps=1000 token=153) icrc="), text.toString());
            assertTrue(text.toString().startsWith("#0 MALFORMED BAD_ICRC "), text.toString());
        }
    }

    private static String json(final MemorySegment buffer, final int length)
    {
        final RoceFrame frame = new FrameDecoder().parse(buffer, 0, length, LinkType.ETHERNET);
        final StringBuilder json = new StringBuilder();
        FrameDecoder.appendJson(json, 0, frame);
        return json.toString();
    }

    private static String decode(final MemorySegment buffer, final int length)
    {
        final RoceFrame frame = new FrameDecoder().parse(buffer, 0, length, LinkType.ETHERNET);
        final StringBuilder text = new StringBuilder();
        FrameDecoder.appendText(text, 0, frame);
        return text.toString();
    }

    private static RoceFrameWriter writer(final int opcode)
    {
        return new RoceFrameWriter(SprayOpcodes.TABLE)
            .ethernet(0x020000000001L, 0x020000000002L)
            .ipv4(0x0A000001, 0x0A000002)
            .ecn(2)
            .udpSourcePort(50000)
            .opcode(opcode)
            .destQp(0x42);
    }
}
