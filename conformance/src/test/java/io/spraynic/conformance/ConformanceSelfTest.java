package io.spraynic.conformance;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The suite catches a non-compliant target: against {@link ToyResponder}, compliant in the clauses listed in the
 * first test, their checks pass; with one fault switched on, the check of that clause fails (and the run's verdict
 * is a MUST failure) while checks that do not depend on it still pass. (The toy keeps no retransmission, NACK or
 * forgotten-CID state: those checks fail against it in every run, which the tests do not assert.) Loopback only,
 * addresses unique to this JVM.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ConformanceSelfTest
{
    @Test
    void shouldPassTheClausesTheToyResponderKeeps() throws Exception
    {
        final ConformanceReport report = runAgainst(false, false);
        for (final String id : new String[]{"handshake.retry", "handshake.accept", "handshake.repeat",
            "handshake.version-3", "handshake.bad-icrc", "data.in-order-ack", "data.read-back", "data.gap-sack",
            "data.out-of-order-placement", "data.probe", "malformed.bad-icrc", "malformed.message-tag", "close.ack"})
        {
            assertEquals(Verdict.PASS, report.result(id).verdict(), () -> id + ": " + report.toText());
        }
    }

    @Test
    void shouldFailTheIcrcClauseAgainstATargetThatAcceptsABadIcrc() throws Exception
    {
        final ConformanceReport report = runAgainst(true, false);
        final CheckResult data = report.result("malformed.bad-icrc");
        assertEquals(Verdict.FAIL, data.verdict(), report::toText);
        assertEquals("S2.6-1", data.clause());
        assertTrue(data.reason().contains("recorded") || data.reason().contains("cumulativePsn"), data.reason());
        assertEquals(Verdict.FAIL, report.result("handshake.bad-icrc").verdict(), report::toText);
        assertEquals(Verdict.PASS, report.result("data.gap-sack").verdict(), report::toText);
        assertTrue(report.mustFailed());
        assertTrue(report.toJson().contains("\"id\":\"malformed.bad-icrc\",\"clause\":\"S2.6-1\",\"level\":\"MUST\""),
            report.toJson());
    }

    @Test
    void shouldFailTheSackClauseAgainstATargetThatOmitsSackBits() throws Exception
    {
        final ConformanceReport report = runAgainst(false, true);
        final CheckResult gap = report.result("data.gap-sack");
        assertEquals(Verdict.FAIL, gap.verdict(), report::toText);
        assertEquals("S6.4-2", gap.clause());
        assertTrue(gap.reason().contains("SACK bits [1, 2, 3]"), gap.reason());
        // the ACKs it sends for in-order data and probes need no SACK bit: those checks still pass
        assertEquals(Verdict.PASS, report.result("data.in-order-ack").verdict(), report::toText);
        assertEquals(Verdict.PASS, report.result("data.probe").verdict(), report::toText);
        assertTrue(report.mustFailed());
    }

    private static ConformanceReport runAgainst(final boolean acceptBadIcrc, final boolean omitSack) throws Exception
    {
        final long pid = ProcessHandle.current().pid();
        final int port = 20_000 + (int)(pid % 20_000) + (acceptBadIcrc ? 1 : 0) + (omitSack ? 2 : 0);
        final InetAddress targetIp = InetAddress.getByName("127.71." + (pid >> 8 & 0xFF) + "." + (pid & 0xFF));
        final InetAddress suiteIp = InetAddress.getByName("127.72." + (pid >> 8 & 0xFF) + "." + (pid & 0xFF));
        final InetSocketAddress target = new InetSocketAddress(targetIp, port);
        final InetSocketAddress suite = new InetSocketAddress(suiteIp, port);
        try (ToyResponder _ = new ToyResponder(target, suite, acceptBadIcrc, omitSack))
        {
            return ConformanceSuite.run(new Target(target, suite, 1, ToyResponder.REGION_ADDRESS, ToyResponder.RKEY,
                ConformanceSuite.REGION_BYTES));
        }
    }
}
