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
 */
public record Target(InetSocketAddress address, InetSocketAddress local, int planes, long regionAddress, int rkey,
    long regionLength)
{
    /**
     * @param spec {@code udp:HOST[:PORT]}: the target's IPv4 address and UDP port (default 4791).
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
        final int colon = hostPort.lastIndexOf(':');
        final String host = colon < 0 ? hostPort : hostPort.substring(0, colon);
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

    /**
     * Reads the exposed region a serving NIC published ({@code nic.addr} in an exchange directory: {@code planes=N
     * ip.0=A.B.C.D addr=ADDR rkey=RKEY length=LEN}), waiting for it up to {@code timeoutMillis}.
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
        for (final String field : Files.readString(file).trim().split("\\s+"))
        {
            final int eq = field.indexOf('=');
            if (eq > 0)
            {
                fields.put(field.substring(0, eq), field.substring(eq + 1));
            }
        }
        try
        {
            return new long[]{Long.parseLong(fields.getOrDefault("planes", "1")), Long.parseLong(fields.get("addr")),
                Long.parseLong(fields.get("rkey")), Long.parseLong(fields.get("length"))};
        }
        catch (final RuntimeException e)
        {
            throw new IllegalStateException(file + " does not say addr, rkey and length: " + fields, e);
        }
    }
}
