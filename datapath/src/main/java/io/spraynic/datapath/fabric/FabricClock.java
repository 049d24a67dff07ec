package io.spraynic.datapath.fabric;

/**
 * Where the fabric's time comes from, in nanoseconds. The model itself never reads a clock: every
 * method of the per-packet path takes {@code nowNs} as a parameter. Only the drivers read one: the
 * {@link Simulator} is its own (virtual) clock, and {@link RealTimeFabricAgent} reads a real one, so
 * the same model and the same endpoint code run in either.
 */
@FunctionalInterface
public interface FabricClock
{
    /** The monotonic system clock. */
    FabricClock SYSTEM = System::nanoTime;

    /**
     * @return the time now, in nanoseconds from an arbitrary origin; never decreasing.
     */
    long nanoTime();
}
