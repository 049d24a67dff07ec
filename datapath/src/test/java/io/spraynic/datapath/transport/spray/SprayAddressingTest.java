package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.port.FaultInjectingPacketPort;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.datapath.wire.ParseCounters;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * S2.1, S2.4: the spray transport sends over IPv4 or IPv6 (with its UDP checksum), untagged or with an 802.1Q tag,
 * and the receiving side parses, checks the ICRC of and places every packet all the same: a WRITE and a SEND
 * arrive byte for byte, with 1 % of data packets lost (seeded) so that retransmissions go the same way.
 */
class SprayAddressingTest
{
    private static final int SIZE = (1 << 20) + 333;

    // a spray data packet behind an IP header of ipLength bytes and a VLAN tag of tagLength bytes
    private static boolean isDataAfter(
        final java.lang.foreign.MemorySegment memory, final long offset, final int length, final int ipLength, final int tagLength)
    {
        final int bth = 14 + tagLength + ipLength + 8;
        return length > bth && io.spraynic.datapath.wire.SprayOpcodes.isData(
            io.spraynic.datapath.wire.BaseTransportHeader.opcode(memory, offset + bth));
    }

    @ParameterizedTest(name = "S2.1: ipv6={0}, 802.1Q tag {1}, A writes the IPv6 UDP checksum {2}")
    @CsvSource({"false, 0x2064, true", "true, -1, true", "true, 0xA0C8, true", "true, -1, false"})
    void shouldCarryTrafficOverIpv6AndVlans(final boolean ipv6, final String tciText, final boolean udpChecksum)
    {
        final int tci = Integer.decode(tciText);
        final long[] seen = new long[4]; // frames, tagged, IPv6, IPv6 with a UDP checksum
        final SprayTestBed.Options options = new SprayTestBed.Options()
            .wrapA((plane, port) -> new FaultInjectingPacketPort(port, 3 + plane, 0.01, 0, 0, (memory, offset, length) ->
            {
                seen[0]++;
                int tag = 0;
                int etherType = Short.toUnsignedInt(memory.get(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(
                    java.nio.ByteOrder.BIG_ENDIAN), offset + 12));
                if (etherType == 0x8100)
                {
                    seen[1]++;
                    tag = 4;
                    etherType = Short.toUnsignedInt(memory.get(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(
                        java.nio.ByteOrder.BIG_ENDIAN), offset + 16));
                }
                if (etherType == 0x86DD)
                {
                    seen[2]++;
                    seen[3] += memory.get(ValueLayout.JAVA_SHORT_UNALIGNED, offset + 14 + tag + 40 + 6) != 0 ? 1 : 0;
                }
                return isDataAfter(memory, offset, length, etherType == 0x86DD ? 40 : 20, tag);
            }));
        options.ipv6 = ipv6;
        options.vlanTci = tci;
        // a port whose kernel writes the checksum (the UDP socket port) has the engine leave it out (S2.4)
        options.configure = (host, config) ->
        {
            for (int plane = 0; plane < config.planes; plane++)
            {
                config.ipv6UdpChecksum(plane, host != 1 || udpChecksum);
            }
        };
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final MemoryRegion src = bed.region(bed.pdA, 2L * SIZE, AccessFlags.NONE, 3);
            final MemoryRegion dst = bed.region(bed.pdB, 2L * SIZE, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
            bed.b.postReceive(1, new ReceiveWorkRequest().wrId(10).buffer(dst, dst.address() + SIZE, SIZE));
            bed.a.postSend(0, new SendWorkRequest().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), SIZE).remote(dst.address(), dst.rkey()));
            bed.a.postSend(1, new SendWorkRequest().wrId(2).opcode(WorkRequestOpcode.SEND)
                .local(src, src.address() + SIZE, SIZE));
            final List<WorkCompletion> done = new ArrayList<>();
            bed.runUntil(() ->
            {
                done.addAll(SprayTestBed.drain(bed.sendCqA));
                return done.size() == 2;
            }, 100_000);
            done.forEach(wc -> assertEquals(WorkCompletionStatus.SUCCESS, wc.status(), wc::toString));
            assertEquals(1, SprayTestBed.drain(bed.receiveCqB).size());
            assertEquals(-1L, src.segment().mismatch(dst.segment()));
            assertTrue(seen[0] > 500);
            assertEquals(tci >= 0 ? seen[0] : 0, seen[1], "every frame tagged, or none");
            assertEquals(ipv6 ? seen[0] : 0, seen[2], "every frame IPv6, or none");
            assertEquals(ipv6 && udpChecksum ? seen[2] : 0, seen[3], "a UDP checksum on every IPv6 frame A sent, or none");
            assertTrue(bed.a.counters().get(SprayCounters.RETRANSMITTED) + bed.b.counters().get(SprayCounters.RETRANSMITTED) > 0);
            for (final ParseCounters parse : new ParseCounters[] {bed.parseA, bed.parseB})
            {
                assertEquals(0, parse.malformed(), parse::toString);
            }
        }
    }
}
