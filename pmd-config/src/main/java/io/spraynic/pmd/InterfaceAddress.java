package io.spraynic.pmd;

/**
 * A NIC's address on one plane: an IPv4 or an IPv6 address, the length of its on-link prefix, and optionally the
 * gateway that reaches everything off-link, as {@code --ip 10.0.1.10/24 --gateway 10.0.1.1} (or
 * {@code --ip fd00:1::10/64 --gateway fd00:1::1}) or the {@code ip} and {@code gateway} keys of a {@code [[port]]}
 * table give them. An IPv4 plane resolves neighbours with ARP, an IPv6 plane with neighbour discovery (RFC 4861).
 * <p>
 * An address written without a prefix ({@code 10.0.1.10}) has prefix length 0: every destination is on-link
 * and reached at its own MAC, as on one LAN or a point-to-point link. A gateway needs a prefix and must lie
 * inside it; an IPv6 gateway may instead be link-local ({@code fe80::/10}), as routers announce themselves.
 * <p>
 * Code that handles both families reads the address as 128 bits ({@link #high()}, {@link #low()}): an IPv4
 * address as its IPv4-mapped form {@code ::ffff:a.b.c.d} (RFC 4291 2.5.5.2), which no IPv6 plane may have.
 *
 * @param ipv4         the IPv4 address, first byte in bits 31..24; 0 on an IPv6 plane.
 * @param prefixLength 0..32 (IPv4) or 0..128 (IPv6).
 * @param gateway      the IPv4 gateway's address, or 0 for none (or on an IPv6 plane).
 * @param ipv6High     first 8 bytes of the IPv6 address, big-endian; 0 with {@code ipv6Low} on an IPv4 plane.
 * @param ipv6Low      last 8 bytes of it.
 * @param gatewayHigh6 first 8 bytes of the IPv6 gateway; 0 with {@code gatewayLow6} for none.
 * @param gatewayLow6  last 8 bytes of it.
 */
