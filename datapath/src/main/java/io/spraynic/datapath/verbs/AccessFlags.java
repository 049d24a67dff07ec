package io.spraynic.datapath.verbs;

/**
 * Memory access rights of a {@link MemoryRegion}, as a bit set with the values of ibverbs'
 * {@code enum ibv_access_flags}, so a flag word means the same here as in {@code ibv_reg_mr}.
 * Plain {@code int} bits rather than an {@code EnumSet}: the responder tests them per packet.
 */
public final class AccessFlags
{
    /** No right beyond local read, which every region has. */
    public static final int NONE = 0;
    /** IBV_ACCESS_LOCAL_WRITE: the local QP may write into the region (RECV, READ responses). */
    public static final int LOCAL_WRITE = 1;
    /** IBV_ACCESS_REMOTE_WRITE: a peer may RDMA WRITE into the region. */
    public static final int REMOTE_WRITE = 1 << 1;
    /** IBV_ACCESS_REMOTE_READ: a peer may RDMA READ from the region. */
    public static final int REMOTE_READ = 1 << 2;
    /** IBV_ACCESS_REMOTE_ATOMIC: a peer may run atomics on the region (not served by the RC engine yet). */
    public static final int REMOTE_ATOMIC = 1 << 3;
    /** Every right above. */
    public static final int ALL = LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC;

    private AccessFlags()
    {
    }

    /**
     * @param flags    a flag word.
     * @param required the rights needed.
     * @return true when {@code flags} has every right in {@code required}.
     */
    public static boolean allows(final int flags, final int required)
    {
        return (flags & required) == required;
    }

    /**
     * Checks a flag word on the control path.
     *
     * @param flags a flag word.
     * @return {@code flags}.
     * @throws IllegalArgumentException for unknown bits, or remote write/atomic without local write
     *                                  (ibverbs refuses those combinations with EINVAL too).
     */
    public static int validate(final int flags)
    {
        if ((flags & ~ALL) != 0)
        {
            throw new IllegalArgumentException("unknown access flags 0x" + Integer.toHexString(flags & ~ALL));
        }
        if ((flags & (REMOTE_WRITE | REMOTE_ATOMIC)) != 0 && (flags & LOCAL_WRITE) == 0)
        {
            throw new IllegalArgumentException("remote write or atomic access needs LOCAL_WRITE too: " + toString(flags));
        }
        return flags;
    }

    /**
     * @param flags a flag word.
     * @return e.g. "LOCAL_WRITE|REMOTE_READ" (allocates: not for the fast path).
     */
    public static String toString(final int flags)
    {
        if (flags == NONE)
        {
            return "NONE";
        }
        final StringBuilder sb = new StringBuilder();
        append(sb, flags, LOCAL_WRITE, "LOCAL_WRITE");
        append(sb, flags, REMOTE_WRITE, "REMOTE_WRITE");
        append(sb, flags, REMOTE_READ, "REMOTE_READ");
        append(sb, flags, REMOTE_ATOMIC, "REMOTE_ATOMIC");
        return sb.toString();
    }

    private static void append(final StringBuilder sb, final int flags, final int flag, final String name)
    {
        if ((flags & flag) != 0)
        {
            if (sb.length() > 0)
            {
                sb.append('|');
            }
            sb.append(name);
        }
    }
}
