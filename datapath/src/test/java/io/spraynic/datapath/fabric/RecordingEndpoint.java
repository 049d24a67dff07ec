package io.spraynic.datapath.fabric;

import io.spraynic.datapath.wire.FrameClass;
import io.spraynic.datapath.wire.Ipv4Header;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceParser;
import org.agrona.collections.IntArrayList;
import org.agrona.collections.LongArrayList;

import java.lang.foreign.MemorySegment;

/**
 * Records every frame it receives (time, port, sender, sequence, ECN, UDP source port) and checks each
 * with the wire package's parser: a RoCEv2 frame with a valid ICRC and, over IPv4, a valid header checksum.
 */
class RecordingEndpoint implements Endpoint
{
    final LongArrayList times = new LongArrayList();
    final IntArrayList ports = new IntArrayList();
    final IntArrayList senders = new IntArrayList();
    final IntArrayList sequences = new IntArrayList();
    final IntArrayList ecns = new IntArrayList();
    final IntArrayList udpSourcePorts = new IntArrayList();
    final IntArrayList lengths = new IntArrayList();
    long invalidFrames;
    long timers;

    private final RoceParser parser = new RoceParser(new ParseCounters());
    private final RoceFrame frame = new RoceFrame();

    public void onFrame(
        final long nowNs, final int portIndex, final MemorySegment segment, final long offset, final int length)
    {
        times.addLong(nowNs);
        ports.addInt(portIndex);
        senders.addInt(TestFrames.sender(segment, offset));
        sequences.addInt(TestFrames.sequence(segment, offset));
        ecns.addInt(TestFrames.ecn(segment, offset));
        udpSourcePorts.addInt(TestFrames.udpSourcePort(segment, offset));
        lengths.addInt(length);
        if (parser.parse(segment, offset, length, frame) != FrameClass.ROCE || !frame.icrcValid() ||
            (frame.ipVersion() == 4 &&
            !Ipv4Header.isChecksumValid(segment, frame.ipOffset(), frame.ipHeaderLength())))
        {
            invalidFrames++;
        }
    }

    public void onTimer(final long nowNs)
    {
        timers++;
    }

    int received()
    {
        return times.size();
    }

    int congestionExperienced()
    {
        int marked = 0;
        for (int i = 0; i < ecns.size(); i++)
        {
            if (ecns.getInt(i) == 3)
            {
                marked++;
            }
        }
        return marked;
    }
}
