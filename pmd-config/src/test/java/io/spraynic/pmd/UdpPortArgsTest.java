package io.spraynic.pmd;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class UdpPortArgsTest
{
    private static final String EAL = "[eal]\nlcores = \"0\"\nno_huge = true\nno_pci = true\n";

    private static NicConfig parse(final String device, final String args)
    {
        return NicConfig.parse(EAL + "[[port]]\nname = \"udp0\"\nkind = \"udp\"\ndevice = \"" + device + "\"\n" +
            (args.isEmpty() ? "" : "args = { " + args + " }\n"), "test");
    }

    @Test
    void shouldReadTheUdpPresetWithItsDefaults()
    {
        final NicConfig config = PmdConfigs.preset("udp", Map.of("ip", "127.0.0.2"));
        final PortConfig port = config.ports().getFirst();

        assertEquals(PortKind.UDP, port.kind());
        assertEquals(new UdpPortArgs(0x7F000002, 4791, 4791, 8), UdpPortArgs.of(port));
        assertEquals(List.of(), port.ealArguments());
    }

    @Test
    void shouldReadEveryArgument()
    {
        final PortConfig port = parse("10.0.1.10", "port = \"5000\", peer_port = \"5001\", source_ports = \"16\"").ports().getFirst();

        assertEquals(new UdpPortArgs(0x0A00010A, 5000, 5001, 16), UdpPortArgs.of(port));
    }

    @ParameterizedTest
    @ValueSource(strings = {"0.0.0.0", "255.255.255.255", "224.0.0.1", "127.0.0", "127.0.0.256", "1.2.3.4.5", "a.b.c.d",
        "127.0.0.01x", ""})
    void shouldRefuseAnAddressThatIsNotOneDefiniteIpv4Address(final String device)
    {
        final ConfigException ex = assertThrows(ConfigException.class, () -> parse(device, ""));

        assertTrue(ex.getMessage().contains("device"), ex.getMessage());
    }

    @Test
    void shouldReadAnIpv6Address()
    {
        final UdpPortArgs loopback = UdpPortArgs.of(parse("::1", "").ports().getFirst());
        assertTrue(loopback.isIpv6());
        assertEquals(new UdpPortArgs(0, 0, 1, 4791, 4791, 8), loopback);
        assertEquals("::1", loopback.addressText());

        final UdpPortArgs global = UdpPortArgs.of(PmdConfigs.preset("udp", Map.of("ip", "FD00:1:0::10", "port", "5000"))
            .ports().getFirst());
        assertEquals(new UdpPortArgs(0, 0xFD00_0001_0000_0000L, 0x10, 5000, 4791, 8), global);
        assertEquals("fd00:1::10", global.addressText(), "RFC 5952 text, as the plane's address prints");
        assertEquals("10.0.1.10", UdpPortArgs.of(parse("10.0.1.10", "").ports().getFirst()).addressText());
    }

    @ParameterizedTest
    @ValueSource(strings = {"::", "ff02::1", "fe80::1", "fe80::1%eth0", "::ffff:10.0.0.1", "[::1]", "[fd00::1]:4791",
        "::1/128", "fd00::1::2", "fd00:::1", "12345::1", "fd00::g", "1:2:3:4:5:6:7:8:9", "fd00:1::10:"})
    void shouldRefuseAnIpv6AddressThatIsNotOneDefiniteAddressToBindWithoutAZone(final String device)
    {
        final ConfigException ex = assertThrows(ConfigException.class, () -> parse(device, ""));

        assertTrue(ex.getMessage().contains("device") && ex.getMessage().contains("IPv6 address the port's UDP sockets " +
            "bind to"), ex.getMessage());
    }

    @Test
    void shouldTakeTwoSpellingsOfOneIpv6AddressAsOneForUniqueness()
    {
        final String twoSpellings = EAL +
            "[[port]]\nname = \"a\"\nkind = \"udp\"\ndevice = \"::1\"\n" +
            "[[port]]\nname = \"b\"\nkind = \"udp\"\ndevice = \"0:0::0:1\"\n";
        final ConfigException ex = assertThrows(ConfigException.class, () -> NicConfig.parse(twoSpellings, "test"));
        assertTrue(ex.getMessage().contains("unique"), ex.getMessage());
        assertEquals(2, NicConfig.parse(twoSpellings.replace("device = \"0:0::0:1\"\n",
            "device = \"0:0::0:1\"\nargs = { port = \"4792\" }\n"), "test").ports().size());
    }

    @ParameterizedTest
    @ValueSource(strings = {"port = \"0\"", "port = \"65536\"", "peer_port = \"x\"", "source_ports = \"0\"",
        "source_ports = \"1025\"", "sourceports = \"8\""})
    void shouldRefuseABadArgumentNamingIt(final String args)
    {
        final ConfigException ex = assertThrows(ConfigException.class, () -> parse("127.0.0.1", args));

        assertTrue(ex.getMessage().contains("args."), ex.getMessage());
    }

    @Test
    void shouldAllowTwoPlanesOnOneAddressOnlyOnDistinctPorts()
    {
        final String twoPorts = EAL +
            "[[port]]\nname = \"a\"\nkind = \"udp\"\ndevice = \"127.0.0.1\"\n" +
            "[[port]]\nname = \"b\"\nkind = \"udp\"\ndevice = \"127.0.0.1\"\nargs = { port = \"4792\" }\n";
        assertEquals(2, NicConfig.parse(twoPorts, "test").ports().size());

        final String samePort = twoPorts.replace("args = { port = \"4792\" }\n", "");
        final ConfigException ex = assertThrows(ConfigException.class, () -> NicConfig.parse(samePort, "test"));
        assertTrue(ex.getMessage().contains("unique"), ex.getMessage());
    }
}
