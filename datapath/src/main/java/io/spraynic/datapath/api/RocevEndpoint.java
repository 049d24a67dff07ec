package io.spraynic.datapath.api;

import io.spraynic.datapath.transport.rocev2.PathMtu;
import io.spraynic.datapath.wire.Wire;

/**
 * What one side of a RoCEv2 RC connection tells the other out of band before the queue pairs can talk (as
 * ibverbs applications exchange QP number, PSN and GID, e.g. over TCP): the QP number, the first PSN it
 * sends, its address and its path MTU. No MAC: the NIC resolves the next hop to the address itself (ARP).
 *
 * @param qpNumber  24-bit QP number.
 * @param psn       first PSN this QP sends (the peer expects it).
 * @param ipv4      its IPv4 address (0 when it speaks IPv6).
 * @param mtu       its path MTU.
 * @param ipv6High  first 8 bytes of its IPv6 address (its GID), 0 with {@code ipv6Low} for IPv4.
 * @param ipv6Low   last 8 bytes of it.
 */
public record RocevEndpoint(int qpNumber, int psn, int ipv4, int mtu, long ipv6High, long ipv6Low)
{
    /** Lowest QP number a peer may name: 0 and 1 are the special QPs of IB (SMI, GSI). */
    public static final int MIN_QP_NUMBER = 2;
    /** Highest: QP numbers are 24 bits. */
    public static final int MAX_QP_NUMBER = 0xFF_FFFF;
    /** PSNs are 24 bits. */
    public static final int MAX_PSN = 0xFF_FFFF;

    /**
     * Checks every field, as they come from a peer or another process (out of band, a file, a command ring).
     *
     * @throws IllegalArgumentException naming the field and what it may be.
     */
    public RocevEndpoint
    {
        if (qpNumber < MIN_QP_NUMBER || qpNumber > MAX_QP_NUMBER)
        {
            throw new IllegalArgumentException("RoCEv2 endpoint: QP number 0x" + Integer.toHexString(qpNumber) +
                " is not in 0x2..0xffffff (24 bits; 0 and 1 are special QPs)");
        }
        if (psn < 0 || psn > MAX_PSN)
        {
            throw new IllegalArgumentException("RoCEv2 endpoint: PSN 0x" + Integer.toHexString(psn) +
                " is not in 0..0xffffff (24 bits)");
        }
        if (!PathMtu.isValid(mtu))
        {
            throw new IllegalArgumentException("RoCEv2 endpoint: MTU " + mtu + " is not an IB path MTU (256, 512, 1024, " +
                "2048 or 4096)");
        }
        final String address = addressProblem(ipv4, ipv6High, ipv6Low);
        if (null != address)
        {
            throw new IllegalArgumentException("RoCEv2 endpoint: " + address);
        }
    }

    /**
     * Checks a peer's address as another process hands it over (a queue pair's endpoint, a spray CONNECT's plane):
     * exactly one of {@code ipv4} and the IPv6 address, unicast, not IPv4-mapped.
     *
     * @return what is wrong with it, or null when it is a peer's address.
     */
    public static String addressProblem(final int ipv4, final long ipv6High, final long ipv6Low)
    {
        if (ipv6High != 0 || ipv6Low != 0)
        {
            if (ipv4 != 0)
            {
                return "both an IPv4 (" + Wire.ipv4ToString(ipv4) + ") and an IPv6 address: give one";
            }
            if ((ipv6High >>> 56) == 0xFF)
            {
                return "IPv6 address " + Wire.ipv6ToString(ipv6High, ipv6Low) + " is multicast, not a peer's";
            }
            if (ipv6High == 0 && (ipv6Low >>> 32) == 0xFFFF)
            {
                return "IPv6 address " + Wire.ipv6ToString(ipv6High, ipv6Low) + " is IPv4-mapped: give the IPv4 address";
            }
            return null;
        }
        if (ipv4 == 0)
        {
            return "no address (0.0.0.0)";
        }
        if ((ipv4 >>> 28) >= 0xE)
        {
            return "IPv4 address " + Wire.ipv4ToString(ipv4) + " is multicast, reserved or broadcast, not a peer's";
        }
        return null;
    }

    /** An endpoint at an IPv4 address. */
    public RocevEndpoint(final int qpNumber, final int psn, final int ipv4, final int mtu)
    {
        this(qpNumber, psn, ipv4, mtu, 0, 0);
    }

    /** @return whether it speaks IPv6. */
    public boolean isIpv6()
    {
        return ipv6High != 0 || ipv6Low != 0;
    }

    /** @return one line, {@code qpn=0x11 psn=0x1234 ip=10.0.0.1 mtu=1024} (or {@code ip=fd00::1}), that {@link #parse} reads. */
    public String format()
    {
        return "qpn=0x" + Integer.toHexString(qpNumber) + " psn=0x" + Integer.toHexString(psn) + " ip=" +
            (isIpv6() ? Wire.ipv6ToString(ipv6High, ipv6Low) : Wire.ipv4ToString(ipv4)) + " mtu=" + mtu;
    }

    /**
     * @param line what {@link #format()} wrote.
     * @return the endpoint.
     * @throws IllegalArgumentException naming what is missing or malformed.
     */
    public static RocevEndpoint parse(final String line)
    {
        int qpn = -1;
        int psn = -1;
        Integer ip = null;
        long[] ipv6 = {0, 0};
        int mtu = -1;
        for (final String field : line.trim().split("\\s+"))
        {
            final int eq = field.indexOf('=');
            if (eq < 0)
            {
                throw new IllegalArgumentException("RoCEv2 endpoint field '" + field + "' is not key=value: " + line);
            }
            final String key = field.substring(0, eq);
            final String value = field.substring(eq + 1);
            switch (key)
            {
                case "qpn" -> qpn = Integer.decode(value);
                case "psn" -> psn = Integer.decode(value);
                case "ip" ->
                {
                    if (value.indexOf(':') >= 0)
                    {
                        ipv6 = io.spraynic.pmd.InterfaceAddress.parseIpv6(value);
                        ip = 0;
                    }
                    else
                    {
                        ip = Wire.parseIpv4(value);
                    }
                }
                case "mtu" -> mtu = Integer.parseInt(value);
                default -> throw new IllegalArgumentException("unknown RoCEv2 endpoint field '" + key + "' in: " + line);
            }
        }
        if (qpn < 0 || psn < 0 || null == ip || mtu < 0)
        {
            throw new IllegalArgumentException("a RoCEv2 endpoint needs qpn, psn, ip and mtu: " + line);
        }
        return new RocevEndpoint(qpn, psn, ip, mtu, ipv6[0], ipv6[1]);
    }
}
