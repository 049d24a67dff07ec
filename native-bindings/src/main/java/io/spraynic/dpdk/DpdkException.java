package io.spraynic.dpdk;

/**
 * A DPDK call failed. The message names the call and carries DPDK's own text
 * ({@code rte_strerror}) for the error number it returned or left in {@code rte_errno}.
 */
public final class DpdkException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final String call;
    private final int errno;

    public DpdkException(final String call, final int errno, final String detail)
    {
        super(call + " failed: " + detail + " (errno " + errno + ")");
        this.call = call;
        this.errno = errno;
    }

    public DpdkException(final String call, final String detail)
    {
        super(call + " failed: " + detail);
        this.call = call;
        this.errno = 0;
    }

    /**
     * @return the DPDK function that failed.
     */
    public String call()
    {
        return call;
    }

    /**
     * @return the positive error number, or 0 where DPDK gave none.
     */
    public int errno()
    {
        return errno;
    }
}
