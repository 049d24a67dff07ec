package io.spraynic.datapath.fabric;

import io.spraynic.datapath.capture.CapturedFrame;
import io.spraynic.datapath.capture.LinkType;
import io.spraynic.datapath.capture.PcapReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PcapLinkTapTest
{
    @TempDir
    Path dir;

    @Test
    void shouldCaptureSentAndDroppedFramesPerLinkInFabricTime() throws IOException
    {
        final Path file = dir.resolve("fabric.pcapng");
        final long epoch = 1_700_000_000_000_000_000L;
        try (Fabric fabric = Topology.backToBack(FabricConfig.DEFAULT.withFrames(256, 2_048), 1, 1))
        {
            final Link lossy = fabric.link("p0/sw0->sw1#0");
            final Link last = fabric.link("p0/sw1->host1");
            lossy.lossProbability(0.5);
            final RecordingEndpoint receiver = new RecordingEndpoint();
            fabric.host(1).attach(receiver);
            try (PcapLinkTap tap = new PcapLinkTap(file, epoch, true))
            {
                tap.attach(lossy);
                tap.attach(last);
                new PacedSender(fabric.host(0), 0, 1, new int[]{0}, new int[]{0xC000}, 100, 1_000, 256, 0).start(0);
                fabric.runUntilIdle();
                assertEquals(100 + receiver.received(), tap.framesWritten(), "all 100 on the lossy link, then the rest");
                assertEquals(0, tap.writeErrors());
                assertNull(tap.firstError());
            }

            final List<CapturedFrame> frames = PcapReader.readAll(file);
            assertEquals(100 + receiver.received(), frames.size());
            int sentOnLossy = 0;
            int droppedOnLossy = 0;
            int sentOnLast = 0;
            for (final CapturedFrame frame : frames)
            {
                assertEquals(LinkType.ETHERNET, frame.linkType());
                assertTrue(frame.timestampNanos() >= epoch);
                switch (frame.interfaceId())
                {
                    case 0 -> sentOnLossy++;
                    case 1 -> droppedOnLossy++;
                    case 2 -> sentOnLast++;
                    default -> throw new AssertionError("interface " + frame.interfaceId());
                }
            }
            assertEquals(lossy.framesSent(), sentOnLossy);
            assertEquals(lossy.randomLossDrops(), droppedOnLossy);
            assertEquals(receiver.received(), sentOnLast);
            assertTrue(droppedOnLossy > 20 && droppedOnLossy < 80);

            // the first frame to reach host 1 was captured on the last link when its last bit left
            final CapturedFrame firstOnLast = frames.stream().filter(f -> f.interfaceId() == 2).findFirst().orElseThrow();
            final MemorySegment data = MemorySegment.ofArray(firstOnLast.data());
            final int sequence = TestFrames.sequence(data, 0);
            assertEquals(receiver.times.getLong(0) - last.propagationDelayNs(),
                firstOnLast.timestampNanos() - epoch, "timestamp is when the last bit left");
            assertEquals(receiver.sequences.getInt(0), sequence);
        }
    }
}
