package io.spraynic.datapath.transport.rocev2;

/**
 * The 5-bit RNR timer of an RNR NAK (InfiniBand Vol 1, table 45): how long a requester waits before
 * retrying a request the responder had no receive for.
 */
public final class RnrTimer
{
    /** Table 45 in units of 10 µs: code 0 is 655.36 ms, code 1 is 0.01 ms ... code 31 is 491.52 ms. */
    private static final int[] TENS_OF_MICROSECONDS = {
        65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072,
        4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
    };

    private RnrTimer()
    {
    }

    /**
     * @param code the timer code (low 5 bits used).
     * @return the wait in nanoseconds.
     */
    public static long nanos(final int code)
    {
        return TENS_OF_MICROSECONDS[code & 0x1F] * 10_000L;
    }
}
