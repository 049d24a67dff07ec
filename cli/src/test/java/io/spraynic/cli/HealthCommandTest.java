package io.spraynic.cli;

import io.spraynic.datapath.nic.ipc.IpcFileDescriptor;
import io.spraynic.datapath.port.TestNetwork;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code spraynic health}, the probe the Kubernetes DaemonSet runs, against a real NIC process (net_null, spray, IPC):
 * live and ready while it runs; not live while it is frozen (SIGSTOP: the heartbeat goes stale while the process still
 * exists, as a wedged NIC's would) and live again once it resumes; not live once it stopped; and a forged control file
 * or an empty directory is refused with a reason, never taken for a NIC. Readiness follows the link: a NIC on a tap
 * interface (in a namespace of the test's own) is not ready while the kernel side of its link is down.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HealthCommandTest
{
    @TempDir
    Path dir;

    @Test
    void shouldRefuseADirectoryNoNicServesAndAForgedControlFile() throws Exception
    {
        final Path ipc = Files.createDirectory(dir.resolve("ipc"));
        final CliTestSupport.Run empty = CliTestSupport.run("health", "--ipc-dir", ipc.toString());
        assertEquals(1, empty.exitCode());
        assertTrue(empty.err().contains("not live: no NIC serves " + ipc), empty.err());

        final byte[] forged = new byte[IpcFileDescriptor.fileLength()];
        java.util.Arrays.fill(forged, (byte)0x7f); // right size, a heartbeat far in the future, wrong magic
        Files.write(ipc.resolve(IpcFileDescriptor.CONTROL_FILE), forged);
        final CliTestSupport.Run forgery = CliTestSupport.run("health", "--ipc-dir", ipc.toString());
        assertEquals(1, forgery.exitCode());
        assertTrue(forgery.err().contains("is not (yet) a SprayNIC control file"), forgery.err());

        Files.write(ipc.resolve(IpcFileDescriptor.CONTROL_FILE), new byte[7]);
        assertEquals(1, CliTestSupport.run("health", "--ipc-dir", ipc.toString()).exitCode());
        assertEquals(CliTestSupport.run("health", "--max-age", "0").exitCode(), SprayNic.USAGE_ERROR);
    }

    @Test
    void shouldBeLiveAndReadyWhileTheNicRunsAndNotOnceItIsFrozenOrStopped() throws Exception
    {
        final Path runDir = Files.createDirectory(dir.resolve("run"));
        final Path ipc = Files.createDirectory(dir.resolve("ipc"), PosixFilePermissions.asFileAttribute(
            PosixFilePermissions.fromString("rwx------")));
        final Process nic = CliTestSupport.start(runDir, "nic", "--config", "net_null", "-p",
            "file_prefix=spraynic-health-test-" + ProcessHandle.current().pid(), "--mode", "spray", "--ip", "10.0.0.1",
            "--ipc-dir", ipc.toString(), "--idle", "sleep", "--seconds", "100");
        try (BufferedReader out = new BufferedReader(new InputStreamReader(nic.getInputStream(), StandardCharsets.UTF_8)))
        {
            String line;
            while (null != (line = out.readLine()) && !line.startsWith("spraynic nic: running"))
            {
                assertTrue(nic.isAlive(), line);
            }
            final CliTestSupport.Run live = CliTestSupport.run("health", "--ipc-dir", ipc.toString());
            assertEquals(0, live.exitCode(), live.err());
            assertEquals("spraynic health: live: " + ipc + "\n", live.out());
            final CliTestSupport.Run ready = CliTestSupport.run("health", "--ready", "--ipc-dir", ipc.toString(),
                "--dir", runDir.toString());
            assertEquals(0, ready.exitCode(), ready.err());
            final CliTestSupport.Run noCounters = CliTestSupport.run("health", "--ready", "--ipc-dir", ipc.toString(),
                "--dir", dir.resolve("elsewhere").toString());
            assertEquals(1, noCounters.exitCode());
            assertTrue(noCounters.err().contains("not ready: no live counters file"), noCounters.err());

            signal("STOP", nic.pid());
            try
            {
                Thread.sleep(1_500);
                final CliTestSupport.Run frozen = CliTestSupport.run("health", "--ipc-dir", ipc.toString(), "--max-age", "1");
                assertEquals(1, frozen.exitCode(), frozen.out());
                assertTrue(frozen.err().contains("has stopped: no heartbeat for "), frozen.err());
            }
            finally
            {
                signal("CONT", nic.pid());
            }
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (CliTestSupport.run("health", "--ipc-dir", ipc.toString(), "--max-age", "1").exitCode() != 0)
            {
                assertTrue(System.nanoTime() < deadline, "live again after SIGCONT");
                Thread.sleep(100);
            }

            nic.toHandle().destroy(); // SIGTERM
            while (null != out.readLine())
            {
                // until the NIC closes its output
            }
            assertTrue(nic.waitFor(30, TimeUnit.SECONDS));
            final CliTestSupport.Run gone = CliTestSupport.run("health", "--ipc-dir", ipc.toString());
            assertEquals(1, gone.exitCode(), gone.out());
            assertTrue(gone.err().contains("not live: "), gone.err());
        }
        finally
        {
            nic.destroyForcibly();
        }
    }

    @Test
    void shouldNotBeReadyWhileAPortsLinkIsDown() throws Exception
    {
        final String ns = TestNetwork.name("sn-health-");
        final String tap = TestNetwork.name("sn-ht");
        final Path runDir = Files.createDirectory(dir.resolve("run"));
        final Path ipc = Files.createDirectory(dir.resolve("ipc"), PosixFilePermissions.asFileAttribute(
            PosixFilePermissions.fromString("rwx------")));
        try (TestNetwork network = TestNetwork.create("a tap interface in a network namespace", ns))
        {
            Process nic = null;
            try
            {
                final List<String> command = new ArrayList<>(List.of("ip", "netns", "exec", ns));
                command.addAll(CliTestSupport.javaCommand(List.of("nic", "--config", "net_tap", "-p", "iface=" + tap, "-p",
                    "file_prefix=spraynic-health-tap-" + TestNetwork.ID, "--mode", "spray", "--ip", "10.98.0.1/24",
                    "--ipc-dir", ipc.toString(), "--idle", "sleep", "--seconds", "100")));
                final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(dir.resolve("nic.out").toFile());
                builder.environment().put("SPRAYNIC_RUN_DIR", runDir.toString());
                nic = builder.start();
                final String[] health = {"health", "--ready", "--ipc-dir", ipc.toString(), "--dir", runDir.toString()};
                // the PMD brings its tap interface up when the port starts
                awaitHealth(nic, health, 0, "");
                network.in(ns, "ip", "link", "set", tap, "down");
                awaitHealth(nic, health, 1, "not ready: link down on port tap0");
                network.in(ns, "ip", "link", "set", tap, "up");
                awaitHealth(nic, health, 0, "");
                assertEquals(0, CliTestSupport.run("health", "--ipc-dir", ipc.toString()).exitCode(), "still live");
            }
            finally
            {
                if (null != nic)
                {
                    nic.destroyForcibly().waitFor(30, TimeUnit.SECONDS); // before its namespace goes
                }
            }
        }
    }

    /** Runs {@code spraynic health ARGS} until it exits with {@code exitCode} saying {@code says} (30 s at most). */
    private void awaitHealth(final Process nic, final String[] args, final int exitCode, final String says)
        throws Exception
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        CliTestSupport.Run health = CliTestSupport.run(args);
        while (health.exitCode() != exitCode || !health.err().contains(says))
        {
            assertTrue(nic.isAlive(), "the NIC runs: " + Files.readString(dir.resolve("nic.out")));
            assertTrue(System.nanoTime() < deadline, "health exits " + exitCode + " saying '" + says + "', not: " +
                health.exitCode() + " " + health.err() + health.out() + " NIC: " + Files.readString(dir.resolve("nic.out")));
            Thread.sleep(200);
            health = CliTestSupport.run(args);
        }
    }

    private static void signal(final String signal, final long pid) throws Exception
    {
        final Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).inheritIO().start();
        assertTrue(kill.waitFor(10, TimeUnit.SECONDS));
        assertEquals(0, kill.exitValue());
    }
}
