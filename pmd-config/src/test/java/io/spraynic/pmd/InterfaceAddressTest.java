package io.spraynic.pmd;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

final class InterfaceAddressTest
{
    @ParameterizedTest
    @CsvSource({
        "fd00:1::10, fd00:0001:0000:0000, 0x10",
        "::1, 0, 1",
        "fe80::1:2, 0xfe80000000000000, 0x10002",
        "1:2:3:4:5:6:7:8, 0x0001000200030004, 0x0005000600070008",
        "2001:db8::, 0x20010db800000000, 0",
        "::ffff:10.0.0.1, 0, 0x0000ffff0a000001",
        "FD00:1::ABCD, 0xfd00000100000000, 0xabcd"})
    void shouldParseIpv6AddressesInEveryTextForm(final String text, final String high, final String low)
    {
        assertArrayEquals(new long[]{Long.parseUnsignedLong(hex(high), 16), Long.parseUnsignedLong(hex(low), 16)},
            InterfaceAddress.parseIpv6(text));
    }

    private static String hex(final String value)
    {
        return value.replace("0x", "").replace(":", "");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9", "1::2::3", ":::", "12345::1", "fd00::g", "fd00:", "fd00::1%eth0",
        "[fd00::1]", "1:2:3:4:5:6:7:8::", "fd00::1.2.3"})
    void shouldRefuseTextThatIsNotAnIpv6Address(final String text)
    {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> InterfaceAddress.parseIpv6(text));
        assertTrue(e.getMessage().contains("is not an IPv6 address"), e.getMessage());
    }

    @Test
    void shouldRoundTripTheCanonicalText()
    {
        for (final String text : new String[]{"fd00:1::10", "fe80::1", "::1", "2001:db8:0:1:1:1:1:1", "1::", "ff02::1:ff00:10"})
        {
            final long[] a = InterfaceAddress.parseIpv6(text);
            assertEquals(text, InterfaceAddress.ipv6Text(a[0], a[1]));
        }
    }

    @Test
    void shouldTakeAnIpv6PlaneWithPrefixAndGatewayAndChooseTheNextHop()
    {
        final InterfaceAddress address = InterfaceAddress.parse("fd00:1::10/64", "fd00:1::1");
        assertTrue(address.isIpv6());
        assertEquals(0, address.ipv4());
        assertEquals("fd00:1::10/64 via fd00:1::1", address.toString());
        final long[] onLink = InterfaceAddress.parseIpv6("fd00:1::20");
        final long[] offLink = InterfaceAddress.parseIpv6("fd00:2::20");
        assertArrayEquals(onLink, address.nextHop(onLink[0], onLink[1]), "on-link: the peer itself");
        assertArrayEquals(InterfaceAddress.parseIpv6("fd00:1::1"), address.nextHop(offLink[0], offLink[1]), "off-link: the gateway");
        assertArrayEquals(new long[2], address.nextHop(0, InterfaceAddress.mappedLow(0x0A000001)), "IPv4: unreachable here");
        assertEquals(0, address.nextHop(0x0A000001), "no IPv4 next hop on an IPv6 plane");
        assertArrayEquals(new long[2], InterfaceAddress.parse("fd00:1::10/64", "").nextHop(offLink[0], offLink[1]));
    }

    @Test
    void shouldTakeALinkLocalGatewayOutsideThePrefixAsRoutersAnnounceThemselves()
    {
        final InterfaceAddress address = InterfaceAddress.parse("2001:db8:1::10/64", "fe80::1");
        final long[] far = InterfaceAddress.parseIpv6("2001:db8:9::1");
        assertArrayEquals(InterfaceAddress.parseIpv6("fe80::1"), address.nextHop(far[0], far[1]));
    }

    @Test
    void shouldHonourPrefixesThatEndInsideTheLowHalf()
    {
        final InterfaceAddress address = InterfaceAddress.parse("fd00:1::1:10/112", "");
        final long[] in = InterfaceAddress.parseIpv6("fd00:1::1:ffff");
        final long[] out = InterfaceAddress.parseIpv6("fd00:1::2:10");
        assertTrue(address.isOnLink(in[0], in[1]));
        assertFalse(address.isOnLink(out[0], out[1]));
        assertTrue(InterfaceAddress.parse("fd00:1::1:10", "").isOnLink(out[0], out[1]), "prefix 0: everything on-link");
        assertFalse(InterfaceAddress.parse("fd00:1::1:10", "").isOnLink(0, InterfaceAddress.mappedLow(0x0A000001)),
            "but never the other family");
    }

    @Test
    void shouldReadIpv4AsMapped128BitAddresses()
    {
        final InterfaceAddress address = InterfaceAddress.parse("10.0.1.10/24", "10.0.1.1");
        assertEquals(0, address.high());
        assertEquals(0x0000_FFFF_0A00_010AL, address.low());
        assertEquals(0x0000_FFFF_0A00_0101L, address.gatewayLow());
        assertArrayEquals(new long[]{0, 0x0000_FFFF_0A00_0101L}, address.nextHop(0, InterfaceAddress.mappedLow(0x0A000214)));
        assertEquals("10.0.1.10", InterfaceAddress.text(address.high(), address.low()));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "fd00:1::10/129||no valid prefix length",
        "fd00:1::10/64|10.0.1.1|not of the family",
        "10.0.1.10/24|fd00::1|not of the family",
        "ff02::1||not a unicast IPv6 address",
        "::||not a unicast IPv6 address",
        "::ffff:10.0.0.1||IPv4-mapped",
        "fd00:1::10|fd00:1::1|needs a prefix",
        "fd00:1::10/64|fd00:2::1|neither inside",
        "fd00:1::10/64|fd00:1::10|this NIC's own address",
        "fd00:1::10/64|::1|not a unicast IPv6 address",
        "fd00:1::10/64|ff02::2|not a unicast IPv6 address",
        // before, taken: the subnet's broadcast or network address as the NIC's own or its gateway, and 0/8
        "10.0.1.255/24||the broadcast address of 10.0.1.0/24",
        "10.0.1.0/24||the network address of 10.0.1.0/24",
        "10.0.1.10/24|10.0.1.255|gateway 10.0.1.255 is the broadcast address",
        "0.1.2.3||not a unicast address"})
    void shouldRefuseAddressesAndGatewaysThatCannotWorkInOneSentence(final String ip, final String gateway,
        final String why)
    {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> InterfaceAddress.parse(ip, null == gateway ? "" : gateway));
        assertTrue(e.getMessage().contains(why), e.getMessage());
    }

    @Test
    void shouldReadAnIpv6PlaneFromTomlAndWriteItBack()
    {
        final NicConfig config = NicConfig.parse("[[port]]\nname = \"p0\"\nkind = \"vdev\"\ndevice = \"net_null0\"\nip = \"fd00:1::10/64\"\n" +
            "gateway = \"fe80::1\"\n", "t");
        final InterfaceAddress address = config.ports().getFirst().interfaceAddress();
        assertEquals(InterfaceAddress.parse("fd00:1::10/64", "fe80::1"), address);
        assertEquals(config, NicConfig.parse(config.toToml(), "t"));
    }
}
