package io.spraynic.datapath.nic;

import io.spraynic.pmd.InterfaceAddress;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** How a NIC chooses each plane's next hop towards a peer named by address: IPv4 and IPv6 planes side by side. */
final class NicNeighboursTest
{
    private static final long[] ON_LINK = InterfaceAddress.parseIpv6("fd00:1::20");
    private static final long[] OFF_LINK = InterfaceAddress.parseIpv6("fd00:9::20");
    private static final long[] GATEWAY = InterfaceAddress.parseIpv6("fe80::1");
    private static final long V4_PEER = InterfaceAddress.mappedLow(0x0A00_0214);

    private final EmbeddedNicConfig config = new EmbeddedNicConfig().planes(2)
        .local(0, InterfaceAddress.parse("fd00:1::10/64", "fe80::1"), 0x02_00_00_00_00_01L)
        .local(1, InterfaceAddress.parse("10.0.1.10/24", "10.0.1.1"), 0x02_00_00_00_00_02L);
    private final NicNeighbours neighbours = new NicNeighbours(config, new long[2], null);

    @Test
    void shouldSendToAnOnLinkPeerItselfAndToTheGatewayOffLinkOnEachFamily()
    {
        final NextHops direct = neighbours.nextHops(new long[]{ON_LINK[0], 0}, new long[]{ON_LINK[1], V4_PEER});
        assertArrayEquals(ON_LINK, new long[]{direct.high()[0], direct.low()[0]});
        assertArrayEquals(new long[]{0, InterfaceAddress.mappedLow(0x0A00_0101)}, new long[]{direct.high()[1], direct.low()[1]},
            "10.0.2.20 is off-link on 10.0.1.10/24: the IPv4 gateway");
        final NextHops routed = neighbours.nextHops(new long[]{OFF_LINK[0], 0}, new long[]{OFF_LINK[1], V4_PEER});
        assertArrayEquals(GATEWAY, new long[]{routed.high()[0], routed.low()[0]}, "the link-local IPv6 gateway");
        assertTrue(routed.is(0, GATEWAY[0], GATEWAY[1]));
    }

    @Test
    void shouldRefuseAPeerOfTheOtherFamilyOrOffLinkWithoutAGatewayInOneSentence()
    {
        final IllegalArgumentException family = assertThrows(IllegalArgumentException.class,
            () -> neighbours.nextHops(new long[]{0, 0}, new long[]{V4_PEER, V4_PEER}));
        assertTrue(family.getMessage().contains("10.0.2.20 is not of the family of plane 0's address fd00:1::10/64"),
            family.getMessage());
        final IllegalArgumentException v6OnV4 = assertThrows(IllegalArgumentException.class,
            () -> neighbours.nextHops(new long[]{ON_LINK[0], ON_LINK[0]}, new long[]{ON_LINK[1], ON_LINK[1]}));
        assertTrue(v6OnV4.getMessage().contains("give the peer's IPv4 address"), v6OnV4.getMessage());
        final NicNeighbours noGateway = new NicNeighbours(new EmbeddedNicConfig().planes(1)
            .local(0, InterfaceAddress.parse("fd00:1::10/64", ""), 1), new long[1], null);
        final IllegalArgumentException offLink = assertThrows(IllegalArgumentException.class,
            () -> noGateway.nextHops(new long[]{OFF_LINK[0]}, new long[]{OFF_LINK[1]}));
        assertTrue(offLink.getMessage().contains("fd00:9::20 is off-link on plane 0") &&
            offLink.getMessage().contains("no gateway"), offLink.getMessage());
    }
}
