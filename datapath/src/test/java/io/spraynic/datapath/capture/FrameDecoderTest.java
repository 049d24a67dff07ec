package io.spraynic.datapath.capture;

import io.spraynic.datapath.wire.MalformedReason;
import io.spraynic.datapath.wire.ParseCounters;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Decodes the scapy-generated vectors (src/test/resources/wire, made by make_vectors.py) and compares every
 * JSON line, field by field, with what the generator intended.
 */
class FrameDecoderTest
{
    static Path resource(final String name) throws URISyntaxException
    {
        return Path.of(Objects.requireNonNull(FrameDecoderTest.class.getResource("/wire/" + name)).toURI());
    }

    static List<String> expectedLines() throws IOException, URISyntaxException
    {
        return Files.readAllLines(resource("roce_vectors.jsonl"), StandardCharsets.UTF_8);
    }

    private static List<String> decode(final Path file, final boolean json, final DecodeSummary[] summary)
        throws IOException
    {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8))
        {
            summary[0] = FrameDecoder.decode(file, json, out);
        }
        return bytes.toString(StandardCharsets.UTF_8).lines().toList();
    }

    @ParameterizedTest
    @ValueSource(strings = {"roce_vectors.pcap", "roce_vectors.pcapng"})
    void shouldDecodeScapyVectorsToExpectedJson(final String file) throws Exception
    {
        final List<String> expected = expectedLines();
        final DecodeSummary[] summary = new DecodeSummary[1];
        final List<String> actual = decode(resource(file), true, summary);
        assertEquals(expected.size(), actual.size());
        for (int i = 0; i < expected.size(); i++)
        {
            assertEquals(expected.get(i), actual.get(i), "frame " + i);
        }
        final ParseCounters counters = summary[0].counters();
        assertEquals(31, summary[0].frames());
        assertEquals(17, summary[0].roce());
        assertEquals(4, summary[0].notOurs());
        assertEquals(10, summary[0].malformed());
        assertEquals(0, summary[0].unsupportedLinkType());
        assertEquals(31, counters.total());
        assertEquals(1, counters.get(MalformedReason.BAD_IPV4_CHECKSUM));
        assertEquals(1, counters.get(MalformedReason.BAD_ICRC));
        assertEquals(1, counters.get(MalformedReason.BAD_UDP_LENGTH));
        assertEquals(1, counters.get(MalformedReason.TRUNCATED_IP));
        assertEquals(1, counters.get(MalformedReason.TRUNCATED_ETHERNET));
        assertEquals(1, counters.get(MalformedReason.UNKNOWN_OPCODE));
        assertEquals(1, counters.get(MalformedReason.BAD_PAD_COUNT));
        assertEquals(1, counters.get(MalformedReason.BAD_TVER));
        assertEquals(1, counters.get(MalformedReason.TRUNCATED_EXTENSION_HEADER));
        assertEquals(1, counters.get(MalformedReason.TRUNCATED_BTH));
    }

    @Test
    void shouldPrintOneTextLinePerFrame() throws Exception
    {
        final DecodeSummary[] summary = new DecodeSummary[1];
        final List<String> lines = decode(resource("roce_vectors.pcap"), false, summary);
        assertEquals(31, lines.size());
        assertEquals("#0 RoCEv2 IPv4 192.168.1.10:49152 > 192.168.1.20:4791 dscp=0 ecn=0 RC_SEND_ONLY qp=0x000123 " +
            "psn=16777215 ack-req pad=1 pkey=0xffff len=3 icrc=d42b93d8 ok", lines.get(0));
        assertEquals("#3 RoCEv2 IPv4 192.168.1.10:49152 > 192.168.1.20:4791 dscp=0 ecn=0 " +
            "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE qp=0x000022 psn=1 se pad=3 pkey=0xffff " +
            "reth(va=0x7f00deadbeef rkey=0xffffffff len=5) imm=0xcafebabe len=5 icrc=" +
            lines.get(3).substring(lines.get(3).length() - 11), lines.get(3));
        assertEquals("#5 RoCEv2 IPv4 192.168.1.10:49152 > 192.168.1.20:4791 dscp=0 ecn=0 RC_ACKNOWLEDGE " +
            "qp=0x000044 psn=16777215 pad=0 pkey=0xffff aeth(ack/31 msn=11259375) len=0 icrc=" +
            lines.get(5).substring(lines.get(5).length() - 11), lines.get(5));
        assertEquals("#17 MALFORMED BAD_IPV4_CHECKSUM IPv4 192.168.1.10 > 192.168.1.20 dscp=0 ecn=0", lines.get(17));
        assertEquals("#21 MALFORMED TRUNCATED_ETHERNET", lines.get(21));
        assertEquals("#27 NOT_OURS OTHER_UDP_PORT IPv4 192.168.1.10:5353 > 192.168.1.20:53 dscp=0 ecn=0",
            lines.get(27));
        assertEquals("#28 NOT_OURS NON_IP ethertype=0x0806", lines.get(28));
        assertEquals("#30 NOT_OURS IP_FRAGMENT IPv4 192.168.1.10 > 192.168.1.20 dscp=0 ecn=0", lines.get(30));
    }

    @Test
    void shouldEscapeJsonStrings()
    {
        final StringBuilder sb = new StringBuilder();
        FrameDecoder.string(sb, "a\"b\\c\n\u0001é");
        assertEquals("\"a\\\"b\\\\c\\n\\u0001\\u00e9\"", sb.toString());
        sb.setLength(0);
        FrameDecoder.string(sb, null);
        assertEquals("null", sb.toString());
    }

    @Test
    void shouldReportUnsupportedLinkType()
    {
        final StringBuilder sb = new StringBuilder();
        FrameDecoder.appendJson(sb, 4, null);
        assertEquals("{\"frame\":4,\"valid\":false,\"error\":\"UNSUPPORTED_LINK_TYPE\",\"ipVersion\":null," +
            "\"srcIp\":null,\"dstIp\":null,\"ecn\":null,\"udpSrcPort\":null,\"udpDstPort\":null,\"opcode\":null," +
            "\"solicited\":null,\"migReq\":null,\"padCount\":null,\"tver\":null,\"pkey\":null,\"destQp\":null," +
            "\"ackReq\":null,\"psn\":null,\"rethVa\":null,\"rethRkey\":null,\"rethLength\":null," +
            "\"aethSyndrome\":null,\"aethMsn\":null,\"immediate\":null,\"payloadLength\":null,\"icrc\":null," +
            "\"icrcValid\":null,\"spray\":null}", sb.toString());
    }

    @Test
    void shouldReadVectorTimestampsFromBothFormats() throws Exception
    {
        final List<CapturedFrame> pcap = PcapReader.readAll(resource("roce_vectors.pcap"));
        final List<CapturedFrame> pcapng = PcapReader.readAll(resource("roce_vectors.pcapng"));
        assertEquals(31, pcap.size());
        assertEquals(31, pcapng.size());
        for (int i = 0; i < pcap.size(); i++)
        {
            assertEquals(pcap.get(i).originalLength(), pcapng.get(i).originalLength());
            org.junit.jupiter.api.Assertions.assertArrayEquals(pcap.get(i).data(), pcapng.get(i).data());
            assertEquals((1_700_000_000L + i) * 1_000_000_000L + i * 1_000_000L, pcap.get(i).timestampNanos());
            assertEquals((1_700_000_000L + i) * 1_000_000_000L + i * 1_000_000L + 7, pcapng.get(i).timestampNanos());
        }
        // the generator is committed beside its output
        org.junit.jupiter.api.Assertions.assertTrue(Files.readString(resource("make_vectors.py"))
            .contains("from scapy.contrib.roce import BTH, AETH, CNPPadding"));
    }
}
