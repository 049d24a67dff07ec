package io.spraynic.conformance;

import java.io.IOException;
import java.util.List;

/**
 * S9.3.2: the region of a READ response under way deregistered at the responder. The suite READs the whole region
 * (up to {@link #MOST_READ_BYTES}) in one READ with a {@code rateHint} (S8.4) of {@link #RATE_HINT_MBPS} Mb/s, so
 * that the response takes seconds, acknowledges it as a peer does, and once its first packet came has the target's
 * region taken away, while it goes on serving the connection, by the revoker the implementer supplies ({@link RegionRevoker}: the protocol has no
 * deregistration on the wire). One READ: a responder keeps a bounded number of such refusals and may fail the
 * connection past it (SprayNIC: 4 of them, S9.3.2). Judged only on the wire: a NACK {@code REMOTE_ACCESS_ERROR}
 * naming the READ with a refusal number above every one before; an ACK of path 0 after it counting that refusal; no
 * response data arriving {@link #GRACE_NANOS} after the revoker returned; and the connection alive (no CLOSE; a probe
 * answered). Whether a response packet still unacknowledged is stood in for by a probe is not judged: the suite
 * acknowledges each as it comes, so none is. Run last: the target has no region afterwards.
 */
final class RegionLossChecks extends Checks
{
    static final String ID = "errors.read-region-lost";
    static final String CLAUSE = "S9.3.2-1";
    static final String TITLE = "a READ response whose region is deregistered mid-way is refused with a NACK " +
        "REMOTE_ACCESS_ERROR of a new number, followed by an ACK of path 0 counting it; no more of its data goes, and " +
        "the connection lives";
    static final int MOST_READ_BYTES = 1 << 20;
    /** The slowest share S8.4's field says: a READ of 1 MiB then takes about 9 s. */
    static final int RATE_HINT_MBPS = 1;
    /** How often the suite looks whether the revoker returned, while it serves the connection. */
    static final long REVOKER_POLL_NANOS = 5 * ScriptedPeer.MILLI;
    /** After the revoker returned, for packets the target sent before it (in the network, or the suite's buffer). */
    static final long GRACE_NANOS = 50 * ScriptedPeer.MILLI;
    /** How long the suite then waits for the NACK and an ACK after it (and {@link #SILENCE_NANOS} more). */
    static final long JUDGE_NANOS = 2_000 * ScriptedPeer.MILLI;

    private final long base;
    private final int length;
    private final int rkey;
    private final RegionRevoker revoker;

    RegionLossChecks(final Target target, final UdpLink link, final List<CheckResult> results,
        final RegionRevoker revoker)
    {
        super(target, link, results);
        this.base = target.regionAddress();
        this.length = (int)Math.min(MOST_READ_BYTES, target.regionLength());
        this.rkey = target.rkey();
        this.revoker = revoker;
    }

