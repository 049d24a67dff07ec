package io.spraynic.datapath.fabric;

import io.spraynic.datapath.wire.FrameClass;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceParser;
import io.spraynic.datapath.wire.SprayOpcodes;

import java.lang.foreign.MemorySegment;

/**
 * Counts the data packets the fabric drops (as opposed to acknowledgements and control packets),
 * so an experiment can report retransmitted ÷ lost against what was really lost.
 */
public final class DataDropTap implements LinkTap
{
    private final RoceParser parser = new RoceParser(SprayOpcodes.TABLE, new ParseCounters(), false);
    private final RoceFrame frame = new RoceFrame();
    private long dataDrops;

    /**
     * Taps every link of {@code fabric} (replacing any tap they had).
     */
    public static DataDropTap onEveryLink(final Fabric fabric)
    {
        final DataDropTap tap = new DataDropTap();
        for (final Link link : fabric.links())
        {
            link.tap(tap);
        }
        return tap;
    }

    public void onFrameSent(final long nowNs, final Link link, final MemorySegment segment, final long offset, final int length)
    {
    }

    public void onFrameDropped(
        final long nowNs, final Link link, final DropReason reason, final MemorySegment segment, final long offset, final int length)
    {
        if (parser.parse(segment, offset, length, frame) == FrameClass.ROCE && isData(frame.opcode()))
        {
            dataDrops++;
        }
    }

    /**
     * @return true for packets that carry message data: spray data packets, RC SEND/WRITE/READ-response packets.
     */
    public static boolean isData(final int opcode)
    {
        return SprayOpcodes.isData(opcode) && opcode != SprayOpcodes.READ_REQUEST ||
            Opcode.service(opcode) == Opcode.RC && opcode < Opcode.ACKNOWLEDGE && opcode != Opcode.RDMA_READ_REQUEST;
    }

    /**
     * @return data packets dropped so far (read on the fabric's thread, or after it stopped).
     */
    public long dataDrops()
    {
        return dataDrops;
    }
}
