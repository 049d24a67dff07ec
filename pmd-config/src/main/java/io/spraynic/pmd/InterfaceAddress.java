package io.spraynic.pmd;

/**
 * A NIC's address on one plane: an IPv4 address, the length of its on-link prefix, and optionally the gateway
 * that reaches everything off-link, as {@code --ip 10.0.1.10/24 --gateway 10.0.1.1} or the {@code ip} and
 * {@code gateway} keys of a {@code [[port]]} table give them.
 * <p>
 * An address written without a prefix ({@code 10.0.1.10}) has prefix length 0: every destination is on-link
 * and reached at its own MAC, as on one LAN or a point-to-point link. A gateway needs a prefix of 1 to 32 and
 * must lie inside it. Only IPv4: the NIC resolves neighbours with ARP; IPv6 planes are not configurable here.
 *
 * @param ipv4         the address, first byte in bits 31..24.
 * @param prefixLength 0..32.
 * @param gateway      the gateway's address, or 0 for none.
 */
public record InterfaceAddress(int ipv4, int prefixLength, int gateway)
{
    /**
     * Checks every field.
     *
     * @throws IllegalArgumentException in one sentence naming the value and the fix.
     */
    public InterfaceAddress
    {
        if (prefixLength < 0 || prefixLength > 32)
        {
            throw new IllegalArgumentException("prefix length /" + prefixLength + " is not allowed: give 0 to 32");
        }
        checkUnicast(ipv4, "address", true); // loopback: a plane of kernel UDP sockets on one host
        if (gateway != 0)
        {
            checkUnicast(gateway, "gateway", false);
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

    /**
     * Parses {@code A.B.C.D} or {@code A.B.C.D/N} and an optional gateway.
     *
     * @param address e.g. {@code 10.0.1.10/24}.
     * @param gateway e.g. {@code 10.0.1.1}, or null or empty for none.
     * @return the address.
     * @throws IllegalArgumentException in one sentence naming the value and the fix.
     */
    public static InterfaceAddress parse(final String address, final String gateway)
    {
        final String text = address.trim();
        if (text.indexOf(':') >= 0)
        {
            throw new IllegalArgumentException("'" + text + "' is an IPv6 address, but planes take IPv4 only (the NIC " +
                "resolves neighbours with ARP): give an address like 10.0.1.10/24");
        }
        final int slash = text.indexOf('/');
        int prefix = 0;
        if (slash >= 0)
        {
            final String digits = text.substring(slash + 1);
            if (digits.isEmpty() || digits.length() > 2 || !digits.chars().allMatch(Character::isDigit) ||
                Integer.parseInt(digits) > 32)
            {
                throw new IllegalArgumentException("'" + text + "' has no valid prefix length: write /0 to /32 after the " +
                    "address, e.g. 10.0.1.10/24");
            }
            prefix = Integer.parseInt(digits);
        }
        final int ip = parseIpv4(slash >= 0 ? text.substring(0, slash) : text);
        final int gw = null == gateway || gateway.isBlank() ? 0 : parseIpv4(gateway.trim());
        return new InterfaceAddress(ip, prefix, gw);
    }

    /**
     * @param destination a peer's address.
     * @return true when it is on this plane's subnet (always, with prefix length 0).
     */
    public boolean isOnLink(final int destination)
    {
        return sameSubnet(ipv4, destination, prefixLength);
    }

    /**
     * @param destination a peer's address.
     * @return the address whose MAC frames to it go to: the peer itself when on-link, else the gateway; 0 when it is
     * off-link and there is no gateway (unreachable).
     */
    public int nextHop(final int destination)
    {
        return isOnLink(destination) ? destination : gateway;
    }

    /** @return e.g. {@code 10.0.1.10/24 via 10.0.1.1}. */
    public String toString()
    {
        return text(ipv4) + (prefixLength == 0 ? "" : "/" + prefixLength) + (gateway == 0 ? "" : " via " + text(gateway));
    }

    private static boolean sameSubnet(final int a, final int b, final int prefixLength)
    {
        final int mask = prefixLength == 0 ? 0 : -1 << (32 - prefixLength);
        return (a & mask) == (b & mask);
    }

    /** @return whether this is a loopback address (127/8), which only a plane of kernel UDP sockets can have. */
    public boolean isLoopback()
    {
        return ipv4 >>> 24 == 127;
    }

    private static void checkUnicast(final int address, final String what, final boolean loopbackAllowed)
    {
        final int first = address >>> 24;
        if (address == 0 || address == -1 || (first == 127 && !loopbackAllowed) || (first >= 224))
        {
            throw new IllegalArgumentException(what + " " + text(address) + " is not a unicast address: give one like 10.0.1.10");
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
}
