package io.spraynic.cli;

import io.spraynic.datapath.capture.LinkType;
import io.spraynic.datapath.capture.PcapWriter;
import io.spraynic.datapath.port.RawFrames;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.RoceFrameWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DecodeCommandTest
{
    private static final List<String> KEYS = List.of("frame", "valid", "error", "ipVersion", "srcIp", "dstIp", "ecn",
        "udpSrcPort", "udpDstPort", "opcode", "solicited", "migReq", "padCount", "tver", "pkey", "destQp", "ackReq", "psn",
        "rethVa", "rethRkey", "rethLength", "aethSyndrome", "aethMsn", "immediate", "payloadLength", "icrc", "icrcValid", "spray");

    @Test
    void shouldDecodeCaptureToJsonLinesWithExactKeys(@TempDir final Path dir) throws Exception
    {
        final Path pcap = dir.resolve("frames.pcap");
        try (Arena arena = Arena.ofConfined(); PcapWriter writer = PcapWriter.pcap(pcap, LinkType.ETHERNET))
        {
            final MemorySegment buffer = arena.allocate(4096);
            final int length = new RoceFrameWriter()
                .ethernet(0x020000000001L, 0x020000000002L)
                .ipv4(0x0A000001, 0x0A000002)
                .ecn(3)
                .udpSourcePort(49152)
                .opcode(Opcode.RC_RDMA_WRITE_ONLY)
                .destQp(0x12)
                .ackReq(true)
                .psn(0xFFFFFE)
                .reth(0x1000_0000_0000L, 0xABCD, 13)
                .writeFrame(buffer, 0, 13);
            writer.write(buffer, 0, length, 0);
            RawFrames.write(buffer, 0, 64, 1);
            writer.write(buffer, 0, 64, 1000);
        }

        final CliTestSupport.Run run = CliTestSupport.run("decode", "--json", pcap.toString());
        assertEquals(0, run.exitCode(), run.err());
        final List<String> lines = run.out().lines().toList();
        assertEquals(2, lines.size(), run.out());

        final String roce = lines.get(0);
        int from = 0;
        for (final String key : KEYS)
        {
            final int at = roce.indexOf("\"" + key + "\":", from);
            assertTrue(at >= from, "key " + key + " in order in " + roce);
            from = at;
        }
        assertTrue(roce.contains("\"valid\":true"), roce);
        assertTrue(roce.contains("\"srcIp\":\"10.0.0.1\""), roce);
        assertTrue(roce.contains("\"ecn\":3"), roce);
        assertTrue(roce.contains("\"psn\":16777214"), roce);
        assertTrue(roce.contains("\"rethVa\":\"17592186044416\""), roce);
        assertTrue(roce.contains("\"rethLength\":13"), roce);
        assertTrue(roce.contains("\"payloadLength\":13"), roce);
        assertTrue(roce.contains("\"padCount\":3"), roce);
        assertTrue(roce.contains("\"icrcValid\":true"), roce);
        assertTrue(roce.contains("\"aethSyndrome\":null"), roce);

        assertTrue(lines.get(1).contains("\"valid\":false"), lines.get(1));
    }

    @Test
    void shouldPrintEveryFrameBeforeACorruptRecordAndThenTheError(@TempDir final Path dir) throws Exception
    {
        final Path pcap = dir.resolve("cut.pcap");
        try (Arena arena = Arena.ofConfined(); PcapWriter writer = PcapWriter.pcap(pcap, LinkType.ETHERNET))
        {
            final MemorySegment buffer = arena.allocate(128);
            for (int i = 0; i < 3; i++)
            {
                RawFrames.write(buffer, 0, 64, i);
                writer.write(buffer, 0, 64, i);
            }
        }
        // a record header cut short, as a capture killed mid-write leaves: before, the three frames decoded ahead
        // of it stayed in the output buffer and never reached stdout
        java.nio.file.Files.write(pcap, new byte[]{1, 2, 3, 4, 5}, java.nio.file.StandardOpenOption.APPEND);
        final CliTestSupport.Run run = CliTestSupport.run("decode", "--json", pcap.toString());
        assertEquals(1, run.exitCode(), run.err());
        assertEquals(3, run.out().lines().count(), run.out());
        assertTrue(run.err().contains("truncated record header"), run.err());
    }

    @Test
    void shouldRefuseMissingFileInOneSentence()
    {
        final CliTestSupport.Run run = CliTestSupport.run("decode", "/no/such/file.pcap");
        assertEquals(1, run.exitCode());
        assertEquals("spraynic decode: cannot read /no/such/file.pcap: no such file or no permission", run.err().strip());
    }
}
