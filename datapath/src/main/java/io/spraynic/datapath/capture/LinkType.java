package io.spraynic.datapath.capture;

/**
 * The link-layer header types we read and write, as registered at
 * <a href="https://www.tcpdump.org/linktypes.html">tcpdump.org/linktypes.html</a>.
 */
public final class LinkType
{
    /** IEEE 802.3 Ethernet: every frame starts with the 14-byte MAC header (no preamble, no FCS). */
    public static final int ETHERNET = 1;

    /** Raw IPv4 or IPv6 packet, no link-layer header. */
    public static final int RAW = 101;

    /** Linux "cooked" capture v1 (the {@code any} device). */
    public static final int LINUX_SLL = 113;

    private LinkType()
    {
    }

    /**
     * @param linkType a link type number.
     * @return its LINKTYPE_ name, or the number as text for types we do not name.
     */
    public static String name(final int linkType)
    {
        return switch (linkType)
        {
            case ETHERNET -> "ETHERNET";
            case RAW -> "RAW";
            case LINUX_SLL -> "LINUX_SLL";
            default -> Integer.toString(linkType);
        };
    }
}
