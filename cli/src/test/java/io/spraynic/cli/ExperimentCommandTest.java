package io.spraynic.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;

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
}
