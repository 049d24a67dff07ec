package io.spraynic.conformance;

import io.spraynic.conformance.ToyResponder.Fault;

import java.io.IOException;
import java.util.BitSet;
import java.util.function.BooleanSupplier;

import static io.spraynic.conformance.ToyResponder.ADVERTISED_WINDOW;
import static io.spraynic.conformance.ToyResponder.RKEY;
import static io.spraynic.conformance.ToyResponder.RNR_TIMER_MICROS;

/**
 * {@link ToyResponder}'s refusals of data (S9.3, S9.4, S10.2): SENDs refused RNR (it posts no receive), a wrong
 * R_Key refused and its stream put in error, WRITEs beyond the advertised window refused for want of records within
 * the response bucket, and QUERYs about a refused message answered.
 */
final class ToyRefusals
{
    private final UdpLink link;
    private final java.util.Set<Fault> faults;
    /** The response bucket (S12.9) its NO_RESOURCES NACKs share with RETRYs and REJECTs. */
    private final BooleanSupplier bucket;
    /** A WRITE was refused somewhere (what {@link Fault#ERROR_SPREADS} spreads). */
    private boolean refusedAny;

    ToyRefusals(final UdpLink link, final java.util.Set<Fault> faults, final BooleanSupplier bucket)
    {
        this.link = link;
        this.faults = faults;
        this.bucket = bucket;
    }

    /**
     * S9.3-2, S9.3-3: the toy posts no receive, so every SEND is refused RNR, an attempt at a time: the copies of a
     * refused attempt keep its refusal, a packet of a later attempt is refused as a new attempt with a new number,
     * one of an earlier attempt draws nothing.
     */
    void refuseSend(final ToyConnection c, final Packet p) throws IOException
    {
        final int stream = p.h16(2);
        final int msn = p.h32(4);
        final int attempt = (p.h8(1) >>> SprayWire.SETH_ATTEMPT_SHIFT) & SprayWire.SETH_ATTEMPT_MASK;
        final int packets = Math.max(1, (p.h32(12) + c.mtu - 1) / c.mtu);
        final int[] state = c.rnr.computeIfAbsent((long)stream << 32 | (msn & 0xFFFF_FFFFL), k -> new int[]{attempt, 0, 0});
        final int ahead = (attempt - state[0]) & SprayWire.SETH_ATTEMPT_MASK;
        if (faults.contains(Fault.RNR_BY_COUNT) ? state[1] == 0 || state[2] >= packets : state[1] == 0 || (ahead > 0 && ahead < 4))
        {
            state[0] = attempt;
            state[1] = ++c.refusals;
            state[2] = 0;
        }
        else if (ahead >= 4 && !faults.contains(Fault.RNR_BY_COUNT))
        {
            return; // a late copy of an attempt the sender has finished
        }
        state[2]++;
        link.send(FrameBuilder.bth(SprayWire.NACK, c.peerCid, 0, false).u8(SprayWire.SYNDROME_RNR).u8(0)
            .u16(stream).u32(msn).u32(RNR_TIMER_MICROS).u32(state[1]).controlTag(c.sendKey).bytes(), false,
            UdpLink.NOT_ECT);
    }

    /**
     * S9.3, S9.4: a WRITE with a wrong R_Key is refused with a NACK and puts its stream in error; later messages of
     * an errored stream are not placed.
     *
     * @return whether the packet may be placed.
     */
    boolean admit(final ToyConnection c, final Packet p) throws IOException
    {
        final int stream = p.h16(2);
        final int msn = p.h32(4);
        if (p.h32(SprayWire.SETH_LENGTH + 8) == RKEY)
        {
            return !(faults.contains(Fault.ERROR_SPREADS) && refusedAny) && !(stream < c.streamErrored.length &&
                c.streamErrored[stream] && msn - c.erroredMsn[stream] > 0);
        }
        refusedAny = true;
        refuseAccess(c, stream, msn, ++c.refusals);
        if (stream < c.streamErrored.length && !faults.contains(Fault.NO_STREAM_ERROR))
        {
            c.streamErrored[stream] = true;
            c.erroredMsn[stream] = msn;
            c.erroredRefusal[stream] = c.refusals;
        }
        return false;
    }

