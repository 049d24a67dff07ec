package io.spraynic.datapath.api;

import io.spraynic.datapath.wire.Wire;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(10)
class RocevEndpointTest
{
    private static final int IP = Wire.parseIpv4("10.0.0.1");

    @Test
    void shouldKeepAValidEndpointThroughFormatAndParse()
    {
        final RocevEndpoint v4 = new RocevEndpoint(0x11, 0xFF_FFFF, IP, 4096);
        assertEquals(v4, RocevEndpoint.parse(v4.format()));
        final RocevEndpoint v6 = new RocevEndpoint(0xFF_FFFF, 0, 0, 256, 0xFD00_0000_0000_0000L, 1);
        assertEquals(v6, RocevEndpoint.parse(v6.format()));
        assertEquals("qpn=0x2 psn=0x0 ip=127.0.0.1 mtu=1024",
            new RocevEndpoint(2, 0, Wire.parseIpv4("127.0.0.1"), 1024).format(), "a peer on this host");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "0         | 0        | 10.0.0.1        | 1024 | QP number 0x0 is not in 0x2..0xffffff",
        "1         | 0        | 10.0.0.1        | 1024 | QP number 0x1 is not in 0x2..0xffffff",
        "0x1000000 | 0        | 10.0.0.1        | 1024 | QP number 0x1000000 is not in 0x2..0xffffff",
        "-1        | 0        | 10.0.0.1        | 1024 | QP number 0xffffffff is not in 0x2..0xffffff",
        "0x11      | 0x1000000| 10.0.0.1        | 1024 | PSN 0x1000000 is not in 0..0xffffff",
        "0x11      | -1       | 10.0.0.1        | 1024 | PSN 0xffffffff is not in 0..0xffffff",
        "0x11      | 0        | 10.0.0.1        | 1500 | MTU 1500 is not an IB path MTU",
        "0x11      | 0        | 10.0.0.1        | 0    | MTU 0 is not an IB path MTU",
        "0x11      | 0        | 0.0.0.0         | 1024 | no address (0.0.0.0)",
        "0x11      | 0        | 224.0.0.1       | 1024 | IPv4 address 224.0.0.1 is multicast, reserved or broadcast",
        "0x11      | 0        | 255.255.255.255 | 1024 | IPv4 address 255.255.255.255 is multicast, reserved or broadcast",
    })
    void shouldRefuseEachHostileIpv4Field(final String qpn, final String psn, final String ip, final int mtu,
        final String reason)
    {
        final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
            () -> new RocevEndpoint(Integer.decode(qpn), Integer.decode(psn), Wire.parseIpv4(ip), mtu));
        assertTrue(refused.getMessage().startsWith("RoCEv2 endpoint: " + reason), refused.getMessage());
    }

    @Test
    void shouldRefuseHostileIpv6Addresses()
    {
        assertRefused("IPv6 address ff02::1 is multicast", () -> new RocevEndpoint(0x11, 0, 0, 1024,
            0xFF02_0000_0000_0000L, 1));
        assertRefused("IPv6 address ::ffff:a00:1 is IPv4-mapped", () -> new RocevEndpoint(0x11, 0, 0, 1024, 0,
            0x0000_FFFF_0000_0000L | (IP & 0xFFFF_FFFFL)));
        assertRefused("both an IPv4 (10.0.0.1) and an IPv6 address", () -> new RocevEndpoint(0x11, 0, IP, 1024,
            0xFD00_0000_0000_0000L, 1));
    }

    @Test
    void shouldRefuseAHostileLineWithTheSameReasons()
    {
        assertRefused("QP number 0x1000000", () -> RocevEndpoint.parse("qpn=0x1000000 psn=0x0 ip=10.0.0.1 mtu=1024"));
        assertRefused("MTU 9000", () -> RocevEndpoint.parse("qpn=0x11 psn=0x0 ip=10.0.0.1 mtu=9000"));
        assertRefused("IPv4 address 239.1.1.1", () -> RocevEndpoint.parse("qpn=0x11 psn=0x0 ip=239.1.1.1 mtu=1024"));
        assertThrows(IllegalArgumentException.class, () -> RocevEndpoint.parse("qpn=0x11 psn=zz ip=10.0.0.1 mtu=1024"));
        assertThrows(IllegalArgumentException.class, () -> RocevEndpoint.parse("qpn=0x11 psn=0 mtu=1024"), "no ip");
    }

    private static void assertRefused(final String reason, final org.junit.jupiter.api.function.Executable call)
    {
        final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, call);
        assertTrue(refused.getMessage().startsWith("RoCEv2 endpoint: " + reason), refused.getMessage());
    }
}
