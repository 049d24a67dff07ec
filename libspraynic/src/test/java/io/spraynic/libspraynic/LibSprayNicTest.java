package io.spraynic.libspraynic;

import io.spraynic.cli.SprayNic;
import io.spraynic.datapath.api.RocevEndpoint;
import io.spraynic.datapath.nic.ipc.ClientConnection;
import io.spraynic.datapath.api.ReceiveRequest;
import io.spraynic.datapath.nic.ipc.ClientRegion;
import io.spraynic.datapath.api.SendRequest;
import io.spraynic.datapath.nic.ipc.NicClient;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionOpcode;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * libspraynic against real NIC processes: two {@code spraynic nic --ipc-dir} on kernel UDP sockets (127.0.0.1 and
 * 127.0.0.2, no root), the C program {@code test_peer} a client of the first, a Java {@link NicClient} in this JVM a
 * client of the second. Both sides WRITE, WRITE with immediate, SEND and READ into each other's regions and check
 * every byte; the C side then plays a NIC that corrupts a completion ring and must get SN_ERR_CORRUPT. Both NIC
 * processes and the C program are killed and the IPC directories removed (with the temporary directory) also on
 * failure.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class LibSprayNicTest
{
    private static final Path NATIVE = Path.of(System.getProperty("user.dir"), "target", "native");
    private static final int KB = 1024;
    private static final int IMM_C2J = 0xC0FFEE01;
    private static final int IMM_J2C = 0x7A5A0001;
    private final List<Process> processes = new ArrayList<>();

    @AfterEach
    void stopProcesses() throws InterruptedException
    {
        for (final Process p : processes)
        {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            p.waitFor(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void shouldPassTheCUnitTestsOfRingsBroadcastAndAHostileNic(@TempDir final Path dir) throws Exception
    {
        final Process test = new ProcessBuilder(NATIVE.resolve("test_ring").toString(), dir.toString())
            .redirectErrorStream(true).start();
        processes.add(test);
        final String out = new String(test.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(test.waitFor(60, TimeUnit.SECONDS), out);
        assertEquals(0, test.exitValue(), out);
        assertTrue(out.contains("test_ring: all passed"), out);
    }

    @ParameterizedTest
    @ValueSource(strings = {"spray-connect", "spray-connect6", "spray-accept", "rocev2"})
    void shouldMoveEveryByteBothWaysBetweenACClientAndAJavaPeer(final String mode, @TempDir final Path dir) throws Exception
    {
        final String transport = mode.startsWith("spray") ? "spray" : "rocev2";
        final int port = 20_000 + new SplittableRandom().nextInt(40_000);
        final Path ipcC = dir.resolve("ipc-c");
        final Path ipcJava = dir.resolve("ipc-java");
        final boolean ipv6 = mode.equals("spray-connect6");
        if (ipv6)
        {
            // both on ::1 (loopback's one IPv6 address) on two UDP ports, each sending to the other's
            startNic(dir, transport, "::1", port, port + 1, ipcC);
            startNic(dir, transport, "::1", port + 1, port, ipcJava);
        }
        else
        {
            startNic(dir, transport, "127.0.0.1", port, port, ipcC);
            startNic(dir, transport, "127.0.0.2", port, port, ipcJava);
        }
        final List<String> command = new ArrayList<>(List.of(NATIVE.resolve("test_peer").toString(), ipcC.toString(), mode));
        if (mode.equals("spray-connect"))
        {
            command.add("127.0.0.2");
        }
        if (ipv6)
        {
            command.add("::1");
        }
        final Process c = new ProcessBuilder(command).redirectErrorStream(true).start();
        processes.add(c);
        final BufferedReader fromC = new BufferedReader(new InputStreamReader(c.getInputStream(), StandardCharsets.UTF_8));
        final PrintStream toC = new PrintStream(c.getOutputStream(), true, StandardCharsets.UTF_8);
        final StringBuilder transcript = new StringBuilder();
        try (NicClient nic = NicClient.connect(ipcJava, Duration.ofSeconds(30)))
        {
            assertTrue(line(fromC, "NIC ", transcript).startsWith("NIC " + (transport.equals("spray") ? 0 : 1) +
                (ipv6 ? " 0x00000000" : " 0x7f000001")), transcript.toString()); // an IPv6 plane has no IPv4 address
            assertEquals(ipv6 ? "NIC6 ::1" : "NIC6 none", line(fromC, "NIC6 ", transcript), transcript.toString());
            final ClientRegion mr = nic.register(1024 * KB, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE |
                AccessFlags.REMOTE_READ);
            final MemorySegment b = mr.segment();
            fill(b, 128 * KB, 64 * KB, 5);
            fill(b, 192 * KB, 4 * KB, 6);
            fill(b, 256 * KB, 4 * KB, 7);
            fill(b, 512 * KB, 64 * KB, 4);
            final ClientConnection conn = switch (mode)
            {
                case "spray-connect" -> accept(nic, transcript);
                case "spray-connect6" ->
                {
                    for (int i = 0; i < 3; i++)
                    {
                        assertTrue(line(fromC, "REFUSED ", transcript).contains("BAD_VALUE"), transcript.toString());
                    }
                    yield accept(nic, transcript);
                }
                case "spray-accept" ->
                {
                    line(fromC, "ACCEPTING", transcript);
                    yield nic.connect(new int[]{0x7f000001}, Duration.ofSeconds(30));
                }
                default ->
                {
                    final ClientConnection qp = nic.createQueuePair(0);
                    final String[] ep = line(fromC, "EP ", transcript).split(" ");
                    final RocevEndpoint mine = qp.rocevEndpoint();
                    toC.println("EP " + mine.qpNumber() + " " + Integer.toUnsignedString(mine.psn()) + " " +
                        Integer.toUnsignedString(mine.ipv4()) + " " + mine.mtu());
                    qp.connect(new RocevEndpoint(Integer.parseUnsignedInt(ep[1]), Integer.parseUnsignedInt(ep[2]),
                        Integer.parseUnsignedInt(ep[3]), Integer.parseInt(ep[4])), Duration.ofSeconds(30));
                    yield qp;
                }
            };
            for (int i = 0; i < 2; i++)
            {
                assertEquals(PostResult.OK, conn.postReceive(0, new ReceiveRequest().wrId(200 + i)
                    .buffer(mr, mr.address() + (768 + 4L * i) * KB, 4 * KB)));
            }
            final String[] peer = line(fromC, "MR ", transcript).split(" ");
            final long peerAddress = Long.parseUnsignedLong(peer[1]);
            final int peerRkey = Integer.parseUnsignedInt(peer[2]);
            toC.println("MR " + Long.toUnsignedString(mr.address()) + " " + Integer.toUnsignedString(mr.rkey()));

            // C -> Java: once C has its send completions, every byte is here
            line(fromC, "C2J done", transcript);
            verify(b, 0, 64 * KB, 1, "what C's WRITE placed");
            verify(b, 64 * KB, 4 * KB, 2, "what C's WRITE with immediate placed");
            final WorkCompletion[] received = take(conn, false, 2);
            int sends = 0;
            int immediates = 0;
            for (final WorkCompletion wc : received)
            {
                if (wc.opcode() == WorkCompletionOpcode.RECV_RDMA_WITH_IMM)
                {
                    assertTrue(wc.hasImmediate() && wc.immediateData() == IMM_C2J, wc.toString());
                    immediates++;
                }
                else
                {
                    assertEquals(WorkCompletionOpcode.RECV, wc.opcode(), wc.toString());
                    assertEquals(4 * KB, wc.byteLength(), wc.toString());
                    verify(b, (768 + 4 * (wc.wrId() - 200)) * KB, 4 * KB, 3, "what C's SEND carried");
                    sends++;
                }
            }
            assertEquals(1, sends);
            assertEquals(1, immediates);

            // Java -> C
            post(conn, 11, WorkRequestOpcode.RDMA_WRITE, mr, 128 * KB, 64 * KB, peerAddress + 320 * KB, peerRkey, 0);
            post(conn, 12, WorkRequestOpcode.RDMA_WRITE_WITH_IMM, mr, 192 * KB, 4 * KB, peerAddress + 384 * KB, peerRkey,
                IMM_J2C);
            post(conn, 13, WorkRequestOpcode.SEND, mr, 256 * KB, 4 * KB, 0, 0, 0);
            post(conn, 14, WorkRequestOpcode.RDMA_READ, mr, 320 * KB, 64 * KB, peerAddress + 512 * KB, peerRkey, 0);
            take(conn, true, 4);
            verify(b, 320 * KB, 64 * KB, 8, "what Java's READ brought from C");
            toC.println("J2C done");
            line(fromC, "J2C verified", transcript);
            assertTrue(line(fromC, "CORRUPT detected", transcript).contains("2147483640"), transcript.toString());
            line(fromC, "CLOSED", transcript);
            assertTrue(c.waitFor(30, TimeUnit.SECONDS), transcript.toString());
            assertEquals(0, c.exitValue(), transcript.toString());
            conn.close(Duration.ofSeconds(1));
        }
        assertTrue(Files.list(ipcC).noneMatch(p -> p.getFileName().toString().startsWith("client-")),
            "the C client's answer file is gone once it closed");
    }

    /**
     * The example writes into and reads back a Java client's memory; spraynic_write_bw and _lat drive both NICs from
     * one process and report numbers.
     */
    @Test
    void shouldRunTheExampleAndTheWriteTools(@TempDir final Path dir) throws Exception
    {
        final int port = 20_000 + new SplittableRandom().nextInt(40_000);
        final Path ipcA = dir.resolve("ipc-a");
        final Path ipcB = dir.resolve("ipc-b");
        startNic(dir, "spray", "127.0.0.1", port, port, ipcA);
        startNic(dir, "spray", "127.0.0.2", port, port, ipcB);
        try (NicClient nic = NicClient.connect(ipcB, Duration.ofSeconds(30)))
        {
            final ClientRegion mr = nic.register(4 * KB, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE |
                AccessFlags.REMOTE_READ);
            final CompletableFuture<ClientConnection> accepted =
                CompletableFuture.supplyAsync(() -> nic.accept(Duration.ofSeconds(60)));
            final String out = runNative(dir, "spraynic_example", ipcA.toString(), "127.0.0.2",
                Long.toUnsignedString(mr.address()), Integer.toUnsignedString(mr.rkey()));
            assertTrue(out.contains("wrote and read back \"hello from libspraynic\": verified"), out);
            final byte[] placed = new byte[22];
            MemorySegment.copy(mr.segment(), ValueLayout.JAVA_BYTE, 0, placed, 0, placed.length);
            assertEquals("hello from libspraynic", new String(placed, StandardCharsets.US_ASCII));
            accepted.get(60, TimeUnit.SECONDS).close(Duration.ofSeconds(1));
        }
        final String bw = runNative(dir, "spraynic_write_bw", "--ipc-dir", ipcA.toString(), "--peer-ipc-dir",
            ipcB.toString(), "--size", "64", "--iters", "2000", "--depth", "32", "--idle", "sleep");
        assertTrue(bw.contains("# spraynic_write_bw: spray, 64 B WRITEs") && bw.contains("BW[Gb/s]"), bw);
        assertTrue(bw.lines().anyMatch(l -> l.matches("64\\s+2000\\s+[0-9.]+\\s+[0-9.]+\\s*")), bw);
        final String lat = runNative(dir, "spraynic_write_lat", "--ipc-dir", ipcA.toString(), "--peer-ipc-dir",
            ipcB.toString(), "--size", "64", "--iters", "300", "--idle", "sleep");
        assertTrue(lat.contains("t_p50[us]") && lat.lines().anyMatch(l -> l.matches("64\\s+300(\\s+[0-9.]+){5}\\s*")),
            lat);
    }

    /** Runs a program of target/native to its end (at most 120 s) and returns what it printed; it must exit 0. */
    private String runNative(final Path dir, final String program, final String... args) throws Exception
    {
        final List<String> command = new ArrayList<>(List.of(NATIVE.resolve(program).toString()));
        command.addAll(List.of(args));
        final Path out = dir.resolve(program + ".out");
        final Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        processes.add(p);
        final boolean ended = p.waitFor(120, TimeUnit.SECONDS);
        final String text = Files.readString(out);
        assertTrue(ended, program + " did not end in 120 s: " + text);
        assertEquals(0, p.exitValue(), program + ": " + text);
        System.out.println(text);
        return text;
    }

    private static ClientConnection accept(final NicClient nic, final StringBuilder transcript)
    {
        final ClientConnection c = nic.accept(Duration.ofSeconds(30));
        assertTrue(null != c, "no connection from the C client within 30 s: " + transcript);
        return c;
    }

    /** Starts {@code spraynic nic} on the udp preset and waits until it serves its IPC directory. */
    private void startNic(final Path dir, final String transport, final String ip, final int port, final int peerPort,
        final Path ipc)
        throws IOException, InterruptedException, TimeoutException
    {
        final List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElseThrow());
        command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
            .filter(argument -> argument.startsWith("--")).toList());
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), SprayNic.class.getName(),
            "nic", "--config", "udp", "-p", "ip=" + ip, "-p", "port=" + port, "-p", "peer_port=" + peerPort,
            "--mode", transport, "--ip", ip, "--ipc-dir", ipc.toString(), "--idle", "backoff",
            // a starved JVM on a loaded host may take longer than RC's default 67 ms to ACK: 1 s
            "--rocev2-ack-timeout", "18"));
        final Path log = dir.resolve("nic-" + port + "-" + ip.replace(':', '_') + ".log");
        final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().put("SPRAYNIC_RUN_DIR", dir.resolve("run").toString());
        final Process nic = builder.start();
        processes.add(nic);
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (!Files.readString(log).contains("spraynic nic: running"))
        {
            if (!nic.isAlive() || System.nanoTime() > deadline)
            {
                throw new TimeoutException("the NIC on " + ip + " did not start: " + Files.readString(log));
            }
            Thread.sleep(50);
        }
    }

    /** The next line from the C program, which must start with {@code prefix} (it prints FAIL and why otherwise). */
    private static String line(final BufferedReader from, final String prefix, final StringBuilder transcript)
        throws Exception
    {
        final CompletableFuture<String> next = CompletableFuture.supplyAsync(() ->
        {
            try
            {
                return from.readLine();
            }
            catch (final IOException ex)
            {
                return null;
            }
        });
        final String line = next.get(60, TimeUnit.SECONDS);
        transcript.append(line).append('\n');
        assertTrue(null != line && line.startsWith(prefix), "expected \"" + prefix + "...\" from test_peer: " + transcript);
        return line;
    }

    private static void post(final ClientConnection c, final long id, final WorkRequestOpcode opcode, final ClientRegion mr,
        final long offset, final int length, final long remote, final int rkey, final int imm)
    {
        assertEquals(PostResult.OK, c.postSend(0, new SendRequest().wrId(id).opcode(opcode)
            .local(mr, mr.address() + offset, length).remote(remote, rkey).immediate(imm)));
    }

    private static WorkCompletion[] take(final ClientConnection c, final boolean send, final int n)
        throws InterruptedException
    {
        final WorkCompletion[] taken = new WorkCompletion[n];
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        int got = 0;
        while (got < n)
        {
            final WorkCompletion wc = new WorkCompletion();
            if ((send ? c.sendCompletionQueue() : c.receiveCompletionQueue()).poll(wc))
            {
                assertEquals(WorkCompletionStatus.SUCCESS, wc.status(), wc.toString());
                taken[got++] = wc;
            }
            else
            {
                assertTrue(System.nanoTime() < deadline, got + " of " + n + " completions in 30 s");
                Thread.sleep(0, 100_000);
            }
        }
        return taken;
    }

    /** test_peer's pattern s, byte for byte. */
    private static byte pattern(final int s, final int i)
    {
        return (byte)(i * 131 + s * 17 + (i >>> 8) * 7 + 1);
    }

    private static void fill(final MemorySegment m, final long offset, final int length, final int s)
    {
        for (int i = 0; i < length; i++)
        {
            m.set(ValueLayout.JAVA_BYTE, offset + i, pattern(s, i));
        }
    }

    private static void verify(final MemorySegment m, final long offset, final int length, final int s, final String what)
    {
        for (int i = 0; i < length; i++)
        {
            final byte got = m.get(ValueLayout.JAVA_BYTE, offset + i);
            if (got != pattern(s, i))
            {
                throw new AssertionError(what + ": byte " + i + " of " + length + " is " + got + ", not " + pattern(s, i));
            }
        }
    }
}
