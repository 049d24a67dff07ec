package io.spraynic.cli;

import io.spraynic.datapath.capture.LinkType;
import io.spraynic.datapath.capture.PcapWriter;
import io.spraynic.datapath.nic.ipc.IpcMessages;
import io.spraynic.datapath.nic.ipc.NicClient;
import io.spraynic.datapath.nic.ipc.NicRefusedException;
import io.spraynic.datapath.telemetry.CountersFileReader;
import io.spraynic.datapath.verbs.AccessFlags;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code spraynic capture} against a NIC in classify mode ({@code spraynic nic --mode classify --ipc-dir}: poll threads
 * that classify and count, no transport): two DPDK {@code net_pcap} ports replay two pcap files of known UDP frames
 * without end ({@code infinite_rx}); a capture of 300 ms takes them through the same IPC request and rings as from a
 * spray NIC, and tshark reads every frame of the pcapng back, byte for byte one of the frames its port replays, on
 * the interface of that port. A filtered capture takes one port only; a client asking for memory is refused, and the
 * NIC captures on.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ClassifyCaptureTest
{
    private static final Pattern WROTE = Pattern.compile("wrote ([0-9,]+) frames to .*; the workers captured ([0-9,]+), " +
        "dropped ([0-9,]+) \\(ring full\\), filtered out ([0-9,]+)");
    private static final int[] FIRST_PORT = {4000, 5000};
    private static final int[] FRAMES = {5, 3};

    @TempDir
    Path dir;

    @Test
    void shouldCaptureEveryPortOfAClassifyingNicIntoPcapngThatTsharkReadsBackFrameForFrame() throws Exception
    {
        final Path config = dir.resolve("classify.toml");
        final StringBuilder toml = new StringBuilder("""
            description = "two net_pcap ports replaying known frames without end"
            [eal]
            lcores = "0"
            no_huge = true
            memory_mb = 256
            no_pci = true
            file_prefix = "spraynic-classify-capture-%d"
            """.formatted(ProcessHandle.current().pid()));
        for (int port = 0; port < 2; port++)
        {
            final Path replay = dir.resolve("in" + port + ".pcap");
            try (PcapWriter writer = PcapWriter.pcap(replay, LinkType.ETHERNET))
            {
                for (int i = 0; i < FRAMES[port]; i++)
                {
                    final byte[] frame = frame(port, i);
                    writer.write(MemorySegment.ofArray(frame), 0, frame.length, 1_000_000L * i);
                }
            }
            toml.append("""
                [[port]]
                name = "pcap%d"
                kind = "vdev"
                device = "net_pcap%d"
                args = { rx_pcap = "%s", tx_pcap = "%s", infinite_rx = 1 }
                """.formatted(port, port, replay, dir.resolve("out" + port + ".pcap")));
        }
        Files.writeString(config, toml.toString());
        final Path ipc = dir.resolve("ipc");
        final Path runDir = Files.createDirectory(dir.resolve("run"));
        final StringBuilder seen = new StringBuilder();
        final Process nic = ClientCommandTest.startNic(runDir, seen, "--config", config.toString(), "--mode", "classify",
            "--ipc-dir", ipc.toString(), "--seconds", "120");
        try
        {
            final Path out = dir.resolve("all.pcapng");
            final long[] all = capture(ipc, out, "");
            final long frames = all[0];
            assertEquals(all[1], frames, "every frame the poll threads captured is in the file");
            assertTrue(frames > 100, "300 ms of two ports replaying: " + frames);
            final List<String> lines = tshark(out);
            assertEquals(frames, lines.size(), "tshark reads every frame");
            final int[] perPort = new int[2];
            for (final String line : lines)
            {
                final String[] fields = line.split("\t", -1);
                final int port = fields[0].equals("pcap0/q0-rx") ? 0 : fields[0].equals("pcap1/q0-rx") ? 1 : -1;
                assertTrue(port >= 0, "one interface per port, queue and direction: " + line);
                final int index = Integer.parseInt(fields[1]) - FIRST_PORT[port];
                assertTrue(index >= 0 && index < FRAMES[port], "a frame port " + port + " replays: " + line);
                final byte[] expected = frame(port, index);
                assertEquals(expected.length, Integer.parseInt(fields[2]), line);
                assertEquals(HexFormat.of().formatHex(expected, 42, expected.length), fields[3], "the payload byte for byte: " + line);
                assertEquals("10.9." + port + ".1", fields[4], line);
                perPort[port]++;
            }
            assertTrue(perPort[0] > 0 && perPort[1] > 0, "both ports' poll threads captured: " + perPort[0] + ", " + perPort[1]);

            // the NIC counts what its poll threads captured, per port queue
            try (CountersFileReader counters = CountersFileReader.open(CountersFileReader.findLive(runDir).orElseThrow()))
            {
                assertEquals(nic.pid(), counters.pid());
                assertEquals(all[1], CaptureCommandTest.value(counters, "port pcap0/q0: capture frames") +
                    CaptureCommandTest.value(counters, "port pcap1/q0: capture frames"));
                assertEquals(1, CaptureCommandTest.value(counters, "ipc: captures ended"));
            }

            final Path second = dir.resolve("port1.pcapng");
            final long[] filtered = capture(ipc, second, "port 1");
            assertTrue(filtered[0] > 0, "port 1 replays frames");
            assertTrue(tshark(second).stream().allMatch(l -> l.startsWith("pcap1/q0-rx\t")), "port 1 only");

            final CliTestSupport.Run client = CliTestSupport.run("client", "--ipc-dir", ipc.toString(), "--timeout", "5");
            assertTrue(client.exitCode() != 0);
            assertTrue(client.err().contains("runs in classify mode: it serves spraynic capture only"), client.err());
            // a client that asks for memory all the same is refused by the NIC, which serves on
            try (NicClient direct = NicClient.connect(ipc, Duration.ofSeconds(5)))
            {
                assertNull(direct.mode(), "capture only");
                final NicRefusedException refused = assertThrows(NicRefusedException.class,
                    () -> direct.register(1 << 16, AccessFlags.LOCAL_WRITE));
                assertEquals(IpcMessages.ERR_NOT_PERMITTED, refused.code(), refused.getMessage());
                assertTrue(refused.getMessage().contains("classify mode"), refused.getMessage());
            }
            assertTrue(capture(ipc, dir.resolve("again.pcapng"), "port 0")[0] > 0, "and captures on");
        }
        finally
        {
            nic.toHandle().destroy();
            if (!nic.waitFor(30, TimeUnit.SECONDS))
            {
                nic.destroyForcibly();
            }
        }
        assertTrue(seen.toString().contains("serving live capture in " + ipc), seen.toString());
    }

    /** @return frames written and frames the poll threads said they captured, for a capture of 300 ms. */
    private static long[] capture(final Path ipc, final Path out, final String filter)
    {
        final CliTestSupport.Run run = CliTestSupport.run("capture", "--ipc-dir", ipc.toString(), "--duration", "300ms",
            "--filter", filter, out.toString());
        assertEquals(0, run.exitCode(), run.out() + run.err());
        final Matcher wrote = WROTE.matcher(run.out());
        assertTrue(wrote.find(), run.out());
        return new long[]{number(wrote.group(1)), number(wrote.group(2))};
    }

    /** @return per frame: interface, UDP destination port, length, UDP payload (hex), IPv4 source; tab-separated. */
    private static List<String> tshark(final Path pcapng) throws Exception
    {
        return CaptureCommandTest.run(List.of("tshark", "-r", pcapng.toString(), "-d", "udp.port==4000-5010,data", "-T",
            "fields", "-e", "frame.interface_name", "-e", "udp.dstport", "-e", "frame.len", "-e", "data.data", "-e", "ip.src"))
            .lines().toList();
    }

    /** Frame {@code index} of port {@code port}: Ethernet, IPv4, UDP to port FIRST_PORT + index, a payload of its own. */
    static byte[] frame(final int port, final int index)
    {
        final int payload = 18 + 40 * index + port;
        final byte[] f = new byte[14 + 20 + 8 + payload];
        final int[] head = {0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x00};
        for (int i = 0; i < head.length; i++)
        {
            f[i] = (byte)head[i];
        }
        final int ipLength = 20 + 8 + payload;
        final int[] ip = {0x45, 0, ipLength >> 8, ipLength & 0xFF, 0, index, 0x40, 0, 64, 17, 0, 0, 10, 9, port, 1, 10, 9,
            port, 2};
        for (int i = 0; i < ip.length; i++)
        {
            f[14 + i] = (byte)ip[i];
        }
        int sum = 0;
        for (int i = 0; i < 20; i += 2)
        {
            sum += (f[14 + i] & 0xFF) << 8 | f[15 + i] & 0xFF;
        }
        sum = (sum & 0xFFFF) + (sum >>> 16);
        sum = ~((sum & 0xFFFF) + (sum >>> 16)) & 0xFFFF;
        f[24] = (byte)(sum >> 8);
        f[25] = (byte)sum;
        final int dst = FIRST_PORT[port] + index;
        final int udpLength = 8 + payload;
        final int[] udp = {0x30, 0x39, dst >> 8, dst & 0xFF, udpLength >> 8, udpLength & 0xFF, 0, 0};
        for (int i = 0; i < udp.length; i++)
        {
            f[34 + i] = (byte)udp[i];
        }
        for (int i = 0; i < payload; i++)
        {
            f[42 + i] = (byte)(31 * index + 7 * port + i);
        }
        return f;
    }

    private static long number(final String digits)
    {
        return Long.parseLong(digits.replace(",", ""));
    }
}
