package io.spraynic.conformance;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Every check the suite has, with the clause identifier of docs/PROTOCOL.md it cites and that clause's level, in
 * clause order: one list to audit the coverage table (S13.3) against, whichever checks a run happens to reach. A
 * check that runs under an id, clause or level not listed here is a defect of the suite ({@link Checks#check}
 * refuses it).
 */
final class CheckCatalog
{
    /** One check: its suite id, the clause it cites, and MUST or SHOULD. */
    record Entry(String id, String clause, String level)
    {
    }

    private static final Map<String, Entry> ENTRIES = new LinkedHashMap<>();

    static
    {
        must("ecn.data-ect0", "S2.3-1");
        should("ecn.control-not-ect", "S2.3-2");
        must("data.reserved-bits", "S2.5-1");
        must("wire.reserved-zero", "S2.5-2");
        must("handshake.bad-icrc", "S2.6-1");
        must("malformed.bad-icrc", "S2.6-1");
        must("wire.icrc", "S2.6-2");
        must("malformed.unknown-opcode", "S3.1-1");
        must("malformed.truncated", "S3.1-2");
        must("malformed.pad", "S3.1-3");
        must("malformed.tver", "S3.2-1");
        must("data.out-of-order-placement", "S4.2-1");
        must("data.read-back", "S4.6-1");
        must("data.ack-sequence", "S5.1-2");
        must("data.duplicate-report", "S5.1-3");
        must("sender.stale-ack", "S5.1-2");
        must("data.probe", "S5.2-1");
        must("security.resync-ahead", "S5.2-2");
        must("multipath.psn-spaces", "S5.4-1");
        must("data.duplicate", "S6.3-2");
        must("data.in-order-ack", "S6.4-1");
        must("data.gap-sack", "S6.4-2");
        must("interop.loss-recovered", "S6.5-1");
        should("multipath.repath-left-behind", "S6.5-2");
        must("interop.retransmit-flag", "S6.6-1");
        must("sender.retransmit-gap", "S6.6-1");
        must("sender.tail-loss", "S6.7-1");
        must("timers.spurious-undo", "S6.8-1");
        must("timers.margin-widened", "S6.8-2");
        must("timers.margin-silent-alone", "S6.8-3");
        must("timers.rto-floor", "S6.8-4");
        must("timers.rto-backoff", "S6.8-6");
        should("multipath.spread", "S7.2-1");
        should("multipath.repath", "S7.3-1");
        should("multipath.repath-rtt", "S7.3-2");
        must("multipath.dead-path", "S7.4-1");
        should("multipath.probe-back", "S7.5-1");
        must("multipath.port-rotation", "S7.7-1");
        must("ecn.ce-echo", "S8.1-1");
        must("cc.ce-window", "S8.2-1");
        must("cc.rate-hint", "S8.4-1");
        must("handshake.version-1", "S9.1-1");
        must("handshake.version-255", "S9.1-1");
        must("handshake.version-3", "S9.1-1");
        must("initiator.version-reject", "S9.1-1");
        must("handshake.cid-0", "S9.1-2");
        must("handshake.destqp", "S9.1-2");
        must("handshake.mtu", "S9.1-2");
        must("handshake.paths-0", "S9.1-2");
        must("handshake.paths-65", "S9.1-2");
        must("handshake.planes", "S9.1-2");
        must("handshake.reserved-flag", "S9.1-2");
        must("handshake.short-block", "S9.1-2");
        must("handshake.bad-cookie", "S9.1-3");
        must("handshake.retry", "S9.1-3");
        must("handshake.accept", "S9.1-4");
        must("handshake.repeat", "S9.1-5");
        must("initiator.connect", "S9.1-6");
        must("initiator.retry-echo", "S9.1-7");
        must("interop.accept", "S9.1-8");
        must("close.ack", "S9.2-1");
        must("close.bad-tag", "S9.2-2");
        must("close.repeat", "S9.2-3");
        must("errors.bad-rkey", "S9.3-1");
        must("errors.refused-acknowledged", "S9.3.1-1");
        must("errors.query", "S9.3.1-2");
        must("errors.query-unseen", "S9.3.1-2");
        must("errors.read-region-lost", "S9.3.2-1");
        must("errors.rnr", "S9.3-2");
        must("errors.rnr-attempt", "S9.3-3");
        must("interop.rnr-retry", "S9.3-4");
        must("errors.flush-stream", "S9.4-1");
        must("errors.isolation-connection", "S9.4-2");
        must("errors.isolation-stream", "S9.4-2");
        must("close.forgotten", "S9.5-1");
        must("resources.no-resources-nack", "S10.2-1");
        must("resources.no-resources-rate", "S10.2-2");
        must("handshake.advertised-limits", "S10.2-3");
        must("interop.advertised-limits", "S10.2-3");
        must("interop.message-window", "S10.2-4");
        must("interop.no-resources-retry", "S10.2-5");
        must("psk.bad-proof", "S12.2-1");
        must("psk.no-proof", "S12.2-1");
        must("psk.accept", "S12.2-2");
        must("malformed.control-tag", "S12.3-1");
        must("interop.control-tags", "S12.3-2");
        must("wire.control-tags", "S12.3-2");
        must("malformed.message-tag", "S12.4-1");
        must("malformed.attempt-tag", "S12.4-1");
        must("security.tampered-header", "S12.4-1");
        must("interop.tags", "S12.4-2");
        must("wire.sender-tags", "S12.4-2");
        must("security.source-address", "S12.5-1");
        must("security.resync-behind", "S12.6-1");
        must("security.resync-mismatch", "S12.6-1");
        must("security.msn-window", "S12.7-1");
        must("security.nack-unmatched", "S12.8-1");
        must("limits.released", "S12.9-1");
        must("limits.source", "S12.9-1");
        must("limits.response-rate", "S12.9-2");
        must("liveness.keepalive", "S12.10-1");
        must("liveness.idle-close", "S12.10-2");
    }

    private CheckCatalog()
    {
    }

    private static void must(final String id, final String clause)
    {
        ENTRIES.put(id, new Entry(id, clause, "MUST"));
    }

    private static void should(final String id, final String clause)
    {
        ENTRIES.put(id, new Entry(id, clause, "SHOULD"));
    }

    /** @return every check, by id, in clause order. */
    static Map<String, Entry> entries()
    {
        return Collections.unmodifiableMap(ENTRIES);
    }

    /**
     * @throws IllegalStateException when {@code id} is not catalogued with this clause and level (a suite defect:
     * its report would cite a clause the coverage table does not list it under).
     */
    static void require(final String id, final String clause, final String level)
    {
        final Entry entry = ENTRIES.get(id);
        if (null == entry || !entry.clause().equals(clause) || !entry.level().equals(level))
        {
            throw new IllegalStateException("check " + id + " (" + clause + ", " + level + ") is not in the catalogue" +
                (null == entry ? "" : " as such: it lists " + entry.clause() + ", " + entry.level()));
        }
    }
}
