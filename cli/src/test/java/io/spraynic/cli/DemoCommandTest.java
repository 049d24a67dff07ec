package io.spraynic.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import io.spraynic.datapath.capture.CapturedFrame;
import io.spraynic.datapath.capture.PcapReader;
import io.spraynic.datapath.port.RawFrames;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The main job's path, smaller: a verified transfer over the crossed DPDK net_ring pair. One EAL
 * per JVM, so one demo run per test class.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DemoCommandTest
{
    @Test
    void shouldVerifyEveryFrameOverNetRingPairAndCaptureThem(@TempDir final Path dir) throws Exception
    {
        final Path capture = dir.resolve("demo.pcapng");
        final CliTestSupport.Run run = CliTestSupport.run(
            "demo", "--mode", "raw", "--frames", "20k", "--frame-size", "1024", "--json", "--capture", capture.toString());
        assertEquals(0, run.exitCode(), run.out() + run.err());
        final String json = run.out().lines().filter(line -> line.startsWith("{")).findFirst().orElseThrow();
        assertTrue(json.contains("\"verified\":true"), json);
        assertTrue(json.contains("\"frames\":20480,"), json);
        assertTrue(json.contains("\"bytes\":" + 20480L * 1024 + ","), json);
        assertTrue(json.contains("\"corrupt\":0,"), json);
        assertTrue(json.contains("\"portTxPackets\":20480,") && json.contains("\"portRxPackets\":20480"), json);

        // The capture holds every frame twice (sent and received), in timestamp order, readable by our
        // decoder and, where installed, by Wireshark's.
        final List<CapturedFrame> frames = PcapReader.readAll(capture);
        assertEquals(2 * 20480, frames.size());
        long previous = Long.MIN_VALUE;
        final Map<Integer, Integer> perInterface = new HashMap<>();
        for (final CapturedFrame frame : frames)
        {
            assertTrue(frame.timestampNanos() >= previous);
            previous = frame.timestampNanos();
            perInterface.merge(frame.interfaceId(), 1, Integer::sum);
            assertTrue(RawFrames.verify(MemorySegment.ofArray(frame.data()), 0, frame.data().length) >= 0);
        }
        assertEquals(List.of(20480, 20480), List.copyOf(perInterface.values()));
        assertTrue(Files.list(dir).noneMatch(file -> file.getFileName().toString().contains(".part")), "parts removed");
        if (Files.isExecutable(Path.of("/usr/bin/tshark")))
        {
            final Process tshark = new ProcessBuilder("tshark", "-r", capture.toString(), "-T", "fields", "-e", "frame.number")
                .redirectError(ProcessBuilder.Redirect.DISCARD).start(); // stderr: tshark warns when run as root
            final long lines = new String(tshark.getInputStream().readAllBytes()).lines().count();
            assertTrue(tshark.waitFor(60, TimeUnit.SECONDS));
            assertEquals(0, tshark.exitValue());
            assertEquals(2 * 20480, lines);
        }
    }
}
