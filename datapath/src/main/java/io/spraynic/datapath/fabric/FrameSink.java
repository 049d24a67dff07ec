package io.spraynic.datapath.fabric;

/**
 * The far end of a {@link Link}: a switch port or a host's NIC port.
 */
@FunctionalInterface
public interface FrameSink
{
    /**
     * A frame has arrived. The sink takes the slot: it forwards it to another link or frees it.
     *
     * @param nowNs     arrival time.
     * @param inputPort the sink's port the link is connected to.
     * @param slot      the frame's {@link FramePool} slot.
     */
    void onFrameArrival(long nowNs, int inputPort, int slot);
}
