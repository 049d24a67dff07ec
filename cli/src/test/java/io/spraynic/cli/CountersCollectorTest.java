package io.spraynic.cli;

import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.datapath.telemetry.CountersFileReader;
import org.agrona.concurrent.status.AtomicCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The metrics endpoint over HTTP on a counters file written here: values as written, every counter once
 * (hostile and repeated labels included), a NIC found anew after it restarts and none while it is gone.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CountersCollectorTest
{
    @TempDir
    Path dir;

    @Test
    void shouldServeEveryCounterOnceWithItsValueWhateverItsLabel() throws Exception
    {
        try (CountersFile file = CountersFile.create(dir, "unit", 64);
            MetricsServer server = MetricsServer.start("--metrics", "127.0.0.1:0", () -> Optional.of(file.path())))
        {
            final AtomicCounter auth = file.newCounter("worker 0: spray auth_failures");
            final AtomicCounter clients = file.newCounter("ipc: clients");
            final AtomicCounter srtt = file.newCounter("conn 0x101: path 1 srtt_ns");
            final AtomicCounter first = file.newCounter("worker 0: rx frames");
            final AtomicCounter repeated = file.newCounter("worker 0: rx frames");
            final AtomicCounter hostile = file.newCounter("quote\" back\\slash\nnewline } # HELP x");
            final AtomicCounter injected = file.newCounter("conn 0x2: x\"} 1\nspraynic_fake 9");
            final AtomicCounter negative = file.newCounter("worker 0: spray malformed");
            file.newCounter("nic up");
            auth.setRelease(7);
            clients.setRelease(3);
            srtt.setRelease(2_500_000);
            first.setRelease(11);
            repeated.setRelease(12);
            hostile.setRelease(5);
            injected.setRelease(6);
            negative.setRelease(-4);

            final Map<String, Double> samples = MetricsTestSupport.scrape(server.url());
            assertEquals(7.0, samples.get("spraynic_worker_spray_auth_failures_total{worker=\"0\"}"), samples.toString());
            assertEquals(3.0, samples.get("spraynic_ipc_clients"));
            assertEquals(0.0025, samples.get("spraynic_path_srtt_seconds{connection=\"0x101\",path=\"1\"}"), 1e-12);
            assertEquals(11.0, samples.get("spraynic_worker_rx_frames_total{worker=\"0\"}"));
            assertEquals(12.0, samples.get("spraynic_worker_rx_frames_total{id=\"4\",worker=\"0\"}"), "a repeated label keeps its point");
            assertEquals(5.0, samples.get("spraynic_quote_back_slash_newline_help_x_total"));
            assertEquals(0.0, samples.get("spraynic_worker_spray_malformed_total{worker=\"0\"}"), "a counter never goes below 0");
            assertEquals(1.0, samples.get("spraynic_nic_up"));
            assertTrue(samples.containsKey("spraynic_label_nic_up_total"), "a label cannot pose as the collector's own");
            assertFalse(samples.keySet().stream().anyMatch(name -> name.startsWith("spraynic_fake")), samples.toString());
            assertEquals(1 + 1 + 9, samples.size(), "up, start time and every counter once: " + samples);
            try (CountersFileReader reader = CountersFileReader.open(file.path()))
            {
                assertEquals(reader.startTimeMillis() / 1000.0, samples.get("spraynic_nic_start_time_seconds"), 1e-3);
            }

            auth.increment();
            assertEquals(8.0, MetricsTestSupport.scrape(server.url()).get("spraynic_worker_spray_auth_failures_total{worker=\"0\"}"),
                "read again on each scrape");
        }
    }

    @Test
    void shouldServeScrapesWhileAClientTricklesItsRequestAndCutThatClientOff() throws Exception
    {
        try (CountersFile file = CountersFile.create(dir, "unit", 8);
            MetricsServer server = MetricsServer.start("--metrics", "127.0.0.1:0", () -> Optional.of(file.path())))
        {
            file.newCounter("ipc: clients").setRelease(3);
            final java.net.URI uri = java.net.URI.create(server.url());
            try (java.net.Socket slow = new java.net.Socket(uri.getHost(), uri.getPort()))
            {
                // half a request, then nothing: before, the one server thread waited 60 s on it, and every scrape too
                slow.getOutputStream().write("GET /metrics HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII));
                slow.getOutputStream().flush();
                Thread.sleep(200);
                final long start = System.nanoTime();
                assertEquals(3.0, MetricsTestSupport.scrape(server.url()).get("spraynic_ipc_clients"));
                assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(MetricsServer.MAX_REQUEST_SECONDS),
                    "served beside the slow client, not after it");
                slow.setSoTimeout((MetricsServer.MAX_REQUEST_SECONDS + 10) * 1000);
                int read;
                try
                {
                    read = slow.getInputStream().read();
                }
                catch (final java.net.SocketException reset)
                {
                    read = -1;
                }
                assertEquals(-1, read, "the slow client is cut off once its time to send a request is up");
            }
        }
    }

    @Test
    void shouldFollowTheLiveNicAndSayWhenThereIsNone() throws Exception
    {
        try (MetricsServer server = MetricsServer.start("--listen", "127.0.0.1:0", () -> CountersFileReader.findLive(dir)))
        {
            assertEquals(Map.of("spraynic_nic_up", 0.0), MetricsTestSupport.scrape(server.url()));
            try (CountersFile file = CountersFile.create(dir, "nic", 8))
            {
                file.newCounter("ipc: commands").setRelease(42);
                final Map<String, Double> samples = MetricsTestSupport.scrape(server.url());
                assertEquals(1.0, samples.get("spraynic_nic_up"));
                assertEquals(42.0, samples.get("spraynic_ipc_commands_total"));
            }
            assertEquals(Map.of("spraynic_nic_up", 0.0), MetricsTestSupport.scrape(server.url()), "the file is gone with its NIC");
            try (CountersFile file = CountersFile.create(dir, "nic", 8))
            {
                file.newCounter("ipc: clients").setRelease(2);
                final Map<String, Double> samples = MetricsTestSupport.scrape(server.url());
                assertEquals(2.0, samples.get("spraynic_ipc_clients"), "the restarted NIC's counters: " + samples);
                assertFalse(samples.containsKey("spraynic_ipc_commands_total"));
            }
        }
    }

    @Test
    void shouldServeFromAProcessOfItsOwnWithSpraynicMetrics() throws Exception
    {
        final int port;
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress()))
        {
            port = socket.getLocalPort();
        }
        try (CountersFile file = CountersFile.create(dir, "nic", 8))
        {
            file.newCounter("worker 3: rx frames").setRelease(99);
            final java.util.concurrent.CompletableFuture<CliTestSupport.Run> command = java.util.concurrent.CompletableFuture
                .supplyAsync(() -> CliTestSupport.run("metrics", "--listen", "127.0.0.1:" + port, "--counters-dir",
                    dir.toString(), "--seconds", "5"));
            final String url = "http://127.0.0.1:" + port + "/metrics";
            Map<String, Double> samples = null;
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (null == samples)
            {
                try
                {
                    samples = MetricsTestSupport.scrape(url);
                }
                catch (final java.io.IOException notYetListening)
                {
                    assertTrue(System.nanoTime() < deadline && !command.isDone(), "spraynic metrics listens on " + url);
                    Thread.sleep(50);
                }
            }
            assertEquals(99.0, samples.get("spraynic_worker_rx_frames_total{worker=\"3\"}"), samples.toString());
            final CliTestSupport.Run run = command.get(20, TimeUnit.SECONDS);
            assertEquals(0, run.exitCode(), run.err());
            assertTrue(run.out().contains("at " + url), run.out());
        }
    }

    @Test
    void shouldRefuseABadAddressOrATakenPortInOneSentence() throws Exception
    {
        for (final String bad : new String[]{"9464", "localhost", "127.0.0.1:65536", "127.0.0.1:-1", ":80", "[::1:80", "a:b:c"})
        {
            final BadOption refused = assertThrows(BadOption.class, () -> MetricsServer.parse("--metrics", bad), bad);
            assertTrue(refused.getMessage().startsWith("--metrics " + bad + ": must be HOST:PORT"), refused.getMessage());
        }
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress()))
        {
            final UncheckedIOException refused = assertThrows(UncheckedIOException.class,
                () -> MetricsServer.start("--metrics", "127.0.0.1:" + taken.getLocalPort(), Optional::empty));
            assertTrue(refused.getMessage().contains("is the port taken?"), refused.getMessage());
        }
        final CliTestSupport.Run run = CliTestSupport.run("nic", "--config", "net_null", "--metrics", "localhost");
        assertEquals(2, run.exitCode(), run.err());
        assertTrue(run.err().contains("--metrics localhost: must be HOST:PORT"), run.err());
        assertFalse(run.err().contains("Usage"), run.err());
    }
}
