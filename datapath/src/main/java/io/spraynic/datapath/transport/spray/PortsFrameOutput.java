package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.port.PortFrameSink;

/**
 * The former name of {@link PortFrameSink} over one port per plane.
 *
 * @deprecated use {@link PortFrameSink}; kept only while {@code nic/EmbeddedNic} (edited on another branch) still
 * names it: delete it with that import.
 */
@Deprecated(forRemoval = true)
public final class PortsFrameOutput extends PortFrameSink
{
    public PortsFrameOutput(final PacketPort[] ports, final int burstCapacity)
    {
        super(ports, burstCapacity);
    }
}
