package io.spraynic.cli;

import io.spraynic.datapath.api.BulkTransfer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.spraynic.datapath.api.SeededPattern;
import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.datapath.telemetry.CountersFileReader;
import io.spraynic.datapath.nic.EmbeddedNic;
import io.spraynic.datapath.nic.EmbeddedNicConfig;
import io.spraynic.datapath.nic.NicConnection;
import io.spraynic.datapath.port.InMemoryLink;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.net.ServerSocket;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code spraynic nic --metrics} watched as an operator would: a NIC process (DPDK net_null, spray mode,
 * serving IPC: ports, workers, IPC) and, in this JVM, two embedded NICs with a spray connection that has
 * moved data (connections, paths), each served at {@code /metrics}. The samples agree with the counters
 * files; then Debian's Prometheus server scrapes both every second and its HTTP API gives back every
 * metric family and the values, and every query of the Grafana dashboard finds series.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class NicMetricsPrometheusTest
{
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Path DASHBOARD = Path.of("..", "deploy", "grafana", "spraynic-dashboard.json");

    @TempDir
    Path dir;

    @Test
    void shouldServeEveryCounterAsTheCountersFileHoldsItAndPrometheusShouldScrapeEveryFamily() throws Exception
    {
        final Path runDir = Files.createDirectory(dir.resolve("run"));
        final Path ipcDir = Files.createDirectory(dir.resolve("ipc"), PosixFilePermissions.asFileAttribute(
            PosixFilePermissions.fromString("rwx------")));
        final Process nic = CliTestSupport.start(runDir, "nic", "--config", "net_null", "-p",
            "file_prefix=spraynic-metrics-test-" + ProcessHandle.current().pid(), "--mode", "spray", "--ip", "10.0.0.1",
            "--workers", "2", "--ipc-dir", ipcDir.toString(), "--idle", "sleep", "--metrics", "127.0.0.1:0", "--seconds", "150");
        Process prometheus = null;
        final List<AutoCloseable> closeables = new ArrayList<>();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(nic.getInputStream(), StandardCharsets.UTF_8)))
        {
            String nicUrl = null;
            String line;
            final StringBuilder seen = new StringBuilder();
            while (null != (line = out.readLine()) && !line.startsWith("spraynic nic: running"))
            {
                seen.append(line).append('\n');
                if (line.startsWith("spraynic nic: metrics at "))
                {
                    nicUrl = line.substring("spraynic nic: metrics at ".length());
                }
            }
            assertNotNull(nicUrl, "the NIC says where its metrics are: " + seen);
            final Path nicCounters = CountersFileReader.findLive(runDir).orElseThrow();
            final Map<String, Double> nicSamples = assertAgreesWithCountersFile(nicUrl, nicCounters);
            assertTrue(nicSamples.get("spraynic_port_dpdk_rx_packets_total{port=\"null0\"}") > 0, nicSamples.toString());

            final Path embeddedCounters = embeddedPairWithTraffic(closeables);
            final MetricsServer embedded = MetricsServer.start("--metrics", "127.0.0.1:0", () -> Optional.of(embeddedCounters));
            closeables.add(embedded);
            final Map<String, Double> embeddedSamples = assertAgreesWithCountersFile(embedded.url(), embeddedCounters);
            assertTrue(embeddedSamples.keySet().stream().anyMatch(sample -> sample.startsWith("spraynic_path_srtt_seconds{")),
                embeddedSamples.toString());

            final Path binary = Stream.of("/usr/bin/prometheus", "/usr/local/bin/prometheus").map(Path::of)
                .filter(Files::isExecutable).findFirst().orElse(null);
            if (null == binary)
            {
                // CI installs it (deploy/setup-env.sh); elsewhere the endpoint checks above still ran
                assertTrue(null == System.getenv("CI"), "prometheus is not installed: apt-get install prometheus");
                Assumptions.abort("prometheus not installed (apt-get install prometheus): Prometheus scrape not checked");
            }
            final int apiPort = freePort();
            final Path config = dir.resolve("prometheus.yml");
            Files.writeString(config, """
                global:
                  scrape_interval: 1s
                  scrape_timeout: 1s
                scrape_configs:
                  - job_name: nic
                    metrics_path: %s
                    static_configs: [{targets: ['%s']}]
                  - job_name: embedded
                    metrics_path: %s
                    static_configs: [{targets: ['%s']}]
                """.formatted(pathOf(nicUrl), hostPortOf(nicUrl), pathOf(embedded.url()), hostPortOf(embedded.url())));
            final Path log = dir.resolve("prometheus.log");
            prometheus = new ProcessBuilder(binary.toString(), "--config.file=" + config,
                "--storage.tsdb.path=" + dir.resolve("tsdb"), "--web.listen-address=127.0.0.1:" + apiPort)
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            final String api = "http://127.0.0.1:" + apiPort + "/api/v1/";

            // both targets up and each scraped whole at least once
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!(scrapedWhole(api, "nic", nicSamples.size()) && scrapedWhole(api, "embedded", embeddedSamples.size())))
            {
                assertTrue(prometheus.isAlive() && System.nanoTime() < deadline,
                    "Prometheus scraped both targets: " + Files.readString(log));
                Thread.sleep(250);
            }

            final Set<String> names = new HashSet<>();
            JSON.readTree(MetricsTestSupport.get(api + "label/__name__/values")).get("data")
                .forEach(name -> names.add(name.asText()));
            final TreeSet<String> families = MetricsTestSupport.names(nicSamples);
            families.addAll(MetricsTestSupport.names(embeddedSamples));
            final TreeSet<String> missing = new TreeSet<>(families);
            missing.removeAll(names);
            assertTrue(missing.isEmpty(), "families Prometheus lacks: " + missing);
            for (final String family : new String[]{"spraynic_port_dpdk_rx_packets_total", "spraynic_worker_rx_frames_total",
                "spraynic_worker_spray_auth_failures_total", "spraynic_ipc_clients", "spraynic_connection_tx_packets_total",
                "spraynic_path_tx_bytes_total", "spraynic_path_srtt_seconds", "spraynic_path_window_packets"})
            {
                assertTrue(families.contains(family), family + " among " + families);
            }

            assertEquals(1.0, value(api, "spraynic_nic_up{job=\"nic\"}"));
            assertEquals(1.0, value(api, "spraynic_nic_up{job=\"embedded\"}"));
            assertEquals(0.0, value(api, "spraynic_ipc_clients{job=\"nic\"}"));
            assertEquals(2.0, value(api, "count(spraynic_worker_rx_frames_total{job=\"nic\"})"), "one series per worker");
            assertTrue(value(api, "sum(spraynic_port_dpdk_rx_packets_total{job=\"nic\"})") >=
                nicSamples.get("spraynic_port_dpdk_rx_packets_total{port=\"null0\"}"), "counters only grow");
            final double written = embeddedSamples.entrySet().stream()
                .filter(sample -> sample.getKey().startsWith("spraynic_path_tx_bytes_total{"))
                .mapToDouble(Map.Entry::getValue).sum();
            assertTrue(written > 1 << 20, "the transfer's bytes on the paths: " + written);
            final double stored = value(api, "sum(spraynic_path_tx_bytes_total{job=\"embedded\"})");
            final double now = MetricsTestSupport.scrape(embedded.url()).entrySet().stream()
                .filter(sample -> sample.getKey().startsWith("spraynic_path_tx_bytes_total{"))
                .mapToDouble(Map.Entry::getValue).sum();
            assertTrue(stored >= written && stored <= now, "the paths' bytes as Prometheus stored them: " + written +
                " <= " + stored + " <= " + now); // keepalives and probes may add a few after the transfer
            assertTrue(value(api, "max(spraynic_path_srtt_seconds{job=\"embedded\"})") > 0);

            // the Grafana dashboard's every query runs and finds series (rates need two scrapes of each target)
            while (value(api, "min(count_over_time(spraynic_nic_up[1m]))") < 2)
            {
                assertTrue(System.nanoTime() < deadline, "two scrapes of each target");
                Thread.sleep(250);
            }
            final JsonNode dashboard = JSON.readTree(DASHBOARD.toFile());
            int queries = 0;
            for (final JsonNode panel : dashboard.get("panels"))
            {
                for (final JsonNode target : panel.get("targets"))
                {
                    final String expr = target.get("expr").asText().replace("$__rate_interval", "1m").replace("$job", ".+");
                    assertTrue(!query(api, expr).isEmpty(), panel.get("title").asText() + ": " + expr + " finds no series");
                    queries++;
                }
            }
            assertTrue(queries > 20, "the dashboard's queries: " + queries);
        }
        finally
        {
            if (null != prometheus)
            {
                prometheus.destroy();
                if (!prometheus.waitFor(10, TimeUnit.SECONDS))
                {
                    prometheus.destroyForcibly();
                }
            }
            for (int i = closeables.size() - 1; i >= 0; i--)
            {
                closeables.get(i).close();
            }
            nic.toHandle().destroy();
            if (!nic.waitFor(30, TimeUnit.SECONDS))
            {
                nic.destroyForcibly();
            }
        }
    }

    /**
     * Scrapes between two reads of the counters file: every counter appears once, counters between the two
     * reads, gauges as read when they did not move.
     */
    private static Map<String, Double> assertAgreesWithCountersFile(final String url, final Path file) throws Exception
    {
        try (CountersFileReader reader = CountersFileReader.open(file))
        {
            final List<CountersFileReader.Counter> before = reader.read();
            final Map<String, Double> samples = MetricsTestSupport.scrape(url);
            final List<CountersFileReader.Counter> after = reader.read();
            assertEquals(before.size(), after.size(), "no counter came or went while scraping");
            assertEquals(before.size() + 2, samples.size(), "every counter once, with up and start time: " + samples);
            for (int i = 0; i < before.size(); i++)
            {
                final String label = before.get(i).label();
                final CounterMetricNames.Metric metric = CounterMetricNames.of(label);
                final Double value = samples.get(MetricsTestSupport.sample(label));
                assertNotNull(value, label + " as " + MetricsTestSupport.sample(label) + " in " + samples.keySet());
                final double low = Math.min(before.get(i).value(), after.get(i).value()) * metric.scale();
                final double high = Math.max(before.get(i).value(), after.get(i).value()) * metric.scale();
                assertTrue(value >= low - 1e-12 && value <= high + 1e-12, label + ": " + value + " not in " + low + ".." + high);
            }
            return samples;
        }
    }

    private Path embeddedPairWithTraffic(final List<AutoCloseable> closeables) throws Exception
    {
        final int planes = 2;
        final PacketPort[][] ports = new PacketPort[2][planes];
        for (int p = 0; p < planes; p++)
        {
            final InMemoryLink link = new InMemoryLink("p" + p, 1024, 2048 + InMemoryLink.HEADROOM);
            closeables.add(link);
            ports[0][p] = link.first();
            ports[1][p] = link.second();
        }
        final Path countersDir = Files.createDirectory(dir.resolve("embedded"));
        final EmbeddedNic[] nics = new EmbeddedNic[2];
        final CountersFile[] counters = new CountersFile[2];
        for (int h = 0; h < 2; h++)
        {
            final EmbeddedNicConfig config = new EmbeddedNicConfig().mode(NicConnection.Kind.SPRAY).workers(1).planes(planes)
                .connections(4 * planes, 4, 1024).bursts(32, 2048).sprayConfig(EmbeddedNicConfig::sharedCoreSprayConfig);
            for (int p = 0; p < planes; p++)
            {
                config.local(p, 0x0A00_0000 | p << 8 | (h + 1), 0x02_00_00_00_00_00L | (long)p << 8 | (h + 1));
            }
            counters[h] = CountersFile.create(countersDir, "embedded" + h, 4096);
            closeables.add(counters[h]);
            nics[h] = EmbeddedNic.start(config, new PacketPort[][]{ports[h]}, counters[h]);
            closeables.add(nics[h]);
        }
        final Arena arena = Arena.ofShared();
        closeables.add(arena);
        final NicConnection client = nics[0].connect(new int[]{nics[1].localIpv4(0), nics[1].localIpv4(1)}, WAIT);
        assertNotNull(nics[1].accept(WAIT), "the peer accepted the connection");
        final long bytes = 2L << 20;
        final MemoryRegion source = nics[0].register(SeededPattern.allocate(arena, bytes, 7), AccessFlags.NONE);
        final MemoryRegion target = nics[1].register(arena.allocate(bytes, 4096), AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        BulkTransfer.write(client, source, target.address(), target.rkey(), 64 * 1024, false, WAIT);
        Thread.sleep(100); // the workers publish their mirrors every few milliseconds: let the last writes land
        return counters[0].path();
    }

    private static boolean scrapedWhole(final String api, final String job, final int samples) throws Exception
    {
        if (!MetricsTestSupport.answersOk(api.replace("/api/v1/", "/-/ready")))
        {
            return false; // starting: its API answers 503 until then
        }
        final JsonNode result = query(api, "scrape_samples_scraped{job=\"" + job + "\"} and on() up{job=\"" + job + "\"} == 1");
        return !result.isEmpty() && samples <= result.get(0).get("value").get(1).asDouble();
    }

    private static double value(final String api, final String query) throws Exception
    {
        final JsonNode result = query(api, query);
        assertEquals(1, result.size(), query + ": " + result);
        return result.get(0).get("value").get(1).asDouble();
    }

    private static JsonNode query(final String api, final String query) throws Exception
    {
        final JsonNode answer;
        try
        {
            answer = JSON.readTree(MetricsTestSupport.get(api + "query?query=" + URLEncoder.encode(query, StandardCharsets.UTF_8)));
        }
        catch (final java.io.IOException notYetListening)
        {
            return JSON.createArrayNode();
        }
        assertEquals("success", answer.get("status").asText(), answer.toString());
        return answer.get("data").get("result");
    }

    private static int freePort() throws Exception
    {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress()))
        {
            return socket.getLocalPort();
        }
    }

    private static String hostPortOf(final String url)
    {
        return url.replaceFirst("^http://", "").replaceFirst("/.*", "");
    }

    private static String pathOf(final String url)
    {
        return url.replaceFirst("^http://[^/]+", "");
    }

}
