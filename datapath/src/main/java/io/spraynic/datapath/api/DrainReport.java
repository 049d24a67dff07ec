package io.spraynic.datapath.api;

import java.util.List;

/**
 * What a graceful stop of a NIC (or of one {@link Connection}) found: whether everything posted
 * finished before the deadline, how long draining took, and per connection what was accepted and what was
 * still waiting or in flight when it was stopped (those requests never complete).
 *
 * @param drained     true when every connection was idle before the deadline.
 * @param nanos       time spent draining.
 * @param connections one entry per connection.
 */
public record DrainReport(boolean drained, long nanos, List<ConnectionDrain> connections)
{
    /**
     * @param connection     e.g. {@code spray 0x101 on worker 0}.
     * @param postedSends    send requests the application posted.
     * @param postedReceives receive requests the application posted.
     * @param waiting        requests still in the connection's ring, never handed to the transport.
     * @param idle           true when the transport had nothing in flight for it.
     */
    public record ConnectionDrain(String connection, long postedSends, long postedReceives, int waiting, boolean idle)
    {
    }

    /** @return lines for a person: one summary, one per connection that was not idle. */
    public String describe()
    {
        final StringBuilder sb = new StringBuilder();
        sb.append(drained ? "drained" : "NOT drained").append(" in ").append(String.format("%.1f ms", nanos / 1e6))
            .append(": ").append(connections.size()).append(" connection(s)");
        long sends = 0;
        long receives = 0;
        for (final ConnectionDrain c : connections)
        {
            sends += c.postedSends();
            receives += c.postedReceives();
        }
        sb.append(", ").append(sends).append(" send(s) and ").append(receives).append(" receive(s) posted");
        for (final ConnectionDrain c : connections)
        {
            if (!c.idle() || c.waiting() > 0)
            {
                sb.append(System.lineSeparator()).append("  ").append(c.connection()).append(": ").append(c.waiting())
                    .append(" request(s) never taken, ").append(c.idle() ? "nothing" : "data").append(" in flight");
            }
        }
        return sb.toString();
    }
}
