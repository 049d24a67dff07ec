/**
 * The standard RoCEv2 Reliable Connection transport: the in-order, single-path, go-back-N baseline every
 * SprayNIC experiment compares against.
 * <ul>
 *     <li>{@link io.spraynic.datapath.transport.rocev2.RcEngine} and
 *     {@link io.spraynic.datapath.transport.rocev2.RcQueuePair}: the pure protocol engine. Parsed packets,
 *     ticks and work requests in; frames out through a {@link io.spraynic.datapath.transport.FrameSink}.
 *     No DPDK, thread or clock inside, so it runs in real time or in a virtual-time simulator alike. A queue
 *     pair keeps the verbs and dispatch; its parts own their state: {@code RcStateMachine} (what each state
 *     allows), {@code RcRequester} with {@code RcSendQueue} (PSNs, ACKs, go-back-N, timers, READ responses
 *     received), {@code RcResponder} with {@code RcReceiveQueue} and {@code RcReadResponseQueue} (placement,
 *     duplicates, READs served, ACKs and NAKs), and {@code RcFrameOutput} (the headers of every frame).</li>
 *     <li>{@link io.spraynic.datapath.port.PortFrameSink}: an engine's frames into a
 *     {@link io.spraynic.datapath.port.PacketPort} (DPDK or in-JVM); the loop that drives an engine over ports is
 *     the NIC's ({@link io.spraynic.datapath.nic.NicWorker}), and over the emulated fabric
 *     {@link io.spraynic.datapath.fabric.RcFabricEndpoint}.</li>
 *     <li>{@link io.spraynic.datapath.transport.Psn}, {@link io.spraynic.datapath.transport.rocev2.PathMtu},
 *     {@link io.spraynic.datapath.transport.rocev2.RnrTimer}: InfiniBand arithmetic.</li>
 *     <li>{@link io.spraynic.datapath.transport.rocev2.DcqcnConfig} and
 *     {@link io.spraynic.datapath.transport.rocev2.DcqcnRateLimiter}: DCQCN congestion control (CNPs from the
 *     notification point, the rate law at the reaction point).</li>
 * </ul>
 * Not served yet: atomics, SEND with invalidate, UC/UD, path migration, SRQs, async events.
 */
package io.spraynic.datapath.transport.rocev2;
