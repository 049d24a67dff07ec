package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.wire.NegativeAckHeader;

/**
 * The NACKs of READ responses this end refused (docs/PROTOCOL.md S9.3.2): the region a READ named was deregistered
 * before all of its response was sent. Such a refusal is numbered once and kept in {@link Refusals} to answer
 * queries for twice {@code connectionTimeout} (the requester gives up on a held message after one); its NACK is
 * repeated for every packet of the response not sent, and told again whenever the requester queries: it may
 * concern a READ the requester completed, which it never asks about. Allocation-free.
 */
final class ReadResponseRefusals implements DataSender.ResponseRefuser
{
    private final Refusals refusals;
    private final ControlPackets control;
    private final long keepNanos;

    ReadResponseRefusals(final Refusals refusals, final ControlPackets control, final long connectionTimeoutNanos)
    {
        this.refusals = refusals;
        this.control = control;
        this.keepNanos = 2 * connectionTimeoutNanos;
    }

    /** Refuses (again) the response of the READ {@code (streamId, msn)}. @return false when no refusal could be kept. */
    public boolean refuse(final int streamId, final int msn, final long now)
    {
        int refusal = refusals.lateRefusal(streamId, msn);
        if (refusal == 0)
        {
            refusal = refusals.refuseLate(streamId, msn, now, keepNanos);
            if (refusal == 0)
            {
                return false;
            }
        }
        control.sendNack(0, NegativeAckHeader.SYNDROME_REMOTE_ACCESS_ERROR, streamId, msn, refusal);
        // no inbound packet was refused, so no ACK of one carries the count: an ACK of path 0 does, in case the
        // NACK is lost (the requester then holds its waiting READs and asks about them)
        control.sendAck(0);
        return true;
    }

    /** S9.3.2: a query means the peer misses a refusal: those kept are told again, but for the one it asked about. */
    void tellAgain(final int queriedStreamId, final int queriedMsn)
    {
        for (int entry = 0; entry < refusals.lateCount(); entry++)
        {
            if (refusals.lateStream(entry) != queriedStreamId || refusals.lateMsn(entry) != queriedMsn)
            {
                control.sendNack(0, NegativeAckHeader.SYNDROME_REMOTE_ACCESS_ERROR, refusals.lateStream(entry),
                    refusals.lateMsn(entry), refusals.lateNumber(entry));
            }
        }
    }
}
