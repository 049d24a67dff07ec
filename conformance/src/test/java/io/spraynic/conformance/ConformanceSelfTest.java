package io.spraynic.conformance;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
        assertCoverageTableNames(report);
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

    /**
     * PROTOCOL.md S13.3 is the suite's coverage table: every clause identifier the text defines has a row, every
     * row names a defined clause, and every check the suite ran cites a defined clause whose row lists it.
     */
    private static void assertCoverageTableNames(final ConformanceReport report) throws IOException
    {
        final String protocol = Files.readString(Path.of("..", "docs", "PROTOCOL.md"));
        final Set<String> defined = new TreeSet<>();
        final Matcher definition = Pattern.compile("\\*\\*\\[(S[0-9.]+-[0-9]+)\\]").matcher(protocol);
        while (definition.find())
        {
            defined.add(definition.group(1));
        }
        final Map<String, String> rows = new TreeMap<>();
        final String coverage = protocol.substring(protocol.indexOf("**S13.3 Coverage**"));
        for (final String line : coverage.split("\n"))
        {
            final String[] cells = line.trim().split("\\|");
            if (cells.length > 3 && cells[1].trim().startsWith("S"))
            {
                for (final String clause : cells[1].trim().split(",\\s*"))
                {
                    rows.put(clause, cells[3]);
                }
            }
        }
        assertEquals(defined, rows.keySet(), "a coverage row per clause identifier PROTOCOL.md defines");
        for (final CheckResult result : report.results())
        {
            assertTrue(defined.contains(result.clause()), result.id() + " cites " + result.clause() + ", not defined");
            assertTrue(rows.get(result.clause()).contains("`" + result.id() + "`"),
                "the coverage row of " + result.clause() + " lists " + result.id());
        }
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
