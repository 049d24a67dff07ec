package io.spraynic.cli;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Scrapes a {@code /metrics} endpoint as Prometheus does and reads its text format back: every sample as
 * {@code name{labels}} to value, labels as the exposition writes them (sorted by name).
 */
final class MetricsTestSupport
{
    private static final Pattern SAMPLE = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*(?:\\{.*})?) (\\S+)");
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private MetricsTestSupport()
    {
    }

    /** @return whether the URL answers 200 now (Prometheus' /-/ready answers 503 while it starts); false if not listening. */
    static boolean answersOk(final String url) throws InterruptedException
    {
        try
        {
            return 200 == HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.discarding()).statusCode();
        }
        catch (final IOException notListening)
        {
            return false;
        }
    }

    static String get(final String url) throws IOException, InterruptedException
    {
        final HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create(url))
            .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), url + ": " + response.body());
        return response.body();
    }

    /**
     * @return every sample of the Prometheus text format, in order.
     */
    static Map<String, Double> samples(final String text)
    {
        final Map<String, Double> samples = new LinkedHashMap<>();
        for (final String line : text.split("\n"))
        {
            if (line.isEmpty() || line.startsWith("#"))
            {
                continue;
            }
            final Matcher m = SAMPLE.matcher(line);
            assertTrue(m.matches(), "a sample line: " + line);
            assertTrue(null == samples.put(m.group(1), Double.parseDouble(m.group(2))), "sample repeated: " + line);
        }
        return samples;
    }

    static Map<String, Double> scrape(final String url) throws IOException, InterruptedException
    {
        return samples(get(url));
    }

    /**
     * @return the metric names (without labels) of samples.
     */
    static TreeSet<String> names(final Map<String, Double> samples)
    {
        final TreeSet<String> names = new TreeSet<>();
        samples.keySet().forEach(sample -> names.add(sample.replaceAll("\\{.*", "")));
        return names;
    }

    /**
     * @return how a counter of the counters file appears among the samples: name and labels as the text format
     * writes them.
     */
    static String sample(final String counterLabel)
    {
        final CounterMetricNames.Metric metric = CounterMetricNames.of(counterLabel);
        final StringBuilder sample = new StringBuilder(metric.name()).append(metric.gauge() ? "" : "_total");
        if (!metric.labels().isEmpty())
        {
            sample.append('{');
            new java.util.TreeMap<>(metric.labels()).forEach((name, value) ->
                sample.append(name).append("=\"").append(value).append("\","));
            sample.setCharAt(sample.length() - 1, '}');
        }
        return sample.toString();
    }
}