public record InterfaceAddress(int ipv4, int prefixLength, int gateway, long ipv6High, long ipv6Low, long gatewayHigh6,
    long gatewayLow6)
{
    /** The high 64 bits of every IPv4-mapped address. */
    public static final long MAPPED_HIGH = 0;
    private static final long MAPPED_LOW_PREFIX = 0x0000_FFFF_0000_0000L;

    /**
     * Checks every field.
     *
     * @throws IllegalArgumentException in one sentence naming the value and the fix.
     */
    public InterfaceAddress
    {
        final boolean v6 = ipv6High != 0 || ipv6Low != 0;
        if (v6)
        {
            checkIpv6(ipv4, prefixLength, gateway, ipv6High, ipv6Low, gatewayHigh6, gatewayLow6);
        }
        else
        {
            if (gatewayHigh6 != 0 || gatewayLow6 != 0)
            {
                throw new IllegalArgumentException("IPv6 gateway " + ipv6Text(gatewayHigh6, gatewayLow6) + " needs an IPv6 " +
                    "address on the plane: give both of one family");
            }
            checkIpv4(ipv4, prefixLength, gateway);
        }
    }

    /** An IPv4 plane. */
    public InterfaceAddress(final int ipv4, final int prefixLength, final int gateway)
    {
        this(ipv4, prefixLength, gateway, 0, 0, 0, 0);
    }

    /**
     * @return an IPv6 plane's address: {@code high:low/prefixLength}, gateway {@code gatewayHigh:gatewayLow} (both 0
     * for none).
     */
    public static InterfaceAddress ipv6(final long high, final long low, final int prefixLength, final long gatewayHigh,
        final long gatewayLow)
    {
        if (high == 0 && low == 0)
        {
            throw new IllegalArgumentException("address :: is not a unicast IPv6 address: give one like fd00:1::10");
        }
        return new InterfaceAddress(0, prefixLength, 0, high, low, gatewayHigh, gatewayLow);
    }

    private static void checkIpv4(final int ipv4, final int prefixLength, final int gateway)
    {
        if (prefixLength < 0 || prefixLength > 32)
        {
            throw new IllegalArgumentException("prefix length /" + prefixLength + " is not allowed: give 0 to 32");
        }
        checkUnicast(ipv4, "address", true); // loopback: a plane of kernel UDP sockets on one host
        checkHostOfSubnet(ipv4, prefixLength, "address");
        if (gateway != 0)
        {
            checkUnicast(gateway, "gateway", false);
            checkHostOfSubnet(gateway, prefixLength, "gateway");
            if (prefixLength == 0)
            {
                throw new IllegalArgumentException("gateway " + text(gateway) + " needs a prefix on the address, e.g. " +
                    text(ipv4) + "/24: without one every destination is on-link");
            }
            if (!sameSubnet(ipv4, gateway, prefixLength))
            {
                throw new IllegalArgumentException("gateway " + text(gateway) + " is not inside " + text(ipv4) + "/" +
                    prefixLength + ": give a gateway on the plane's own subnet");
            }
            if (gateway == ipv4)
            {
                throw new IllegalArgumentException("gateway " + text(gateway) + " is this NIC's own address: give the router's");
            }
        }
    }

    private static void checkIpv6(final int ipv4, final int prefixLength, final int gateway, final long high,
        final long low, final long gatewayHigh, final long gatewayLow)
    {
        if (ipv4 != 0 || gateway != 0)
        {
            throw new IllegalArgumentException("a plane has one address, IPv4 or IPv6: " + text(ipv4) + " beside " +
                ipv6Text(high, low));
        }
        if (prefixLength < 0 || prefixLength > 128)
        {
            throw new IllegalArgumentException("prefix length /" + prefixLength + " is not allowed for IPv6: give 0 to 128");
        }
        checkUnicast6(high, low, "address", true);
        if (gatewayHigh != 0 || gatewayLow != 0)
        {
            checkUnicast6(gatewayHigh, gatewayLow, "gateway", false);
            if (prefixLength == 0)
            {
                throw new IllegalArgumentException("gateway " + ipv6Text(gatewayHigh, gatewayLow) + " needs a prefix on " +
                    "the address, e.g. " + ipv6Text(high, low) + "/64: without one every destination is on-link");
            }
            if (!isLinkLocal6(gatewayHigh) && !sameSubnet6(high, low, gatewayHigh, gatewayLow, prefixLength))
            {
                throw new IllegalArgumentException("gateway " + ipv6Text(gatewayHigh, gatewayLow) + " is neither inside " +
                    ipv6Text(high, low) + "/" + prefixLength + " nor link-local (fe80::/10): give the router's address " +
                    "on the plane's own link");
            }
            if (gatewayHigh == high && gatewayLow == low)
            {
                throw new IllegalArgumentException("gateway " + ipv6Text(gatewayHigh, gatewayLow) + " is this NIC's own " +
                    "address: give the router's");
            }
        }
    }

    /**
     * Parses {@code A.B.C.D[/N]} or an IPv6 address {@code X:X::X[/N]} and an optional gateway of the same family.
     *
     * @param address e.g. {@code 10.0.1.10/24} or {@code fd00:1::10/64}.
     * @param gateway e.g. {@code 10.0.1.1} or {@code fd00:1::1}, or null or empty for none.
     * @return the address.
     * @throws IllegalArgumentException in one sentence naming the value and the fix.
     */
    public static InterfaceAddress parse(final String address, final String gateway)
    {
        final String text = address.trim();
        final boolean v6 = text.indexOf(':') >= 0;
        final String gw = null == gateway ? "" : gateway.trim();
        if (!gw.isEmpty() && (gw.indexOf(':') >= 0) != v6)
        {
            throw new IllegalArgumentException("gateway " + gw + " is not of the family of " + text + ": give an " +
                (v6 ? "IPv6" : "IPv4") + " gateway");
        }
        final int slash = text.indexOf('/');
        final int maxPrefix = v6 ? 128 : 32;
        int prefix = 0;
        if (slash >= 0)
        {
            final String digits = text.substring(slash + 1);
            if (digits.isEmpty() || digits.length() > 3 || !digits.chars().allMatch(Character::isDigit) ||
                Integer.parseInt(digits) > maxPrefix)
            {
                throw new IllegalArgumentException("'" + text + "' has no valid prefix length: write /0 to /" + maxPrefix +
                    " after the address, e.g. " + (v6 ? "fd00:1::10/64" : "10.0.1.10/24"));
            }
            prefix = Integer.parseInt(digits);
        }
        final String bare = slash >= 0 ? text.substring(0, slash) : text;
        if (v6)
        {
            final long[] ip = parseIpv6(bare);
            final long[] router = gw.isEmpty() ? new long[2] : parseIpv6(gw);
            return ipv6(ip[0], ip[1], prefix, router[0], router[1]);
        }
        final int ip = parseIpv4(bare);
        final int router = gw.isEmpty() ? 0 : parseIpv4(gw);
        return new InterfaceAddress(ip, prefix, router);
    }

    /** @return true for an IPv6 plane. */
    public boolean isIpv6()
    {
        return ipv6High != 0 || ipv6Low != 0;
    }

    /** @return the address's first 64 bits as 128 ({@link #MAPPED_HIGH} for IPv4). */
    public long high()
    {
        return isIpv6() ? ipv6High : MAPPED_HIGH;
    }

    /** @return the address's last 64 bits as 128 (IPv4-mapped for IPv4). */
    public long low()
    {
        return isIpv6() ? ipv6Low : mappedLow(ipv4);
    }

    /** @return the gateway's first 64 bits as 128; with {@link #gatewayLow()}, 0 for none. */
    public long gatewayHigh()
    {
        return isIpv6() ? gatewayHigh6 : MAPPED_HIGH;
    }

    /** @return the gateway's last 64 bits as 128 (IPv4-mapped); with {@link #gatewayHigh()}, 0 for none. */
    public long gatewayLow()
    {
        return isIpv6() ? gatewayLow6 : gateway == 0 ? 0 : mappedLow(gateway);
    }

    /**
     * @param high a destination's first 64 bits (as 128: IPv4-mapped for IPv4).
     * @param low  its last 64 bits.
     * @return true when it is of this plane's family and on its subnet (always, with prefix length 0).
     */
    public boolean isOnLink(final long high, final long low)
    {
        if (!isIpv6())
        {
            return isMapped(high, low) && isOnLink((int)low);
        }
        return !isMapped(high, low) && sameSubnet6(ipv6High, ipv6Low, high, low, prefixLength);
    }

    /**
     * @param high a destination's first 64 bits (as 128).
     * @param low  its last 64 bits.
     * @return the 128-bit address whose MAC frames to it go to, as {high, low}: the destination itself when on-link,
     * else the gateway; {0, 0} when it is off-link and there is no gateway, or of the other family (unreachable).
     */
    public long[] nextHop(final long high, final long low)
    {
        if (isMapped(high, low) == isIpv6())
        {
            return new long[2];
        }
        return isOnLink(high, low) ? new long[]{high, low} : new long[]{gatewayHigh(), gatewayLow()};
    }

    /** @return whether {@code high:low} is an IPv4-mapped address, {@code ::ffff:a.b.c.d}. */
    public static boolean isMapped(final long high, final long low)
    {
        return high == MAPPED_HIGH && (low & 0xFFFF_FFFF_0000_0000L) == MAPPED_LOW_PREFIX;
    }

    /** @return the last 64 bits of {@code ipv4}'s IPv4-mapped form ({@code ::ffff:a.b.c.d}). */
    public static long mappedLow(final int ipv4)
    {
        return MAPPED_LOW_PREFIX | (ipv4 & 0xFFFF_FFFFL);
    }

    /** @return text of a 128-bit address: dotted quad for an IPv4-mapped one, else RFC 5952. */
    public static String text(final long high, final long low)
    {
        return isMapped(high, low) ? text((int)low) : ipv6Text(high, low);
    }

    /**
     * @param destination a peer's address.
     * @return true when it is on this plane's subnet (always, with prefix length 0).
     */
    public boolean isOnLink(final int destination)
    {
        return !isIpv6() && sameSubnet(ipv4, destination, prefixLength);
    }

    /**
     * @param destination a peer's address.
     * @return the address whose MAC frames to it go to: the peer itself when on-link, else the gateway; 0 when it is
     * off-link and there is no gateway (unreachable), or on an IPv6 plane.
     */
    public int nextHop(final int destination)
    {
        return isOnLink(destination) ? destination : gateway;
    }

    /** @return e.g. {@code 10.0.1.10/24 via 10.0.1.1}. */
    public String toString()
    {
        if (isIpv6())
        {
            return ipv6Text(ipv6High, ipv6Low) + (prefixLength == 0 ? "" : "/" + prefixLength) +
                (gatewayHigh6 == 0 && gatewayLow6 == 0 ? "" : " via " + ipv6Text(gatewayHigh6, gatewayLow6));
        }
        return text(ipv4) + (prefixLength == 0 ? "" : "/" + prefixLength) + (gateway == 0 ? "" : " via " + text(gateway));
    }

    private static boolean sameSubnet(final int a, final int b, final int prefixLength)
    {
        final int mask = prefixLength == 0 ? 0 : -1 << (32 - prefixLength);
        return (a & mask) == (b & mask);
    }

    /** @return whether this is a loopback address (127/8 or ::1), which only a plane of kernel UDP sockets can have. */
    public boolean isLoopback()
    {
        return isIpv6() ? ipv6High == 0 && ipv6Low == 1 : ipv4 >>> 24 == 127;
    }

    private static void checkUnicast(final int address, final String what, final boolean loopbackAllowed)
    {
        final int first = address >>> 24;
        if (address == 0 || address == -1 || first == 0 || (first == 127 && !loopbackAllowed) || (first >= 224))
        {
            throw new IllegalArgumentException(what + " " + text(address) + " is not a unicast address: give one like 10.0.1.10");
        }
    }

    // a subnet of /30 or wider: neither its network address (host bits all 0) nor its broadcast (all 1) is a host's
    private static void checkHostOfSubnet(final int address, final int prefixLength, final String what)
    {
        if (prefixLength == 0 || prefixLength > 30)
        {
            return; // no prefix (every destination on-link), or /31 and /32, whose every address is a host's (RFC 3021)
        }
        final int hostMask = (int)(0xFFFF_FFFFL >>> prefixLength);
        if ((address & hostMask) == 0 || (address & hostMask) == hostMask)
        {
            throw new IllegalArgumentException(what + " " + text(address) + " is the " +
                ((address & hostMask) == 0 ? "network" : "broadcast") + " address of " + text(address & ~hostMask) + "/" +
                prefixLength + ", not a host's: give one like " + text((address & ~hostMask) + 1));
        }
    }

    /**
     * Parses a dotted-quad IPv4 address.
     *
     * @param text e.g. "10.0.0.1".
     * @return the address, first byte in bits 31..24.
     * @throws IllegalArgumentException saying what an IPv4 address looks like.
     */
    public static int parseIpv4(final String text)
    {
        final String[] parts = text.trim().split("\\.", -1);
        int address = 0;
        for (final String part : parts)
        {
            int value = -1;
            if (parts.length == 4 && !part.isEmpty() && part.length() <= 3 && part.chars().allMatch(Character::isDigit))
            {
                value = Integer.parseInt(part);
            }
            if (value < 0 || value > 255)
            {
                throw new IllegalArgumentException("'" + text + "' is not an IPv4 address: write four numbers 0-255, e.g. 10.0.0.1");
            }
            address = address << 8 | value;
        }
        return address;
    }

    /** @return dotted-quad text of {@code address}. */
    public static String text(final int address)
    {
        return (address >>> 24) + "." + ((address >>> 16) & 0xFF) + "." + ((address >>> 8) & 0xFF) + "." + (address & 0xFF);
    }

    private static boolean sameSubnet6(final long aHigh, final long aLow, final long bHigh, final long bLow,
        final int prefixLength)
    {
        final long highMask = prefixLength == 0 ? 0 : prefixLength >= 64 ? -1L : -1L << (64 - prefixLength);
        final long lowMask = prefixLength <= 64 ? 0 : prefixLength == 128 ? -1L : -1L << (128 - prefixLength);
        return ((aHigh ^ bHigh) & highMask) == 0 && ((aLow ^ bLow) & lowMask) == 0;
    }

    /** @return whether an IPv6 address with these first 64 bits is link-local (fe80::/10). */
    public static boolean isLinkLocal6(final long high)
    {
        return (high >>> 54) == (0xFE80L >>> 6);
    }

    private static void checkUnicast6(final long high, final long low, final String what, final boolean loopbackAllowed)
    {
        final boolean unspecified = high == 0 && low == 0;
        final boolean loopback = high == 0 && low == 1;
        final boolean multicast = (high >>> 56) == 0xFF;
        if (unspecified || multicast || (loopback && !loopbackAllowed) || isMapped(high, low))
        {
            throw new IllegalArgumentException(what + " " + ipv6Text(high, low) + " is not a unicast IPv6 address" +
                (isMapped(high, low) ? " (an IPv4-mapped one: give the IPv4 address itself)" : "") +
                ": give one like fd00:1::10");
        }
    }

    /**
     * Parses an IPv6 address in the text of RFC 4291 2.2 (hex groups, one {@code ::}, an IPv4 tail allowed); no
     * zone, no brackets.
     *
     * @param text e.g. {@code fd00:1::10}.
     * @return {first 8 bytes, last 8 bytes}, big-endian.
     * @throws IllegalArgumentException saying what an IPv6 address looks like.
     */
    public static long[] parseIpv6(final String text)
    {
        final String t = text.trim();
        final IllegalArgumentException bad = new IllegalArgumentException("'" + text + "' is not an IPv6 address: write " +
            "up to eight groups of 1-4 hex digits separated by ':', with at most one '::', e.g. fd00:1::10");
        final int gap = t.indexOf("::");
        if (t.isEmpty() || (gap >= 0 && t.indexOf("::", gap + 1) >= 0) || t.length() > 45)
        {
            throw bad;
        }
        final int[] head = groups(gap >= 0 ? t.substring(0, gap) : t, bad);
        final int[] tail = gap >= 0 ? groups(t.substring(gap + 2), bad) : new int[0];
        final int count = head.length + tail.length;
        if ((gap < 0 && count != 8) || (gap >= 0 && count > 7))
        {
            throw bad;
        }
        final int[] all = new int[8];
        System.arraycopy(head, 0, all, 0, head.length);
        System.arraycopy(tail, 0, all, 8 - tail.length, tail.length);
        long high = 0;
        long low = 0;
        for (int i = 0; i < 4; i++)
        {
            high = high << 16 | all[i];
            low = low << 16 | all[i + 4];
        }
        return new long[]{high, low};
    }

    // groups of one side of '::' (may be empty); a dotted-quad last group counts as two
    private static int[] groups(final String side, final IllegalArgumentException bad)
    {
        if (side.isEmpty())
        {
            return new int[0];
        }
        final String[] parts = side.split(":", -1);
        final String last = parts[parts.length - 1];
        final boolean quad = last.indexOf('.') >= 0;
        final int[] out = new int[parts.length + (quad ? 1 : 0)];
        for (int i = 0; i < parts.length; i++)
        {
            final String part = parts[i];
            if (quad && i == parts.length - 1)
            {
                final int v4;
                try
                {
                    v4 = parseIpv4(part);
                }
                catch (final IllegalArgumentException ex)
                {
                    throw bad;
                }
                out[i] = v4 >>> 16;
                out[i + 1] = v4 & 0xFFFF;
                continue;
            }
            if (part.isEmpty() || part.length() > 4)
            {
                throw bad;
            }
            int v = 0;
            for (int c = 0; c < part.length(); c++)
            {
                final int d = Character.digit(part.charAt(c), 16);
                if (d < 0)
                {
                    throw bad;
                }
                v = v << 4 | d;
            }
            out[i] = v;
        }
        return out;
    }

    /**
     * Formats an IPv6 address per RFC 5952 (lower-case, no leading zeros, the longest run of two or more zero
     * groups, leftmost on a tie, as "::"), as Wireshark shows it.
     *
     * @param high the first 8 bytes on the wire, big-endian.
     * @param low  the last 8 bytes on the wire, big-endian.
     * @return e.g. "fe80::1".
     */
    public static String ipv6Text(final long high, final long low)
    {
        final int[] groups = new int[8];
        for (int i = 0; i < 4; i++)
        {
            groups[i] = (int)(high >>> (48 - 16 * i)) & 0xFFFF;
            groups[i + 4] = (int)(low >>> (48 - 16 * i)) & 0xFFFF;
        }
        int bestStart = -1;
        int bestLength = 1;
        for (int i = 0; i < 8; )
        {
            if (groups[i] == 0)
            {
                int j = i;
                while (j < 8 && groups[j] == 0)
                {
                    j++;
                }
                if (j - i > bestLength)
                {
                    bestStart = i;
                    bestLength = j - i;
                }
                i = j;
            }
            else
            {
                i++;
            }
        }
        final StringBuilder sb = new StringBuilder(39);
        for (int i = 0; i < 8; i++)
        {
            if (i == bestStart)
            {
                sb.append("::");
                i += bestLength - 1;
                continue;
            }
            if (sb.length() > 0 && sb.charAt(sb.length() - 1) != ':')
            {
                sb.append(':');
            }
            sb.append(Integer.toHexString(groups[i]));
        }
        return sb.toString();
    }
}
