package io.spraynic.cli;

import io.spraynic.datapath.capture.PcapReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The {@code capture} key of a pmd-config file records RX and TX to pcapng without {@code --capture}
 * (its own class: DPDK's EAL starts once per JVM).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DemoCaptureConfigTest
{
    @Test
    void shouldCaptureToTheFileTheConfigNames(@TempDir final Path dir) throws Exception
    {
        final Path capture = dir.resolve("from-config.pcapng");
        final Path toml = dir.resolve("ring.toml");
        java.nio.file.Files.writeString(toml, """
            capture = "%s"
            [eal]
            no_huge = true
            no_pci = true
            file_prefix = "spraynic-capture-config-%d"
            [[port]]
            name = "ring0"
            kind = "ring_pair"
            peer = "ring1"
            [[port]]
            name = "ring1"
            kind = "ring_pair"
            peer = "ring0"
            """.formatted(capture, ProcessHandle.current().pid()));
        final CliTestSupport.Run run = CliTestSupport.run("demo", "--mode", "raw", "--config", toml.toString(), "--frames", "1k",
            "--frame-size", "256", "--json");
        assertEquals(0, run.exitCode(), run.out() + run.err());
        assertEquals(2 * 1024, PcapReader.readAll(capture).size(),
            "every frame (1k = 1,024), sent and received, in the config's capture file");
    }
}
