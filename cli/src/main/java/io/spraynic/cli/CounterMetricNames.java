package io.spraynic.cli;

import io.prometheus.metrics.model.snapshots.PrometheusNaming;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How a counters-file label becomes a Prometheus metric: a label {@code SCOPE ID: WHAT} becomes
 * {@code spraynic_SCOPE_WHAT{SCOPE="ID"}}, counters with {@code _total} (added by the exposition) and the
 * values that go down as gauges. Dimensions inside WHAT become labels too ({@code path P}, {@code plane P},
 * a port's queue); explanations in brackets are dropped. A label that fits no rule still becomes a metric
 * ({@code spraynic_} and the whole label, sanitised), so no counter is ever left out.
 * <pre>
 *   worker 0: spray auth_failures          spraynic_worker_spray_auth_failures_total{worker="0"}
 *   worker 0: plane 1 rocev2 timeouts      spraynic_worker_rocev2_timeouts_total{worker="0",plane="1"}
 *   conn 0x101: retransmitted              spraynic_connection_retransmitted_total{connection="0x101"}
 *   conn 0x101: path 2 srtt_ns             spraynic_path_srtt_seconds{connection="0x101",path="2"} (gauge)
 *   conn 0x101: path 2 rto_ns              spraynic_path_rto_seconds{connection="0x101",path="2"} (gauge)
 *   port ring0/q1: rx not_ours             spraynic_port_rx_not_ours_total{port="ring0",queue="1"}
 *   port ring0: link up (1 up, 0 down, ...) spraynic_port_link_up{port="ring0"} (gauge)
 *   ipc: clients                           spraynic_ipc_clients (gauge)
 *   raw-exchange: frames sent by ring0     spraynic_raw_exchange_frames_sent_total{port="ring0"}
 * </pre>
 * Labels come from another process's file and are not trusted: whatever they hold, the name is a valid
 * Prometheus name and the label values are escaped by the exposition.
 */
final class CounterMetricNames
{
    /**
     * One counter as a metric: its family name (without {@code _total}), whether it is a gauge, its labels
     * (name to value, in order) and the factor that turns the counter's value into the metric's unit.
     */
    record Metric(String name, boolean gauge, Map<String, String> labels, double scale)
    {
    }

    private static final Pattern WORKER = Pattern.compile("worker (\\d+): (.+)");
    private static final Pattern PLANE = Pattern.compile("plane (\\d+) (.+)");
    private static final Pattern CONNECTION = Pattern.compile("conn (0x[0-9a-fA-F]+): (.+)");
    private static final Pattern PATH = Pattern.compile("path (\\d+) (.+)");
    private static final Pattern PORT = Pattern.compile("port ([^:/\\s]+)(?:/q(\\d+))?: (.+)");
    private static final Pattern IPC = Pattern.compile("ipc: (.+)");
    private static final Pattern RAW_EXCHANGE = Pattern.compile("raw-exchange: (.+) (?:by|at) (\\S+)");
    private static final Pattern EXPLANATION = Pattern.compile("\\s*\\([^)]*\\)");
    private static final Set<String> IPC_GAUGES = Set.of("clients", "regions", "connections");
    private static final Set<String> PORT_GAUGES = Set.of("link up", "link speed mbps");
    private static final Set<String> CONNECTION_GAUGES = Set.of("peer_rate_hint_mbps", "window_packets", "srtt_ns",
        "rto_ns", "late_margin_ns");
    /** A worker's engine figures that go down: tables lent now and their bytes, the reordering window (S6.5-3). */
    private static final Set<String> WORKER_GAUGES = Set.of("spray storage sets lent", "spray storage bytes",
        "spray reorder window ns");

    private CounterMetricNames()
    {
    }

    static Metric of(final String label)
    {
        final Map<String, String> labels = new LinkedHashMap<>();
        Matcher m;
        if ((m = WORKER.matcher(label)).matches())
        {
            labels.put("worker", m.group(1));
            String what = m.group(2);
            final Matcher plane = PLANE.matcher(what);
            if (plane.matches())
            {
                labels.put("plane", plane.group(1));
                what = plane.group(2);
            }
            if (WORKER_GAUGES.contains(what))
            {
                return what.endsWith(" ns") ? new Metric(name("worker_" + what.substring(0, what.length() - 3) +
                    " seconds"), true, labels, 1e-9) : new Metric(name("worker_" + what), true, labels, 1);
            }
            return counter("worker_" + what, labels);
        }
        if ((m = CONNECTION.matcher(label)).matches())
        {
            labels.put("connection", m.group(1).toLowerCase(Locale.ROOT));
            final Matcher path = PATH.matcher(m.group(2));
            if (path.matches())
            {
                labels.put("path", path.group(1));
                return connectionMetric("path_", path.group(2), labels);
            }
            return connectionMetric("connection_", m.group(2), labels);
        }
        if ((m = PORT.matcher(label)).matches())
        {
            labels.put("port", m.group(1));
            if (null != m.group(2))
            {
                labels.put("queue", m.group(2));
            }
            final String what = EXPLANATION.matcher(m.group(3)).replaceAll("");
            return PORT_GAUGES.contains(what) ?
                new Metric(name("port_" + what), true, labels, 1) : counter("port_" + m.group(3), labels);
        }
        if ((m = IPC.matcher(label)).matches())
        {
            final String what = m.group(1);
            return IPC_GAUGES.contains(what) ?
                new Metric(name("ipc_" + what), true, labels, 1) : counter("ipc_" + what, labels);
        }
        if ((m = RAW_EXCHANGE.matcher(label)).matches())
        {
            labels.put("port", m.group(2));
            return counter("raw_exchange_" + m.group(1), labels);
        }
        return counter(label, labels);
    }

    private static Metric connectionMetric(final String scope, final String what, final Map<String, String> labels)
    {
        if (!CONNECTION_GAUGES.contains(what))
        {
            return counter(scope + what, labels);
        }
        return what.endsWith("_ns") ? new Metric(name(scope + what.substring(0, what.length() - 3) + "_seconds"), true,
            labels, 1e-9) : new Metric(name(scope + what), true, labels, 1);
    }

    private static Metric counter(final String what, final Map<String, String> labels)
    {
        return new Metric(name(what), false, labels, 1);
    }

    /**
     * @return {@code spraynic_} and {@code what} in lower case, every run of other characters than letters
     * and digits one underscore, with no {@code _total} (the exposition adds it to counters) and no other suffix
     * Prometheus reserves.
     */
    static String name(final String what)
    {
        String name = "spraynic_" + EXPLANATION.matcher(what).replaceAll("").toLowerCase(Locale.ROOT)
            .replaceAll("[^a-z0-9]+", "_").replaceAll("^_+|_+$", "");
        while (name.endsWith("_total"))
        {
            name = name.substring(0, name.length() - "_total".length());
        }
        if (name.equals("spraynic_"))
        {
            name = "spraynic_unnamed";
        }
        if (name.startsWith("spraynic_nic_"))
        {
            name = "spraynic_label_" + name.substring("spraynic_".length()); // spraynic_nic_* are the collector's own
        }
        return PrometheusNaming.isValidMetricName(name) ? name : name + "_value"; // e.g. a label ending in "info"
    }
}
