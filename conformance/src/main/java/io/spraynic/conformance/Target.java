package io.spraynic.conformance;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * An implementation under test, as the suite reaches it: its UDP address (kernel UDP sockets, destination port
 * 4791 by default), the suite's own address (where the target sends its answers: another loopback address works),
 * its planes, and the memory it exposes to the suite's RDMA WRITEs and READs.
 *
 * @param address       where the target listens.
 * @param local         where the suite listens (the target's peer port there).
 * @param planes        the target's planes (a CONNECT must offer as many, S9.1).
 * @param regionAddress the exposed region's virtual address.
 * @param rkey          its R_Key.
 * @param regionLength  its bytes (the suite needs at least {@link ConformanceSuite#REGION_BYTES}).
 * @param psk           the pre-shared key the target is configured with (S12.2), or null when it runs without.
 * @param idleTimeoutSeconds the target's {@code idleTimeout} (S12.10; 0: off), which the liveness checks wait on.
 * @param connectionLimit    the most connections the target accepts from one source (S12.9: the smaller of
 *                           {@code maxConnectionsPerSource} and {@code maxConnections}).
 * @param responseRate       the target's {@code connectResponseRate} (S12.9: RETRYs and REJECTs a second).
 * @param responseBurst      its {@code connectResponseBurst}.
 * @param lateMarginMaxSeconds its {@code lateMarginMax} (S6.8.1), which S6.8-2's check needs to judge (0: not given;
 *                           the suite assumes none of the target's timers, S6.8-5).
 */
public record Target(InetSocketAddress address, InetSocketAddress local, int planes, long regionAddress, int rkey,
    long regionLength, byte[] psk, double idleTimeoutSeconds, int connectionLimit, double responseRate,
    int responseBurst, double lateMarginMaxSeconds)
{
    /** S12.9's defaults of one engine's response bucket: 50,000 RETRYs and REJECTs a second, 256 at once. */
    public static final double DEFAULT_RESPONSE_RATE = 50_000;
    public static final int DEFAULT_RESPONSE_BURST = 256;

    /** SprayNIC's defaults (S11): {@code idleTimeout} 30 s, 16 connections per source. */
    public static final double DEFAULT_IDLE_TIMEOUT_SECONDS = 30;
    public static final int DEFAULT_CONNECTION_LIMIT = 16;

    /** A target with S12.9's default response bucket. */
    public Target(final InetSocketAddress address, final InetSocketAddress local, final int planes,
        final long regionAddress, final int rkey, final long regionLength, final byte[] psk,
        final double idleTimeoutSeconds, final int connectionLimit)
    {
        this(address, local, planes, regionAddress, rkey, regionLength, psk, idleTimeoutSeconds, connectionLimit,
            DEFAULT_RESPONSE_RATE, DEFAULT_RESPONSE_BURST, 0);
    }

    /** A target without a pre-shared key, with the default idle timeout and connection limit. */
    public Target(final InetSocketAddress address, final InetSocketAddress local, final int planes,
        final long regionAddress, final int rkey, final long regionLength)
    {
        this(address, local, planes, regionAddress, rkey, regionLength, null, DEFAULT_IDLE_TIMEOUT_SECONDS,
            DEFAULT_CONNECTION_LIMIT);
    }

    /** @return this target configured with {@code key} as its pre-shared key (null: none). */
    public Target withPsk(final byte[] key)
    {
        return new Target(address, local, planes, regionAddress, rkey, regionLength, key, idleTimeoutSeconds,
            connectionLimit, responseRate, responseBurst, lateMarginMaxSeconds);
    }

    /** @return this target with another idle timeout and connection limit. */
    public Target withLimits(final double idleSeconds, final int connections)
    {
        return new Target(address, local, planes, regionAddress, rkey, regionLength, psk, idleSeconds, connections,
            responseRate, responseBurst, lateMarginMaxSeconds);
    }

    /** @return this target with another response bucket (S12.9): {@code rate} a second, {@code burst} at once. */
    public Target withResponseRate(final double rate, final int burst)
    {
        return new Target(address, local, planes, regionAddress, rkey, regionLength, psk, idleTimeoutSeconds,
            connectionLimit, rate, burst, lateMarginMaxSeconds);
    }

    /** @return this target with {@code lateMarginMax} {@code seconds} (S6.8.1; 0: not given). */
    public Target withLateMarginMax(final double seconds)
    {
        return new Target(address, local, planes, regionAddress, rkey, regionLength, psk, idleTimeoutSeconds,
            connectionLimit, responseRate, responseBurst, seconds);
    }

    /**
     * @param spec {@code udp:HOST[:PORT]}: the target's IPv4 or IPv6 address ({@code udp:[fd00::1]:4791} with a
     *             port) and UDP port (default 4791).
     * @return the socket address.
     */
    public static InetSocketAddress parseUdp(final String spec) throws IOException
    {
        if (!spec.startsWith("udp:"))
        {
            throw new IllegalArgumentException("--target " + spec + ": give udp:HOST[:PORT] (a target on kernel UDP sockets)");
        }
        return hostPort(spec.substring(4), UdpLink.ROCE_V2_PORT, "--target");
    }

    /** @return HOST[:PORT] as an address, with {@code defaultPort} when no port is given. */
    public static InetSocketAddress hostPort(final String hostPort, final int defaultPort, final String option)
        throws IOException
    {
        // an IPv6 address is bracketed when a port follows ([fd00::1]:4791); bare, it has no port
        final boolean bracketed = hostPort.startsWith("[");
        final int close = bracketed ? hostPort.indexOf(']') : -1;
        if (bracketed && (close < 0 || close + 1 < hostPort.length() && hostPort.charAt(close + 1) != ':'))
        {
            throw new IllegalArgumentException(option + " " + hostPort + ": give [IPV6]:PORT");
        }
        final int colon = bracketed ? (close + 1 < hostPort.length() ? close + 1 : -1) :
            hostPort.indexOf(':') == hostPort.lastIndexOf(':') ? hostPort.lastIndexOf(':') : -1;
        final String host = bracketed ? hostPort.substring(1, close) : colon < 0 ? hostPort : hostPort.substring(0, colon);
        final int port;
        try
        {
            port = colon < 0 ? defaultPort : Integer.parseInt(hostPort.substring(colon + 1));
        }
        catch (final NumberFormatException e)
        {
            throw new IllegalArgumentException(option + " " + hostPort + ": the port is not a number");
        }
        if (port < 1 || port > 65_535 || host.isEmpty())
        {
            throw new IllegalArgumentException(option + " " + hostPort + ": give HOST[:PORT], port 1 to 65535");
        }
        return new InetSocketAddress(InetAddress.getByName(host), port);
    }

    /** The most a published exchange file holds: a line of fields. */
    static final int MAX_EXCHANGE_BYTES = 64 * 1024;

    /**
     * @return {@code file}, a regular file (not a link, a pipe or a device) of at most {@link #MAX_EXCHANGE_BYTES}
     * (a pipe planted at the name held the suite's read for good; a link read whatever it named).
     */
    static String readSmall(final Path file) throws IOException
    {
        if (!Files.isRegularFile(file, java.nio.file.LinkOption.NOFOLLOW_LINKS))
        {
            throw new IOException(file + " is not a regular file (a link, a pipe or a device): refused");
        }
        if (file.getFileSystem().supportedFileAttributeViews().contains("unix"))
        {
            // in a directory others may write into (sticky, as /tmp) a stranger's file names a region of its choice
            // (and can be swapped for a pipe after the check above): only this user's, root's or the directory owner's
            final Object owner = Files.getAttribute(file, "unix:uid", java.nio.file.LinkOption.NOFOLLOW_LINKS);
            if (!owner.equals(0) && !owner.equals(Files.getAttribute(file.toAbsolutePath().getParent(), "unix:uid")) &&
                !owner.equals(Files.getAttribute(Path.of("/proc/self"), "unix:uid")))
            {
                throw new IOException(file + " belongs to uid " + owner + ", not to this user, root or the directory's " +
                    "owner: refused");
            }
        }
        try (java.nio.channels.SeekableByteChannel channel = Files.newByteChannel(file,
            java.nio.file.StandardOpenOption.READ, java.nio.file.LinkOption.NOFOLLOW_LINKS))
        {
            final java.nio.ByteBuffer bytes = java.nio.ByteBuffer.allocate(MAX_EXCHANGE_BYTES + 1);
            while (bytes.hasRemaining() && channel.read(bytes) > 0)
            {
                // until the end, or one byte past the bound
            }
            if (bytes.position() > MAX_EXCHANGE_BYTES)
            {
                throw new IOException(file + " holds more than " + MAX_EXCHANGE_BYTES + " B: refused");
            }
            return new String(bytes.array(), 0, bytes.position(), java.nio.charset.StandardCharsets.UTF_8);
        }
    }

    /**
     * Reads the exposed region a serving NIC published ({@code nic.addr} in an exchange directory: {@code planes=N
     * ip.0=A.B.C.D addr=ADDR rkey=RKEY length=LEN}, the rkey unsigned), waiting for it up to {@code timeoutMillis}.
     *
     * @return {planes, address, rkey, length}.
     */
    public static long[] readExchange(final Path directory, final long timeoutMillis) throws IOException, InterruptedException
    {
        final Path file = directory.resolve("nic.addr");
        final long deadline = System.currentTimeMillis() + timeoutMillis;
        while (!Files.exists(file))
        {
            if (System.currentTimeMillis() > deadline)
            {
                throw new IllegalStateException("no " + file + " within " + timeoutMillis + " ms: is the target serving?");
            }
            Thread.sleep(50);
        }
        final Map<String, String> fields = new HashMap<>();
        for (final String field : readSmall(file).trim().split("\\s+"))
        {
            final int eq = field.indexOf('=');
            if (eq > 0)
            {
                fields.put(field.substring(0, eq), field.substring(eq + 1));
            }
        }
        if (fields.containsKey("deregistered"))
        {
            throw new IllegalStateException(file + " says the target deregistered its region (" + fields +
                "): restart it to expose one");
        }
        final long[] exposed;
        try
        {
            exposed = new long[]{Long.parseLong(fields.getOrDefault("planes", "1")), Long.parseLong(fields.get("addr")),
                Long.parseLong(fields.get("rkey")), Long.parseLong(fields.get("length"))};
        }
        catch (final RuntimeException e)
        {
            throw new IllegalStateException(file + " does not say addr, rkey and length: " + fields, e);
        }
        if (exposed[2] < 0 || exposed[2] > 0xFFFF_FFFFL || exposed[3] < 0)
        {
            // an R_Key is a u32 on the wire (RETH): a signed or wider number would be cut to another key
            throw new IllegalStateException(file + " says rkey " + exposed[2] + " and length " + exposed[3] +
                ": the rkey must be an unsigned 32-bit number and the length not negative");
        }
        return exposed;
    }
}
