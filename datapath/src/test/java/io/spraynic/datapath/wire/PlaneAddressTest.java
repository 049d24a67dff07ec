package io.spraynic.datapath.wire;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/PROTOCOL.md S5.5: a CONNECT's address list, 24 bytes per plane.
 */
class PlaneAddressTest
{
    @Test
    void shouldWriteAndReadIpv4AndIpv6EntriesInPlaneOrder()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment s = arena.allocate(3 * PlaneAddress.LENGTH + 8);
            s.fill((byte)0x5A); // whatever was there before is overwritten, reserved bytes and padding included
            final long list = 8;
            PlaneAddress.writeIpv4(s, PlaneAddress.entry(list, 0), 0xC0A80001, 0x02_AB_CD_EF_01_23L);
            PlaneAddress.writeIpv6(s, PlaneAddress.entry(list, 1), 0xFD00_1234_0000_0000L, 0xFFFF_0000_0000_0001L, 0x0EL);
            PlaneAddress.writeIpv4(s, PlaneAddress.entry(list, 2), 0x0A000102, 0xFFFF_FFFF_FFFFL);

            assertEquals(list + 24, PlaneAddress.entry(list, 1));
            final long e0 = PlaneAddress.entry(list, 0);
            assertFalse(PlaneAddress.isIpv6(s, e0));
            assertEquals(0xC0A80001, PlaneAddress.ipv4(s, e0));
            assertEquals(0x02_AB_CD_EF_01_23L, PlaneAddress.mac(s, e0));
            assertEquals(0, PlaneAddress.ipv6Low(s, e0), "the rest of an IPv4 entry's address is zero");
            assertEquals(0, Wire.u8(s, e0 + 1), "reserved");
            assertEquals((byte)0xC0, s.get(Wire.BYTE, e0 + PlaneAddress.ADDRESS_OFFSET), "network order");

            final long e1 = PlaneAddress.entry(list, 1);
            assertTrue(PlaneAddress.isIpv6(s, e1));
            assertEquals(0xFD00_1234_0000_0000L, PlaneAddress.ipv6High(s, e1));
            assertEquals(0xFFFF_0000_0000_0001L, PlaneAddress.ipv6Low(s, e1));
            assertEquals(0x0EL, PlaneAddress.mac(s, e1));

            final long e2 = PlaneAddress.entry(list, 2);
            assertEquals(0xFFFF_FFFF_FFFFL, PlaneAddress.mac(s, e2));
            assertEquals("10.0.1.2/ff:ff:ff:ff:ff:ff", PlaneAddress.toString(s, e2));
            assertEquals("fd00:1234::ffff:0:0:1/00:00:00:00:00:0e", PlaneAddress.toString(s, e1));
            assertEquals((byte)0x5A, s.get(Wire.BYTE, 0), "nothing before the list touched");
        }
    }
}
