/**
 * What both transports share: 24-bit PSN arithmetic ({@link io.spraynic.datapath.transport.Psn}) and
 * the output side of a pure protocol engine ({@link io.spraynic.datapath.transport.FrameSink}), with
 * its implementations over a packet port ({@link io.spraynic.datapath.transport.PortFrameSink}) and
 * over a fabric port ({@link io.spraynic.datapath.transport.FabricFrameSink}). The transports
 * themselves are {@code transport.rocev2} (the RoCEv2 RC baseline) and {@code transport.spray}.
 */
package io.spraynic.datapath.transport;