    /**
     * S10.2-1, S10.2-2: a WRITE begun while {@link #ADVERTISED_WINDOW} others hold a record is refused, RNR
     * NO_RESOURCES, and so is every later packet of it (its retries too, with the same number: the toy gives no
     * record back), each NACK within the response bucket that RETRYs and REJECTs share.
     *
     * @return whether the packet's WRITE holds a record (it may be placed).
     */
    boolean withinWindow(final ToyConnection c, final Packet p) throws IOException
    {
        final int stream = p.h16(2);
        final int msn = p.h32(4);
        final long key = (long)stream << 32 | (msn & 0xFFFF_FFFFL);
        Integer refusal = c.refusedForResources.get(key);
        if (null == refusal)
        {
            BitSet arrived = c.openWrites.get(key);
            if (null == arrived && (c.openWrites.size() < ADVERTISED_WINDOW || faults.contains(Fault.IGNORE_WINDOW) ||
                faults.contains(Fault.NO_ADVERTISED_LIMITS)))
            {
                arrived = new BitSet();
                c.openWrites.put(key, arrived);
            }
            if (null != arrived)
            {
                arrived.set(p.h32(8) / c.mtu);
                if (arrived.cardinality() >= Math.max(1, (p.h32(12) + c.mtu - 1) / c.mtu))
                {
                    c.openWrites.remove(key);
                    c.complete(stream, msn); // every byte placed (S12.7: its record is free)
                }
                return true;
            }
            refusal = ++c.refusals;
            c.refusedForResources.put(key, refusal);
        }
        if (faults.contains(Fault.NO_RESOURCES_RATE_LIMIT) || mayRespond())
        {
            link.send(FrameBuilder.bth(SprayWire.NACK, c.peerCid, 0, false).u8(SprayWire.SYNDROME_RNR)
                .u8(SprayWire.RNR_REASON_NO_RESOURCES).u16(stream).u32(msn).u32(RNR_TIMER_MICROS).u32(refusal)
                .controlTag(c.sendKey).bytes(), false, UdpLink.NOT_ECT);
        }
        return false;
    }

    /** Sends the NACK REMOTE_ACCESS_ERROR of (stream, msn) under refusal number {@code refusal} (S9.3). */
    void refuseAccess(final ToyConnection c, final int stream, final int msn, final int refusal) throws IOException
    {
        link.send(FrameBuilder.bth(SprayWire.NACK, c.peerCid, 0, false).u8(SprayWire.SYNDROME_REMOTE_ACCESS_ERROR).u8(0)
            .u16(stream).u32(msn).u32(0).u32(refusal).controlTag(c.sendKey).bytes(), false, UdpLink.NOT_ECT);
    }

    /** S9.3.1-2: a QUERY of a message of an errored stream is answered with the refusal's NACK again. */
    void answerQuery(final ToyConnection c, final int stream, final int msn) throws IOException
    {
        if (faults.contains(Fault.NO_QUERY_ANSWER) || stream >= c.streamErrored.length || !c.streamErrored[stream] ||
            msn - c.erroredMsn[stream] < 0)
        {
            if (faults.contains(Fault.QUERY_ALWAYS_ACCEPTED) && !faults.contains(Fault.NO_QUERY_ANSWER))
            {
                link.send(FrameBuilder.bth(SprayWire.NACK, c.peerCid, 0, false).u8(SprayWire.SYNDROME_ACCEPTED).u8(0)
                    .u16(stream).u32(msn).u32(0).u32(0).controlTag(c.sendKey).bytes(), false, UdpLink.NOT_ECT);
            }
            return; // the toy keeps no other fate of a message to tell
        }
        final boolean first = !c.queryAnswered;
        c.queryAnswered = true;
        if (!(first && faults.contains(Fault.LOSE_FIRST_QUERY_ANSWER)))
        {
            refuseAccess(c, stream, c.erroredMsn[stream], c.erroredRefusal[stream]);
        }
    }

    private boolean mayRespond()
    {
        return bucket.getAsBoolean();
    }
}
