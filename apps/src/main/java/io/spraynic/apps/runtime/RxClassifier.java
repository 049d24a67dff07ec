package io.spraynic.apps.runtime;

import io.spraynic.datapath.port.BurstHandler;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceParser;
import io.spraynic.datapath.wire.SprayOpcodes;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;

/**
 * The receive side of a NIC port before any transport claims its packets: every frame is parsed
 * (RoCEv2 and spray opcodes), counted by outcome in the counters file (RoCEv2, not ours, and one
 * counter per malformed reason), and released. Allocation-free per packet.
 */
public final class RxClassifier implements BurstHandler
{
    private final RoceParser parser = new RoceParser(SprayOpcodes.TABLE, new ParseCounters(), true);
    private final RoceFrame frame = new RoceFrame();
    private final AtomicCounter rxBytes;
    private final AtomicCounter[] outcomes = new AtomicCounter[ParseCounters.SLOT_COUNT];

    /**
     * @param prefix counter label prefix, e.g. {@code port ring0/q0}.
     */
    public RxClassifier(final CountersManager counters, final String prefix)
    {
        this.rxBytes = counters.newCounter(prefix + ": rx bytes");
        for (int slot = 0; slot < outcomes.length; slot++)
        {
            outcomes[slot] = counters.newCounter(prefix + ": rx " + ParseCounters.label(slot));
        }
    }

    public int onBurst(final PacketPort port, final PacketBurst burst)
    {
        final int count = burst.size();
        long bytes = 0;
        for (int i = 0; i < count; i++)
        {
            final int length = burst.length(i);
            bytes += length;
            parser.parse(burst.memory(), burst.offset(i), length, frame);
            outcomes[slotOf(frame)].incrementRelease();
        }
        rxBytes.getAndAddRelease(bytes);
        port.release(burst);
        return count;
    }

    private static int slotOf(final RoceFrame frame)
    {
        return switch (frame.frameClass())
        {
            case ROCE -> ParseCounters.ROCE;
            case NOT_OURS -> ParseCounters.NOT_OURS;
            case MALFORMED -> ParseCounters.slot(frame.malformedReason());
        };
    }

    /**
     * @return the counter of one outcome slot ({@link ParseCounters} numbering).
     */
    public AtomicCounter outcome(final int slot)
    {
        return outcomes[slot];
    }
}
