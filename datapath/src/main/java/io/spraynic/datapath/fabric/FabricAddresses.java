package io.spraynic.datapath.fabric;

import io.spraynic.datapath.wire.Wire;
import org.agrona.collections.Int2IntHashMap;

/**
 * The addresses of every host port, per plane. Host {@code h} on leaf {@code l} (its index among the
 * leaf's hosts {@code i}) has, on plane {@code p}, IPv4 {@code 10.p.l.(i+1)} and the locally administered
 * MAC {@code 02:00:00:pp:hh:hh}. They never leave the simulation, so private, structured ones are
 * fine, and a packet capture shows at a glance which plane and leaf a frame took.
 */
public final class FabricAddresses
{
    private final int planes;
    private final int hosts;
    private final int[][] ipv4;
    private final long[][] macs;
    private final Int2IntHashMap hostByAddress = new Int2IntHashMap(-1);

    /**
     * @param planes planes (ports per host).
     * @param hosts  hosts.
     */
    public FabricAddresses(final int planes, final int hosts)
    {
        this.planes = planes;
        this.hosts = hosts;
        this.ipv4 = new int[planes][hosts];
        this.macs = new long[planes][hosts];
    }

    /**
     * @return {@code 10.plane.leaf.(hostInLeaf + 1)}.
     */
    public static int ipv4(final int plane, final int leaf, final int hostInLeaf)
    {
        if (plane < 0 || plane > 255 || leaf < 0 || leaf > 255 || hostInLeaf < 0 || hostInLeaf > 253)
        {
            throw new IllegalArgumentException("plane " + plane + ", leaf " + leaf + ", host " + hostInLeaf +
                " do not fit 10.plane.leaf.host (plane and leaf 0..255, host 0..253)");
        }
        return (10 << 24) | (plane << 16) | (leaf << 8) | (hostInLeaf + 1);
    }

    /**
     * @return {@code 02:00:00:plane:host} as a 48-bit value.
     */
    public static long mac(final int plane, final int host)
    {
        return 0x0200_0000_0000L | ((long)(plane & 0xFF) << 16) | (host & 0xFFFF);
    }

    void assign(final int host, final int plane, final int address, final long mac)
    {
        if (hostByAddress.containsKey(address))
        {
            throw new IllegalArgumentException("address " + Wire.ipv4ToString(address) + " assigned twice");
        }
        ipv4[plane][host] = address;
        macs[plane][host] = mac;
        hostByAddress.put(address, host);
    }

    /** @return the IPv4 address of {@code host}'s port on {@code plane}. */
    public int ipv4Of(final int host, final int plane)
    {
        return ipv4[plane][host];
    }

    /** @return the MAC address of {@code host}'s port on {@code plane}. */
    public long macOf(final int host, final int plane)
    {
        return macs[plane][host];
    }

    /** @return the host owning an address (on any plane), or -1. */
    public int hostOf(final int address)
    {
        return hostByAddress.get(address);
    }

    /** @return the number of planes. */
    public int planes()
    {
        return planes;
    }

    /** @return the number of hosts. */
    public int hosts()
    {
        return hosts;
    }
}
