package io.spraynic.conformance;

import java.util.List;
import java.util.Locale;

/**
 * What a run of the suite found: one {@link CheckResult} per check, as a table for people and as JSON for tools.
 *
 * @param target  what was tested, in words.
 * @param results every check, in the order run.
 */
public record ConformanceReport(String target, List<CheckResult> results)
{
    /** @return the checks of a verdict. */
    public long count(final Verdict verdict)
    {
        return results.stream().filter(r -> r.verdict() == verdict).count();
    }

    /** @return whether any MUST check failed (the suite's exit status is then non-zero). */
    public boolean mustFailed()
    {
        return results.stream().anyMatch(CheckResult::mustFailure);
    }

    /** @return the MUST checks that could not run (a group's connection failed, an option not given). */
    public long mustNotTested()
    {
        return results.stream().filter(r -> r.verdict() == Verdict.NOT_TESTED && "MUST".equals(r.level())).count();
    }

    /**
     * @param strict whether a MUST check that could not run fails the run too: a CI of another implementation must
     *               not pass with half the suite not run (a dead link, a target given no region).
     * @return the suite's exit status: 1 when a MUST check failed (or, strict, could not run), else 0.
     */
    public int exitStatus(final boolean strict)
    {
        return mustFailed() || strict && mustNotTested() > 0 ? 1 : 0;
    }

    /** @return the result of check {@code id}, or null. */
    public CheckResult result(final String id)
    {
        return results.stream().filter(r -> r.id().equals(id)).findFirst().orElse(null);
    }

    /** @return one line per check (verdict, clause, level, id, title, reason) and a summary. */
    public String toText()
    {
        final StringBuilder out = new StringBuilder("spraynic conformance: ").append(target).append('\n');
        for (final CheckResult r : results)
        {
            out.append(String.format(Locale.ROOT, "%-10s %-10s %-6s %-28s %s%n", r.verdict(), r.clause(), r.level(),
                r.id(), r.title()));
            if (null != r.reason()) // a pass's: what it measured
            {
                out.append("           ").append(r.reason()).append('\n');
            }
        }
        return out.append(String.format(Locale.ROOT, "%d checks: %d passed, %d failed (%d of a MUST), %d not tested%n",
            results.size(), count(Verdict.PASS), count(Verdict.FAIL),
            results.stream().filter(CheckResult::mustFailure).count(), count(Verdict.NOT_TESTED))).toString();
    }

    /** @return the report as one JSON object. */
    public String toJson()
    {
        final StringBuilder out = new StringBuilder("{\"target\":").append(quote(target)).append(",\"passed\":")
            .append(count(Verdict.PASS)).append(",\"failed\":").append(count(Verdict.FAIL)).append(",\"notTested\":")
            .append(count(Verdict.NOT_TESTED)).append(",\"mustFailed\":").append(mustFailed()).append(",\"checks\":[");
        for (int i = 0; i < results.size(); i++)
        {
            final CheckResult r = results.get(i);
            out.append(i == 0 ? "" : ",").append("{\"id\":").append(quote(r.id())).append(",\"clause\":")
                .append(quote(r.clause())).append(",\"level\":").append(quote(r.level())).append(",\"title\":")
                .append(quote(r.title())).append(",\"verdict\":").append(quote(r.verdict().name())).append(",\"reason\":")
                .append(null == r.reason() ? "null" : quote(r.reason())).append('}');
        }
        return out.append("]}").toString();
    }

    /**
     * @return the report as JUnit XML (one test case per check, named by its id and clause; a failure per FAIL, a
     * skip per NOT_TESTED), for CI systems that show test reports.
     */
    public String toJunitXml()
    {
        final StringBuilder out = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
            .append("<testsuite name=\"spraynic-conformance\" tests=\"").append(results.size()).append("\" failures=\"")
            .append(count(Verdict.FAIL)).append("\" skipped=\"").append(count(Verdict.NOT_TESTED)).append("\">\n");
        for (final CheckResult r : results)
        {
            out.append("  <testcase classname=\"").append(xml(r.clause())).append("\" name=\"").append(xml(r.id()))
                .append("\">");
            if (r.verdict() == Verdict.FAIL)
            {
                out.append("<failure message=\"").append(xml(r.level() + " " + r.title())).append("\">")
                    .append(xml(null == r.reason() ? "" : r.reason())).append("</failure>");
            }
            else if (r.verdict() == Verdict.NOT_TESTED)
            {
                out.append("<skipped message=\"").append(xml(null == r.reason() ? "" : r.reason())).append("\"/>");
            }
            else if (null != r.reason())
            {
                out.append("<system-out>").append(xml(r.reason())).append("</system-out>"); // what a pass measured
            }
            out.append("</testcase>\n");
        }
        return out.append("</testsuite>\n").toString();
    }

    private static String xml(final String s)
    {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }

    static String quote(final String s)
    {
        final StringBuilder q = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++)
        {
            final char c = s.charAt(i);
            switch (c)
            {
                case '"' -> q.append("\\\"");
                case '\\' -> q.append("\\\\");
                case '\n' -> q.append("\\n");
                case '\t' -> q.append("\\t");
                default ->
                {
                    if (c < 0x20)
                    {
                        q.append(String.format(Locale.ROOT, "\\u%04x", (int)c));
                    }
                    else
                    {
                        q.append(c);
                    }
                }
            }
        }
        return q.append('"').toString();
    }
}
