package io.spraynic.datapath.transport.spray;

/**
 * The per-path times a {@link PathScheduler} needs only while a path has packets outstanding or is failed (issue 13:
 * an idle connection holds none; they come and go with its send windows, {@link PathScheduler#unparkWindows}): when
 * the path was last probed and last acknowledged (both read only against its oldest outstanding packet's send time,
 * which is later than any probe or ACK before the windows were lent: S6.8's probe and S7.4.1's "another path answered
 * since", whose other reading, "since an ACK was due", only moves packets sent before that ACK, so none of a window
 * lent after it), when a failed path's next RESYNC is due (S7.5; a connection with a failed path keeps its tables),
 * and when the newest packet acknowledged on it was sent (S6.8.1, compared with packets sent since, so older than all
 * of them, as NONE is). An ACK taken while the windows are parked (a keepalive's) is not recorded.
 */
final class PathLentTimes
{
    /** No such time yet (the schedulers' NONE). */
    static final long NONE = Long.MIN_VALUE;

    final long[] lastProbeAt;
    final long[] lastAckAt;
    final long[] nextResyncAt;
    /** S6.8.1: when the newest packet acknowledged on each path (first transmissions only) was sent. */
    final long[] answeredSentAt;
    /** S7.7.1: the ports that timed out and the ports that proved healthy, while there is traffic. */
    final PortMemory ports;

    PathLentTimes(final int paths)
    {
        lastProbeAt = new long[paths];
        lastAckAt = new long[paths];
        nextResyncAt = new long[paths];
        answeredSentAt = new long[paths];
        ports = new PortMemory(paths);
        clear();
    }

    /** Back to a new connection's: nothing probed, acknowledged or answered yet. */
    void clear()
    {
        java.util.Arrays.fill(lastProbeAt, NONE);
        java.util.Arrays.fill(lastAckAt, NONE);
        java.util.Arrays.fill(nextResyncAt, 0);
        java.util.Arrays.fill(answeredSentAt, NONE);
        ports.clear();
    }

    /** @return bytes of a set for {@code paths} paths (S10.1): four arrays, the port memory and the object. */
    static long bytes(final int paths)
    {
        return 32 + 4 * (16 + 8L * paths) + PortMemory.bytes(paths);
    }
}
