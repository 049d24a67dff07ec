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
public final class CapturingPacketPort implements PacketPort
{
    private final PacketPort delegate;
    private final PcapWriter writer;
    private final int rxInterface;
    private final int txInterface;
    private final long epochOffsetNanos;
    private PacketBurst lastTransmitted;
    private int recordedAtFront;
    private boolean failed;
    private long framesRecorded;
    private long captureErrors;

    /**
     * @param writer a pcapng writer (interfaces are added to it here).
     */
    public CapturingPacketPort(final PacketPort delegate, final PcapWriter writer) throws IOException
    {
        if (writer.format() != PcapWriter.Format.PCAPNG)
        {
            throw new IllegalArgumentException("a port capture needs a pcapng writer (one interface per direction)");
        }
        this.delegate = delegate;
        this.writer = writer;
        this.rxInterface = writer.addInterface(delegate.name() + "-rx", LinkType.ETHERNET, PcapWriter.DEFAULT_SNAP_LENGTH);
        this.txInterface = writer.addInterface(delegate.name() + "-tx", LinkType.ETHERNET, PcapWriter.DEFAULT_SNAP_LENGTH);
        this.epochOffsetNanos = System.currentTimeMillis() * 1_000_000L - System.nanoTime();
    }

    public String name()
    {
        return delegate.name();
    }

    public PacketBurst newBurst(final int capacity)
    {
        return delegate.newBurst(capacity);
    }

    public int receive(final PacketBurst burst)
    {
        final int before = burst.size();
        final int received = delegate.receive(burst);
        record(rxInterface, burst, before, before + received);
        return received;
    }

    public boolean allocate(final PacketBurst burst, final int count)
    {
        return delegate.allocate(burst, count);
    }

    public int transmit(final PacketBurst burst)
    {
        final int skip = burst == lastTransmitted ? Math.min(recordedAtFront, burst.size()) : 0;
        record(txInterface, burst, skip, burst.size());
        final int sent = delegate.transmit(burst);
        lastTransmitted = burst;
        recordedAtFront = burst.size();
        return sent;
    }

    public void release(final PacketBurst burst)
    {
        if (burst == lastTransmitted)
        {
            recordedAtFront = 0;
        }
        delegate.release(burst);
    }

    public void releaseLast(final PacketBurst burst)
    {
        delegate.releaseLast(burst);
        if (burst == lastTransmitted)
        {
            recordedAtFront = Math.min(recordedAtFront, burst.size());
        }
    }

    public void onPollerStart()
    {
        delegate.onPollerStart();
    }

    public void onPollerClose()
    {
        delegate.onPollerClose();
    }

    private void record(final int interfaceId, final PacketBurst burst, final int from, final int to)
    {
        if (failed || from >= to)
        {
            return;
        }
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

    /**
     * Closes the port; the writer belongs to the caller.
     */
    public void close()
    {
        delegate.close();
    }
}
