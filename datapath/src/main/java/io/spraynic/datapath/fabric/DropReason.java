package io.spraynic.datapath.fabric;

/**
 * Why a {@link Link} dropped a frame.
 */
public enum DropReason
{
    /** The output queue could not hold it. */
    TAIL_DROP,
    /** Lost on the wire at random. */
    RANDOM_LOSS,
    /** The link is blackholed. */
    BLACKHOLE,
    /** The link is down. */
    LINK_DOWN
}
