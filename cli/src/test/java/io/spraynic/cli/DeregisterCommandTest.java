package io.spraynic.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code spraynic deregister} against a {@code spraynic nic --expose --exchange DIR} in its own process (the {@code
 * udp} preset on a loopback address): the region goes once, a second request is refused with the NIC's reason (forged
 * requests: {@code RegionRevocationTest}), and with no NIC the command says so; the NIC keeps running throughout.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DeregisterCommandTest
{
    @Test
    void shouldDeregisterARunningNicsRegionOnceAndSayWhyNotAfter(@TempDir final Path dir) throws Exception
    {
        final long pid = ProcessHandle.current().pid();
        final String nicIp = "127.79." + (pid >> 8 & 0xFF) + "." + (pid & 0xFF);
        final int port = 20_000 + (int)((pid + 17) % 40_000);
        final Path exchange = dir.resolve("exchange");
        final Path output = dir.resolve("nic.out");
        final Process nic = new ProcessBuilder(CliTestSupport.javaCommand(java.util.List.of("nic", "--config", "udp",
            "-p", "ip=" + nicIp, "-p", "port=" + port, "-p", "peer_port=" + port, "--ip", nicIp, "--mode", "spray",
            "--expose", "64k", "--exchange", exchange.toString(), "--seconds", "60", "--idle", "backoff")))
            .redirectErrorStream(true).redirectOutput(output.toFile()).start();
        try
        {
            final long deadline = System.nanoTime() + 60_000_000_000L;
            while (!Files.exists(exchange.resolve("nic.addr")) && System.nanoTime() < deadline && nic.isAlive())
            {
                Thread.sleep(50);
            }
            final String rkey = Files.readString(exchange.resolve("nic.addr")).replaceAll(".* rkey=(\\d+).*\\s*", "$1");

            // a request the NIC cannot take away (a directory with a file in it, as any writer of the directory could
            // leave): the NIC says so once, however often it looks, and serves on
            final Path aside = Files.createDirectories(dir.resolve("aside"));
            Files.writeString(aside.resolve("stuck"), "rkey=" + rkey);
            final Path stuck = Files.move(aside, exchange.resolve("deregister")).resolve("stuck"); // whole at once
            String problem = Files.readString(output);
            for (int wait = 0; wait < 200 && !problem.contains("cannot answer"); wait++)
            {
                Thread.sleep(50);
                problem = Files.readString(output);
            }
            Thread.sleep(500); // the NIC looks again between its accepts, many times in this
            problem = Files.readString(output);
            assertEquals(1, problem.lines().filter(line -> line.contains("spraynic nic: cannot answer " +
                exchange.resolve("deregister"))).count(), problem);
            assertTrue(nic.isAlive(), problem);
            Files.delete(stuck);
            Files.delete(exchange.resolve("deregister"));

            final CliTestSupport.Run first = CliTestSupport.run("deregister", "--exchange", exchange.toString());
            assertEquals(0, first.exitCode(), first.out() + first.err() + Files.readString(output));
            assertTrue(first.out().contains("spraynic deregister: the region " + exchange.resolve("nic.addr") +
                " names is deregistered"), first.out());
            final String addr = Files.readString(exchange.resolve("nic.addr"));
            assertTrue(addr.strip().endsWith(" deregistered=" + rkey) && !addr.contains(" rkey="), addr);
            final CliTestSupport.Run again = CliTestSupport.run("deregister", "--exchange", exchange.toString());
            assertEquals(1, again.exitCode(), again.out() + again.err());
            assertTrue(again.err().contains("spraynic deregister: the NIC refused: the region is deregistered already"),
                again.err());
            assertTrue(nic.isAlive(), "the NIC runs on: " + Files.readString(output));
            // the NIC says so just after it answered
            String said = Files.readString(output);
            for (int wait = 0; wait < 100 && !said.contains("deregistered already"); wait++)
            {
                Thread.sleep(50);
                said = Files.readString(output);
            }
            assertTrue(said.contains("spraynic nic: deregistered the exposed region (rkey=" + rkey + ") as " +
                exchange.resolve("deregister") + " asked"), said);
            assertTrue(said.contains("deregistered already"), said);
        }
        finally
        {
            nic.destroy();
            if (!nic.waitFor(20, TimeUnit.SECONDS))
            {
                nic.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void shouldSayWhenNoNicServesTheDirectoryAndRefuseABadTimeout(@TempDir final Path dir)
    {
        final CliTestSupport.Run none = CliTestSupport.run("deregister", "--exchange", dir.toString(), "--timeout", "0.2");
        assertEquals(2, none.exitCode(), none.out() + none.err());
        assertTrue(none.err().contains("spraynic deregister: no nic.addr in " + dir), none.err());
        final CliTestSupport.Run bad = CliTestSupport.run("deregister", "--exchange", dir.toString(), "--timeout", "0");
        assertEquals(2, bad.exitCode(), bad.out() + bad.err());
        assertTrue(bad.err().contains("--timeout"), bad.err());
    }
}
