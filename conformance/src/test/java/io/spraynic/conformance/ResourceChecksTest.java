package io.spraynic.conformance;

import io.spraynic.conformance.ToyResponder.Fault;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.EnumSet;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The resource checks' own bounds, against {@link ToyResponder} (a window of 64 messages). */
class ResourceChecksTest
{
    /**
     * Filling a target's advertised window is bounded in time: a target that acknowledges each batch just inside the
     * wait held the suite for up to 34 min (65,535 messages, a second a batch). Past the bound the check is not tested.
     */
    @Test
    void shouldGiveUpFillingAWindowPastItsTimeAndFillTheToysWithinIt() throws Exception
    {
        final InetSocketAddress target = TestAddresses.loopback(88, 40_000);
        final InetSocketAddress suite = TestAddresses.loopback(89, 40_000);
        try (ToyResponder _ = new ToyResponder(target, suite, null, EnumSet.of(Fault.SLOW));
            UdpLink link = new UdpLink(suite, target))
        {
            final ResourceChecks checks = new ResourceChecks(new Target(target, suite, ToyResponder.PLANES,
                ToyResponder.REGION_ADDRESS, ToyResponder.RKEY, ConformanceSuite.REGION_BYTES), link, new ArrayList<>(),
                8 * 1024);
            final ScriptedPeer slow = checks.connect(checks.request());
            final Checks.NotTested late = assertThrows(Checks.NotTested.class, () -> checks.holdWindow(slow, 0));
            assertTrue(late.getMessage().startsWith("the target's window of " + ToyResponder.ADVERTISED_WINDOW +
                " messages was not held within 0 ms (0 sent)"), late.getMessage());
            Checks.closeQuietly(slow);
            final ScriptedPeer held = checks.connect(checks.request());
            assertNull(checks.holdWindow(held, ResourceChecks.HOLD_NANOS));
            Checks.closeQuietly(held);
        }
    }
}
