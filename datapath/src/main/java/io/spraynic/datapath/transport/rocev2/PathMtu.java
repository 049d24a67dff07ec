package io.spraynic.datapath.transport.rocev2;

/**
 * InfiniBand path MTUs (the payload bytes per packet, headers excluded): 256, 512, 1024, 2048 or 4096,
 * as {@code enum ibv_mtu}; the spray transport takes the same five (its S4.3), and every check of an MTU in the
 * product asks {@link #isValid}. A packet of the largest payload needs its headers on top: over IPv4
 * 14 + 20 + 8 + 12 + 16 (RETH) + 4 (ImmDt) + 4 (ICRC) = 78 bytes, so a 4096 MTU needs ~4.2 KB buffers
 * and a DPDK default mbuf (2048 B of data room) holds MTU 1024 at most.
 */
public final class PathMtu
{
    public static final int MTU_256 = 256;
    public static final int MTU_512 = 512;
    public static final int MTU_1024 = 1024;
    public static final int MTU_2048 = 2048;
    public static final int MTU_4096 = 4096;

    /** Worst-case bytes around a payload: Ethernet with a VLAN tag, IPv6, UDP, BTH, RETH, ImmDt, ICRC. */
    public static final int MAX_HEADER_OVERHEAD = 18 + 40 + 8 + 12 + 16 + 4 + 4;

    private PathMtu()
    {
    }

    /**
     * @param mtu a payload size.
     * @return true for one of the five IB MTUs.
     */
    public static boolean isValid(final int mtu)
    {
        return mtu == MTU_256 || mtu == MTU_512 || mtu == MTU_1024 || mtu == MTU_2048 || mtu == MTU_4096;
    }

    /**
     * @param mtu a payload size.
     * @return {@code mtu}.
     * @throws IllegalArgumentException if not an IB MTU.
     */
    public static int validate(final int mtu)
    {
        if (!isValid(mtu))
        {
            throw new IllegalArgumentException("path MTU " + mtu + " is not one of 256, 512, 1024, 2048, 4096");
        }
        return mtu;
    }

    /**
     * @param length message bytes.
     * @param mtu    path MTU.
     * @return packets a message of {@code length} bytes takes: at least 1, as a 0-byte message is one packet.
     */
    public static int packetCount(final long length, final int mtu)
    {
        return length == 0 ? 1 : (int)((length + mtu - 1) / mtu);
    }

    /**
     * @param mtu path MTU.
     * @return the largest frame an RC packet of a full MTU can take (to size port buffers).
     */
    public static int maxFrameLength(final int mtu)
    {
        return mtu + MAX_HEADER_OVERHEAD;
    }
}
