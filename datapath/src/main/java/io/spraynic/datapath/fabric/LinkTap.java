package io.spraynic.datapath.fabric;

import java.lang.foreign.MemorySegment;

/**
 * Sees the frames a tapped {@link Link} sends and drops, e.g. to write a packet capture
 * ({@link PcapLinkTap}) or trace a transport. Called on the fabric's thread from the per-frame path: it
 * must be quick, must not throw, and must not keep the frame memory after the call.
 */
public interface LinkTap
{
    /**
     * A frame's last bit has left the link (it will arrive {@link Link#propagationDelayNs()} later).
     */
    void onFrameSent(long nowNs, Link link, MemorySegment segment, long offset, int length);

    /**
     * The link dropped a frame.
     */
    void onFrameDropped(long nowNs, Link link, DropReason reason, MemorySegment segment, long offset, int length);
}
