package io.spraynic.datapath.capture;

import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;

import java.io.IOException;

/**
 * A {@link PacketPort} that records every frame it receives and every frame handed to it for
 * transmission into a pcapng file, as two interfaces ({@code <port>-rx} and {@code <port>-tx}), so
 * that Wireshark and {@code spraynic decode} show what crossed the port. Several ports may share one
 * {@link PcapWriter} if they share a thread.
 * <p>
 * TX frames are recorded before they are handed to the driver, which owns (and may recycle) them
 * afterwards. Frames the port did not take stay at the front of the burst; they were recorded
 * already and are not recorded again when the same burst is retried.
 * <p>
 * A capture is a debugging aid: a write failure (disk full) stops the capture, counts it and
 * leaves the datapath running.
 */
public final class CapturingPacketPort extends TappingPacketPort
{
    private final PcapWriter writer;
    private final int rxInterface;
    private final int txInterface;
    private final long epochOffsetNanos;
    private boolean failed;
    private long framesRecorded;
    private long captureErrors;

    /**
     * @param writer a pcapng writer (interfaces are added to it here).
     */
    public CapturingPacketPort(final PacketPort delegate, final PcapWriter writer) throws IOException
    {
        super(delegate);
        if (writer.format() != PcapWriter.Format.PCAPNG)
        {
            throw new IllegalArgumentException("a port capture needs a pcapng writer (one interface per direction)");
        }
        this.writer = writer;
        this.rxInterface = writer.addInterface(delegate.name() + "-rx", LinkType.ETHERNET, PcapWriter.DEFAULT_SNAP_LENGTH);
        this.txInterface = writer.addInterface(delegate.name() + "-tx", LinkType.ETHERNET, PcapWriter.DEFAULT_SNAP_LENGTH);
        this.epochOffsetNanos = System.currentTimeMillis() * 1_000_000L - System.nanoTime();
    }

    protected boolean tapping(final int direction)
    {
        return !failed;
    }

    protected void tap(final int direction, final PacketBurst burst, final int from, final int to)
    {
        final int interfaceId = direction == RX ? rxInterface : txInterface;
        final long timestamp = epochOffsetNanos + System.nanoTime();
        try
        {
            for (int i = from; i < to; i++)
            {
                final int length = burst.length(i);
                writer.write(interfaceId, burst.memory(), burst.offset(i), length, length, timestamp);
                framesRecorded++;
            }
        }
        catch (final IOException ex)
        {
            failed = true;
            captureErrors++;
        }
    }

    /**
     * @return frames written to the capture.
     */
    public long framesRecorded()
    {
        return framesRecorded;
    }

    /**
     * @return write failures (the capture stopped at the first).
     */
    public long captureErrors()
    {
        return captureErrors;
    }
}
