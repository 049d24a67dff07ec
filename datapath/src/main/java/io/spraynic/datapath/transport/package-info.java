/**
 * What both transports share: 24-bit PSN arithmetic ({@link io.spraynic.datapath.transport.Psn}) and
 * the output side of a pure protocol engine ({@link io.spraynic.datapath.transport.FrameSink}, one contract for
 * spray and RoCEv2), whose implementations live with what they write to: packet ports
 * ({@link io.spraynic.datapath.port.PortFrameSink}) and fabric ports
 * ({@link io.spraynic.datapath.fabric.FabricFrameSink}). The transports
 * themselves are {@code transport.rocev2} (the RoCEv2 RC baseline) and {@code transport.spray}.
 */
package io.spraynic.datapath.transport;
