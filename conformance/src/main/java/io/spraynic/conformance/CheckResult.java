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
    /** @return whether this is a failure of a MUST clause. */
    public boolean mustFailure()
    {
        return verdict == Verdict.FAIL && "MUST".equals(level);
    }
}
