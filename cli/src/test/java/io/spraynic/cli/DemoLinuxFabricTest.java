package io.spraynic.cli;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code spraynic demo --fabric linux}: spray then RoCEv2 between two NIC processes across the Linux ECMP lab, both
 * verified, with the packets per core link from the routers; the lab is gone afterwards, also when the demo is
 * stopped half-way (SIGTERM, as Ctrl-C). (The refusal without root is not tested: a user other than root cannot read
 * this build's class path here.)
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class DemoLinuxFabricTest
{
    @BeforeAll
    static void rootOnly()
    {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")),
            "SKIPPED: the Linux lab needs root");
        Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/sbin/nft")), "SKIPPED: nft is missing");
    }

    @Test
    void shouldRunSprayThenRoceV2AcrossTheLabAndRemoveIt(@TempDir final Path dir) throws Exception
    {
        final Path out = dir.resolve("demo.out");
        // RC gives up after 8 ACK time-outs: the demo derives the timeout from round trips it measures to B's NIC
        // (a loaded CI host starved a JVM longer than 8 x 16 ms once, RETRY_EXC_ERR); each run measured warm
        final Process demo = new ProcessBuilder(CliTestSupport.javaCommand(List.of("demo", "--fabric", "linux",
            "--size", "4m", "--json"))).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        final String id = "d" + demo.pid() % 10_000;
        try
        {
            assertTrue(demo.waitFor(240, TimeUnit.SECONDS), "the demo ended in time: " + Files.readString(out));
            final String text = Files.readString(out);
            System.out.println("demo --fabric linux: " + text.strip());
            assertEquals(0, demo.exitValue(), text);
            assertTrue(text.contains("\"mode\":\"spray\"") && text.contains("\"mode\":\"rocev2\""), text);
            assertEquals(2, count(text, "\"verified\":true"), text);
            // both measured after a verified warm-up as large as their measured part (the baseline's is 4 MiB too)
            assertEquals(2, count(text, "\"warm\":true,\"warmupBytes\":4194304,"), text);
            assertTrue(text.contains("\"ackTimeoutDerived\":true,\"echoSent\":100,"), text);
            // every core link of both planes carried packets each way, spray's and RoCEv2's runs alike
            final Matcher links = Pattern.compile("\"(p[12]l[1-4])\":\\[(\\d+),(\\d+)]").matcher(text);
            int carried = 0;
            while (links.find())
            {
                carried += Long.parseLong(links.group(2)) > 0 && Long.parseLong(links.group(3)) > 0 ? 1 : 0;
            }
            assertTrue(carried >= 8, "spray crossed all 8 core links both ways: " + text);
            assertFalse(labLeft(id), "the lab is gone");
        }
        finally
        {
            demo.destroyForcibly();
            LinuxLab.script(id, "down");
        }
    }

    @Test
    void shouldRemoveTheLabWhenStoppedHalfWay(@TempDir final Path dir) throws Exception
    {
        final Path out = dir.resolve("demo.out");
        final Process demo = new ProcessBuilder(CliTestSupport.javaCommand(List.of("demo", "--fabric", "linux",
            "--size", "64m"))).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        final String id = "d" + demo.pid() % 10_000;
        try
        {
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (!Files.readString(out).contains("spray:") && demo.isAlive() && System.nanoTime() < deadline)
            {
                Thread.sleep(100);
            }
            assertTrue(labLeft(id), "the lab is up: " + Files.readString(out));
            demo.destroy(); // SIGTERM: the shutdown hook takes the lab down, as on Ctrl-C
            assertTrue(demo.waitFor(120, TimeUnit.SECONDS), Files.readString(out));
            assertFalse(labLeft(id), "the lab is gone after SIGTERM: " + Files.readString(out));
        }
        finally
        {
            demo.destroyForcibly();
            LinuxLab.script(id, "down");
        }
    }

    private static boolean labLeft(final String id) throws Exception
    {
        final Process list = new ProcessBuilder("ip", "netns", "list").redirectErrorStream(true).start();
        final String text = new String(list.getInputStream().readAllBytes());
        list.waitFor(10, TimeUnit.SECONDS);
        return text.contains("spl" + id + "-");
    }

    private static int count(final String text, final String what)
    {
        int n = 0;
        for (int at = text.indexOf(what); at >= 0; at = text.indexOf(what, at + 1))
        {
            n++;
        }
        return n;
    }
}
