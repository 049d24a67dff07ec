package io.spraynic.cli;

import io.prometheus.metrics.model.snapshots.PrometheusNaming;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every kind of label the NIC writes to its counters file, and labels no NIC would write, become valid
 * Prometheus metrics with their dimensions as labels.
 */
class CounterMetricNamesTest
{
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "worker 0: spray auth_failures                 | spraynic_worker_spray_auth_failures_total{worker=\"0\"}",
        "worker 12: parse malformed_bad_icrc           | spraynic_worker_parse_malformed_bad_icrc_total{worker=\"12\"}",
        "worker 1: plane 1 rocev2 timeouts             | spraynic_worker_rocev2_timeouts_total{plane=\"1\",worker=\"1\"}",
        "worker 0: plane 2 neighbour arp_requests_sent | spraynic_worker_neighbour_arp_requests_sent_total{plane=\"2\",worker=\"0\"}",
        "worker 0: plane 0 neighbour dropped_unsolicited_reply | spraynic_worker_neighbour_dropped_unsolicited_reply_total{plane=\"0\",worker=\"0\"}",
        "worker 0: steering drops (inbox full)         | spraynic_worker_steering_drops_total{worker=\"0\"}",
        "worker 1: spray reorder window ns             | spraynic_worker_spray_reorder_window_seconds{worker=\"1\"}",
        "worker 1: spray reorder losses found spurious | spraynic_worker_spray_reorder_losses_found_spurious_total{worker=\"1\"}",
        "worker 0: spray storage sets lent             | spraynic_worker_spray_storage_sets_lent{worker=\"0\"}",
        "worker 0: spray storage borrows refused at the limit | spraynic_worker_spray_storage_borrows_refused_at_the_limit_total{worker=\"0\"}",
        "worker 0: frame faults (exception handling a frame, dropped) | spraynic_worker_frame_faults_total{worker=\"0\"}",
        "conn 0x1A1: retransmitted                     | spraynic_connection_retransmitted_total{connection=\"0x1a1\"}",
        "conn 0x101: path 3 tx_bytes                   | spraynic_path_tx_bytes_total{connection=\"0x101\",path=\"3\"}",
        "conn 0x101: path 3 window_packets             | spraynic_path_window_packets{connection=\"0x101\",path=\"3\"}",
        "conn 0x101: path 0 srtt_ns                    | spraynic_path_srtt_seconds{connection=\"0x101\",path=\"0\"}",
        "conn 0x101: path 2 rto_ns                     | spraynic_path_rto_seconds{connection=\"0x101\",path=\"2\"}",
        "conn 0x101: late_margin_ns                    | spraynic_connection_late_margin_seconds{connection=\"0x101\"}",
        "conn 0x101: peer_rate_hint_mbps               | spraynic_connection_peer_rate_hint_mbps{connection=\"0x101\"}",
        "port null0: dpdk rx packets                   | spraynic_port_dpdk_rx_packets_total{port=\"null0\"}",
        "port ring0/q1: rx not_ours                    | spraynic_port_rx_not_ours_total{port=\"ring0\",queue=\"1\"}",
        "port ring0: poll thread errors                | spraynic_port_poll_thread_errors_total{port=\"ring0\"}",
        "port tap0: link up (1 up, 0 down, -1 unknown) | spraynic_port_link_up{port=\"tap0\"}",
        "port tap0: link speed mbps                    | spraynic_port_link_speed_mbps{port=\"tap0\"}",
        "ipc: clients                                  | spraynic_ipc_clients",
        "ipc: commands refused: object not the client's | spraynic_ipc_commands_refused_object_not_the_client_s_total",
        "raw-exchange: corrupt frames at ring1         | spraynic_raw_exchange_corrupt_frames_total{port=\"ring1\"}",
        "something new                                 | spraynic_something_new_total",
    })
    void shouldNameEveryKindOfCounterWithItsDimensionsAsLabels(final String label, final String sample)
    {
        assertEquals(sample, MetricsTestSupport.sample(label));
    }

    @Test
    void shouldScaleRoundTripTimesToSecondsAndKeepGaugesForValuesThatGoDown()
    {
        assertEquals(1e-9, CounterMetricNames.of("conn 0x1: path 0 srtt_ns").scale());
        assertEquals(1e-9, CounterMetricNames.of("conn 0x1: path 0 rto_ns").scale());
        assertTrue(CounterMetricNames.of("conn 0x1: path 0 rto_ns").gauge());
        assertEquals(1e-9, CounterMetricNames.of("conn 0x1: late_margin_ns").scale());
        assertTrue(CounterMetricNames.of("conn 0x1: late_margin_ns").gauge());
        assertTrue(CounterMetricNames.of("ipc: connections").gauge());
        assertEquals(1e-9, CounterMetricNames.of("worker 0: spray reorder window ns").scale());
        assertTrue(CounterMetricNames.of("worker 0: spray reorder window ns").gauge(), "it narrows");
        assertTrue(CounterMetricNames.of("worker 0: spray storage bytes").gauge(), "tables are given back");
        assertFalse(CounterMetricNames.of("worker 0: spray reorder losses found spurious").gauge());
        assertFalse(CounterMetricNames.of("ipc: connections refused").gauge());
        assertTrue(CounterMetricNames.of("port ring0: link up (1 up, 0 down, -1 unknown)").gauge());
        assertFalse(CounterMetricNames.of("port ring0: link up packets").gauge());
        assertEquals(Map.of("connection", "0x1"), CounterMetricNames.of("conn 0x1: srtt_ns").labels());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", " ", ":", "worker : x", "worker 0: ", "conn 0x: path x y", "port : rx", "ipc: ",
        "x_total", "rx_total_total", "foo info", "foo_created", "foo bucket", "nic up", "9 lives", "ünïcödé ☃",
        "quote\" back\\slash\nnewline", "worker 0: spray auth_failures_total", "raw-exchange: by", "__reserved"})
    void shouldGiveAnyLabelAValidNameThatIsNotTheCollectorsOwn(final String label)
    {
        final CounterMetricNames.Metric metric = CounterMetricNames.of(label);
        assertTrue(PrometheusNaming.isValidLegacyMetricName(metric.name()), metric.name());
        assertTrue(PrometheusNaming.isValidMetricName(metric.name()), metric.name());
        assertTrue(metric.name().startsWith("spraynic_"), metric.name());
        assertFalse(metric.name().startsWith("spraynic_nic_"), metric.name());
        assertFalse(metric.name().endsWith("_total"), metric.name());
        metric.labels().keySet().forEach(name -> assertTrue(PrometheusNaming.isValidLegacyLabelName(name), name));
    }
}
