package io.spraynic.conformance;

import org.junit.jupiter.api.Test;

import javax.xml.parsers.DocumentBuilderFactory;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A report whose reasons carry what a target sent or printed: every format stays well-formed and printable. */
class ConformanceReportTest
{
    @Test
    void shouldKeepReasonsPrintableAndBoundedInEveryFormat() throws Exception
    {
        // a revoke command's output (RegionRevoker's tail) or a packet list, as a target chose them
        final String hostile = "exited 1: \u001b[2J\u001b[Hcleared\u0000\u0007 <x>&\"\nline\t2 " + "y".repeat(10_000);
        final CheckResult result = new CheckResult("handshake.version-3", "S9.1-1", "MUST", "a title", Verdict.FAIL,
            hostile);
        assertTrue(result.reason().startsWith("exited 1: \uFFFD[2J\uFFFD[Hcleared\uFFFD\uFFFD <x>&\" line 2 y"),
            result.reason());
        assertTrue(result.reason().endsWith(" more characters)"), "cut to " + CheckResult.MAX_REASON_LENGTH);
        assertTrue(result.reason().length() < CheckResult.MAX_REASON_LENGTH + 40);
        final ConformanceReport report = new ConformanceReport("udp:127.0.0.1:4791", List.of(result));
        // before, the control characters went into the JUnit file, which XML 1.0 then refused to parse
        final var document = DocumentBuilderFactory.newInstance().newDocumentBuilder()
            .parse(new ByteArrayInputStream(report.toJunitXml().getBytes(StandardCharsets.UTF_8)));
        assertEquals(1, document.getElementsByTagName("testcase").getLength());
        assertFalse(report.toText().chars().anyMatch(c -> c == 0x1B || c == 0), "nothing for a terminal to act on");
        assertFalse(report.toJson().chars().anyMatch(c -> c < 0x20), "JSON escapes or drops every control character");
    }

    /** A MUST check that could not run fails the run only when asked (--strict); a SHOULD never does. */
    @Test
    void shouldFailOnAMustNotTestedOnlyWhenStrict()
    {
        final CheckResult pass = new CheckResult("handshake.accept", "S9.1-4", "MUST", "t", Verdict.PASS, null);
        final CheckResult notRun = new CheckResult("psk.accept", "S12.2-2", "MUST", "t", Verdict.NOT_TESTED, "no key");
        final CheckResult shouldNotRun = new CheckResult("multipath.repath", "S7.3-1", "SHOULD", "t",
            Verdict.NOT_TESTED, "no route");
        final CheckResult failed = new CheckResult("handshake.version-3", "S9.1-1", "MUST", "t", Verdict.FAIL, "no");
        final ConformanceReport gaps = new ConformanceReport("t", List.of(pass, notRun, shouldNotRun));
        assertEquals(1, gaps.mustNotTested());
        assertEquals(0, gaps.exitStatus(false));
        assertEquals(1, gaps.exitStatus(true));
        final ConformanceReport should = new ConformanceReport("t", List.of(pass, shouldNotRun));
        assertEquals(0, should.exitStatus(true), "a SHOULD not run fails nothing");
        final ConformanceReport broken = new ConformanceReport("t", List.of(pass, failed));
        assertEquals(1, broken.exitStatus(false));
        assertEquals(1, broken.exitStatus(true));
    }
}
