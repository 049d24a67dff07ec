package io.spraynic.datapath.fabric;

/**
 * Sends {@code count} frames to one host, one every {@code gapNs} from a start time, driven by its own
 * timers: frame {@code i} goes on plane {@code i % planes.length}'s entry and UDP source port
 * {@code udpSourcePorts[i % udpSourcePorts.length]}, carrying the sender id and {@code i}. It records
 * what it receives.
 */
final class PacedSender extends RecordingEndpoint
{
    private final TestFrames frames = new TestFrames();
    private final Host host;
    private final int senderId;
    private final int destinationHost;
    private final int[] planes;
    private final int[] udpSourcePorts;
    private final int count;
    private final long gapNs;
    private final int payloadLength;
    private final int ecn;
    private int sent;
    long refused;

    PacedSender(
        final Host host,
        final int senderId,
        final int destinationHost,
        final int[] planes,
        final int[] udpSourcePorts,
        final int count,
        final long gapNs,
        final int payloadLength,
        final int ecn)
    {
        this.host = host;
        this.senderId = senderId;
        this.destinationHost = destinationHost;
        this.planes = planes;
        this.udpSourcePorts = udpSourcePorts;
        this.count = count;
        this.gapNs = gapNs;
        this.payloadLength = payloadLength;
        this.ecn = ecn;
    }

    PacedSender start(final long atNs)
    {
        host.attach(this);
        if (count > 0)
        {
            host.port(planes[0]).scheduleTimer(atNs);
        }
        return this;
    }

    public void onTimer(final long nowNs)
    {
        super.onTimer(nowNs);
        final FabricPort port = host.port(planes[sent % planes.length]);
        final int length = frames.ipv4(port.localAddress(), port.addressOf(destinationHost),
            udpSourcePorts[sent % udpSourcePorts.length], ecn, senderId, sent, payloadLength);
        if (!port.send(frames.buffer(), 0, length))
        {
            refused++;
        }
        sent++;
        if (sent < count)
        {
            port.scheduleTimer(nowNs + gapNs);
        }
    }

    int sent()
    {
        return sent;
    }
}
