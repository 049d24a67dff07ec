package io.spraynic.cli;

import io.spraynic.datapath.capture.FrameDecoder;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code spraynic decode --json} against two decoders written from docs/PROTOCOL.md alone (tools/decoders: the scapy
 * layers and the Wireshark Lua dissector through tshark), field by field: on the generated spray vectors, valid and
 * malformed (same reason, same readable fields, every field of every table shown by each decoder), and on a capture of
 * a real spray transfer ({@code spraynic demo --capture}). One EAL per JVM (the demo), so a class of its own.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class SpraySpecDecodersTest
{
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Path VECTORS = ROOT.resolve("datapath/src/test/resources/wire/spray_vectors.pcap");
    private static final Path COMPARE = ROOT.resolve("tools/decoders/compare_decoders.py");

    @TempDir
    Path dir;

    @BeforeAll
    static void toolsInstalled() throws Exception
    {
        Assumptions.assumeTrue(exitCode(List.of("tshark", "-v")) == 0, "tshark not installed (./spraynic test installs it)");
        Assumptions.assumeTrue(exitCode(List.of("/usr/bin/python3", "-c", "import scapy")) == 0,
            "python3-scapy not installed (./spraynic test installs it)");
    }

    @Test
    void shouldAgreeOnEveryFieldAndReasonOfEveryVector() throws Exception
    {
        final Path java = decode(VECTORS);
        final Compared compared = compare(java, VECTORS, true);
        assertEquals(0, compared.exitCode(), compared.report());
        assertTrue(compared.report().startsWith("{\"frames\":51,\"sprayFrames\":51,"), compared.report());
        assertTrue(compared.report().contains("\"malformed\":17,\"mismatches\":[],\"mismatchCount\":0,\"missingFields\":[],"),
            "every decoder showed every field of every table: " + compared.report());
    }

    @Test
    void shouldReportADecoderThatDisagrees() throws Exception
    {
        final Path java = decode(VECTORS);
        final String lines = Files.readString(java, StandardCharsets.UTF_8);
        // vector 0: SETH msn 2^32-1; one value off, as a wrong offset or byte order would make it
        final String wrong = lines.replaceFirst("\"msn\":4294967295", "\"msn\":4294967294")
            .replaceFirst("\"error\":\"BAD_TVER\"", "\"error\":\"UNKNOWN_OPCODE\"");
        assertTrue(!wrong.equals(lines));
        Files.writeString(java, wrong, StandardCharsets.UTF_8);
        final Compared compared = compare(java, VECTORS, true);
        assertEquals(1, compared.exitCode(), compared.report());
        assertTrue(compared.report().contains("{\"frame\":0,\"field\":\"seth.msn\",\"java\":4294967294,\"scapy\":4294967295," +
            "\"lua\":4294967295}"), compared.report());
        assertTrue(compared.report().contains("\"field\":\"error\",\"java\":\"UNKNOWN_OPCODE\",\"scapy\":\"BAD_TVER\",\"lua\":\"BAD_TVER\""),
            compared.report());
    }

    @Test
    void shouldAgreeOnEveryFieldOfARealSprayTransfer() throws Exception
    {
        final Path capture = dir.resolve("spray.pcapng");
        final CliTestSupport.Run demo = CliTestSupport.run("demo", "--size", "1m", "--no-baseline", "--planes", "2",
            "--paths", "4", "--capture", capture.toString());
        assertEquals(0, demo.exitCode(), demo.out() + demo.err());
        assertTrue(demo.out().contains("every byte checked"), demo.out());
        final Path java = decode(capture);
        final String decoded = Files.readString(java, StandardCharsets.UTF_8);
        for (final String name : List.of("SPRAY_CONNECT", "SPRAY_CONNECT_ACK", "SPRAY_WRITE", "SPRAY_ACK"))
        {
            assertTrue(decoded.contains("\"name\":\"" + name + "\""), "the capture holds a " + name);
        }
        final Compared compared = compare(java, capture, false);
        assertEquals(0, compared.exitCode(), compared.report());
        final Matcher counts = Pattern.compile("^\\{\"frames\":(\\d+),\"sprayFrames\":(\\d+),\"valuesCompared\":(\\d+)," +
            "\"malformed\":0,\"mismatches\":\\[],").matcher(compared.report());
        assertTrue(counts.find(), compared.report());
        // besides spray, only the NICs' gratuitous ARPs as they start (no IP header: nothing for a decoder to compare)
        final long arp = decoded.lines().filter(line -> line.contains("\"error\":\"" + FrameDecoder.NOT_OURS + "\"") &&
            line.contains("\"ipVersion\":null")).count();
        assertTrue(arp <= 8, "a gratuitous ARP per NIC and plane, no more: " + arp);
        assertEquals(Long.parseLong(counts.group(1)) - arp, Long.parseLong(counts.group(2)),
            "every other frame is a spray frame: " + compared.report());
        assertTrue(Long.parseLong(counts.group(2)) > 100, compared.report());
    }

    /**
     * S4.1, S9.3-3: the SETH attempt (flags bits 2-4) of an RNR retry's packets, shown by the Lua dissector as
     * spray.seth.attempt (with the RETRANSMIT and LAST bits beside it) and by {@code spraynic decode} as attempt=N, on
     * SENDs of attempts 0, 3 and 7 generated by the spec's scapy layers.
     */
    @Test
    void shouldShowTheAttemptOfEachDataPacket() throws Exception
    {
        final Path capture = dir.resolve("attempts.pcap");
        final String script = "import sys; sys.path.insert(0, sys.argv[1])\n" +
            "from make_spray_vectors import vector\nfrom spray_scapy import SETH\n" +
            "from scapy.layers.l2 import Ether\nfrom scapy.utils import wrpcap\n" +
            "frames = [vector(0xC2, [SETH(path=1, flags=a << 2 | r, stream=1, msn=9, length=4, rsn=2, messageTag=5)]," +
            " b'abcd', psn=a)[0] for a, r in ((0, 2), (3, 1), (7, 3))]\n" +
            "wrpcap(sys.argv[2], [Ether(f) for f in frames])\n";
        final Process python = new ProcessBuilder("/usr/bin/python3", "-c", script,
            ROOT.resolve("tools/decoders").toString(), capture.toString()).redirectErrorStream(true).start();
        final String pythonOut = new String(python.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(python.waitFor(60, TimeUnit.SECONDS) && python.exitValue() == 0, pythonOut);
        final String lua = output(List.of("tshark", "-n", "-X", "lua_script:" + ROOT.resolve("tools/decoders/spray.lua"),
            "-r", capture.toString(), "-T", "fields", "-e", "spray.seth.flags", "-e", "spray.seth.attempt", "-e",
            "spray.seth.retransmit", "-e", "spray.seth.last", "-e", "_ws.expert.message"));
        assertEquals(List.of("2\t0\t0\t1\t", "13\t3\t1\t0\t", "31\t7\t1\t1\t"), lua.lines().toList());
        final CliTestSupport.Run text = CliTestSupport.run("decode", capture.toString());
        assertEquals(0, text.exitCode(), text.err());
        final List<String> lines = text.out().lines().filter(line -> line.contains("seth(")).toList();
        assertEquals(3, lines.size(), text.out());
        assertTrue(lines.get(0).contains(" rsn=2 last)"), lines.get(0));
        assertTrue(lines.get(1).contains(" rsn=2 retransmit attempt=3)"), lines.get(1));
        assertTrue(lines.get(2).contains(" rsn=2 retransmit last attempt=7)"), lines.get(2));
    }

    @Test
    void shouldLeaveRoceV2PacketsToWiresharksInfinibandDissector() throws Exception
    {
        final Path roce = ROOT.resolve("datapath/src/test/resources/wire/roce_vectors.pcap");
        final List<String> fields = List.of("-T", "fields", "-e", "frame.number", "-e", "_ws.col.Protocol", "-e",
            "infiniband.bth.opcode", "-e", "infiniband.bth.psn", "-e", "infiniband.reth.va", "-e", "infiniband.aeth.msn",
            "-e", "infiniband.immdt", "-e", "_ws.expert.message");
        final String plain = output(concat(List.of("tshark", "-n", "-r", roce.toString()), fields));
        final String withLua = output(concat(List.of("tshark", "-n", "-X", "lua_script:" +
            ROOT.resolve("tools/decoders/spray.lua"), "-r", roce.toString()), fields));
        assertEquals(31, plain.lines().count(), plain);
        assertEquals(plain, withLua, "the RoCEv2 vectors, malformed ones included, decode as without the spray dissector");
    }

    private static List<String> concat(final List<String> a, final List<String> b)
    {
        final List<String> all = new java.util.ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    private static String output(final List<String> command) throws Exception
    {
        final Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(120, TimeUnit.SECONDS), "tshark finished");
        assertEquals(0, process.exitValue(), output);
        return output;
    }

    private Path decode(final Path capture) throws IOException
    {
        final CliTestSupport.Run run = CliTestSupport.run("decode", "--json", capture.toString());
        assertEquals(0, run.exitCode(), run.err());
        final Path java = Files.createTempFile(dir, "decode", ".jsonl");
        Files.writeString(java, run.out(), StandardCharsets.UTF_8);
        return java;
    }

    private record Compared(int exitCode, String report)
    {
    }

    private static Compared compare(final Path java, final Path capture, final boolean everyField) throws Exception
    {
        final List<String> command = new java.util.ArrayList<>(List.of("/usr/bin/python3", COMPARE.toString(),
            "--java", java.toString(), "--capture", capture.toString(), "--protocol", ROOT.resolve("docs/PROTOCOL.md").toString()));
        if (everyField)
        {
            command.add("--require-every-field");
        }
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(240, TimeUnit.SECONDS), "comparison finished");
        return new Compared(process.exitValue(), output.strip());
    }

    private static int exitCode(final List<String> command) throws InterruptedException
    {
        try
        {
            final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            process.getInputStream().readAllBytes();
            return process.waitFor(60, TimeUnit.SECONDS) ? process.exitValue() : -1;
        }
        catch (final IOException ex)
        {
            return -1;
        }
    }
}
