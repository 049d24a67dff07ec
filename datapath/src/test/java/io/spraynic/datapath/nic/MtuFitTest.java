package io.spraynic.datapath.nic;

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
        assertEquals("an MTU of 4096 needs frames of up to 4218 B with headers, but the ports carry at most 2048 B " +
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
        final EmbeddedNicConfig exact = new EmbeddedNicConfig().connections(8, 4, 2048)
            .bursts(32, 2048 + MtuFit.MAX_HEADER_BYTES);
        MtuFit.fit(exact);
        assertEquals(2048, exact.mtu);
        assertThrows(IllegalArgumentException.class, () -> MtuFit.fit(new EmbeddedNicConfig().connections(8, 4, 2048)
            .bursts(32, 2048 + MtuFit.MAX_HEADER_BYTES - 1)), "one byte short");
    }

    @Test
    void shouldFindTheLargestPowerOfTwoMtuThatFits()
    {
        assertEquals(4096, MtuFit.fitting(4096 + MtuFit.MAX_HEADER_BYTES));
        assertEquals(2048, MtuFit.fitting(4096 + MtuFit.MAX_HEADER_BYTES - 1));
        assertEquals(256, MtuFit.fitting(256 + MtuFit.MAX_HEADER_BYTES));
        assertEquals(0, MtuFit.fitting(256 + MtuFit.MAX_HEADER_BYTES - 1));
        assertEquals(0, MtuFit.fitting(-1), "hostile: a negative frame length");
    }
}
