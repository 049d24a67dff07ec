package io.spraynic.datapath.fabric;

/**
 * Something a {@link Simulator} event is delivered to. An event is only primitives, a kind and a
 * {@code long} argument (for the fabric, usually a frame's pool slot), so scheduling one allocates
 * nothing; each target gives its own meaning to both.
 */
@FunctionalInterface
public interface EventTarget
{
    /**
     * @param nowNs the event's time, which is now.
     * @param kind  what happened, as the target defined it when scheduling.
     * @param arg   the argument scheduled with the event.
     */
    void onEvent(long nowNs, int kind, long arg);
}
