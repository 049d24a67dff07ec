/**
 * The fabric emulator: links, queues, switches and hosts of a data-centre network, run as a deterministic
 * discrete-event simulation in virtual time ({@link io.spraynic.datapath.fabric.Simulator}) or between
 * real ports in real time ({@link io.spraynic.datapath.fabric.RealTimeFabricAgent}), so the spray and
 * RoCEv2 transports are compared side by side on the same fabric.
 * <p>
 * The model, per frame:
 * <pre>
 *   Endpoint --send--&gt; HostPort --&gt; Link (NIC egress queue) --&gt; Switch --ECMP--&gt; Link --&gt; ... --&gt; HostPort --onFrame--&gt; Endpoint
 * </pre>
 * <ul>
 *     <li>{@link io.spraynic.datapath.fabric.FramePool}: every frame in one off-heap segment of fixed
 *     slots; frames move between queues and events as slot indexes, copied only at the edges.</li>
 *     <li>{@link io.spraynic.datapath.fabric.Link}: one direction; rate, propagation delay, a byte-bounded
 *     FIFO with tail drop and ECN marking above a threshold, seeded random loss, down and blackhole.</li>
 *     <li>{@link io.spraynic.datapath.fabric.Switch}: routes on destination IPv4 to equal-cost ports chosen
 *     by a seeded hash of the 5-tuple, so the UDP source port chooses the path.</li>
 *     <li>{@link io.spraynic.datapath.fabric.Topology}: back-to-back and multi-plane two-tier Clos fabrics;
 *     {@link io.spraynic.datapath.fabric.FabricConfig} and {@link io.spraynic.datapath.fabric.LinkConfig}
 *     their parameters.</li>
 *     <li>{@link io.spraynic.datapath.fabric.Endpoint} and {@link io.spraynic.datapath.fabric.FabricPort}:
 *     what transports implement and use; time is always a parameter. A NIC's transmit queue pushes back
 *     (send returns false) instead of dropping.</li>
 *     <li>{@link io.spraynic.datapath.fabric.SprayFabricEndpoint} and
 *     {@link io.spraynic.datapath.fabric.RcFabricEndpoint}: the transports on a host, each a thin adapter over a
 *     {@link io.spraynic.datapath.nic.NicWorker}, the loop a NIC runs, stepped in fabric time: a delivered frame is
 *     the worker's next receive (read in place) and one loop runs at its arrival; host timers wake the worker when
 *     its tick schedule asks; the engine writes straight onto the host's links.</li>
 *     <li>{@link io.spraynic.datapath.fabric.LinkTap}: sees frames sent and dropped per link;
 *     {@link io.spraynic.datapath.fabric.PcapLinkTap} writes them to a pcapng file in fabric time.</li>
 * </ul>
 * Everything on the per-frame path is primitives over preallocated memory: once warmed up, a run
 * allocates nothing. Runs are a function of the configuration's seed.
 */
package io.spraynic.datapath.fabric;
