/**
 * Telemetry: the NIC's counters in a memory-mapped file that another process reads while the NIC runs
 * ({@link io.spraynic.datapath.telemetry.CountersFile} writes it, laid out by
 * {@link io.spraynic.datapath.telemetry.CountersFileDescriptor}, {@link io.spraynic.datapath.telemetry.CountersFileReader}
 * reads it, as {@code spraynic stat} and the Prometheus exporter do), and the publishers that copy a transport's or a
 * port's own counters into it from the thread that owns them ({@link io.spraynic.datapath.telemetry.CounterMirror},
 * {@link io.spraynic.datapath.telemetry.SprayGauges}, {@link io.spraynic.datapath.telemetry.PortStatsCounters}).
 * Nothing here is on the per-packet path: publishers run on a worker's publish interval or a thread of their own.
 */
package io.spraynic.datapath.telemetry;
