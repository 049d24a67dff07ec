/**
 * The RoCEv2 wire format, zero copy: flyweights over {@link java.lang.foreign.MemorySegment} in the style
 * of Aeron's {@code DataHeaderFlyweight} (named {@code *_OFFSET} constants, {@code LENGTH}, static
 * {@code (segment, offset)} accessors, explicit big-endian unaligned layouts, a {@code toString} helper).
 * <ul>
 *     <li>Headers: {@link io.spraynic.datapath.wire.EthernetHeader} (802.1Q),
 *     {@link io.spraynic.datapath.wire.Ipv4Header}, {@link io.spraynic.datapath.wire.Ipv6Header},
 *     {@link io.spraynic.datapath.wire.UdpHeader}, {@link io.spraynic.datapath.wire.BaseTransportHeader},
 *     {@link io.spraynic.datapath.wire.RdmaExtendedTransportHeader},
 *     {@link io.spraynic.datapath.wire.AckExtendedTransportHeader},
 *     {@link io.spraynic.datapath.wire.ImmediateDataHeader}, IETH, DETH, AtomicETH, AtomicAckETH and
 *     {@link io.spraynic.datapath.wire.CongestionNotificationPacket}.</li>
 *     <li>{@link io.spraynic.datapath.wire.Opcode} and {@link io.spraynic.datapath.wire.OpcodeTable}: which
 *     extension headers each opcode carries; manufacturer opcodes 0xC0-0xFF are registered per table.</li>
 *     <li>{@link io.spraynic.datapath.wire.Icrc}: the invariant CRC of the RoCEv2 annex.</li>
 *     <li>{@link io.spraynic.datapath.wire.RoceParser} classifies a frame into a reusable
 *     {@link io.spraynic.datapath.wire.RoceFrame} and one slot of
 *     {@link io.spraynic.datapath.wire.ParseCounters}; {@link io.spraynic.datapath.wire.RoceFrameWriter}
 *     builds frames in place.</li>
 * </ul>
 * Nothing on the per-packet path (parse, ICRC, write) allocates, boxes, throws or locks; the
 * {@code toString} helpers and {@link io.spraynic.datapath.wire.Opcode#name} are for debugging only.
 */
package io.spraynic.datapath.wire;
