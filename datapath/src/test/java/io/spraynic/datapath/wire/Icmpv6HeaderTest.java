package io.spraynic.datapath.wire;

import io.spraynic.pmd.InterfaceAddress;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

final class Icmpv6HeaderTest
{
    private static final long[] SOURCE = InterfaceAddress.parseIpv6("fd00:1::10");
    private static final long[] TARGET = InterfaceAddress.parseIpv6("fd00:1::20");

    // an NS for TARGET from SOURCE to TARGET's solicited-node address, source link-layer option, checksum 0
    private static MemorySegment solicitation(final byte[]... options)
    {
        int optionsLength = 0;
        for (final byte[] option : options)
        {
            optionsLength += option.length;
        }
        final MemorySegment s = MemorySegment.ofArray(new byte[Ipv6Header.LENGTH + 24 + optionsLength]);
        Ipv6Header.versionClassFlow(s, 0, 0, 0);
        Ipv6Header.payloadLength(s, 0, 24 + optionsLength);
        Ipv6Header.nextHeader(s, 0, Ipv6Header.NEXT_HEADER_ICMPV6);
        Ipv6Header.hopLimit(s, 0, 255);
        Ipv6Header.sourceAddress(s, 0, SOURCE[0], SOURCE[1]);
        Ipv6Header.destinationAddress(s, 0, Icmpv6Header.SOLICITED_NODE_HIGH, Icmpv6Header.solicitedNodeLow(TARGET[1]));
        IcmpHeader.type(s, 40, Icmpv6Header.TYPE_NEIGHBOUR_SOLICITATION);
        Icmpv6Header.target(s, 40, TARGET[0], TARGET[1]);
        long at = 40 + 24;
        for (final byte[] option : options)
        {
            MemorySegment.copy(MemorySegment.ofArray(option), 0, s, at, option.length);
            at += option.length;
        }
        return s;
    }

    @Test
    void shouldComputeTheChecksumOverThePseudoHeaderAsAnIndependentImplementationDoes()
    {
        final MemorySegment s = solicitation(new byte[]{1, 1, 2, 0, 0, 0, 1, 0x10});
        // 0x7c3b: Python's struct over the same bytes (pseudo-header: addresses, length 32, next header 58)
        assertEquals(0x7C3B, Icmpv6Header.computeChecksum(s, 0, 40, 32));
        assertFalse(Icmpv6Header.isChecksumValid(s, 0, 40, 32));
        IcmpHeader.checksum(s, 40, 0x7C3B);
        assertTrue(Icmpv6Header.isChecksumValid(s, 0, 40, 32));
        assertEquals(0x7C3B, Icmpv6Header.computeChecksum(s, 0, 40, 32), "the stored checksum is taken as zero");
        Ipv6Header.destinationAddress(s, 0, Icmpv6Header.ALL_NODES_HIGH, Icmpv6Header.ALL_NODES_LOW);
        assertFalse(Icmpv6Header.isChecksumValid(s, 0, 40, 32), "the addresses are covered");
    }

    @Test
    void shouldNameTheSolicitedNodeAddressAndItsMacFromTheLast24Bits()
    {
        final long[] address = InterfaceAddress.parseIpv6("fd00:1::abcd:1234");
        assertEquals("ff02::1:ffcd:1234", Wire.ipv6ToString(Icmpv6Header.SOLICITED_NODE_HIGH,
            Icmpv6Header.solicitedNodeLow(address[1])));
        assertEquals(0x33_33_FF_CD_12_34L, Icmpv6Header.multicastMac(Icmpv6Header.solicitedNodeLow(address[1])));
        assertEquals(0x33_33_00_00_00_01L, Icmpv6Header.multicastMac(Icmpv6Header.ALL_NODES_LOW));
    }

    @Test
    void shouldFindTheLinkLayerOptionAmongOthersAndTakeTheFirst()
    {
        final MemorySegment s = solicitation(new byte[]{14, 1, 9, 9, 9, 9, 9, 9}, new byte[]{1, 1, 2, 0, 0, 0, 0, 7},
            new byte[]{1, 1, 2, 0, 0, 0, 0, 8});
        assertEquals(0x02_00_00_00_00_07L, Icmpv6Header.linkLayerOption(s, 40, 48, Icmpv6Header.OPTION_SOURCE_LINK_LAYER));
        assertEquals(Icmpv6Header.NO_OPTION, Icmpv6Header.linkLayerOption(s, 40, 48, Icmpv6Header.OPTION_TARGET_LINK_LAYER));
        assertEquals(Icmpv6Header.NO_OPTION, Icmpv6Header.linkLayerOption(solicitation(), 40, 24,
            Icmpv6Header.OPTION_SOURCE_LINK_LAYER), "no options at all");
    }

    @Test
    void shouldRefuseOptionsOfLengthZeroOrBeyondTheMessageEvenAfterTheOneSought()
    {
        final int type = Icmpv6Header.OPTION_SOURCE_LINK_LAYER;
        final byte[] good = {1, 1, 2, 0, 0, 0, 0, 7};
        assertEquals(Icmpv6Header.BAD_OPTIONS, Icmpv6Header.linkLayerOption(solicitation(good, new byte[8]), 40, 40, type),
            "length 0 would loop forever");
        assertEquals(Icmpv6Header.BAD_OPTIONS, Icmpv6Header.linkLayerOption(solicitation(new byte[]{1, 2, 2, 0, 0, 0, 0, 7}),
            40, 32, type), "16 bytes claimed, 8 there");
        assertEquals(Icmpv6Header.BAD_OPTIONS, Icmpv6Header.linkLayerOption(solicitation(good, new byte[]{1}), 40, 33, type),
            "one byte: not even a type and length");
        assertEquals(Icmpv6Header.BAD_OPTIONS, Icmpv6Header.linkLayerOption(solicitation(new byte[]{1, 2, 2, 0, 0, 0, 0, 7,
            0, 0, 0, 0, 0, 0, 0, 0}), 40, 40, type), "a link-layer option on Ethernet is 8 bytes");
        assertEquals(Icmpv6Header.BAD_OPTIONS, Icmpv6Header.linkLayerOption(solicitation(good, new byte[]{9, (byte)255}), 40,
            34, type), "255 x 8 bytes claimed");
    }
}
