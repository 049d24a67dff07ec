package io.spraynic.datapath.transport;

import io.spraynic.datapath.port.PacketPort;

/**
 * The former name of {@link io.spraynic.datapath.port.PortFrameSink} over one port.
 *
 * @deprecated use {@link io.spraynic.datapath.port.PortFrameSink}; kept only while {@code nic/EmbeddedNic}
 * (edited on another branch) still names it: delete it with that import.
 */
@Deprecated(forRemoval = true)
public final class PortFrameSink extends io.spraynic.datapath.port.PortFrameSink
{
    public PortFrameSink(final PacketPort port, final int burstCapacity, final int maxFrameLength)
    {
        super(port, burstCapacity, maxFrameLength);
    }
}
