package io.spraynic.conformance;

/**
 * The result of one check of the suite.
 *
 * @param id      the check's stable name, e.g. {@code handshake.version-3}.
 * @param clause  the PROTOCOL.md clause identifier it tests, e.g. {@code S9.1-1}.
 * @param level   {@code MUST} or {@code SHOULD}: a MUST failure fails the suite.
 * @param title   what it checks, in one line.
 * @param verdict pass, fail or not tested.
 * @param reason  what was seen: for a failure or a check not run, why; for a pass, what the check measured where
 *                it measures something (e.g. the ACK delay at which a path moved), else null.
 */
public record CheckResult(String id, String clause, String level, String title, Verdict verdict, String reason)
{
    /** The longest reason kept: a target's bytes in one (a command's output, a packet list) cannot bloat a report. */
    static final int MAX_REASON_LENGTH = 4096;

    /**
     * Keeps the reason printable on one line: line breaks and tabs become spaces, other control characters (which a
     * target's output may carry, and which a JUnit XML file may not hold, nor a terminal be sent) U+FFFD, and a reason
     * past {@link #MAX_REASON_LENGTH} is cut.
     */
    public CheckResult
    {
        if (null != reason)
        {
            final StringBuilder printable = new StringBuilder(Math.min(reason.length(), MAX_REASON_LENGTH + 32));
            for (int i = 0; i < reason.length() && printable.length() < MAX_REASON_LENGTH; i++)
            {
                final char c = reason.charAt(i);
                printable.append(c == '\n' || c == '\t' || c == '\r' ? ' ' : Character.isISOControl(c) ? '\uFFFD' : c);
            }
            if (!printable.isEmpty() && Character.isHighSurrogate(printable.charAt(printable.length() - 1)))
            {
                printable.setLength(printable.length() - 1); // not half a character at the cut
            }
            if (reason.length() > MAX_REASON_LENGTH)
            {
                printable.append(" ... (").append(reason.length() - MAX_REASON_LENGTH).append(" more characters)");
            }
            reason = printable.toString();
        }
    }

    /** @return whether this is a failure of a MUST clause. */
    public boolean mustFailure()
    {
        return verdict == Verdict.FAIL && "MUST".equals(level);
    }
}
