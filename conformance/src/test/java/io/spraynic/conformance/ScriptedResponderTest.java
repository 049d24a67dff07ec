package io.spraynic.conformance;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The interop responder as a hostile target meets it: READs it must refuse, and violations repeated without end. */
class ScriptedResponderTest
{
    private static final long REGION_BASE = 1L << 32;
    private static final int RKEY = 0x5A17;

    @Test
    void shouldRefuseReadsItCannotServeAndKeepOnlyAFewViolationsOfAKind() throws Exception
    {
        final InetSocketAddress suite = TestAddresses.loopback(83, 40_000);
        try (UdpLink link = new UdpLink(suite, new InetSocketAddress(InetAddress.getLoopbackAddress(), 9)))
        {
            final ScriptedResponder responder = new ScriptedResponder(link, 128 * 1024, 0, 0, 1);
            responder.mtu = 1;
            // a length of 2^31 or more, read as negative: before, copyOfRange threw out of serve and ended the suite
            responder.respond(0, 1, REGION_BASE, RKEY, (int)0x8000_0000L);
            assertEquals(1, responder.violations.size(), responder.violations.toString());
            assertTrue(responder.violations.getFirst().startsWith("a READ outside the published region"));
            // in the region, but more packets than the responder queues (each READ_REQUEST of a new MSN queued its all)
            responder.respond(0, 2, REGION_BASE, RKEY, ScriptedResponder.MAX_PENDING_RESPONSES + 1);
            assertTrue(responder.violations.getLast().startsWith("READs asking for more than the responder queues"),
                responder.violations.toString());
            // one kind of violation, again and again: a few kept, the rest counted
            for (int msn = 3; msn < 1_000; msn++)
            {
                responder.respond(0, msn, REGION_BASE, RKEY + 1, 64);
            }
            assertEquals(2 + ScriptedResponder.MAX_VIOLATIONS_OF_A_KIND - 1, responder.violations.size(),
                responder.violations.toString());
            assertEquals(997 - (ScriptedResponder.MAX_VIOLATIONS_OF_A_KIND - 1), responder.violationsNotKept);
        }
    }
}
