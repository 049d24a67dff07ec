package io.spraynic.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code spraynic nic --ipc-dir} in a process of its own on net_null, used by {@code spraynic client} from this one
 * through shared memory only; then stopped with SIGTERM, which removes its IPC files.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ClientCommandTest
{
    /** Starts {@code spraynic nic ARGS} in a process of its own and waits until it runs; returns its start-up lines. */
    static Process startNic(final Path runDir, final StringBuilder seen, final String... args) throws Exception
    {
        final String[] nic = new String[args.length + 1];
        nic[0] = "nic";
        System.arraycopy(args, 0, nic, 1, args.length);
        return start(runDir, seen, "spraynic nic: running", seen, nic);
    }

    /**
     * Starts {@code spraynic ARGS} in a process of its own and waits for a line starting with {@code ready} (all lines
     * until then go to {@code seen}); the lines after it go to {@code rest}.
     */
    static Process start(final Path runDir, final StringBuilder seen, final String ready, final StringBuilder rest,
        final String... args) throws Exception
    {
        final List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElseThrow());
        command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
            .filter(argument -> argument.startsWith("--")).toList());
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), SprayNic.class.getName()));
        command.addAll(List.of(args));
        final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().put("SPRAYNIC_RUN_DIR", runDir.toString());
        final Process nic = builder.start();
        final BufferedReader out = new BufferedReader(new InputStreamReader(nic.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while (null != (line = out.readLine()) && !line.startsWith(ready))
        {
            seen.append(line).append('\n');
        }
        assertTrue(nic.isAlive(), seen.toString());
        final Thread drain = new Thread(() ->
        {
            try
            {
                String more;
                while (null != (more = out.readLine()))
                {
                    synchronized (rest)
                    {
                        rest.append(more).append('\n'); // keep its output flowing
                    }
                }
            }
            catch (final java.io.IOException ignored)
            {
                // it exited
            }
        }, "nic-output");
        drain.setDaemon(true);
        drain.start();
        return nic;
    }

    /**
     * Three processes: a spray NIC exposing memory, a second NIC serving applications, joined by net_memif, and the
     * application ({@code spraynic client}, here in the test's JVM) that writes into the first NIC's memory through
     * the second and reads it back; over IPv4 and over IPv6 (the client names the peer by the address it published).
     */
    @ParameterizedTest(name = "server {0}, client {1}")
    @CsvSource({"10.7.0.2, 10.7.0.1, 10.7.0.1", "fd00:7::2, fd00:7::1, fd00:7:0:0:0:0:0:1"})
    void shouldWriteAndReadBackAPeersMemoryThroughANicInAnotherProcess(final String serverIp, final String clientIp,
        final String clientSays, @TempDir final Path runDir) throws Exception
    {
        final Path socket = runDir.resolve("memif.sock");
        final Path exchange = runDir.resolve("exchange");
        final Path ipc = runDir.resolve("ipc");
        final StringBuilder seen = new StringBuilder();
        // EAL's runtime directory named by this case alone: a NIC of an earlier case, or of another run on the host,
        // that is still stopping holds its lock, and a shared prefix would refuse this case's EAL
        final String instance = "instance=-client-" + ProcessHandle.current().pid() + "-" + runDir.getFileName();
        final Process server = startNic(runDir, seen, "--config", "net_memif", "-p", "role=server", "-p", instance, "-p",
            "socket=" + socket,
            "--mode", "spray", "--ip", serverIp, "--expose", "4m", "--exchange", exchange.toString(), "--idle", "sleep");
        Process served = null;
        try
        {
            served = startNic(runDir, seen, "--config", "net_memif", "-p", "role=client", "-p", instance, "-p",
                "socket=" + socket,
                "--mode", "spray", "--ip", clientIp, "--ipc-dir", ipc.toString(), "--idle", "sleep");
            final CliTestSupport.Run client = CliTestSupport.run("client", "--ipc-dir", ipc.toString(), "--peer-exchange",
                exchange.toString(), "--size", "512k", "--message", "16k");
            assertEquals(0, client.exitCode(), seen + client.out() + client.err());
            assertTrue(client.out().contains("wrote and read back 262,144 bytes in"), client.out());
            assertTrue(client.out().contains("every byte verified; closed idle"), client.out());
            assertTrue(client.out().contains("1 plane(s), " + clientSays + ";"), client.out());
        }
        finally
        {
            for (final Process p : new Process[]{served, server})
            {
                if (null != p)
                {
                    p.toHandle().destroy();
                    if (!p.waitFor(30, TimeUnit.SECONDS))
                    {
                        p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
                    }
                }
            }
        }
    }

    @Test
    void shouldRegisterMemoryWithANicRunningInAnotherProcess(@TempDir final Path runDir) throws Exception
    {
        final Path ipc = runDir.resolve("ipc");
        final CliTestSupport.Run none = CliTestSupport.run("client", "--ipc-dir", ipc.toString(), "--timeout", "0.1");
        assertTrue(none.exitCode() != 0);
        assertTrue(none.err().contains("no NIC serves " + ipc), none.err());
        final CliTestSupport.Run byDefault = CliTestSupport.run("nic", "--config", "net_null", "--ipc-dir", ipc.toString());
        assertTrue(byDefault.exitCode() != 0);
        assertTrue(byDefault.err().contains("--mode spray needs --ip"), "the default is the spray NIC: " + byDefault.err());
        final CliTestSupport.Run noRegions = CliTestSupport.run("nic", "--config", "net_null", "--mode", "spray", "--ip",
            "10.0.0.1", "--ipc-dir", ipc.toString(), "--ipc-max-regions", "0");
        assertTrue(noRegions.exitCode() != 0);
        assertTrue(noRegions.err().contains("--ipc-max-regions 0: must be 1..65536; try --ipc-max-regions 1"),
            noRegions.err());

        final List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElseThrow());
        command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
            .filter(argument -> argument.startsWith("--")).toList());
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), SprayNic.class.getName(),
            "nic", "--config", "net_null", "-p", "file_prefix=spraynic-ipc-test-" + ProcessHandle.current().pid(),
            "--mode", "spray", "--ip", "10.0.0.1", "--ipc-dir", ipc.toString(), "--idle", "sleep"));
        final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().put("SPRAYNIC_RUN_DIR", runDir.toString());
        final Process nic = builder.start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(nic.getInputStream(), StandardCharsets.UTF_8)))
        {
            final StringBuilder seen = new StringBuilder();
            String line;
            while (null != (line = out.readLine()) && !line.startsWith("spraynic nic: running"))
            {
                seen.append(line).append('\n');
                assertTrue(nic.isAlive(), seen.toString());
            }
            assertTrue(seen.toString().contains("serving applications in " + ipc), seen.toString());

            final CliTestSupport.Run client = CliTestSupport.run("client", "--ipc-dir", ipc.toString(), "--size", "64k");
            assertEquals(0, client.exitCode(), client.out() + client.err());
            assertTrue(client.out().contains("NIC pid " + nic.pid() + " in " + ipc + ": spray, 1 plane(s), 10.0.0.1; client id "),
                client.out());
            assertTrue(client.out().contains("registered 65,536 bytes"), client.out());

            nic.toHandle().destroy(); // SIGTERM
            final StringBuilder rest = new StringBuilder();
            while (null != (line = out.readLine()))
            {
                rest.append(line).append('\n');
            }
            assertTrue(nic.waitFor(30, TimeUnit.SECONDS));
            assertTrue(rest.toString().contains("spraynic nic: stopped"), rest.toString());
            try (var files = Files.list(ipc))
            {
                assertFalse(files.findAny().isPresent(), "the NIC removed its IPC files");
            }
        }
        finally
        {
            nic.destroyForcibly();
        }
    }
}
