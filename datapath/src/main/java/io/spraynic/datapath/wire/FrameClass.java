package io.spraynic.datapath.wire;

/**
 * What {@link RoceParser#parse} made of a frame.
 */
public enum FrameClass
{
    /** A well-formed RoCEv2 packet: every offset and field of the {@link RoceFrame} is set. */
    ROCE,
    /** Not a RoCEv2 packet (see {@link NotOursReason}): someone else's traffic, not an error. */
    NOT_OURS,
    /** Addressed to RoCEv2 (or an IP packet at all) but broken: see {@link MalformedReason}. */
    MALFORMED
}
