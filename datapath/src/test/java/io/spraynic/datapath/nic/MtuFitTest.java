package io.spraynic.datapath.nic;

import io.spraynic.pmd.InterfaceAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

@Timeout(10)
class MtuFitTest
{
    @Test
    void shouldRefuseAChosenMtuTheBuffersCannotHoldAndLowerTheDefaultOne()
    {
        final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> MtuFit.fit(
            new EmbeddedNicConfig().connections(8, 4, 4096).bursts(32, 2048)));
        assertEquals("an MTU of 4096 needs frames of up to 4202 B with headers, but the ports carry at most 2048 B " +
            "(their MTU, or the mempool's data_room less headroom): lower the MTU to 1024, or raise the ports' MTU and " +
            "the mempool's data_room", refused.getMessage());

        final EmbeddedNicConfig byDefault = new EmbeddedNicConfig().bursts(32, 1500 + 18);
        MtuFit.fit(byDefault);
        assertEquals(1024, byDefault.mtu, "a standard 1500 B port carries a 1024 B path MTU");
        assertThrows(IllegalArgumentException.class, () -> MtuFit.fit(new EmbeddedNicConfig().bursts(32, 300)));
    }

    @Test
    void shouldKeepAnMtuWhoseFramesFitExactly()
    {
        final int ipv4Headers = 14 + 20 + 8 + 12 + 28 + 16 + 4 + 4; // Ethernet, IPv4, UDP, BTH, SETH, RETH, ImmDt, ICRC
        assertEquals(ipv4Headers, MtuFit.headerBytes(new EmbeddedNicConfig()));
        final EmbeddedNicConfig exact = new EmbeddedNicConfig().connections(8, 4, 2048).bursts(32, 2048 + ipv4Headers);
        MtuFit.fit(exact);
        assertEquals(2048, exact.mtu);
        assertThrows(IllegalArgumentException.class, () -> MtuFit.fit(new EmbeddedNicConfig().connections(8, 4, 2048)
            .bursts(32, 2048 + ipv4Headers - 1)), "one byte short");
    }

    @Test
    void shouldCountTheLongerIpv6HeaderWhereAPlaneHasAnIpv6Address()
    {
        final EmbeddedNicConfig ipv6 = new EmbeddedNicConfig().planes(2)
            .local(1, InterfaceAddress.parse("fd00:1::10/64", null), 0);
        assertEquals(MtuFit.MAX_HEADER_BYTES, MtuFit.headerBytes(ipv6));
        assertEquals(MtuFit.headerBytes(new EmbeddedNicConfig()) + 20, MtuFit.headerBytes(ipv6));
        // a ring port of MTU 4200 (4218 B frames) carries a 4096 MTU over IPv4 but not over IPv6
        ipv6.bursts(32, 4218);
        MtuFit.fit(ipv6);
        assertEquals(2048, ipv6.mtu);
    }
}
