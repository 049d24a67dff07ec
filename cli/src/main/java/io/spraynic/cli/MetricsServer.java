package io.spraynic.cli;

import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An HTTP endpoint serving a counters file's counters at {@code /metrics} in the Prometheus and OpenMetrics
 * text formats (the Prometheus Java client's server, on daemon threads of its own, with a client's time and the
 * connections bounded): {@code spraynic nic --metrics} and {@code spraynic metrics}.
 */
final class MetricsServer implements AutoCloseable
{
    private static final Pattern HOST_PORT = Pattern.compile("(?:\\[([0-9a-fA-F:.]+)]|([^\\[\\]:]+)):(\\d{1,5})");

    /** Seconds a client may take to send its request: a scraper needs milliseconds. */
    static final int MAX_REQUEST_SECONDS = 5;
    /** Seconds a client may take to read a response (a few hundred KiB at most). */
    static final int MAX_RESPONSE_SECONDS = 30;
    /** Connections open at once: a scraper or two, a person with curl; a flood takes no more descriptors than these. */
    static final int MAX_CONNECTIONS = 32;
    /** Threads serving requests, so that one slow client does not hold every scrape until it is cut off. */
    private static final int THREADS = 2;

    static
    {
        // read once, when the JDK's HTTP server first loads, which nothing else in a NIC process does; set before the
        // Prometheus server's own defaults (60 s to send a request, 600 s to read a response, so one client that
        // trickles its request held the endpoint for a minute) and an unbounded number of connections
        setIfAbsent("sun.net.httpserver.maxReqTime", Integer.toString(MAX_REQUEST_SECONDS));
        setIfAbsent("sun.net.httpserver.maxRspTime", Integer.toString(MAX_RESPONSE_SECONDS));
        setIfAbsent("jdk.httpserver.maxConnections", Integer.toString(MAX_CONNECTIONS));
    }

    private static void setIfAbsent(final String property, final String value)
    {
        if (null == System.getProperty(property))
        {
            System.setProperty(property, value);
        }
    }

    private final CountersCollector collector;
    private final HTTPServer server;
    private final String host;

    private MetricsServer(final CountersCollector collector, final HTTPServer server, final String host)
    {
        this.collector = collector;
        this.server = server;
        this.host = host;
    }

    /**
     * Serves the counters of the file {@code files} names on each scrape, on {@code listen} (HOST:PORT,
     * [IPV6]:PORT; port 0 picks a free one).
     */
    static MetricsServer start(final String option, final String listen, final Supplier<Optional<Path>> files)
    {
        final Matcher m = parse(option, listen);
        final String host = null != m.group(1) ? m.group(1) : m.group(2);
        final PrometheusRegistry registry = new PrometheusRegistry(); // only ours: no JVM metrics in the NIC's
        final CountersCollector collector = new CountersCollector(files);
        registry.register(collector);
        final ExecutorService executor = Executors.newFixedThreadPool(THREADS, runnable ->
        {
            final Thread thread = new Thread(runnable, "spraynic-metrics");
            thread.setDaemon(true);
            return thread;
        });
        try
        {
            return new MetricsServer(collector, HTTPServer.builder().hostname(host).port(Integer.parseInt(m.group(3)))
                .registry(registry).executorService(executor).buildAndStart(), host);
        }
        catch (final IOException ex)
        {
            executor.shutdownNow();
            collector.close();
            throw new UncheckedIOException("cannot serve metrics on " + listen + ": " + ex.getMessage() +
                " (is the port taken? give another with " + option + ")", ex);
        }
    }

    /**
     * Checks HOST:PORT before anything starts: a bad one is refused with one sentence.
     */
    static Matcher parse(final String option, final String listen)
    {
        final Matcher m = HOST_PORT.matcher(null == listen ? "" : listen);
        if (!m.matches() || Integer.parseInt(m.group(3)) > 65_535)
        {
            throw new BadOption(option, String.valueOf(listen), "must be HOST:PORT or [IPV6]:PORT with a port 0..65535",
                "try " + option + " 127.0.0.1:9464");
        }
        return m;
    }

    /**
     * @return where Prometheus scrapes, e.g. {@code http://127.0.0.1:9464/metrics}.
     */
    String url()
    {
        return "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + server.getPort() + "/metrics";
    }

    public void close()
    {
        server.close();
        collector.close();
    }
}
