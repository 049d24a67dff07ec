package io.spraynic.cli;

import io.spraynic.datapath.telemetry.CountersFileReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code spraynic nic} in a process of its own, observed from this one through its counters file
 * (as {@code spraynic stat} does), then stopped with SIGTERM.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NicCommandTest
{
    @Test
    void shouldRefuseAPreSharedKeyFileOthersCanReadAndBadLimitsWithOneSentence(@TempDir final Path dir) throws Exception
    {
        final Path key = dir.resolve("psk");
        Files.writeString(key, "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff");
        Files.setPosixFilePermissions(key, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        final CliTestSupport.Run run = CliTestSupport.run("nic", "--config", "net_null", "--mode", "spray", "--ip",
            "10.0.0.1", "--psk-file", key.toString());
        assertTrue(run.exitCode() != 0);
        assertTrue(run.err().contains("chmod 600 " + key), run.err());
        assertFalse(run.err().contains("Usage"), run.err());
        final CliTestSupport.Run limit = CliTestSupport.run("nic", "--config", "net_null", "--mode", "spray", "--ip",
            "10.0.0.1", "--max-connections-per-source", "0");
        assertTrue(limit.exitCode() != 0);
        assertTrue(limit.err().contains("--max-connections-per-source 0"), limit.err());
        final CliTestSupport.Run accepted = CliTestSupport.run("nic", "--config", "net_null", "--mode", "spray", "--ip",
            "10.0.0.1", "--max-accepted-connections", "0");
        assertTrue(accepted.exitCode() != 0);
        assertTrue(accepted.err().contains("--max-accepted-connections 0"), accepted.err());
        final CliTestSupport.Run busy = CliTestSupport.run("nic", "--config", "net_null", "--mode", "spray", "--ip",
            "10.0.0.1", "--busy-connections", "0");
        assertTrue(busy.exitCode() != 0);
        assertTrue(busy.err().contains("--busy-connections 0"), busy.err());
        for (final String hostile : new String[]{"0", "-5", "86400001"})
        {
            final CliTestSupport.Run queuesIdle = CliTestSupport.run("nic", "--config", "net_null", "--mode", "spray",
                "--ip", "10.0.0.1", "--queues-idle", hostile);
            assertTrue(queuesIdle.exitCode() != 0);
            assertTrue(queuesIdle.err().contains("--queues-idle " + hostile + ": must be 1..86400000"), queuesIdle.err());
        }
        final CliTestSupport.Run bucket = CliTestSupport.run("nic", "--config", "net_null", "--mode", "spray", "--ip",
            "10.0.0.1", "--connect-response-rate", "0");
        assertTrue(bucket.exitCode() != 0);
        assertTrue(bucket.err().contains("--connect-response-rate 0: must be 1..100000000"), bucket.err());
        final CliTestSupport.Run idle = CliTestSupport.run("nic", "--config", "net_null", "--mode", "spray", "--ip",
            "10.0.0.1", "--idle-timeout", "-1");
        assertTrue(idle.exitCode() != 0);
        assertTrue(idle.err().contains("--idle-timeout"), idle.err());
        // no idle timeout an operator means (below 1 ns it rounded to 0 ns, which means never)
        final CliTestSupport.Run tinyIdle = CliTestSupport.run("nic", "--config", "net_null", "--mode", "spray", "--ip",
            "10.0.0.1", "--idle-timeout", "0.0000001");
        assertTrue(tinyIdle.exitCode() != 0);
        assertTrue(tinyIdle.err().contains("--idle-timeout 1.0E-7: must be 0 (never) or 0.001..86400"),
            tinyIdle.err());
        assertEquals(2, tinyIdle.exitCode(), "a usage error");
        // the key authenticates spray handshakes only: before, RoCEv2 mode took it and authenticated nothing
        final CliTestSupport.Run rocevKey = CliTestSupport.run("nic", "--config", "net_null", "--mode", "rocev2", "--ip",
            "10.0.0.1", "--exchange", "/nonexistent/x", "--psk-file", "/nonexistent/k");
        assertTrue(rocevKey.exitCode() != 0);
        assertTrue(rocevKey.err().contains("--psk-file authenticates spray connections only: --mode rocev2"),
            rocevKey.err());
        final CliTestSupport.Run paths = CliTestSupport.run("nic", "--config", "net_null", "--mode", "spray", "--ip",
            "10.0.0.1", "--paths", "65");
        assertTrue(paths.exitCode() != 0);
        assertTrue(paths.err().contains("--paths 65"), paths.err());
    }

    @Test
    void shouldFitQueuesToWorkersWhereTheConfigTakesThemAndOtherwiseNameTheKeyToChange(@TempDir final Path dir)
        throws Exception
    {
        // a file of its own, without ${queues}: before, --workers 2 was refused for a parameter it never asked for
        final Path plain = dir.resolve("plain.toml");
        Files.writeString(plain, """
            [eal]
            no_huge = true
            memory_mb = 256
            no_pci = true
            file_prefix = "spraynic-plain-%d"
            [[port]]
            name = "null0"
            kind = "vdev"
            device = "net_null0"
            rx_queues = 1
            tx_queues = 1
            """.formatted(ProcessHandle.current().pid()));
        final CliTestSupport.Run fewer = CliTestSupport.run("nic", "--config", plain.toString(), "--mode", "spray",
            "--ip", "10.0.0.1", "--workers", "2");
        assertTrue(fewer.exitCode() != 0);
        assertTrue(fewer.err().contains("port null0 has 1 RX and 1 TX queue(s) for 2 worker(s): set rx_queues and " +
            "tx_queues to at least 2"), fewer.err());
        assertFalse(fewer.err().contains("is not a parameter"), fewer.err());
        // RX queues that no worker polls: what the device spreads to them was lost without a counter
        final CliTestSupport.Run more = CliTestSupport.run("nic", "--config", "net_null", "-p", "queues=2", "--mode",
            "spray", "--ip", "10.0.0.1");
        assertTrue(more.exitCode() != 0);
        assertTrue(more.err().contains("port null0 has 2 RX queues for 1 worker(s): frames the device spreads to " +
            "queue 1 would never be read; set rx_queues to 1 (-p queues=1 with a preset), or run 2 workers"), more.err());
    }

    @Test
    void shouldRefuseAGarbageOrLinkedVisitorQueuePairRemoveItAndServeOn(@TempDir final Path runDir,
        @TempDir final Path exchange) throws Exception
    {
        final Process nic = CliTestSupport.start(runDir, "nic", "--config", "net_null", "-p",
            "file_prefix=spraynic-nic-visitor-" + ProcessHandle.current().pid(), "--mode", "rocev2", "--ip", "10.0.0.1",
            "--exchange", exchange.toString(), "--idle", "sleep");
        try (BufferedReader out = new BufferedReader(new InputStreamReader(nic.getInputStream(), StandardCharsets.UTF_8)))
        {
            String line;
            while (null != (line = out.readLine()) && !line.startsWith("spraynic nic: running"))
            {
                assertTrue(nic.isAlive(), line);
            }
            assertTrue(Files.isRegularFile(exchange.resolve("nic.qp")), "the NIC offers its queue pair");
            final Path visitor = exchange.resolve("visitor.qp");
            final Path elsewhere = Files.writeString(runDir.resolve("elsewhere"), "qpn=1 psn=2 ip=10.0.0.2 mtu=1024\n");
            for (final Runnable plant : new Runnable[]{
                () -> write(visitor, "\u0000\u00ff not a queue pair at all\n"),
                () -> link(visitor, elsewhere)})
            {
                plant.run();
                while (null != (line = out.readLine()) && !line.startsWith("spraynic nic: refused " + visitor))
                {
                    assertFalse(line.contains("Exception"), line);
                }
                assertTrue(null != line, "told");
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (Files.exists(visitor, java.nio.file.LinkOption.NOFOLLOW_LINKS) && System.nanoTime() < deadline)
                {
                    Thread.sleep(20);
                }
                assertFalse(Files.exists(visitor, java.nio.file.LinkOption.NOFOLLOW_LINKS), "removed");
                assertTrue(nic.isAlive(), "and served on");
            }
            assertTrue(Files.exists(elsewhere), "the link's target left alone");
            nic.toHandle().destroy();
            final StringBuilder rest = new StringBuilder();
            while (null != (line = out.readLine()))
            {
                rest.append(line).append('\n');
            }
            assertTrue(nic.waitFor(30, TimeUnit.SECONDS));
            assertTrue(rest.toString().contains("spraynic nic: stopped"), rest.toString());
        }
        finally
        {
            nic.destroyForcibly();
        }
    }

    private static void write(final Path file, final String text)
    {
        try
        {
            Files.writeString(file, text);
        }
        catch (final java.io.IOException ex)
        {
            throw new java.io.UncheckedIOException(ex);
        }
    }

    private static void link(final Path link, final Path target)
    {
        try
        {
            Files.createSymbolicLink(link, target);
        }
        catch (final java.io.IOException ex)
        {
            throw new java.io.UncheckedIOException(ex);
        }
    }

    @Test
    void shouldNameTheAcceptedLimitAndHowToRaiseItWhenPeersConnectionsAreRefused()
    {
        assertEquals("spraynic nic: refused 3 connection(s) from peers (1,027 in all): this NIC holds its limit of " +
            "--max-accepted-connections 1024; raise it (e.g. --max-accepted-connections 2048) or close some",
            NicCommand.refusedNotice(3, 1027, 1024));
        assertTrue(NicCommand.refusedNotice(1, 1, 1 << 20).contains("(e.g. --max-accepted-connections 1048576)"),
            "never a value the option refuses");
    }

    @Test
    void shouldTakeTheAddressOfANamedInterfaceAndRefuseOneThatIsMissing() throws Exception
    {
        assertEquals("127.0.0.1", NicCommand.interfaceAddress("iface:lo")); // as Multus' net1 on a Kubernetes node
        assertEquals("10.0.0.1", NicCommand.interfaceAddress("10.0.0.1"));
        final String missing = "iface:nope" + ProcessHandle.current().pid();
        final CliTestSupport.Run run = CliTestSupport.run("nic", "--config", "net_null", "--mode", "spray", "--ip", missing);
        assertTrue(run.exitCode() != 0);
        assertTrue(run.err().contains("--ip " + missing + ": there is no interface "), run.err());
        final CliTestSupport.Run empty = CliTestSupport.run("nic", "--config", "net_null", "--mode", "spray", "--ip", "iface:");
        assertTrue(empty.err().contains("there is no interface"), empty.err());
    }

    @Test
    void shouldTakeTheIpv6AddressOfANamedInterface() throws Exception
    {
        assertEquals("::1", NicCommand.interfaceAddress("iface6:lo"), "lo's one IPv6 address, not link-local");
        assertEquals("fd00::1", NicCommand.interfaceAddress("fd00::1"));
        final BadOption missing = org.junit.jupiter.api.Assertions.assertThrows(BadOption.class,
            () -> NicCommand.interfaceAddress("iface6:nope" + ProcessHandle.current().pid()));
        assertTrue(missing.getMessage().contains("there is no interface") &&
            missing.getMessage().contains("try --ip iface6:lo"), missing.getMessage());
    }

    @Test
    void shouldTakeAParameterFromTheEnvironmentAndItsAddressFromThePodsNetworkStatus(@TempDir final Path runDir)
        throws Exception
    {
        // as the vfio-pci DaemonSet runs it: a parameter from a variable only the container's runtime sets (there the
        // device plugin's PCIDEVICE_..., here the EAL file prefix) and the plane's address from Multus' record of it
        final Path status = runDir.resolve("network-status");
        Files.writeString(status, PodNetworkStatusTest.STATUS);
        final String prefix = "spraynic-nic-env-" + ProcessHandle.current().pid();
        final ProcessBuilder builder = new ProcessBuilder(CliTestSupport.javaCommand(java.util.List.of("nic", "--config",
            "net_null", "--param-from-env", "file_prefix=SPRAYNIC_TEST_FILE_PREFIX", "--mode", "spray", "--ip",
            "netstatus:net2", "--network-status", status.toString(), "--seconds", "1", "--idle", "sleep")))
            .redirectErrorStream(true);
        builder.environment().put("SPRAYNIC_RUN_DIR", runDir.resolve("run").toString());
        builder.environment().put("SPRAYNIC_TEST_FILE_PREFIX", prefix);
        final String out = output(builder.start());
        assertTrue(out.contains("spray on net_null, [10.101.0.7] at "), out); // net2's IPv4 address, not its IPv6 one
        assertTrue(out.contains("spraynic nic: stopped"), out);

        // the variable's value is what the config gets: one it refuses is named in the refusal
        builder.environment().put("SPRAYNIC_TEST_FILE_PREFIX", "not/a/prefix");
        final Process refused = builder.start();
        final String refusal = new String(refused.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(refused.waitFor(60, TimeUnit.SECONDS));
        assertTrue(refused.exitValue() != 0 && refusal.contains("eal.file_prefix") && refusal.contains("not/a/prefix"),
            refusal);
    }

    private static String output(final Process process) throws Exception
    {
        try
        {
            final String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(process.waitFor(60, TimeUnit.SECONDS));
            assertEquals(0, process.exitValue(), out);
            return out;
        }
        finally
        {
            process.destroyForcibly();
        }
    }

    @Test
    void shouldServeLiveCountersToAnotherProcessAndStopCleanly(@TempDir final Path runDir) throws Exception
    {
        final Process nic = CliTestSupport.start(runDir, "nic", "--config", "net_null", "-p",
            "file_prefix=spraynic-nic-test-" + ProcessHandle.current().pid(), "--mode", "classify", "--idle", "sleep");
        try (BufferedReader out = new BufferedReader(new InputStreamReader(nic.getInputStream(), StandardCharsets.UTF_8)))
        {
            String line;
            while (null != (line = out.readLine()) && !line.startsWith("spraynic nic: running"))
            {
                assertTrue(nic.isAlive(), line);
            }
            final Optional<Path> file = CountersFileReader.findLive(runDir);
            assertTrue(file.isPresent(), "a live counters file in " + runDir);

            final long first;
            try (CountersFileReader reader = CountersFileReader.open(file.get()))
            {
                assertEquals(nic.pid(), reader.pid());
                first = rxPackets(reader);
                long later = first;
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (later <= first && System.nanoTime() < deadline)
                {
                    Thread.sleep(50);
                    later = rxPackets(reader);
                }
                assertTrue(later > first, "rx packets grow while it runs: " + first + " then " + later);
            }

            final CliTestSupport.Run stat = CliTestSupport.run("stat", "--json", "--dir", runDir.toString());
            assertEquals(0, stat.exitCode(), stat.err());
            assertTrue(stat.out().contains("\"pid\":" + nic.pid()), stat.out());
            assertTrue(stat.out().contains("\"label\":\"port null0/q0: rx not_ours\""), stat.out());

            nic.toHandle().destroy(); // SIGTERM (Process.destroy would also close our end of its output)
            final StringBuilder rest = new StringBuilder();
            while (null != (line = out.readLine())) // until the process closes its output
            {
                rest.append(line).append('\n');
            }
            assertTrue(nic.waitFor(30, TimeUnit.SECONDS));
            assertTrue(rest.toString().contains("spraynic nic: stopped"), rest.toString());
            assertFalse(Files.list(runDir).findAny().isPresent(), "counters file removed");
        }
        finally
        {
            nic.destroyForcibly();
        }
    }

    private static long rxPackets(final CountersFileReader reader)
    {
        return reader.read().stream().filter(counter -> counter.label().equals("port null0/q0: rx packets"))
            .mapToLong(CountersFileReader.Counter::value).findFirst().orElseThrow();
    }
}
