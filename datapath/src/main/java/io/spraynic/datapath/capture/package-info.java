/**
 * Packet capture files: {@link io.spraynic.datapath.capture.PcapReader} (classic pcap and pcapng, both
 * byte orders, zero copy over a mapped file), {@link io.spraynic.datapath.capture.PcapWriter} (classic pcap
 * and pcapng with one interface block per interface, allocation-free per frame) and
 * {@link io.spraynic.datapath.capture.FrameDecoder}, the engine of {@code spraynic decode FILE [--json]}.
 */
package io.spraynic.datapath.capture;