    void run(final ConnectRequest request) throws IOException
    {
        if (null == revoker)
        {
            notTested(ID, CLAUSE, "MUST", TITLE, "no way to deregister the target's region was given (spraynic " +
                "conformance --target-deregister-command CMD; for SprayNIC: spraynic deregister --exchange DIR)");
            return;
        }
        final Connection connection = open(request);
        final ScriptedPeer c = connection.peer();
        final String why = connection.why();
        must(ID, CLAUSE, TITLE, () ->
        {
            DataChecks.requireConnection(why);
            // the wait for the NACK may have nothing to acknowledge: keepalives, so that the target keeps the
            // connection (S12.10) whose life is judged after it
            c.keepaliveNanos = target.idleTimeoutSeconds() > 0 ? (long)(target.idleTimeoutSeconds() * 1e9 / 4) : 0;
            c.rateHintMbps = RATE_HINT_MBPS;
            for (int path = 0; path < c.paths; path++)
            {
                c.sendAck(path); // the share, before the READs
            }
            final int from = c.received.size();
            final int refusalsBefore = highestRefusal(c, 0);
            final int msn = c.takeMsn(0);
            c.send(c.readRequest(0, 0, msn, base, rkey, length));
            if (null == c.awaitPacket(ANSWER_NANOS, p -> isResponse(c, p, msn)))
            {
                throw new NotTested("no READ_RESPONSE within " + ANSWER_NANOS / ScriptedPeer.MILLI + " ms");
            }
            // the revoker runs beside the connection, which the suite serves as a peer meanwhile (ACKs, keepalives):
            // a command takes a second or more, and a deaf peer would stall the response and see it closed (S12.10)
            final long commandAt = System.nanoTime();
            final java.util.concurrent.FutureTask<String> revoking = new java.util.concurrent.FutureTask<>(revoker::revoke);
            Thread.ofPlatform().name("conformance-revoker").daemon().start(revoking);
            while (!revoking.isDone())
            {
                c.collect(REVOKER_POLL_NANOS);
            }
            final long revokedAt = System.nanoTime();
            final String refused;
            try
            {
                refused = revoking.get();
            }
            catch (final java.util.concurrent.ExecutionException e)
            {
                throw new NotTested("the revoker failed: " + e.getCause());
            }
            if (null != refused)
            {
                throw new NotTested("the target's region could not be deregistered: " + refused);
            }
            c.collect(GRACE_NANOS);
            final ScriptedPeer.InboundRead read = c.inboundRead(0, msn);
            final int placed = read.bytesPlaced;
            if (read.complete())
            {
                throw new NotTested("the READ was answered whole before the region was deregistered (" + length / 1024 +
                    " KiB at " + RATE_HINT_MBPS + " Mb/s; the revoker took " + ms(revokedAt - commandAt) + ")");
            }
            // until the NACK and an ACK of path 0 after it came, then long enough to see data that should not
            final Packet[] refusal = new Packet[1];
            c.awaitPacket(JUDGE_NANOS, p ->
            {
                if (null != p && null == refusal[0] && p.arrivalNanos >= commandAt && isNackOf(c, p, msn))
                {
                    refusal[0] = p;
                    return false;
                }
                return null != p && null != refusal[0] && c.isAckOf(p, 0) && p.arrivalNanos > refusal[0].arrivalNanos;
            });
            c.collect(SILENCE_NANOS);

            final List<String> f = newFailures();
            final List<Packet> since = c.received.subList(from, c.received.size());
            Packet nack = null;
            for (final Packet p : since)
            {
                if (p.arrivalNanos >= commandAt && isNackOf(c, p, msn))
                {
                    nack = p;
                    break;
                }
            }
            if (null == nack)
            {
                f.add("no NACK of the READ (stream 0, msn " + msn + ", " + placed + " of " + length + " B received) " +
                    "within " + ms(JUDGE_NANOS) + " of the region's deregistration");
            }
            else
            {
                if (nack.h8(0) != SprayWire.SYNDROME_REMOTE_ACCESS_ERROR)
                {
                    f.add("its NACK has syndrome " + nack.h8(0) + ", not " + SprayWire.SYNDROME_REMOTE_ACCESS_ERROR +
                        " (REMOTE_ACCESS_ERROR)");
                }
                if (Integer.compareUnsigned(nack.h32(12), refusalsBefore) <= 0)
                {
                    f.add("its NACK's refusal number " + Integer.toUnsignedString(nack.h32(12)) + " is not above the " +
                        Integer.toUnsignedString(refusalsBefore) + " the target had counted before (S9.3.1)");
                }
                final long nackAt = nack.arrivalNanos;
                final int number = nack.h32(12);
                if (since.stream().noneMatch(p -> c.isAckOf(p, 0) && p.arrivalNanos > nackAt &&
                    Integer.compareUnsigned(p.h32(48), number) >= 0))
                {
                    f.add("no ACK of path 0 after the NACK counts its refusal " + Integer.toUnsignedString(number));
                }
            }
            for (final Packet p : since)
            {
                if (isResponse(c, p, msn) && p.arrivalNanos - revokedAt > GRACE_NANOS && p.payload().length > 0)
                {
                    f.add("READ_RESPONSE data (offset " + p.h32(8) + ", path " + p.h8(0) + ", PSN " + p.psn() +
                        ") came " + ms(p.arrivalNanos - revokedAt) + " after the region was deregistered: its " +
                        "memory was read");
                    break;
                }
            }
            if (since.stream().anyMatch(p -> p.icrcValid && p.opcode() == SprayWire.CLOSE && p.wholeHeaders() &&
                p.destQp() == c.localCid()))
            {
                f.add("the target closed the connection");
            }
            else
            {
                final int before = c.received.size();
                if (!probeAnswered(c))
                {
                    f.add("the connection no longer answers a probe of path 0 (the target sent " +
                        sentMeanwhile(c, before) + ")");
                }
            }
            measured("the READ cut after " + placed + " of " + length + " B; the revoker took " +
                ms(revokedAt - commandAt) + (null == nack ? "" : "; the NACK (refusal " +
                Integer.toUnsignedString(nack.h32(12)) + ") came " + ms(nack.arrivalNanos - commandAt) + " after it " +
                "started"));
            return failures(f);
        });
        closeQuietly(c);
    }

    // the highest refusal count of the target's ACKs of `path` so far (S9.3.1: its numbers count up from 1)
    private static int highestRefusal(final ScriptedPeer c, final int path)
    {
        int highest = 0;
        for (final Packet p : c.received)
        {
            if (c.isAckOf(p, path) && Integer.compareUnsigned(p.h32(48), highest) > 0)
            {
                highest = p.h32(48);
            }
        }
        return highest;
    }

    private static boolean isResponse(final ScriptedPeer c, final Packet p, final int msn)
    {
        return p.icrcValid && p.opcode() == SprayWire.READ_RESPONSE && p.wholeHeaders() &&
            p.destQp() == c.localCid() && p.h16(2) == 0 && p.h32(4) == msn;
    }

    private static boolean isNackOf(final ScriptedPeer c, final Packet p, final int msn)
    {
        return p.icrcValid && p.opcode() == SprayWire.NACK && p.destQp() == c.localCid() && p.wholeHeaders() &&
            p.h16(2) == 0 && p.h32(4) == msn && p.controlTagValid(c.receiveKey);
    }
}
