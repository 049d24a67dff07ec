package io.spraynic.conformance;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * An implementation's initiator against the suite's own responder ({@link ScriptedResponder}), under loss: the suite
 * publishes itself as a serving NIC in an exchange directory ({@code nic.addr}, as {@code spraynic nic --exchange}
 * does), waits for the target to connect (e.g. {@code spraynic transfer --role client --peer-kind nic}, which WRITEs
 * into the published region, READs it back and verifies), drops a share of what it receives and sends, and judges
 * the target's handshake (S9.1 step 6), its recovery of every packet the suite dropped (S6.5), its retransmissions
 * (S6.6), its tags (S12.3, S12.4), and its RNR retry (S9.3-4) of its first WRITE, whose first attempt the suite
 * refuses for want of resources (S10.2-1, S10.2-5).
 */
final class InteropChecks extends Checks
{
    /** How long the suite serves the target's transfer. */
    static final long SERVE_NANOS = 120_000 * ScriptedPeer.MILLI;
    static final int REGION_BYTES = 4 << 20;
    /** The rnrTimerMicros of the suite's refusal: long enough that a retry sent early shows on a loaded host. */
    static final int RNR_TIMER_MICROS = 20_000;
    /**
     * S10.2-4: the inbound message window and READ limit the suite's CONNECT_ACK advertises: small, so that a target
     * that posts more WRITEs at once has to hold some back (CI's transfer of 16 WRITEs of 64 KiB has 3 open at once
     * under a window of 64, and so would pass a window of 4 without keeping it).
     */
    static final int WINDOW = 2;
    static final int READS = 4;

    /**
     * @param peer     where the initiating target sends from.
     * @param exchange where the suite publishes its {@code nic.addr}.
     * @param loss     the share (0 to 0.5) of what the suite receives, and of what it sends, that it drops.
     * @param seed     the seed of the drops.
     */
    record Interop(java.net.InetSocketAddress peer, Path exchange, double loss, long seed)
    {
    }

    private final Interop interop;

    InteropChecks(final Target target, final UdpLink link, final List<CheckResult> results, final Interop interop)
    {
        super(target, link, results);
        this.interop = interop;
    }

