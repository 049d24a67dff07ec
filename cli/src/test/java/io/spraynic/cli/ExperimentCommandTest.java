package io.spraynic.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ExperimentCommandTest
{
    @Test
    void shouldWriteLossSweepCsvPlotAndJson(@TempDir final Path dir) throws Exception
    {
        final CliTestSupport.Run run = CliTestSupport.run(
            "experiment", "loss-sweep", "--bytes", "2m", "--planes", "2", "--json", "--out", dir.toString());
        assertEquals(0, run.exitCode(), run.err());
        final String json = run.out().lines().filter(line -> line.startsWith("{")).findFirst().orElseThrow();
        assertTrue(json.startsWith("{\"experiment\":\"loss-sweep\",\"planes\":2,"), json);
        for (final String loss : new String[] {"0", "0.01", "0.1", "1", "2", "5", "10", "20"})
        {
            assertTrue(json.contains("{\"lossPct\":" + loss + ","), loss + " in " + json);
        }
        assertTrue(json.contains("{\"lossPct\":0,\"sprayGoodputRatio\":1,\"rocev2GoodputRatio\":1,"), json);
        assertTrue(!json.contains("Verified\":false"), "every transfer verified: " + json);

        assertEquals(9, Files.readAllLines(dir.resolve("loss-sweep.csv")).size(), "a header and eight points");
        assertEquals(json, Files.readString(dir.resolve("loss-sweep.json")).strip());
        final BufferedImage plot = ImageIO.read(dir.resolve("loss-sweep.png").toFile());
        assertEquals(900, plot.getWidth());
        assertEquals(500, plot.getHeight());
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void shouldRunTheLossSweepOnDpdkInRealTime(@TempDir final Path dir) throws Exception
    {
        final CliTestSupport.Run run = CliTestSupport.run("experiment", "loss-sweep", "--realtime", "--bytes", "4m",
            "--planes", "2", "--loss", "0,5", "--repeats", "1", "--json", "--out", dir.toString());
        assertEquals(0, run.exitCode(), run.err());
        final String json = run.out().lines().filter(line -> line.startsWith("{")).findFirst().orElseThrow();
        assertTrue(json.startsWith("{\"experiment\":\"loss-sweep\",\"planes\":2,"), json);
        assertTrue(json.contains("\"clock\":\"real\""), json);
        assertTrue(json.contains("{\"lossPct\":0,\"sprayGoodputRatio\":1,\"rocev2GoodputRatio\":1,"), json);
        assertTrue(!json.contains("Verified\":false"), "every transfer verified and complete: " + json);
        final String lossy = json.substring(json.indexOf("{\"lossPct\":5,"));
        // 5 % of the data packets of 4 MiB (1,024 of 4 KiB: 51 lost on average, 7 the standard deviation) are lost on
        // the way, and each is resent; more than 20 is over 4 standard deviations below the mean
        final long sprayLost = field(lossy, "sprayLost");
        assertTrue(sprayLost > 20, lossy);
        assertTrue(field(lossy, "sprayRetransmitted") >= sprayLost, lossy);
        assertTrue(field(lossy, "rocev2Lost") > 20, lossy);
        // go-back-N resends every packet after a loss
        assertTrue(field(lossy, "rocev2Retransmitted") > 2 * field(lossy, "rocev2Lost"), lossy);

        assertEquals(3, Files.readAllLines(dir.resolve("loss-sweep-realtime.csv")).size(), "a header and two points");
        assertEquals(json, Files.readString(dir.resolve("loss-sweep-realtime.json")).strip());
        assertEquals(900, ImageIO.read(dir.resolve("loss-sweep-realtime.png").toFile()).getWidth());
    }

    @Test
    void shouldRefuseRealTimeOptionsWithoutRealTime()
    {
        final CliTestSupport.Run run = CliTestSupport.run("experiment", "loss-sweep", "--loss", "1");
        assertEquals(1, run.exitCode(), run.out());
        assertTrue(run.err().contains("--loss chooses the real-time sweep's rates: add --realtime"), run.err());
    }

    private static long field(final String json, final String name)
    {
        final int at = json.indexOf("\"" + name + "\":") + name.length() + 3;
        int end = at;
        while (Character.isDigit(json.charAt(end)))
        {
            end++;
        }
        return Long.parseLong(json.substring(at, end));
    }

    @Test
    void shouldCountNoSpuriousRetransmissionUnderModestReordering(@TempDir final Path dir) throws Exception
    {
        final CliTestSupport.Run run = CliTestSupport.run("experiment", "reorder", "--bytes", "4m", "--json", "--out", dir.toString());
        assertEquals(0, run.exitCode(), run.err());
        final String json = run.out().lines().filter(line -> line.startsWith("{")).findFirst().orElseThrow();
        assertTrue(json.startsWith("{\"experiment\":\"reorder\","), json);
        assertTrue(json.contains("{\"skewNs\":0,"), json);
        assertTrue(json.contains("{\"skewNs\":2500,"), json);
        assertTrue(!json.contains("\"verified\":false"), "every transfer verified: " + json);
        for (final String point : json.split("\\{\"skewNs\":"))
        {
            if (point.startsWith("0,") || point.startsWith("2500,"))
            {
                assertTrue(point.contains("\"lost\":0,\"retransmitted\":0,\"spuriousRetransmissions\":0"), point);
            }
        }
        assertTrue(Files.exists(dir.resolve("reorder.png")) && Files.exists(dir.resolve("reorder.csv")));
    }

    @Test
    void shouldRunReorderWithinOnSwitchesThatBalanceByQueueAndWriteItsFiles(@TempDir final Path dir) throws Exception
    {
        final CliTestSupport.Run run = CliTestSupport.run("experiment", "reorder-within", "--bytes", "4m", "--balance",
            "least-queued", "--json", "--out", dir.toString());
        assertEquals(0, run.exitCode(), run.err());
        final String json = run.out().lines().filter(line -> line.startsWith("{")).findFirst().orElseThrow();
        assertTrue(json.startsWith("{\"experiment\":\"reorder-within\","), json);
        assertTrue(json.contains("\"balancing\":\"least-queued\",\"window\":\"off\""), json);
        assertTrue(!json.contains("\"verified\":false"), "every transfer verified: " + json);
        assertEquals(8, json.split("\\{\"balancing\":").length - 1, "4 settings at 0 and 1 % loss: " + json);
        assertTrue(Files.exists(dir.resolve("reorder-within.png")) && Files.exists(dir.resolve("reorder-within.csv")));
    }

    @Test
    void shouldRunIncastAndWriteItsFiles(@TempDir final Path dir) throws Exception
    {
        final CliTestSupport.Run run = CliTestSupport.run("experiment", "incast", "--senders", "4", "--bytes", "64k", "--json",
            "--out", dir.toString());
        assertEquals(0, run.exitCode(), run.err());
        final String json = run.out().lines().filter(line -> line.startsWith("{")).findFirst().orElseThrow();
        assertTrue(json.startsWith("{\"experiment\":\"incast\","), json);
        assertTrue(json.contains("{\"senders\":4,"), json);
        assertTrue(!json.contains("\"verified\":false") && !json.contains("\"complete\":false"), json);
        assertEquals(3, Files.readAllLines(dir.resolve("incast.csv")).size(), "a header, spray and RoCEv2");
        assertTrue(Files.exists(dir.resolve("incast.png")));
    }

    @Test
    void shouldRunPlanesPlaneFailureAndCollectivesAtTinySizes(@TempDir final Path dir) throws Exception
    {
        final CliTestSupport.Run planes = CliTestSupport.run("experiment", "planes", "--planes", "1,2", "--connections", "10",
            "--bytes", "1m", "--json", "--out", dir.toString());
        assertEquals(0, planes.exitCode(), planes.err());
        assertTrue(planes.out().contains("{\"planes\":2,\"connections\":10,\"transport\":\"spray\""), planes.out());
        assertEquals(5, Files.readAllLines(dir.resolve("planes.csv")).size());

        final CliTestSupport.Run failure = CliTestSupport.run("experiment", "plane-failure", "--planes", "2", "--bytes", "4m",
            "--fail-at-us", "40", "--bin-us", "10", "--json", "--out", dir.toString());
        assertEquals(0, failure.exitCode(), failure.err());
        assertTrue(failure.out().contains("{\"transport\":\"spray\",\"complete\":true,\"verified\":true"), failure.out());
        assertTrue(Files.exists(dir.resolve("plane-failure.png")) && Files.exists(dir.resolve("plane-failure.csv")));

        final CliTestSupport.Run collectives = CliTestSupport.run("experiment", "collectives", "--nodes", "8", "--bytes", "64k",
            "--all-to-all-bytes", "64k", "--json", "--out", dir.toString());
        assertEquals(0, collectives.exitCode(), collectives.err());
        assertTrue(collectives.out().contains("{\"collective\":\"all-to-all\",\"nodes\":8,\"transport\":\"rocev2\""),
            collectives.out());
        assertEquals(5, Files.readAllLines(dir.resolve("collectives.csv")).size());

        final CliTestSupport.Run bad = CliTestSupport.run("experiment", "collectives", "--nodes", "12");
        assertTrue(bad.exitCode() != 0, "12 nodes is not a whole number of 8-host leaves");
    }
}
