package io.spraynic.datapath.verbs;

/**
 * Outcomes of {@link ProtectionDomain#checkRemoteAccess} and {@link ProtectionDomain#checkLocalAccess}:
 * primitive codes, so a refused packet costs no allocation. A transport maps every refusal to a NAK
 * "remote access error" (InfiniBand Vol 1, 9.7.5.2.4) on the wire, and a local one to
 * {@link WorkCompletionStatus#LOC_PROT_ERR}; the finer code is for counters and tests.
 */
public final class AccessCheck
{
    /** The access is allowed. */
    public static final int OK = 0;
    /** No region of this protection domain has the key. */
    public static final int INVALID_KEY = 1;
    /** The range is not wholly inside the region (or its length is negative). */
    public static final int OUT_OF_BOUNDS = 2;
    /** The region lacks the access right. */
    public static final int ACCESS_DENIED = 3;

    private AccessCheck()
    {
    }

    /**
     * @param code a check outcome.
     * @return its name.
     */
    public static String name(final int code)
    {
        return switch (code)
        {
            case OK -> "OK";
            case INVALID_KEY -> "INVALID_KEY";
            case OUT_OF_BOUNDS -> "OUT_OF_BOUNDS";
            case ACCESS_DENIED -> "ACCESS_DENIED";
            default -> "UNKNOWN_" + code;
        };
    }
}
