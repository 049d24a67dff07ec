package io.spraynic.cli;

import io.spraynic.datapath.telemetry.CountersFileReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

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
 * {@code spraynic capture} against a NIC process carrying a verified transfer: two spray NICs in processes of their own
 * joined by net_memif, {@code spraynic client} writing and reading back through the second, and {@code spraynic capture}
 * (a third process, stopped with SIGTERM as Ctrl-C would) taking every frame of the second NIC. The pcapng holds as many
 * frames as its worker counted as captured; tshark reads every one of them as RoCEv2 (spray rides in RoCEv2 framing),
 * and {@code spraynic decode} parses every one.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class CaptureCommandTest
{
    private static final Pattern WROTE = Pattern.compile("wrote ([0-9,]+) frames to .*; the workers captured ([0-9,]+), " +
        "dropped ([0-9,]+) \\(ring full\\), filtered out ([0-9,]+)");

    /** An EAL file prefix of this test's own: other memif pairs (other test classes, other users) run beside it. */
    private static final String INSTANCE = "instance=-capture-" + ProcessHandle.current().pid();

    @TempDir
    Path dir;

    @Test
    void shouldCaptureAVerifiedTransferFromARunningNicIntoPcapngThatTsharkAndDecodeRead() throws Exception
    {
        final Path socket = dir.resolve("memif.sock");
        final Path exchange = dir.resolve("exchange");
        final Path ipc = dir.resolve("ipc");
        final Path servedRun = Files.createDirectory(dir.resolve("served-run"));
        final Path out = dir.resolve("out.pcapng");
        final StringBuilder seen = new StringBuilder();
        final Process server = ClientCommandTest.startNic(Files.createDirectory(dir.resolve("server-run")), seen,
            "--config", "net_memif", "-p", "role=server", "-p", "socket=" + socket, "-p", INSTANCE, "--mode", "spray", "--ip", "10.7.0.2",
            "--expose", "4m", "--exchange", exchange.toString(), "--idle", "sleep");
        Process served = null;
        Process capture = null;
        try
        {
            served = ClientCommandTest.startNic(servedRun, seen, "--config", "net_memif", "-p", "role=client", "-p", INSTANCE, "-p",
                "socket=" + socket, "--mode", "spray", "--ip", "10.7.0.1", "--ipc-dir", ipc.toString(), "--idle", "sleep");
            final StringBuilder captureOut = new StringBuilder();
            capture = ClientCommandTest.start(servedRun, seen, "spraynic capture: NIC pid", captureOut, "capture",
                "--ipc-dir", ipc.toString(), "--duration", "120s", "--filter", "port 0 and queue 0", out.toString());

            final CliTestSupport.Run client = CliTestSupport.run("client", "--ipc-dir", ipc.toString(), "--peer-exchange",
                exchange.toString(), "--size", "512k", "--message", "16k");
            assertEquals(0, client.exitCode(), seen + client.out() + client.err());
            assertTrue(client.out().contains("every byte verified; closed idle"), client.out());

            capture.toHandle().destroy(); // SIGTERM: the capture ends early and the file gets its statistics
            assertTrue(capture.waitFor(30, TimeUnit.SECONDS), "capture stopped");
            assertTrue(capture.exitValue() == 0 || capture.exitValue() == 128 + 15, "SIGTERM's status, after the hook ended the file: " +
                capture.exitValue() + " " + captureOut);
            final String said;
            synchronized (captureOut)
            {
                said = captureOut.toString();
            }
            final Matcher wrote = WROTE.matcher(said);
            assertTrue(wrote.find(), said);
            final long frames = number(wrote.group(1));
            final long captured = number(wrote.group(2));
            final long dropped = number(wrote.group(3));
            assertEquals(captured, frames, "every frame the workers captured is in the file: " + said);
            assertTrue(frames > 2 * (512 * 1024 / 4096), "the writes, the reads and their ACKs: " + said);

            // the NIC's own counters (spraynic stat) agree
            try (CountersFileReader counters = CountersFileReader.open(CountersFileReader.findLive(servedRun).orElseThrow()))
            {
                assertEquals(served.pid(), counters.pid());
                assertEquals(captured, value(counters, "worker 0: capture frames"));
                assertEquals(dropped, value(counters, "worker 0: capture drops (ring full)"));
                assertEquals(1, value(counters, "ipc: captures ended"));
            }

            final String tshark = run(List.of("tshark", "-r", out.toString(), "-T", "fields", "-e", "frame.interface_name",
                "-e", "eth.type", "-e", "udp.dstport"));
            final List<String> lines = tshark.lines().toList();
            assertEquals(frames, lines.size(), "tshark reads every frame");
            // RoCEv2 frames, and the few ARP frames with which the NIC resolves its peer
            final long arp = lines.stream().filter(l -> l.split("\t", -1)[1].equals("0x0806")).count();
            assertTrue(lines.stream().allMatch(l -> l.endsWith("\t4791") || l.split("\t", -1)[1].equals("0x0806")),
                "every frame is RoCEv2 or ARP: " + tshark);
            assertTrue(arp < frames / 10, "a few ARP frames, not a flood: " + arp + " of " + frames);
            assertTrue(lines.stream().anyMatch(l -> l.startsWith("net_memif0/q0-rx")) &&
                lines.stream().anyMatch(l -> l.startsWith("net_memif0/q0-tx")), "one interface per queue and direction: " +
                lines.get(0));
            final String info = run(List.of("capinfos", out.toString()));
            assertEquals(2, info.split("Number of stat entries = 1", -1).length - 1,
                "each interface ends with its statistics (received, dropped): " + info);

            final CliTestSupport.Run decode = CliTestSupport.run("decode", "--summary", out.toString());
            assertEquals(0, decode.exitCode(), decode.err());
            assertTrue(decode.err().contains(frames + " frames: " + (frames - arp) + " RoCEv2, " + arp + " not RoCEv2, 0 malformed"),
                decode.err());
        }
        finally
        {
            for (final Process p : new Process[]{capture, served, server})
            {
                if (null != p)
                {
                    p.toHandle().destroy();
                    if (!p.waitFor(30, TimeUnit.SECONDS))
                    {
                        p.destroyForcibly();
                    }
                }
            }
        }
    }

    /**
     * A NIC process on net_null (its worker receives 64 B frames as fast as it can) captured with {@code --sample 16}:
     * of the F frames the worker offered the capture, it wrote or dropped exactly ceil(F / 16) and counted the rest
     * sampled out, as its counters ({@code spraynic stat}) and the summary say; the file holds every frame written, and
     * capinfos reads the interface's comment that says 1 in 16.
     */
    @Test
    void shouldWriteOneFrameInNOfARunningNicAndSayItInTheFile() throws Exception
    {
        final Path ipc = dir.resolve("ipc");
        final Path run = Files.createDirectory(dir.resolve("run"));
        final Path out = dir.resolve("sampled.pcapng");
        final StringBuilder seen = new StringBuilder();
        final Process nic = ClientCommandTest.startNic(run, seen, "--config", "net_null", "-p",
            "file_prefix=spraynic-sample-" + ProcessHandle.current().pid(), "--mode", "spray", "--ip", "10.7.9.1",
            "--ipc-dir", ipc.toString(), "--idle", "sleep", "--seconds", "120");
        try
        {
            final CliTestSupport.Run capture = CliTestSupport.run("capture", "--ipc-dir", ipc.toString(), "--duration", "1s",
                "--sample", "16", "--snaplen", "64", out.toString());
            assertEquals(0, capture.exitCode(), seen + capture.out() + capture.err());
            assertTrue(capture.out().contains("sampling 1 frame in 16"), capture.out());
            // --snaplen 64 keeps the default ring's bytes, as 105,267 records of 80 B, not 2,048 of them
            assertTrue(capture.out().contains("1 ring(s) of 8421376 B (105267 frames of the snap length, 64 B)"),
                capture.out());
            final Matcher wrote = Pattern.compile(WROTE.pattern() + ", sampled out ([0-9,]+) \\(1 in 16 sampled\\)")
                .matcher(capture.out());
            assertTrue(wrote.find(), capture.out());
            final long frames = number(wrote.group(1));
            final long captured = number(wrote.group(2));
            final long dropped = number(wrote.group(3));
            final long sampledOut = number(wrote.group(5));
            assertEquals(captured, frames, "every frame the worker captured is in the file");
            assertTrue(captured > 0 && sampledOut > 0, capture.out());
            final long offered = captured + dropped + sampledOut;
            assertEquals((offered + 15) / 16, captured + dropped, "the 1st, 17th, 33rd... of " + offered + " frames");
            try (CountersFileReader counters = CountersFileReader.open(CountersFileReader.findLive(run).orElseThrow()))
            {
                assertEquals(nic.pid(), counters.pid());
                assertEquals(captured, value(counters, "worker 0: capture frames"));
                assertEquals(dropped, value(counters, "worker 0: capture drops (ring full)"));
                assertEquals(sampledOut, value(counters, "worker 0: capture sampled out"));
            }
            final String info = run(List.of("capinfos", out.toString()));
            assertTrue(info.contains("Number of packets = " + frames), info);
            assertTrue(info.contains("Comment = sampled: 1 in 16 frames the filter took"), info);
        }
        finally
        {
            nic.toHandle().destroy();
            if (!nic.waitFor(30, TimeUnit.SECONDS))
            {
                nic.destroyForcibly();
            }
        }
    }

    @Test
    void shouldRefuseABadFilterOrDurationInOneSentence()
    {
        final CliTestSupport.Run filter = CliTestSupport.run("capture", "--filter", "rx and tx", "x.pcapng");
        assertEquals(1, filter.exitCode());
        assertTrue(filter.err().contains("a frame is either received or transmitted"), filter.err());
        for (final String bad : new String[]{"2d", "2h", "0", "-1s", "5 s", "1e3"})
        {
            final CliTestSupport.Run duration = CliTestSupport.run("capture", "--duration", bad, "x.pcapng");
            assertEquals(SprayNic.USAGE_ERROR, duration.exitCode());
            assertTrue(duration.err().contains("--duration " + bad + ": is not a time of 1ms to 1h"), duration.err());
        }
        final CliTestSupport.Run slots = CliTestSupport.run("capture", "--ring-slots", "100", "x.pcapng");
        assertEquals(SprayNic.USAGE_ERROR, slots.exitCode());
        assertTrue(slots.err().contains("--ring-slots 100: must be a power of two, 16..65536; try --ring-slots 64"), slots.err());
        final CliTestSupport.Run small = CliTestSupport.run("capture", "--ring-size", "1k", "x.pcapng");
        assertEquals(SprayNic.USAGE_ERROR, small.exitCode());
        assertTrue(small.err().contains("--ring-size 1024: must be 65792..1073733504 B (at least 16 frames of the 4096 B " +
            "snap length); try --ring-size 65792"), small.err());
        final CliTestSupport.Run large = CliTestSupport.run("capture", "--ring-size", "2g", "x.pcapng");
        assertEquals(SprayNic.USAGE_ERROR, large.exitCode());
        assertTrue(large.err().contains("try --ring-size 1073733504"), large.err());
        final CliTestSupport.Run both = CliTestSupport.run("capture", "--ring-size", "16m", "--ring-slots", "64", "x.pcapng");
        assertEquals(SprayNic.USAGE_ERROR, both.exitCode());
        assertTrue(both.err().contains("--ring-slots 64: sizes the ring as --ring-size does; try --ring-slots 64 without --ring-size"), both.err());
        final CliTestSupport.Run help = CliTestSupport.run("capture", "--help");
        assertTrue(help.out().contains("udp dst port N") && help.out().contains("queue N[,N...]"), help.out());
    }

    private static long number(final String text)
    {
        return Long.parseLong(text.replace(",", ""));
    }

    static long value(final CountersFileReader counters, final String label)
    {
        return counters.read().stream().filter(c -> c.label().equals(label)).findFirst().orElseThrow(
            () -> new AssertionError("no counter " + label)).value();
    }

    static String run(final List<String> command) throws Exception
    {
        final Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out);
        return out;
    }
}
