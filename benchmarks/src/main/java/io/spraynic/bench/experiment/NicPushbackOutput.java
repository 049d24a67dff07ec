package io.spraynic.bench.experiment;

import io.spraynic.datapath.fabric.Host;
import io.spraynic.datapath.fabric.HostPort;
import io.spraynic.datapath.transport.spray.SprayFabricEndpoint;
import io.spraynic.datapath.transport.spray.SprayFrameOutput;

import java.lang.foreign.MemorySegment;

/**
 * A spray engine's output onto a fabric host that refuses a claim while the port's transmit queue could not
 * take the frame, as a NIC's full TX ring does and as the RoCEv2 binding ({@code FabricFrameSink}) does:
 * the engine keeps the frame and retries on a later tick ({@link SprayFrameOutput}'s contract).
 * {@link SprayFabricEndpoint#claim} always succeeds and counts a frame the port then refuses as lost, so a
 * burst larger than the NIC queue (thousands of connections starting at once) turned into losses the
 * transport had to time out; this wrapper keeps both transports on the same NIC model.
 */
final class NicPushbackOutput implements SprayFrameOutput
{
    private final SprayFabricEndpoint endpoint;
    private final HostPort[] ports;
    private long refusedClaims;

    NicPushbackOutput(final SprayFabricEndpoint endpoint, final Host host)
    {
        this.endpoint = endpoint;
        this.ports = new HostPort[host.portCount()];
        for (int p = 0; p < ports.length; p++)
        {
            ports[p] = host.port(p);
        }
    }

    public boolean claim(final int plane, final int maxLength)
    {
        final HostPort port = ports[plane];
        if (port.queuedBytes() + maxLength > port.queueCapacityBytes())
        {
            refusedClaims++;
            return false;
        }
        return endpoint.claim(plane, maxLength);
    }

    public MemorySegment buffer()
    {
        return endpoint.buffer();
    }

    public long offset()
    {
        return endpoint.offset();
    }

    public void commit(final int length)
    {
        endpoint.commit(length);
    }

    /** @return claims refused because the port's queue was full. */
    long refusedClaims()
    {
        return refusedClaims;
    }
}
