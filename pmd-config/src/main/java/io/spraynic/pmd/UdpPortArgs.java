package io.spraynic.pmd;

import java.util.List;

/**
 * A {@code kind = "udp"} port's settings, read from its {@code device} (the IPv4 or IPv6 address its sockets bind
 * to) and {@code args}: kernel UDP sockets instead of a DPDK port, so nothing here reaches EAL.
 * <pre>
 * [[port]]
 * name = "udp0"
 * kind = "udp"
 * device = "10.0.1.10"                                       # the plane's address; or "fd00:1::10", "::1"
 * args = { port = "4791", peer_port = "4791", source_ports = "8" }
 * </pre>
 * An IPv6 address is written bare (no brackets, prefix or zone) and must be one definite address the port can
 * bind without a zone: not {@code ::}, multicast, link-local ({@code fe80::/10}) or IPv4-mapped.
 *
 * @param address     the IPv4 address to bind, as an int (10.0.1.10 is 0x0A00010A); 0 for an IPv6 port.
 * @param addressHigh the IPv6 address's first 8 bytes, big-endian; 0 with {@code addressLow} for an IPv4 port.
 * @param addressLow  its last 8 bytes.
 * @param port        the UDP port to listen on.
 * @param peerPort    the UDP port peers listen on.
 * @param sourcePorts sockets per queue: the UDP source ports frames are spread over (path entropy).
 */
public record UdpPortArgs(int address, long addressHigh, long addressLow, int port, int peerPort, int sourcePorts)
{
    /** The RoCEv2 port. */
    public static final int ROCE_V2_PORT = 4791;
    /** Source ports (sockets) when not given. */
    public static final int DEFAULT_SOURCE_PORTS = 8;
    /**
     * Most source ports (sockets) per queue. A socket holds one 5-tuple, and a router's hash puts a binomial share of
     * a plane's sockets on each of its links: over 1024 sockets and 4 links, 256 +- 14 each (+-5 % at one standard
     * deviation), over 64 it was 16 +- 3.5 (+-22 %). Only the listening socket receives, so the others cost a file
     * descriptor and no buffers.
     */
    public static final int MAX_SOURCE_PORTS = 1024;

    private static final List<String> KEYS = List.of("port", "peer_port", "source_ports");

    /** An IPv4 port's settings. */
    public UdpPortArgs(final int address, final int port, final int peerPort, final int sourcePorts)
    {
        this(address, 0, 0, port, peerPort, sourcePorts);
    }

    /** @return true when the port binds an IPv6 address. */
    public boolean isIpv6()
    {
        return addressHigh != 0 || addressLow != 0;
    }

    /** @return the bind address as text: dotted quad, or IPv6 per RFC 5952. */
    public String addressText()
    {
        return isIpv6() ? InterfaceAddress.ipv6Text(addressHigh, addressLow) : InterfaceAddress.text(address);
    }

    /**
     * @param port a port of kind {@link PortKind#UDP}.
     * @return its settings, valid.
     * @throws ConfigException naming the key for a bad address, an unknown argument or a value out of range.
     */
    public static UdpPortArgs of(final PortConfig port)
    {
        return parse(port, "port(" + port.name() + ").");
    }

    static UdpPortArgs parse(final PortConfig port, final String prefix)
    {
        final String device = port.device();
        final boolean ipv6 = device.indexOf(':') >= 0 || device.indexOf('[') >= 0;
        final long[] address6 = ipv6 ? parseIpv6Address(prefix + "device", device) : new long[2];
        final int address = ipv6 ? 0 : parseAddress(prefix + "device", device);
        final List<Devargs.Entry> args = Devargs.parse(port.args(), prefix + "args");
        for (final Devargs.Entry entry : args)
        {
            if (!KEYS.contains(entry.key()))
            {
                final String closest = Toml.closest(entry.key(), KEYS);
                throw new ConfigException(prefix + "args." + Toml.key(entry.key()), Toml.quote(entry.value()),
                    "is not a udp port argument; they are port, peer_port and source_ports",
                    closest == null ? "" : "did you mean " + closest + "?");
            }
        }
        return new UdpPortArgs(address, address6[0], address6[1],
            integer(prefix, args, "port", ROCE_V2_PORT, 1, 65535),
            integer(prefix, args, "peer_port", ROCE_V2_PORT, 1, 65535),
            integer(prefix, args, "source_ports", DEFAULT_SOURCE_PORTS, 1, MAX_SOURCE_PORTS));
    }

    private static int integer(final String prefix, final List<Devargs.Entry> args, final String key, final int defaultValue,
        final int min, final int max)
    {
        final String text = Devargs.first(args, key);
        if (text == null)
        {
            return defaultValue;
        }
        try
        {
            final int value = Integer.parseInt(text);
            if (value >= min && value <= max)
            {
                return value;
            }
        }
        catch (final NumberFormatException ignored)
        {
            // reported below
        }
        throw new ConfigException(prefix + "args." + key, Toml.quote(text), "must be an integer between " + min + " and " + max);
    }

    private static long[] parseIpv6Address(final String key, final String text)
    {
        final String allowed = "must be the IPv6 address the port's UDP sockets bind to, written bare, e.g. " +
            "\"fd00:1::10\" or \"::1\" (no brackets, prefix or zone; one definite address: not ::, multicast, " +
            "link-local fe80::/10 or IPv4-mapped)";
        if (text.indexOf('[') >= 0 || text.indexOf(']') >= 0 || text.indexOf('/') >= 0 || text.indexOf('%') >= 0)
        {
            throw new ConfigException(key, Toml.quote(text), allowed);
        }
        final long[] address;
        try
        {
            address = InterfaceAddress.parseIpv6(text);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new ConfigException(key, Toml.quote(text), allowed);
        }
        final long high = address[0];
        final long low = address[1];
        if ((high == 0 && low == 0) || (high >>> 56) == 0xFF || InterfaceAddress.isLinkLocal6(high) ||
            InterfaceAddress.isMapped(high, low))
        {
            throw new ConfigException(key, Toml.quote(text), allowed);
        }
        return address;
    }

    private static int parseAddress(final String key, final String text)
    {
        final String allowed = "must be the IPv4 or IPv6 address the port's UDP sockets bind to, e.g. \"127.0.0.1\" " +
            "or \"fd00:1::10\" (one definite local address: not 0.0.0.0, multicast or broadcast)";
        final String[] parts = text.split("\\.", -1);
        if (parts.length != 4)
        {
            throw new ConfigException(key, Toml.quote(text), allowed);
        }
        int address = 0;
        for (final String part : parts)
        {
            if (part.isEmpty() || part.length() > 3 || !part.chars().allMatch(c -> c >= '0' && c <= '9'))
            {
                throw new ConfigException(key, Toml.quote(text), allowed);
            }
            final int octet = Integer.parseInt(part);
            if (octet > 255)
            {
                throw new ConfigException(key, Toml.quote(text), allowed);
            }
            address = address << 8 | octet;
        }
        final int first = address >>> 24;
        if (address == 0 || address == -1 || (first >= 224 && first <= 239) || first == 0)
        {
            throw new ConfigException(key, Toml.quote(text), allowed);
        }
        return address;
    }
}
