package io.spraynic.datapath.capture;

import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.port.UdpFrames;

/**
 * A {@link PacketPort} that shows every frame it receives, and every frame handed to it for transmission, to a tap
 * ({@link #tap}) while {@link #tapping} says so: a pcapng file ({@link CapturingPacketPort}) or a running NIC's
 * capture ring. The port's own work is the delegate's.
 * <p>
 * TX frames are tapped before they are handed to the driver, which owns (and may recycle) them afterwards. Frames the
 * driver did not take stay at the front of the burst; they were tapped already and are not tapped again when the same
 * burst is retried. Received frames are completed ({@link PacketPort#completeReceived}) before the tap sees them, and so
 * are frames sent through a port that leaves their IPv6 UDP checksum to the kernel ({@link PacketPort#writesUdpChecksum}). When
 * {@link #tapping} answers false the cost is that one branch per burst.
 */
public abstract class TappingPacketPort implements PacketPort
{
    /** Direction of a frame received from the wire. */
    public static final int RX = 0;
    /** Direction of a frame handed to the driver for the wire. */
    public static final int TX = 1;

    /** The port that does the work. */
    protected final PacketPort delegate;
    private PacketBurst lastTransmitted;
    private int tappedAtFront;

    protected TappingPacketPort(final PacketPort delegate)
    {
        this.delegate = delegate;
    }

    /** @return true when frames of {@code direction} ({@link #RX} or {@link #TX}) go to {@link #tap} now. */
    protected abstract boolean tapping(int direction);

    /** Shows frames {@code from} (inclusive) to {@code to} (exclusive) of {@code burst}; must not throw. */
    protected abstract void tap(int direction, PacketBurst burst, int from, int to);

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
        if (received > 0 && tapping(RX))
        {
            delegate.completeReceived(burst, before, before + received); // what the port left out, a capture shows
            tap(RX, burst, before, before + received);
        }
        return received;
    }

    public void completeReceived(final PacketBurst burst, final int from, final int to)
    {
        delegate.completeReceived(burst, from, to);
    }

    /** The delegate's: a frame the tap shows is completed first (its IPv6 UDP checksum written). */
    public boolean writesUdpChecksum()
    {
        return delegate.writesUdpChecksum();
    }

    private static void completeUdpChecksums(final PacketBurst burst, final int from, final int to)
    {
        for (int i = from; i < to; i++)
        {
            UdpFrames.completeIpv6Checksum(burst.memory(), burst.offset(i), burst.length(i));
        }
    }

    public boolean allocate(final PacketBurst burst, final int count)
    {
        return delegate.allocate(burst, count);
    }

    public boolean allocateOne(final PacketBurst burst)
    {
        return delegate.allocateOne(burst);
    }

    public int transmit(final PacketBurst burst)
    {
        final int size = burst.size();
        if (tapping(TX))
        {
            final int skip = burst == lastTransmitted ? Math.min(tappedAtFront, size) : 0;
            if (skip < size)
            {
                if (delegate.writesUdpChecksum())
                {
                    completeUdpChecksums(burst, skip, size); // left to the kernel on the wire; a capture shows it
                }
                tap(TX, burst, skip, size);
            }
        }
        final int sent = delegate.transmit(burst);
        lastTransmitted = burst;
        tappedAtFront = burst.size();
        return sent;
    }

    public void release(final PacketBurst burst)
    {
        if (burst == lastTransmitted)
        {
            tappedAtFront = 0;
        }
        delegate.release(burst);
    }

    public void releaseLast(final PacketBurst burst)
    {
        delegate.releaseLast(burst);
        if (burst == lastTransmitted)
        {
            tappedAtFront = Math.min(tappedAtFront, burst.size());
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

    /** Closes the delegate. */
    public void close()
    {
        delegate.close();
    }
}