    void run() throws IOException
    {
        final ScriptedResponder r = new ScriptedResponder(link, REGION_BYTES, interop.loss(), interop.loss(),
            interop.seed()).refuseFirstWrite(RNR_TIMER_MICROS).advertise(WINDOW, READS);
        InitiatorChecks.publish(interop.exchange(), link.local(), r.regionBase, r.rkey, REGION_BYTES);
        r.serve(SERVE_NANOS);
        final String loss = String.format(java.util.Locale.ROOT, "%.1f %%", 100 * interop.loss());
        must("interop.accept", "S9.1-8", "the target opens its side on the suite's CONNECT_ACK: its data names the " +
            "suite's CID and carries tags made with the keys of S12.2", () ->
        {
            if (!r.established())
            {
                throw new NotTested("no CONNECT from the target within " + SERVE_NANOS / 1_000_000_000L + " s");
            }
            return r.bytesWritten > 0 || r.bytesRead > 0 ? null : "the connection carried no data: " + r.violations;
        });
        must("interop.loss-recovered", "S6.5-1", "with " + loss + " of each direction dropped, every data packet " +
            "the suite dropped came again and the target completed its WRITE and READ and closed: " + summary(r), () ->
        {
            if (!r.established())
            {
                throw new NotTested("no connection");
            }
            final List<String> f = newFailures();
            if (!r.droppedUnrecovered.isEmpty())
            {
                f.add(r.droppedUnrecovered.size() + " dropped data packets never came again");
            }
            if (!r.closed)
            {
                f.add("the target did not close the connection within " + SERVE_NANOS / 1_000_000_000L + " s (wrote " +
                    r.bytesWritten + " B, read " + r.bytesRead + " B)");
            }
            if (r.bytesWritten == 0 || r.bytesRead < r.bytesWritten)
            {
                f.add("wrote " + r.bytesWritten + " B, read back " + r.bytesRead + " B");
            }
            return failures(f);
        });
        must("interop.retransmit-flag", "S6.6-1", "every data packet the target sent again on its path carried the " +
            "original PSN's message and offset and set RETRANSMIT", () ->
        {
            if (!r.established())
            {
                throw new NotTested("no connection");
            }
            return only(r, "S6.6-1", "came again");
        });
        must("interop.rnr-retry", "S9.3-4", "the target's first WRITE, refused RNR NO_RESOURCES in its first attempt, " +
            "came again only after every packet of that attempt was acknowledged and the NACK's rnrTimerMicros (" +
            RNR_TIMER_MICROS + ") had passed, as attempt 1 with its stream, MSN, RSN and length, and no packet of " +
            "attempt 0 after it", () ->
        {
            if (!r.established() || !r.refusedWrite())
            {
                throw new NotTested(r.established() ? "the target sent no WRITE" : "no connection");
            }
            final String broken = only(r, "S9.3-4", "(S9.3-4)");
            return null != broken ? broken : r.retried ? null : "the refused WRITE never came again";
        });
        must("interop.no-resources-retry", "S10.2-5", "the target took the suite's NACK RNR of reason NO_RESOURCES " +
            "as an RNR NACK: it sent the refused WRITE again as its next attempt after the NACK's rnrTimerMicros, and " +
            "that attempt placed all of the WRITE", () ->
        {
            if (!r.established() || !r.refusedWrite())
            {
                throw new NotTested(r.established() ? "the target sent no WRITE" : "no connection");
            }
            final String broken = only(r, "S9.3-4", "(S9.3-4)");
            if (null != broken)
            {
                return broken;
            }
            if (!r.retried)
            {
                return "the refused WRITE never came again (taken as placed, or as a loss)";
            }
            return r.retryBytesPlaced >= r.refusedLength() ? null : "its retry placed " + r.retryBytesPlaced +
                " of the WRITE's " + r.refusedLength() + " B";
        });
        must("interop.message-window", "S10.2-4", "the target never had more WRITEs open at once (a packet received " +
            "by the suite, not yet every byte) than the window of " + WINDOW + " the suite's CONNECT_ACK advertised", () ->
        {
            if (!r.established() || r.writesStarted == 0)
            {
                throw new NotTested(r.established() ? "the target sent no WRITE" : "no connection");
            }
            measured("at most " + r.mostOpenWrites + " of the target's " + r.writesStarted + " WRITEs open at once, " +
                "against the window of " + WINDOW);
            return only(r, "S10.2-4", "(S10.2-4)");
        });
        must("interop.advertised-limits", "S10.2-3", "the target's CONNECT advertises its inbound message window " +
            "and the READs it serves at once (CONH window and reads not 0)", () ->
        {
            if (null == r.acceptedConnect)
            {
                throw new NotTested("no CONNECT from the target");
            }
            return advertisedLimits(r.acceptedConnect);
        });
        must("interop.tags", "S12.4-2", "every data packet of the target carried its message's tag", () ->
        {
            if (!r.established())
            {
                throw new NotTested("no connection");
            }
            return only(r, "S12.4-2", "message tag");
        });
        must("interop.control-tags", "S12.3-2", "every ACK, PROBE and CLOSE of the target carried a tag that verifies",
            () ->
            {
                if (!r.established())
                {
                    throw new NotTested("no connection");
                }
                return only(r, "", "tag does not verify");
            });
    }

    private static String only(final ScriptedResponder r, final String clause, final String about)
    {
        final List<String> f = newFailures();
        for (final String v : r.violations)
        {
            if (v.contains(about) && (clause.isEmpty() || v.contains(clause) || !v.contains("(S")))
            {
                f.add(v);
            }
        }
        return failures(f.size() > 5 ? f.subList(0, 5) : f);
    }

    static String summary(final ScriptedResponder r)
    {
        return String.format(java.util.Locale.ROOT, "the target wrote %,d B and read %,d B back; the suite dropped " +
            "%d of its data packets, which came again on the same PSN %d times and moved %d times; the suite sent %d " +
            "READ_RESPONSEs, dropped %d, resent %d", r.bytesWritten, r.bytesRead, r.dataDropped, r.dataRepeated,
            r.dataMovedBack, r.responsesSent, r.responsesDropped, r.responsesRetransmitted);
    }
}
