package io.spraynic.datapath.transport.spray;

/**
 * Why a responder refused a CONNECT: the {@code reason} byte of {@code SPRAY_CONNECT_REJECT} (docs/PROTOCOL.md
 * S9.1.1), and the reason a {@link SprayHandshake.Pending} failed with.
 */
public final class RejectReason
{
    /** Not a refusal: the Pending failed because nothing answered its CONNECTs (local only, never on the wire). */
    public static final int NO_ANSWER = 0;
    /** Nothing listens on this engine. */
    public static final int NO_LISTENER = 1;
    /** The CONNECT's version is not this responder's (the REJECT carries the responder's version). */
    public static final int VERSION_UNSUPPORTED = 2;
    /** A CONNECT field is out of range or inconsistent (S9.1 step 2). */
    public static final int BAD_PARAMETERS = 3;
    /** The engine has no room for another connection (either end: locally, the initiator's engine). */
    public static final int NO_RESOURCES = 4;
    /** The source address already has {@code maxConnectionsPerSource} connections here. */
    public static final int SOURCE_LIMIT = 5;
    /** The pre-shared-key proof failed (local only: a responder drops such CONNECTs silently, S12.2). */
    public static final int AUTH_FAILED = 6;
    /** The X25519 exchange gave an all-zero secret (a low-order public key). */
    public static final int BAD_KEY = 7;

    private static final String[] NAMES = {"NO_ANSWER", "NO_LISTENER", "VERSION_UNSUPPORTED", "BAD_PARAMETERS",
        "NO_RESOURCES", "SOURCE_LIMIT", "AUTH_FAILED", "BAD_KEY"};

    private RejectReason()
    {
    }

    /** @return the reason's name, or "REASON_n" for one this version does not know. */
    public static String name(final int reason)
    {
        return reason >= 0 && reason < NAMES.length ? NAMES[reason] : "REASON_" + reason;
    }
}
